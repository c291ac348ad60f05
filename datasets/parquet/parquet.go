// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package parquet reads Parquet files, and directories of them, into the
// column store of package datasets, giving the same columns, kinds and
// missing values as package datasets gives for the same data as CSV.
//
// Columns map by their type:
//
//   - INT32 and INT64, signed or unsigned and of any bit width, FLOAT and
//     DOUBLE are numeric (integers beyond 2^53, which a float64 cannot
//     hold exactly, are an error wrapping ErrInexact). So is DECIMAL,
//     stored as INT32, INT64, FIXED_LEN_BYTE_ARRAY or BYTE_ARRAY: the
//     float64 nearest the decimal, as strconv.ParseFloat gives for its
//     text.
//   - BYTE_ARRAY (strings, enums, JSON, bytes), dictionary-encoded or not,
//     and FIXED_LEN_BYTE_ARRAY are categorical, the bytes being the
//     labels; a UUID is labelled by its canonical text.
//   - BOOLEAN is categorical with the labels FALSE and TRUE, as R writes a
//     logical.
//   - DATE is categorical with labels such as "2024-02-29", and TIMESTAMP
//     with labels such as "2024-02-29 13:45:00.25" (a trailing "Z" when
//     adjusted to UTC): the text a CSV file holds, which the CSV reader
//     reads as labels.
//   - Nested and repeated columns, INT96, TIME, INTERVAL and FLOAT16 are
//     errors wrapping ErrUnsupported that name the column.
//
// A null is a missing value, as an empty CSV field is, and so is an
// empty string; a column without a value is numeric, as in CSV. NaN and
// infinite numbers are errors wrapping datasets.ErrNonFinite, as in CSV.
//
// The footers are read first and the columns allocated once at their
// final length; then the files are read row group by row group and page
// by page into them, so that memory holds the columns and a page, never
// the file. The Parquet library, github.com/parquet-go/parquet-go, is
// imported by this package alone; a panic of its decoder on a damaged
// file is an error wrapping ErrCorrupt that names the file.
package parquet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	pq "github.com/parquet-go/parquet-go"

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
	// ErrCorrupt marks a file the decoder cannot read: not Parquet, cut
	// short or damaged.
	ErrCorrupt = errors.New("damaged Parquet file")
)

// Error is the error of a read. It names the file and, when known, the
// column and the 1-based row within that file.
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

// ReadFile reads a Parquet file, or the .parquet files of a directory in
// the order of their names, into a Frame.
func ReadFile(path string) (*datasets.Frame, error) {
	return ReadFileContext(context.Background(), path)
}

// ReadFileContext is ReadFile that stops, with the context's error, when
// ctx ends; it checks ctx between pages.
//
// In a directory, names starting with "." or "_" are skipped, as Spark
// and Hive write them beside the data. The files must have the same
// column names in the same order, each column of one kind (INT32 and
// DOUBLE mix, as do optional and required columns); otherwise the error
// names the first file that differs and wraps ErrSchema.
func ReadFileContext(ctx context.Context, path string) (*datasets.Frame, error) {
	files, err := listFiles(path)
	if err != nil {
		return nil, err
	}
	// The footers first: the columns, and the rows to allocate.
	var rd reader
	if err := rd.footers(files); err != nil {
		return nil, err
	}
	if err := rd.alloc(files[0]); err != nil {
		return nil, err
	}
	for _, name := range files {
		err := withFile(name, func(f *pq.File) error {
			return rd.read(ctx, f, name)
		})
		if err != nil {
			return nil, err
		}
	}
	return rd.frame()
}

// Read reads one Parquet file of size bytes from r; name is used in
// errors.
func Read(ctx context.Context, r io.ReaderAt, size int64, name string) (*datasets.Frame, error) {
	var rd reader
	err := guard(name, func() error {
		f, err := open(r, size)
		if err != nil {
			return err
		}
		if err := rd.schema(f, name); err != nil {
			return err
		}
		if err := rd.footer(f, name); err != nil {
			return err
		}
		if err := rd.alloc(name); err != nil {
			return err
		}
		return rd.read(ctx, f, name)
	})
	if err != nil {
		return nil, err
	}
	return rd.frame()
}

