// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package parquet reads Parquet files, and directories of them, into the
// column store of package datasets, as package datasets reads CSV.
//
// Columns map by their physical type: DOUBLE, FLOAT, INT32 and INT64 are
// numeric (integers beyond 2^53, which a float64 cannot hold exactly, are
// an error), BYTE_ARRAY (strings, dictionary-encoded or not) categorical,
// and BOOLEAN categorical with the labels FALSE and TRUE, as R writes a
// logical. A null is a missing value, as an empty CSV field is; NaN and
// infinite numbers are errors, as in CSV. Nested and repeated columns,
// FIXED_LEN_BYTE_ARRAY, INT96 and DECIMAL columns are errors naming the
// column.
//
// The file is read row group by row group and page by page into the
// columns, never whole. The Parquet library, github.com/parquet-go/parquet-go,
// is imported by this package alone.
package parquet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	pq "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/sparsevi/sparsevi/datasets"
)

// Errors wrapped by the errors of the package.
var (
	// ErrUnsupported marks a column whose type the package does not read.
	ErrUnsupported = errors.New("unsupported column")
	// ErrSchema marks files of a directory whose columns differ.
	ErrSchema = errors.New("columns differ from the first file's")
	// ErrNoFiles marks a directory without .parquet files.
	ErrNoFiles = errors.New("no .parquet files")
	// ErrInexact marks an integer a float64 cannot hold exactly.
	ErrInexact = errors.New("integer beyond 2^53")
)

// Error is the error of a read. It names the file and, when known, the
// column and the 1-based row (counted across the files of a directory).
type Error struct {
	File   string
	Row    int // 0 when not about a row
	Column string
	Err    error
}

