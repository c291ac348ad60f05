// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquet

import (
	"context"
	"errors"
	"fmt"

	pq "github.com/parquet-go/parquet-go"

	"github.com/sparsevi/sparsevi/datasets"
)

// ReadPieces reads the Parquet file, or the .parquet files of a directory,
// at path a row group at a time, with the checks of ReadFileContext,
// holding one row group's columns at a time: fn gets each row group's rows,
// in the order of the files and of their row groups, as a Frame of the
// columns named (all of them, in the file's order, when names is nil),
// and the number of rows of the files before it. An error of fn ends the
// read and is returned as it is.
//
// A column of labels is categorical in every piece, even where the piece
// or the whole input has no label in it; ReadFileContext makes a column
// without any label numeric, as the CSV reader does, which a caller that
// needs the same kinds finds in a first read.
func ReadPieces(ctx context.Context, path string, names []string, fn func(fr *datasets.Frame, before int) error) error {
	return readPieces(ctx, path, 0, -1, names, func(fr *datasets.Frame, _, before int) error { return fn(fr, before) })
}

// Files returns the files that ReadFile and ReadPieces read at path, in
// their order: path itself, or the .parquet files of the directory path
// in the order of their names.
func Files(path string) ([]string, error) { return listFiles(path) }

// ReadPiecesOf is ReadPieces of the files [lo, hi) of Files(path) alone,
// for readers that share the files out among themselves: it checks the
// footers of all the files, as ReadPieces does, and reads the rows of
// those files alone. fn gets the index of each piece's file in Files(path)
// and the number of rows of all the files before the piece.
func ReadPiecesOf(ctx context.Context, path string, lo, hi int, names []string, fn func(fr *datasets.Frame, file, before int) error) error {
	if lo < 0 || hi < lo {
		panic("parquet: ReadPiecesOf: bad range of files")
	}
	return readPieces(ctx, path, lo, hi, names, fn)
}

// readPieces is ReadPiecesOf, of all the files when hi is -1.
func readPieces(ctx context.Context, path string, lo, hi int, names []string, fn func(fr *datasets.Frame, file, before int) error) error {
	files, err := listFiles(path)
	if err != nil {
		return err
	}
	if hi < 0 {
		hi = len(files)
	}
	if hi > len(files) {
		return &Error{File: path, Err: fmt.Errorf("files [%d, %d) asked of %d", lo, hi, len(files))}
	}
	var rd reader
	if err := rd.footers(files); err != nil {
		return err
	}
	sel, err := rd.selected(files[0], names)
	if err != nil {
		return err
	}
	before := 0
	for _, n := range rd.fileRows[:lo] {
		before += int(n)
	}
	for k := lo; k < hi; k++ {
		name := files[k]
		var fnErr error
		err := withFile(name, func(f *pq.File) error {
			return rd.pieces(ctx, f, name, sel, func(fr *datasets.Frame) error {
				if err := fn(fr, k, before); err != nil {
					fnErr = err
					return err
				}
				before += fr.NumRows()
				return nil
			})
		})
		if fnErr != nil {
			return fnErr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// selected returns the indices of the columns named, all of them for nil.
func (rd *reader) selected(file string, names []string) ([]int, error) {
	if names == nil {
		sel := make([]int, len(rd.cols))
		for j := range sel {
			sel[j] = j
		}
		return sel, nil
	}
	sel := make([]int, 0, len(names))
	for _, n := range names {
		j := -1
		for k, c := range rd.cols {
			if c.name == n {
				j = k
				break
			}
		}
		if j < 0 {
			return nil, &Error{File: file, Column: n, Err: datasets.ErrNoColumn}
		}
		sel = append(sel, j)
	}
	return sel, nil
}

// pieces reads the row groups of f, each into new columns sel, and passes
// them to emit as a Frame.
func (rd *reader) pieces(ctx context.Context, f *pq.File, name string, sel []int, emit func(*datasets.Frame) error) error {
	top := f.Root().Columns()
	specs := make([]colSpec, len(sel))
	for k, j := range sel {
		s, err := specOf(top[j].Name(), top[j].Type())
		if err != nil {
			return &Error{File: name, Column: top[j].Name(), Err: err}
		}
		specs[k] = s
	}
	var row int64 // rows of f before the current row group
	cols := make([]*datasets.Column, len(sel))
	for _, rg := range f.RowGroups() {
		chunks := rg.ColumnChunks()
		if len(chunks) != len(rd.cols) {
			return &Error{File: name, Err: fmt.Errorf("%w: a row group of %d columns, the schema has %d", ErrCorrupt, len(chunks), len(rd.cols))}
		}
		n := rg.NumRows()
		if int64(int(n)) != n {
			return &Error{File: name, Err: fmt.Errorf("a row group of %d rows is too large", n)}
		}
		for k, j := range sel {
			whole := rd.cols[j]
			c := &column{first: whole.first, numeric: whole.numeric}
			c.setConv(specs[k])
			c.alloc(int(n))
			if err := c.chunk(ctx, chunks[j], row, n); err != nil {
				var e *Error
				if errors.As(err, &e) {
					e.File = name
				}
				return err
			}
			cols[k] = c.piece()
		}
		fr, err := datasets.NewFrame(cols...)
		if err != nil {
			return &Error{File: name, Err: err}
		}
		if err := emit(fr); err != nil {
			return err
		}
		row += n
	}
	if row != f.NumRows() {
		return &Error{File: name, Err: fmt.Errorf("%w: the row groups hold %d rows, the footer says %d", ErrCorrupt, row, f.NumRows())}
	}
	return nil
}

// piece returns the column of a row group read: categorical for labels,
// with or without one.
func (c *column) piece() *datasets.Column {
	if c.numeric {
		return &datasets.Column{Name: c.name, Kind: datasets.Numeric, Num: c.num, Missing: c.miss}
	}
	return &datasets.Column{Name: c.name, Kind: datasets.Categorical, Str: c.str, Missing: c.miss}
}
