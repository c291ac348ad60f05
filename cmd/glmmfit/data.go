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
	raw, err := dialect(raw, name)
	if err != nil {
		return nil, err
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

// dialect returns the CSV bytes as the reader wants them, or an error that
// says what kind of file this is and what to do: UTF-16 and UTF-32 files
// (a byte-order mark, or NUL bytes in the header), semicolon- and
// tab-separated files (no comma in the header line but several of one or
// the other). Classic Mac line ends (CR alone) are turned into LF.
func dialect(raw []byte, name string) ([]byte, error) {
	head := raw[:min(len(raw), 4096)]
	switch {
	case bytes.HasPrefix(head, []byte{0xff, 0xfe}), bytes.HasPrefix(head, []byte{0xfe, 0xff}),
		bytes.HasPrefix(head, []byte{0, 0, 0xfe, 0xff}), bytes.IndexByte(head, 0) >= 0:
		return nil, fmt.Errorf("%s: the file is UTF-16 or UTF-32 encoded (it has NUL bytes); save it as UTF-8 CSV (R: write.csv(d, file, fileEncoding = \"UTF-8\"); Excel: Save As \"CSV UTF-8\")", name)
	}
	if bytes.IndexByte(head, '\n') < 0 && bytes.IndexByte(head, '\r') >= 0 {
		raw = bytes.ReplaceAll(raw, []byte{'\r'}, []byte{'\n'})
		head = raw[:min(len(raw), 4096)]
	}
	header := head
	if k := bytes.IndexAny(head, "\r\n"); k >= 0 {
		header = head[:k]
	}
	if bytes.IndexByte(header, ',') < 0 {
		for _, sep := range []struct {
			c    byte
			what string
		}{{';', "semicolon"}, {'\t', "tab"}} {
			if n := bytes.Count(header, []byte{sep.c}); n > 0 {
				return nil, fmt.Errorf("%s: the header %q has no commas but %d %ss: the file is %s-separated; glmmfit reads comma-separated CSV with decimal points (R: write.csv; Excel: Save As \"CSV UTF-8 (Comma delimited)\")", name, string(header), n, sep.what, sep.what)
			}
		}
	}
	return raw, nil
}

// subset returns the input restricted to the given rows, in order, with
// their line numbers.
func (in *input) subset(rows []int) *input {
	out := &input{frame: in.frame.Rows(rows), name: in.name, path: in.path}
	if in.lines != nil {
		out.lines = make([]int, len(rows))
		for k, i := range rows {
			out.lines[k] = in.lines[i]
		}
	}
	return out
}
