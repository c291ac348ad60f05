// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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
	lines *datasets.Lines
	// place, when not nil, maps a line of lines to the file and line it
	// names, for data of several files (-data PATTERN).
	place func(line int) (string, int)
	// rows, when not nil and lines is, holds the 1-based row in the data
	// of each frame row (Lines counting rows): a -shard fit's own rows of
	// Parquet data.
	rows *datasets.Lines
}

// readOptions says how to read the data.
type readOptions struct {
	// categorical names columns read as categorical whatever their content.
	categorical []string
	// maxMemory, when positive, is the memory that reading may not exceed
	// (limitName says whose limit it is, for the message).
	maxMemory float64
	limitName string
	// progress, when not nil, is told the bytes read so far.
	progress func(read int64)
	// sizeHint is about how many bytes of CSV the input holds, 0 if
	// unknown (datasets.Reader.SizeHint).
	sizeHint int64
	// reserveRows is about how many rows the input holds, 0 if unknown
	// (datasets.Reader.ReserveRows), and numeric names the columns known
	// to be numeric (datasets.Reader.Numeric).
	reserveRows int
	numeric     []string
}

// csvBytesMemory is the peak memory of reading CSV per byte of
// (decompressed) CSV: the reader streams fields into columns of 9 bytes
// a value (a float64 and a missing flag) or 16 (a label), and fields
// take a few bytes each, up to about 2.5 bytes of columns per byte of
// CSV for short numbers; the reader's peak stays within 1.3 times its
// final columns (datasets.TestReadMemory). The 10^6-subject simulated
// file of 574 MB took 446 MB.
const csvBytesMemory = 2.5

// readInput reads a CSV file, or standard input for "-", in one streaming
// pass (gzip-compressed input is recognised and decompressed on the way),
// so that memory holds the columns and not the file; a .parquet file or a
// directory is read as Parquet (readParquetInput).
func readInput(ctx context.Context, path string, stdin io.Reader, ro readOptions) (*input, error) {
	if path != "-" && isPattern(path) {
		files, err := dataFiles(path)
		if err != nil {
			return nil, err
		}
		fr := newFilesReader(ctx, files)
		defer fr.Close()
		in, err := readCSVText(&ctxReader{ctx: ctx, r: fr, progress: ro.progress}, filepath.Base(path), path, ro, fr.place)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if fr.err != nil && fr.err != io.EOF {
				return nil, fr.err
			}
			return nil, err
		}
		return in, nil
	}
	if path != "-" && isParquet(path) {
		return readParquetInput(ctx, path, ro.categorical)
	}
	var (
		src  io.Reader
		name string
	)
	if path == "-" {
		name = "stdin"
		src = stdin
	} else {
		name = filepath.Base(path)
		fh, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("cannot read data file: %v", pathError(err))
		}
		defer fh.Close()
		src = fh
		ro.sizeHint = datasets.TextSize(fh)
	}
	return readCSVInput(&ctxReader{ctx: ctx, r: src, progress: ro.progress}, name, path, ro)
}

// ctxReader stops reading once its context is done (a signal or
// -timeout), so that a large file does not hold the program, and tells
// progress how far it is.
type ctxReader struct {
	ctx      context.Context
	r        io.Reader
	read     int64
	progress func(int64)
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	c.read += int64(n)
	if c.progress != nil {
		c.progress(c.read)
	}
	return n, err
}

// memoryReader stops reading CSV once the memory it will take exceeds the
// limit, before the machine runs out of it (a small gzip file can hold
// gigabytes of CSV).
type memoryReader struct {
	r           io.Reader
	read        int64
	limit       float64
	name, whose string
}

// tooBigError is the error of a memoryReader at its limit.
type tooBigError struct{ msg string }

func (e *tooBigError) Error() string { return e.msg }

func (m *memoryReader) Read(p []byte) (int, error) {
	n, err := m.r.Read(p)
	m.read += int64(n)
	if need := csvBytesMemory * float64(m.read); need > m.limit {
		return n, &tooBigError{fmt.Sprintf("%s: after %.3g GB of CSV (decompressed) reading already needs about %.3g GB, more than %s (%.3g GB): use a machine with more memory, or read a subset of the rows", m.name, float64(m.read)/1e9, need/1e9, m.whose, m.limit/1e9)}
	}
	return n, err
}

// parseInput reads CSV bytes (the built-in example).
func parseInput(raw []byte, name, path string, categorical []string) (*input, error) {
	return readCSVInput(bytes.NewReader(raw), name, path, readOptions{categorical: categorical})
}

// readCSVInput reads CSV from src, gunzipping it first if it is
// gzip-compressed, after dialect has looked at its head.
func readCSVInput(src io.Reader, name, path string, ro readOptions) (*input, error) {
	r, done, err := csvText(src, name)
	if err != nil {
		return nil, err
	}
	defer done()
	return readCSVText(r, name, path, ro, nil)
}

