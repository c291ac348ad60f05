// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"errors"
	"fmt"
	"strings"
)

// SyntaxError reports a formula that Parse cannot read, or a construct of
// lme4's syntax that this package does not support.
type SyntaxError struct {
	Pos   int    // 1-based character position of the offending token; the formula's length+1 for its end
	Token string // the offending token as written, "" at the end of the formula
	Msg   string // what is wrong
	Err   error  // ErrUnsupported for valid lme4 syntax sparsevi cannot fit, else nil
}

// Unwrap returns e.Err.
func (e *SyntaxError) Unwrap() error { return e.Err }

// Error returns a message naming the token and where it is in the
// formula: by its character, not its "column", a word that the messages
// keep for the data's columns.
func (e *SyntaxError) Error() string {
	if e.Token == "" {
		return fmt.Sprintf("formula: at the end (character %d): %s", e.Pos, e.Msg)
	}
	return fmt.Sprintf("formula: %q at character %d: %s", e.Token, e.Pos, e.Msg)
}

// ErrUnsupported is wrapped by the errors of Build for valid lme4 formulas
// that sparsevi cannot fit yet, such as a second grouping factor.
var ErrUnsupported = errors.New("not supported yet")

// DataError reports a formula that does not fit its data frame, or data
// that cannot be used: an unknown column, a column of the wrong kind, a
// missing or non-finite value, an unknown level.
//
// Token and Pos locate the part of the formula concerned (Pos is 0 for
// columns named by Options rather than by the formula). Row is the 1-based
// row of the data frame concerned, as the data row of a CSV file after its
// header and as glmm.DataError's, or 0.
type DataError struct {
	Token  string // the formula token concerned, or "" when none
	Pos    int    // 1-based character position of Token in the formula, or 0
	Column string // the data column concerned, or ""
	Row    int    // 1-based row of the data frame, or 0
	Msg    string // what is wrong
	Err    error  // an underlying error, or nil
}

// Error returns a message naming the token, the column and the row.
func (e *DataError) Error() string {
	var parts []string
	if e.Token != "" {
		if e.Pos > 0 {
			parts = append(parts, fmt.Sprintf("%q at character %d", e.Token, e.Pos))
		} else {
			parts = append(parts, e.Token)
		}
	}
	if e.Column != "" && e.Column != e.Token {
		parts = append(parts, fmt.Sprintf("data column %q", e.Column))
	}
	if e.Row > 0 {
		parts = append(parts, fmt.Sprintf("row %d", e.Row))
	}
	if e.Msg != "" {
		parts = append(parts, e.Msg)
	}
	if e.Err != nil {
		parts = append(parts, e.Err.Error())
	}
	return "formula: " + strings.Join(parts, ": ")
}

// Unwrap returns the underlying error.
func (e *DataError) Unwrap() error { return e.Err }
