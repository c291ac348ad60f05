// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package parquet reads Apache Parquet files into a datasets.Frame, giving
// the same columns, kinds and missing values as the CSV reader of package
// datasets gives for the same data written as CSV.
//
// ReadFile reads one file, or a directory of files read in name order and
// concatenated. The file is read row group by row group and page by page
// into the final columns, which are allocated once at their full length
// (the row counts are in the files' footers), so that memory holds the
// columns and one page at a time, not the file.
//
// # Columns
//
// Only flat schemas are read: every column must be a top-level primitive
// column, required or optional (nullable); lists, maps and structs are an
// error wrapping ErrUnsupported. The kind of a column follows from its
// type:
//
//   - INT32 and INT64, signed or unsigned and of any bit width, FLOAT and
//     DOUBLE are Numeric; so is DECIMAL, whatever it is stored as, read as
//     the float64 nearest to the decimal, as strconv.ParseFloat gives for
//     its text (DuckDB, for one, writes the decimals of more than 18
//     digits as fixed-length byte arrays). NaN and infinite
//     values are not data, as in a CSV file: they are an error wrapping
//     datasets.ErrNonFinite naming the row.
//   - BYTE_ARRAY (strings, enums, JSON, or bytes without a logical type),
//     dictionary-encoded or not, is Categorical, the bytes being the
//     labels. So are FIXED_LEN_BYTE_ARRAY columns; a UUID is written in
//     its canonical form, as in "123e4567-e89b-12d3-a456-426614174000".
//   - BOOLEAN is Categorical with the labels "false" and "true", the
//     column a CSV file holding those words would give.
//   - DATE is Categorical with labels such as "2024-02-29", and TIMESTAMP
//     with labels such as "2024-02-29 13:45:00.25", with a trailing "Z"
//     when the timestamp is adjusted to UTC: the text of a CSV file, which
//     the CSV reader also reads as labels.
//   - Other types (INT96, TIME, INTERVAL, FLOAT16, geometry, variants) are an error wrapping ErrUnsupported that names
//     the column.
//
// A column can be read as categorical whatever its type by naming it in
// Options.Categorical; numbers then become the labels datasets.WriteCSV
// writes for them (integers below 1e15 in full, others in the shortest
// form that reads back exactly).
//
// A null is a missing value, as an empty field is in a CSV file: Missing
// is true, and the value is NaN in a numeric column and "" in a
// categorical one. An empty string is missing too (a categorical column
// never holds the label ""), but strings such as "NA" are labels, since a
// Parquet file has nulls for missing values. A column with no non-null
// value is Numeric, as in a CSV file.
//
// # Errors
//
// Problems in a file are reported as a *ParseError naming the file, and
// where it applies the 1-based row within that file and the column number
// and name, in the style of datasets.ParseError.
package parquet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/sparsevi/sparsevi/datasets"
)

// Sentinel errors wrapped by a ParseError; test for them with errors.Is.
// Problems of the kind the CSV reader also meets wrap datasets' sentinels:
// datasets.ErrNonFinite for a NaN or infinite number, datasets.ErrNoRows
// for input without rows and datasets.ErrHeaderName for an empty column
// name.
var (
	ErrUnsupported = errors.New("unsupported column type")
	ErrSchema      = errors.New("schema does not match the first file's")
	ErrNoFiles     = errors.New("no .parquet files in the directory")
	ErrCorrupt     = errors.New("malformed Parquet file")
)

// errNoRows is the error of input without rows: it is
// datasets.ErrNoRows, without the CSV reader's header in its message.
type errNoRows struct{}

func (errNoRows) Error() string        { return "no rows" }
func (errNoRows) Is(target error) bool { return target == datasets.ErrNoRows }

// ParseError is the error returned for a problem in a Parquet file. It
// names the place of the problem and wraps one of the sentinel errors of
// this package or of datasets, or an error of the Parquet decoder.
type ParseError struct {
	File   string // the file's base name
	Row    int    // 1-based row within the file; 0 when no row is meant
	Column int    // 1-based column number; 0 when the whole file is meant
	Name   string // the column's name, when known
	Err    error  // the underlying error
}

