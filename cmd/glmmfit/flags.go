// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// newFlagSet returns a flag set that prints nothing: glmmfit reports flag
// errors itself, on one line, and prints its own usage text for -h.
func newFlagSet(cmd string) *flag.FlagSet {
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// errHelp is returned by parseFlags when -h was given and the usage has
// been printed.
var errHelp = &exitError{code: exitOK}

// parseFlags parses args, prints usage for -h, and turns every other flag
// error and any positional argument into a usage error.
func parseFlags(e *env, fs *flag.FlagSet, usage string, args []string) error {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprint(e.stdout, usage)
		return errHelp
	}
	if err != nil {
		return usageErrorf(fs.Name(), "%v%s", err, flagHint(fs, err))
	}
	if fs.NArg() > 0 {
		return usageErrorf(fs.Name(), "unexpected argument %q: every input is given by a flag", fs.Arg(0))
	}
	return nil
}

// undefinedFlag is how package flag begins the error of a flag that the
// set does not define.
const undefinedFlag = "flag provided but not defined: -"

// flagHint returns " (did you mean -family?)" for the error of an
// undefined flag near one of fs's, or "".
func flagHint(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), undefinedFlag)
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	near := nearest(name, names)
	if len(near) == 0 {
		return ""
	}
	return " (did you mean -" + strings.Join(near, " or -") + "?)"
}

// setFlags returns the names of the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// conflict returns a usage error if more than one of the named flags is
// set.
func conflict(fs *flag.FlagSet, names ...string) error {
	set := setFlags(fs)
	var given []string
	for _, n := range names {
		if set[n] {
			given = append(given, "-"+n)
		}
	}
	if len(given) > 1 {
		return usageErrorf(fs.Name(), "%s cannot be used together", strings.Join(given, " and "))
	}
	return nil
}

// refFlag collects repeated -ref COL=LEVEL flags.
type refFlag map[string]string

func (r refFlag) String() string {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+r[k])
	}
	return strings.Join(parts, ",")
}

func (r refFlag) Set(s string) error {
	col, level, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(col) == "" || level == "" {
		return fmt.Errorf("want COLUMN=LEVEL, got %q", s)
	}
	r[strings.TrimSpace(col)] = level
	return nil
}