// Error returns a message of the form "file: row 3, column "x": problem".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	b.WriteString(": ")
	if e.Row > 0 {
		fmt.Fprintf(&b, "row %d", e.Row)
		if e.Column != "" {
			b.WriteString(", ")
		}
	}
	if e.Column != "" {
		fmt.Fprintf(&b, "column %q", e.Column)
	}
	if e.Row > 0 || e.Column != "" {
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ReadFile reads a Parquet file, or every .parquet file of a directory in
// the order of their names, into a Frame.
func ReadFile(path string) (*datasets.Frame, error) {
	return ReadFileContext(context.Background(), path)
}

// ReadFileContext is ReadFile that stops, with the context's error, when
// ctx ends; it checks ctx between pages.
func ReadFileContext(ctx context.Context, path string) (*datasets.Frame, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	files := []string{path}
	if st.IsDir() {
		files, err = filepath.Glob(filepath.Join(path, "*.parquet"))
		if err != nil {
			return nil, err
		}
		if len(files) == 0 {
			return nil, &Error{File: path, Err: ErrNoFiles}
		}
		slices.Sort(files)
	}
	var rd reader
	for _, name := range files {
		if err := rd.file(ctx, name); err != nil {
			return nil, err
		}
	}
	return rd.frame()
}

// Read reads one Parquet file of size bytes from r; name is used in
// errors.
func Read(ctx context.Context, r io.ReaderAt, size int64, name string) (*datasets.Frame, error) {
	var rd reader
	if err := rd.read(ctx, r, size, name); err != nil {
		return nil, err
	}
	return rd.frame()
}

// reader accumulates the columns of one or more files.
type reader struct {
	cols []*column
	rows int
}

// column is one column being read.
type column struct {
	name   string
	kind   pq.Kind
	num    []float64
	str    []string
	intern map[string]string
}

// maxIntern bounds the distinct labels a column shares among its rows.
const maxIntern = 1 << 16

func (rd *reader) file(ctx context.Context, name string) error {
	fh, err := os.Open(name)
	if err != nil {
		return err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	return rd.read(ctx, fh, st.Size(), name)
}

func (rd *reader) read(ctx context.Context, r io.ReaderAt, size int64, name string) error {
	f, err := pq.OpenFile(r, size, pq.SkipPageIndex(true), pq.SkipBloomFilters(true))
	if err != nil {
		return &Error{File: name, Err: err}
	}
	fields := f.Schema().Fields()
	if err := rd.schema(fields, name); err != nil {
		return err
	}
	n := int(f.NumRows())
	for _, c := range rd.cols {
		if c.categorical() {
			c.str = slices.Grow(c.str, n)
		} else {
			c.num = slices.Grow(c.num, n)
		}
	}
	buf := make([]pq.Value, 4096)
	for _, rg := range f.RowGroups() {
		start := rd.rows
		for j, cc := range rg.ColumnChunks() {
			c := rd.cols[j]
			row := start
			pages := cc.Pages()
			for {
				if err := ctx.Err(); err != nil {
					pages.Close()
					return err
				}
				p, err := pages.ReadPage()
				if errors.Is(err, io.EOF) {
					break
				}
				if err != nil {
					pages.Close()
					return &Error{File: name, Column: c.name, Err: err}
				}
				row, err = c.page(p, buf, row)
				pq.Release(p)
				if err != nil {
					pages.Close()
					return &Error{File: name, Row: row + 1, Column: c.name, Err: err}
				}
			}
			pages.Close()
		}
		rd.rows += int(rg.NumRows())
		for _, c := range rd.cols {
			if c.len() != rd.rows {
				return &Error{File: name, Column: c.name, Err: fmt.Errorf("%d values in a row group of %d rows", c.len()-start, rd.rows-start)}
			}
		}
	}
	return nil
}

// schema checks the fields of a file: against the first file's, or as the
// first file's, setting up the columns.
func (rd *reader) schema(fields []pq.Field, name string) error {
	if rd.cols != nil {
		if len(fields) != len(rd.cols) {
			return &Error{File: name, Err: fmt.Errorf("%w: %d columns, the first file has %d", ErrSchema, len(fields), len(rd.cols))}
		}
		for j, fd := range fields {
			if c := rd.cols[j]; fd.Name() != c.name || !fd.Leaf() || fd.Type().Kind() != c.kind {
				return &Error{File: name, Column: fd.Name(), Err: fmt.Errorf("%w: column %d is %q of type %v, the first file's %q of type %v", ErrSchema, j+1, fd.Name(), fd.Type(), c.name, c.kind)}
			}
		}
		return nil
	}
	for _, fd := range fields {
		if !fd.Leaf() || fd.Repeated() {
			return &Error{File: name, Column: fd.Name(), Err: fmt.Errorf("%w: nested or repeated column", ErrUnsupported)}
		}
		t := fd.Type()
		if lt := t.LogicalType(); lt != nil && isDecimal(lt.Value) {
			return &Error{File: name, Column: fd.Name(), Err: fmt.Errorf("%w: DECIMAL column (write it as DOUBLE)", ErrUnsupported)}
		}
		switch k := t.Kind(); k {
		case pq.Boolean, pq.Int32, pq.Int64, pq.Float, pq.Double, pq.ByteArray:
			rd.cols = append(rd.cols, &column{name: fd.Name(), kind: k})
		default:
			return &Error{File: name, Column: fd.Name(), Err: fmt.Errorf("%w: type %v", ErrUnsupported, k)}
		}
	}
	return nil
}

// isDecimal reports whether a logical type is DECIMAL.
func isDecimal(v format.LogicalTypeValue) bool {
	_, ok := v.(*format.DecimalType)
	return ok
}

func (c *column) categorical() bool { return c.kind == pq.ByteArray || c.kind == pq.Boolean }

func (c *column) len() int {
	if c.categorical() {
		return len(c.str)
	}
	return len(c.num)
}

// page appends the values of page p, row being the index of its first
// row; it returns the index after its last, or of the row at fault.
func (c *column) page(p pq.Page, buf []pq.Value, row int) (int, error) {
	vr := p.Values()
	for {
		n, err := vr.ReadValues(buf)
		for _, v := range buf[:n] {
			if err := c.value(v); err != nil {
				return row, err
			}
			row++
		}
		if errors.Is(err, io.EOF) {
			return row, nil
		}
		if err != nil {
			return row, err
		}
		if n == 0 {
			return row, io.ErrNoProgress
		}
	}
}

// value appends one value.
func (c *column) value(v pq.Value) error {
	if v.IsNull() {
		if c.categorical() {
			c.str = append(c.str, "")
		} else {
			c.num = append(c.num, math.NaN())
		}
		return nil
	}
	var x float64
	switch c.kind {
	case pq.Double:
		x = v.Double()
	case pq.Float:
		x = float64(v.Float())
	case pq.Int32:
		x = float64(v.Int32())
	case pq.Int64:
		i := v.Int64()
		if i > 1<<53 || i < -(1<<53) {
			return fmt.Errorf("%w: %d", ErrInexact, i)
		}
		x = float64(i)
	case pq.Boolean:
		c.str = append(c.str, map[bool]string{false: "FALSE", true: "TRUE"}[v.Boolean()])
		return nil
	case pq.ByteArray:
		c.str = append(c.str, c.label(v.ByteArray()))
		return nil
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return fmt.Errorf("%w: %v", datasets.ErrNonFinite, x)
	}
	c.num = append(c.num, x)
	return nil
}

// label returns b as a string, shared with earlier rows of the same label.
func (c *column) label(b []byte) string {
	if s, ok := c.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if c.intern == nil {
		c.intern = make(map[string]string)
	}
	if len(c.intern) < maxIntern {
		c.intern[s] = s
	}
	return s
}

// frame returns the columns read as a Frame.
func (rd *reader) frame() (*datasets.Frame, error) {
	cols := make([]*datasets.Column, len(rd.cols))
	for j, c := range rd.cols {
		if c.categorical() {
			cols[j] = datasets.NewCategorical(c.name, c.str)
		} else {
			cols[j] = datasets.NewNumeric(c.name, c.num)
		}
	}
	return datasets.NewFrame(cols...)
}