// Error returns a message of the form
// "file: row 3, column 2 ("name"): problem", leaving out the parts that
// are not known.
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	sep := ": "
	if e.Row > 0 {
		fmt.Fprintf(&b, "%srow %d", sep, e.Row)
		sep = ", "
	}
	if e.Column > 0 {
		fmt.Fprintf(&b, "%scolumn %d", sep, e.Column)
		if e.Name != "" {
			fmt.Fprintf(&b, " (%q)", e.Name)
		}
	} else if e.Name != "" {
		fmt.Fprintf(&b, "%scolumn %q", sep, e.Name)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// Options adjusts how a file is read. The zero Options reads every column
// with the kind its type gives.
type Options struct {
	// Categorical names columns to read as Categorical whatever their
	// type, as datasets.Reader.Categorical does for a CSV file. Names
	// that are not columns are ignored.
	Categorical []string
}

// ReadFile reads the Parquet file at path, or the Parquet files of the
// directory path, into a Frame; see ReadFileContext.
func ReadFile(path string) (*datasets.Frame, error) {
	return ReadFileContext(context.Background(), path, Options{})
}

// ReadFileContext reads the Parquet file at path into a Frame, stopping
// with ctx's error once ctx is done.
//
// If path is a directory, its regular files whose names end in ".parquet"
// are read in name order and their rows concatenated; names starting with
// "." or "_" are skipped, as Spark and Hive do. All files must have the
// same column names in the same order, and each column the same kind
// (optional and required columns mix); otherwise the error names the
// first file that differs and wraps ErrSchema. A directory without such
// files is an error wrapping ErrNoFiles.
//
// Errors in a file are *ParseError values; an unreadable path gives the
// error of package os.
func ReadFileContext(ctx context.Context, path string, opts Options) (*datasets.Frame, error) {
	paths, err := listFiles(path)
	if err != nil {
		return nil, err
	}
	forced := make(map[string]bool, len(opts.Categorical))
	for _, name := range opts.Categorical {
		forced[name] = true
	}

	// The footers first: the schema each file must share, and the total
	// number of rows, so that the columns are allocated once.
	var (
		schema []colSpec
		total  int64
	)
	for k, p := range paths {
		err := withFile(p, func(f *parquet.File) error {
			specs, err := fileSchema(f, forced)
			if err != nil {
				return err
			}
			if k == 0 {
				schema = specs
			} else if err := sameSchema(schema, specs, filepath.Base(paths[0])); err != nil {
				return err
			}
			total += f.NumRows()
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if total == 0 {
		return nil, &ParseError{File: filepath.Base(paths[0]), Err: errNoRows{}}
	}
	if int64(int(total)) != total {
		return nil, &ParseError{File: filepath.Base(paths[0]), Err: fmt.Errorf("%d rows are too many", total)}
	}

	cols := make([]*column, len(schema))
	for j, s := range schema {
		cols[j] = newColumn(s, j+1, int(total))
	}
	for _, p := range paths {
		err := withFile(p, func(f *parquet.File) error {
			// Each file's own types, which may differ from the first's
			// within a kind.
			specs, err := fileSchema(f, forced)
			if err != nil {
				return err
			}
			for j, c := range cols {
				c.setConv(specs[j])
			}
			return readRows(ctx, f, cols)
		})
		if err != nil {
			return nil, err
		}
	}

	out := make([]*datasets.Column, len(cols))
	for j, c := range cols {
		out[j] = c.finish(forced[c.name])
		cols[j] = nil
	}
	return datasets.NewFrame(out...)
}

// listFiles returns path, or the Parquet files of the directory path.
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
	var paths []string
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".parquet") || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
			continue
		}
		if e.Type().IsRegular() || e.Type()&os.ModeSymlink != 0 {
			paths = append(paths, filepath.Join(path, name))
		}
	}
	if len(paths) == 0 {
		return nil, &ParseError{File: filepath.Base(path), Err: ErrNoFiles}
	}
	sort.Strings(paths)
	return paths, nil
}