// listFiles returns path, or the Parquet files of the directory path in
// name order.
func listFiles(path string) ([]string, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.IsDir() {
		return []string{path}, nil
	}
	entries, err := os.ReadDir(path) // sorted by name
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".parquet") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") || e.IsDir() {
			continue
		}
		files = append(files, filepath.Join(path, name))
	}
	if len(files) == 0 {
		return nil, &Error{File: path, Err: ErrNoFiles}
	}
	return files, nil
}

// guard calls fn, turning a panic of the decoder into an error wrapping
// ErrCorrupt, and any error not yet an *Error, but a context's, into one
// naming the file.
func guard(name string, fn func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
		var e *Error
		if err != nil && !errors.As(err, &e) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			err = &Error{File: name, Err: err}
		}
	}()
	return fn()
}

// open reads the footer of a file.
func open(r io.ReaderAt, size int64) (*pq.File, error) {
	f, err := pq.OpenFile(r, size, pq.SkipPageIndex(true), pq.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return f, nil
}

// withFile opens the file name and calls fn with it, under guard.
func withFile(name string, fn func(*pq.File) error) error {
	return guard(name, func() error {
		fh, err := os.Open(name)
		if err != nil {
			return err
		}
		defer fh.Close()
		st, err := fh.Stat()
		if err != nil {
			return err
		}
		f, err := open(fh, st.Size())
		if err != nil {
			return err
		}
		return fn(f)
	})
}

// footers checks the schemas and the row counts of the files' footers.
func (rd *reader) footers(files []string) error {
	for _, name := range files {
		err := withFile(name, func(f *pq.File) error {
			if err := rd.schema(f, name); err != nil {
				return err
			}
			return rd.footer(f, name)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// reader gathers the columns of one or more files.
type reader struct {
	cols     []*column
	total    int64   // rows of all files, from the footers
	fileRows []int64 // the rows of each file
	size     int64   // bytes of all files
}

// maxRowsPerByte bounds the rows allocated ahead for each byte of the
// files, so that a damaged footer claiming 2^60 rows is an error, not an
// allocation that ends the process; a file of more rows per byte than
// this (a run-length-encoded constant column) is read all the same, its
// columns growing as they are read.
const maxRowsPerByte = 64

// footer checks the row counts of a file's footer and adds them up.
func (rd *reader) footer(f *pq.File, name string) error {
	var rows int64
	for _, rg := range f.RowGroups() {
		n := rg.NumRows()
		if n < 0 || rows+n < rows {
			return &Error{File: name, Err: fmt.Errorf("%w: a row group of %d rows", ErrCorrupt, n)}
		}
		rows += n
	}
	if rows != f.NumRows() {
		return &Error{File: name, Err: fmt.Errorf("%w: the row groups hold %d rows, the footer says %d", ErrCorrupt, rows, f.NumRows())}
	}
	rd.total += rows
	rd.fileRows = append(rd.fileRows, rows)
	rd.size += f.Size()
	if rd.total < 0 {
		return &Error{File: name, Err: fmt.Errorf("%w: more than 2^63 rows", ErrCorrupt)}
	}
	return nil
}

// schema checks the columns of a file: against the first file's, or as
// the first file's, setting up the columns. Either way the columns take
// the file's types, which may differ from the first's within a kind.
func (rd *reader) schema(f *pq.File, name string) error {
	top := f.Root().Columns()
	specs := make([]colSpec, len(top))
	for j, c := range top {
		if !c.Leaf() || c.Repeated() || c.Index() != j {
			return &Error{File: name, Column: c.Name(), Err: fmt.Errorf("%w: nested or repeated column", ErrUnsupported)}
		}
		s, err := specOf(c.Name(), c.Type())
		if err != nil {
			return &Error{File: name, Column: c.Name(), Err: err}
		}
		specs[j] = s
	}
	if rd.cols == nil {
		if len(specs) == 0 {
			return &Error{File: name, Err: fmt.Errorf("%w: no columns", ErrCorrupt)}
		}
		rd.cols = make([]*column, len(specs))
		for j, s := range specs {
			rd.cols[j] = &column{}
			rd.cols[j].setConv(s)
		}
		return nil
	}
	if len(specs) != len(rd.cols) {
		return &Error{File: name, Err: fmt.Errorf("%w: %d columns, the first file has %d", ErrSchema, len(specs), len(rd.cols))}
	}
	for j, s := range specs {
		if c := rd.cols[j]; s.name != c.name || s.conv.family() != c.first {
			return &Error{File: name, Column: s.name, Err: fmt.Errorf("%w: column %d is %q of %s (%s), the first file's %q of %s", ErrSchema, j+1, s.name, s.conv.family(), s.typ, c.name, c.first)}
		}
	}
	return nil
}

// alloc allocates the columns at the total row count.
func (rd *reader) alloc(name string) error {
	if int64(int(rd.total)) != rd.total {
		return &Error{File: name, Err: fmt.Errorf("%d rows are too many", rd.total)}
	}
	rows := min(rd.total, maxRowsPerByte*rd.size+1<<16)
	for _, c := range rd.cols {
		c.alloc(int(rows))
	}
	return nil
}

// read appends the rows of f, row group by row group and page by page.
func (rd *reader) read(ctx context.Context, f *pq.File, name string) error {
	top := f.Root().Columns()
	for j, c := range rd.cols {
		s, err := specOf(top[j].Name(), top[j].Type())
		if err != nil {
			return &Error{File: name, Column: c.name, Err: err}
		}
		c.setConv(s)
	}
	var row int64 // rows of f before the current row group
	for _, rg := range f.RowGroups() {
		chunks := rg.ColumnChunks()
		if len(chunks) != len(rd.cols) {
			return &Error{File: name, Err: fmt.Errorf("%w: a row group of %d columns, the schema has %d", ErrCorrupt, len(chunks), len(rd.cols))}
		}
		n := rg.NumRows()
		for j, cc := range chunks {
			if err := rd.cols[j].chunk(ctx, cc, row, n); err != nil {
				var e *Error
				if errors.As(err, &e) {
					e.File = name
				}
				return err
			}
		}
		row += n
	}
	if row != f.NumRows() {
		return &Error{File: name, Err: fmt.Errorf("%w: the row groups hold %d rows, the footer says %d", ErrCorrupt, row, f.NumRows())}
	}
	return nil
}

// chunk appends the n rows of one column chunk, whose first row is
// row+1 of the file.
func (c *column) chunk(ctx context.Context, cc pq.ColumnChunk, row, n int64) error {
	pages := cc.Pages()
	defer pages.Close()
	c.dict = nil
	start := c.len()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		got := int64(c.len() - start)
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return c.errorAt(row+got+1, fmt.Errorf("%w: %v", ErrCorrupt, err))
		}
		if got+p.NumRows() > n {
			pq.Release(p)
			return c.errorAt(row+got+1, fmt.Errorf("%w: the column's pages hold more than the row group's %d rows", ErrCorrupt, n))
		}
		err = c.page(p, row+got)
		pq.Release(p)
		if err != nil {
			return err
		}
	}
	if got := int64(c.len() - start); got != n {
		return c.errorAt(row+got+1, fmt.Errorf("%w: the column's pages hold %d rows, the row group %d", ErrCorrupt, got, n))
	}
	return nil
}

// errorAt returns an Error at the given 1-based row of the file; the
// caller sets the file.
func (c *column) errorAt(row int64, err error) error {
	return &Error{Row: int(row), Column: c.name, Err: err}
}

// frame returns the columns read as a Frame.
func (rd *reader) frame() (*datasets.Frame, error) {
	cols := make([]*datasets.Column, len(rd.cols))
	for j, c := range rd.cols {
		cols[j] = c.finish()
		rd.cols[j] = nil
	}
	return datasets.NewFrame(cols...)
}
