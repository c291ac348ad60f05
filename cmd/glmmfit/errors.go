// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"errors"
	"fmt"
	"strings"
)

// exitError is an error with the exit code it calls for. Its message, if
// any, is printed on standard error as one line.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

// usageErrorf reports a bad invocation of cmd: exit code 2.
func usageErrorf(cmd, format string, args ...any) error {
	help := "glmmfit -h"
	if cmd != "glmmfit" {
		help = "glmmfit " + cmd + " -h"
	}
	return &exitError{code: exitUsage, msg: fmt.Sprintf("%s: %s (see '%s')", cmd, fmt.Sprintf(format, args...), help)}
}

// exit prints err, if any, as one line on standard error and returns the
// exit code it calls for.
func (e *env) exit(err error) int {
	if err == nil {
		return exitOK
	}
	code := exitFail
	var ee *exitError
	if errors.As(err, &ee) {
		code = ee.code
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(e.stderr, "glmmfit: "+oneLine(cliWords.Replace(msg)))
	}
	return code
}

// cliWords puts the library's advice in the command line's words: the
// library's errors name Options fields, a user of glmmfit sets flags.
var cliWords = strings.NewReplacer(
	"set Options.Missing to DropMissing", "give -missing drop",
	"set Options.DoubleBar to CorrelatedDoubleBar", "give -double-bar correlated (or independent, the default)",
	"set Options.Family", "give -family",
	`formula token "Options.Weights"`, "flag -weights",
	`formula token "Options.Offset"`, "flag -offset",
	"Options.Weights", "-weights",
	"Options.Offset", "-offset",
	"Options.Family", "-family",
	"Options.PriorSD", "-prior-sd",
	`formula token "Options.LocalFactor"`, "flag -local-factor",
	"(Options.LocalFactor)", "(-local-factor)",
)

// oneLine joins the lines of msg, so that every problem takes exactly one
// line of standard error whatever the wrapped errors hold.
func oneLine(msg string) string {
	msg = strings.TrimSpace(msg)
	msg = strings.NewReplacer("\r\n", "; ", "\n", "; ", "\r", "; ").Replace(msg)
	return msg
}