// withFile opens the Parquet file at path and calls fn with it. Errors
// that are not yet a *ParseError are turned into one naming the file; a
// panic of the decoder on a malformed file is an error wrapping
// ErrCorrupt.
func withFile(path string, fn func(*parquet.File) error) (err error) {
	name := filepath.Base(path)
	defer func() {
		if r := recover(); r != nil {
			err = &ParseError{File: name, Err: fmt.Errorf("%w: %v", ErrCorrupt, r)}
		}
		var pe *ParseError
		if err != nil && !errors.As(err, &pe) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
			err = &ParseError{File: name, Err: err}
		}
		if errors.As(err, &pe) && pe.File == "" {
			pe.File = name
		}
	}()
	fh, err := os.Open(path)
	if err != nil {
		return err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	if st.IsDir() {
		return fmt.Errorf("%w: a directory", ErrCorrupt)
	}
	f, err := parquet.OpenFile(fh, st.Size(),
		parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrCorrupt, err)
	}
	return fn(f)
}

// fileSchema returns how each column of f is read.
func fileSchema(f *parquet.File, forced map[string]bool) ([]colSpec, error) {
	top := f.Root().Columns()
	if len(top) == 0 {
		return nil, fmt.Errorf("%w: no columns", ErrCorrupt)
	}
	specs := make([]colSpec, len(top))
	for j, c := range top {
		name := c.Name()
		if strings.TrimSpace(name) == "" {
			return nil, &ParseError{Column: j + 1, Err: datasets.ErrHeaderName}
		}
		if !c.Leaf() || c.Repeated() || c.Index() != j {
			return nil, &ParseError{Column: j + 1, Name: name,
				Err: fmt.Errorf("%w: nested or repeated column (only flat columns are read)", ErrUnsupported)}
		}
		s, err := specOf(name, c.Type(), forced[name])
		if err != nil {
			return nil, &ParseError{Column: j + 1, Name: name, Err: err}
		}
		specs[j] = s
	}
	return specs, nil
}

// sameSchema checks the columns of a later file against the first's.
func sameSchema(first, later []colSpec, firstName string) error {
	if len(first) != len(later) {
		return fmt.Errorf("%w: %d columns, %s has %d", ErrSchema, len(later), firstName, len(first))
	}
	for j := range first {
		a, b := first[j], later[j]
		switch {
		case a.name != b.name:
			return &ParseError{Column: j + 1, Name: b.name,
				Err: fmt.Errorf("%w: column %d is %q in %s", ErrSchema, j+1, a.name, firstName)}
		case a.kind != b.kind || a.conv.family() != b.conv.family():
			return &ParseError{Column: j + 1, Name: b.name,
				Err: fmt.Errorf("%w: %s (%v) here, %s (%v) in %s", ErrSchema, b.typ, b.kind, a.typ, a.kind, firstName)}
		}
	}
	return nil
}

// readRows appends the rows of f to cols, row group by row group and page
// by page.
func readRows(ctx context.Context, f *parquet.File, cols []*column) error {
	var row int64 // rows of f before the current row group
	for _, rg := range f.RowGroups() {
		chunks := rg.ColumnChunks()
		if len(chunks) != len(cols) {
			return fmt.Errorf("%w: a row group has %d columns, the schema %d", ErrCorrupt, len(chunks), len(cols))
		}
		n := rg.NumRows()
		for j, cc := range chunks {
			if err := cols[j].readChunk(ctx, cc, row, n); err != nil {
				return err
			}
		}
		row += n
	}
	if row != f.NumRows() {
		return fmt.Errorf("%w: the row groups hold %d rows, the footer says %d", ErrCorrupt, row, f.NumRows())
	}
	return nil
}

// readChunk appends the n rows of one column chunk, whose first row is
// row+1 of the file.
func (c *column) readChunk(ctx context.Context, cc parquet.ColumnChunk, row, n int64) error {
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
			parquet.Release(p)
			return c.errorAt(row+got+1, fmt.Errorf("%w: the column's pages hold more than the row group's %d rows", ErrCorrupt, n))
		}
		err = c.page(p, row+got)
		parquet.Release(p)
		if err != nil {
			return err
		}
	}
	if got := int64(c.len() - start); got != n {
		return c.errorAt(row+got+1, fmt.Errorf("%w: the column's pages hold %d rows, the row group %d", ErrCorrupt, got, n))
	}
	return nil
}

// errorAt returns a ParseError at the given 1-based row of the file.
func (c *column) errorAt(row int64, err error) error {
	return &ParseError{Row: int(row), Column: c.index, Name: c.name, Err: err}
}
