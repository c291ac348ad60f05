// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/sparsevi/sparsevi/datasets"
)

// input is a data frame together with what error messages need to point
// into the file it came from.
type input struct {
	frame *datasets.Frame
	// name is the file's base name, "stdin", or a description such as
	// "data set epilepsy".
	name string
	// path is the path as given, "-" for standard input, "" for built-in
	// data.
	path string
	// lines holds the 1-based line of each data row in the file, or is nil
	// when rows do not come from a file.
	lines []int
}

// readInput reads a CSV file, or standard input for "-". Columns named in
// categorical are read as categorical whatever their content.
func readInput(path string, stdin io.Reader, categorical []string) (*input, error) {
	var (
		raw  []byte
		err  error
		name string
	)
	if path == "-" {
		name = "stdin"
		raw, err = io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %v", err)
		}
	} else {
		name = filepath.Base(path)
		raw, err = os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("cannot read data file: %v", pathError(err))
		}
	}
	return parseInput(raw, name, path, categorical)
}

// parseInput reads CSV bytes, gunzipping them first if they are
// gzip-compressed.
func parseInput(raw []byte, name, path string, categorical []string) (*input, error) {
	if len(raw) >= 2 && raw[0] == 0x1f && raw[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(raw))
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		raw, err = io.ReadAll(zr)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
	}
	r := datasets.NewReader(bytes.NewReader(raw))
	r.File = name
	r.Categorical = categorical
	fr, err := r.Read()
	if err != nil {
		return nil, err // a *datasets.ParseError naming file, line and column
	}
	in := &input{frame: fr, name: name, path: path}
	if lines := recordLines(raw); len(lines) == fr.NumRows()+1 {
		in.lines = lines[1:]
	}
	return in, nil
}

// recordLines returns the 1-based line on which each CSV record starts,
// header included, skipping blank lines and following quoted fields across
// line ends, as the datasets reader does. The caller checks the count
// against the frame and ignores the result if they disagree.
func recordLines(b []byte) []int {
	var starts []int
	line := 1
	inQuote := false
	recStart, blank := line, true
	for _, c := range b {
		switch {
		case c == '"':
			inQuote = !inQuote
			blank = false
		case c == '\n':
			if !inQuote {
				if !blank {
					starts = append(starts, recStart)
				}
				recStart, blank = line+1, true
			}
			line++
		case c != '\r':
			blank = false
		}
	}
	if !blank {
		starts = append(starts, recStart)
	}
	return starts
}

// line returns the file line of data row k (0-based) and whether it is
// known.
func (in *input) line(k int) (int, bool) {
	if k < 0 || k >= len(in.lines) {
		return 0, false
	}
	return in.lines[k], true
}

// where names data row k and column col of the input: "data.csv: line 7,
// column 2 ("y")", or with "row" for data that do not come from a file.
func (in *input) where(k int, col string) string {
	s := in.name + ": "
	if l, ok := in.line(k); ok {
		s += fmt.Sprintf("line %d", l)
	} else {
		s += fmt.Sprintf("row %d", k+1)
	}
	if col != "" {
		if j := columnIndex(in.frame, col); j >= 0 {
			s += fmt.Sprintf(", column %d (%q)", j+1, col)
		} else {
			s += fmt.Sprintf(", column %q", col)
		}
	}
	return s
}

// columnIndex returns the 0-based position of the named column, or -1.
func columnIndex(fr *datasets.Frame, name string) int {
	for j, n := range fr.Names() {
		if n == name {
			return j
		}
	}
	return -1
}

// pathError drops the operation from an *os.PathError ("open x: no such
// file or directory" reads as "x: no such file or directory").
func pathError(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return fmt.Errorf("%s: %v", pe.Path, pe.Err)
	}
	return err
}