// readCSVText reads CSV text (csvText); place, if not nil, names the file
// and line of a line of several files' text (datasets.Reader.Place).
func readCSVText(r io.Reader, name, path string, ro readOptions, place func(int) (string, int)) (*input, error) {
	if ro.maxMemory > 0 {
		r = &memoryReader{r: r, limit: ro.maxMemory, name: name, whose: ro.limitName}
	}
	cr := datasets.NewReader(r)
	cr.File = name
	cr.Place = place
	cr.Categorical = ro.categorical
	cr.SizeHint = ro.sizeHint
	cr.ReserveRows = ro.reserveRows
	cr.Numeric = ro.numeric
	if ro.maxMemory > 0 {
		// Reserve no more than reading may take.
		cr.SizeHint = min(cr.SizeHint, int64(ro.maxMemory/csvBytesMemory))
	}
	fr, err := cr.Read()
	if tb := (*tooBigError)(nil); errors.As(err, &tb) {
		return nil, tb
	}
	if err != nil {
		return nil, err // a *datasets.ParseError naming file, line and column
	}
	return &input{frame: fr, name: name, path: path, lines: cr.Lines, place: place}, nil
}

// csvText returns the CSV text of src, gunzipped if it is
// gzip-compressed, after dialect has looked at its head, with classic Mac
// line ends turned into LF; done releases what reading it took.
func csvText(src io.Reader, name string) (r io.Reader, done func(), err error) {
	br, done, err := datasets.Uncompressed(src)
	if err != nil {
		return nil, done, fmt.Errorf("%s: %v", name, err)
	}
	head, err := br.Peek(4096)
	if err != nil && err != io.EOF && err != bufio.ErrBufferFull {
		done()
		return nil, func() {}, fmt.Errorf("%s: %v", name, err)
	}
	crOnly, err := dialect(head, name)
	if err != nil {
		done()
		return nil, func() {}, err
	}
	r = br
	if crOnly {
		r = crToLF{br}
	}
	return r, done, nil
}

// crToLF turns the CR line ends of classic Mac files into LF.
type crToLF struct{ r io.Reader }

func (c crToLF) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for i, b := range p[:n] {
		if b == '\r' {
			p[i] = '\n'
		}
	}
	return n, err
}

// line returns the file line of data row k (0-based) and whether it is
// known.
func (in *input) line(k int) (int, bool) {
	if in.lines == nil || k < 0 || k >= in.lines.Len() {
		return 0, false
	}
	return in.lines.Line(k), true
}

// where names data row k and column col of the input: "data.csv: line 7,
// column 2 ("y")", or with "row" for data that do not come from a file.
func (in *input) where(k int, col string) string {
	s := in.name + ": "
	if l, ok := in.line(k); ok {
		if in.place != nil {
			var name string
			name, l = in.place(l)
			s = name + ": "
		}
		s += fmt.Sprintf("line %d", l)
	} else if in.rows != nil && k >= 0 && k < in.rows.Len() {
		s += fmt.Sprintf("row %d", in.rows.Line(k))
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

// dialect looks at the head of a CSV file and returns an error that says
// what kind of file this is and what to do: UTF-16 and UTF-32 files (a
// byte-order mark, or NUL bytes), semicolon- and tab-separated files (no
// comma in the header line but several of one or the other). It reports
// classic Mac line ends (CR alone), which the caller turns into LF.
func dialect(head []byte, name string) (crOnly bool, err error) {
	switch {
	case bytes.HasPrefix(head, []byte{0xff, 0xfe}), bytes.HasPrefix(head, []byte{0xfe, 0xff}),
		bytes.HasPrefix(head, []byte{0, 0, 0xfe, 0xff}), bytes.IndexByte(head, 0) >= 0:
		return false, fmt.Errorf("%s: the file is UTF-16 or UTF-32 encoded (it has NUL bytes); save it as UTF-8 CSV (R: write.csv(d, file, fileEncoding = \"UTF-8\"); Excel: Save As \"CSV UTF-8\")", name)
	}
	crOnly = bytes.IndexByte(head, '\n') < 0 && bytes.IndexByte(head, '\r') >= 0
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
				return false, fmt.Errorf("%s: the header %q has no commas but %d %ss: the file is %s-separated; glmmfit reads comma-separated CSV with decimal points (R: write.csv; Excel: Save As \"CSV UTF-8 (Comma delimited)\")", name, string(header), n, sep.what, sep.what)
			}
		}
	}
	return crOnly, nil
}

// subset returns the input restricted to the given rows, in order, with
// their line numbers.
func (in *input) subset(rows []int) *input {
	out := &input{frame: in.frame.Rows(rows), name: in.name, path: in.path, place: in.place}
	if in.lines != nil {
		out.lines = &datasets.Lines{}
		for _, i := range rows {
			out.lines.Add(in.lines.Line(i))
		}
	}
	return out
}
