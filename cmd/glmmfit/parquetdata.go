// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/parquet"
)

// isParquet reports whether -data names Parquet input: a file ending in
// .parquet, or a directory (of .parquet files).
func isParquet(path string) bool {
	if strings.EqualFold(filepath.Ext(path), ".parquet") {
		return true
	}
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// readParquetInput reads a Parquet file or directory. Rows are named by
// their number, as a Parquet file has no lines.
func readParquetInput(ctx context.Context, path string, categorical []string) (*input, error) {
	name := filepath.Base(path)
	fr, err := parquet.ReadFileContext(ctx, path)
	if err != nil {
		return nil, parquetError(ctx, err)
	}
	for _, c := range categorical {
		if col, ok := fr.Column(c); ok && col.Kind == datasets.Numeric {
			// The labels a CSV file of the column would hold: integers
			// in full (1000000, not 1e+06), other numbers shortest.
			str := make([]string, len(col.Num))
			for i, v := range col.Num {
				switch {
				case col.Missing[i]:
				case v == math.Trunc(v) && math.Abs(v) < 1e21:
					str[i] = strconv.FormatFloat(v, 'f', -1, 64)
				default:
					str[i] = strconv.FormatFloat(v, 'g', -1, 64)
				}
			}
			col.Kind, col.Str, col.Num = datasets.Categorical, str, nil
		}
	}
	return &input{frame: fr, name: name, path: path}, nil
}

// parquetError returns the error of a read of Parquet data as glmmfit
// reports it.
func parquetError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if os.IsNotExist(err) {
		return fmt.Errorf("cannot read data file: %v", pathError(err))
	}
	return err // a *parquet.Error naming file, row and column
}

// parquetKinds reads the Parquet data of a -shard fit through for its
// columns' kinds, as a whole read gives them: a column of text without a
// label is numeric.
func (c *ownFile) parquetKinds() error {
	c.parquet = true
	var cols []*datasets.Column
	labelled := map[string]bool{}
	err := c.parquetPieces(nil, c.own(), func(fr *datasets.Frame, _, _ int) error {
		if cols == nil {
			for _, col := range fr.Columns() {
				cols = append(cols, &datasets.Column{Name: col.Name, Kind: col.Kind})
			}
		}
		for _, col := range fr.Columns() {
			if col.Kind == datasets.Categorical && !labelled[col.Name] && slices.Contains(col.Missing, false) {
				labelled[col.Name] = true
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if c.relay != nil {
		if cols, err = c.shareParquetKinds(cols, labelled); err != nil {
			return err
		}
	}
	c.unlabelled = map[string]bool{}
	for _, col := range cols {
		if col.Kind == datasets.Categorical && !labelled[col.Name] {
			col.Kind = datasets.Numeric
			c.unlabelled[col.Name] = true
		}
		if col.Kind == datasets.Numeric {
			col.Num = []float64{}
		} else {
			col.Str = []string{}
		}
		col.Missing = []bool{}
	}
	c.kinds, err = datasets.NewFrame(cols...)
	return err
}

// parquetPieces reads the Parquet data a row group at a time
// (parquet.ReadPiecesOf), the files [files[0], files[1]) or all of them
// for nil, in the columns named (all for nil), with the kinds of a whole
// read once parquetKinds has found them.
func (c *ownFile) parquetPieces(names []string, files []int, fn func(fr *datasets.Frame, file, before int) error) error {
	c.reads++
	if c.prog != nil && c.prog.bar != nil {
		c.prog.phase(fmt.Sprintf("reading (pass %d): %s", c.reads, c.name))
	}
	lo, hi := 0, -1
	if files != nil {
		lo, hi = files[0], files[1]
	}
	read := func(fr *datasets.Frame, file, before int) error {
		for _, col := range fr.Columns() {
			if c.unlabelled[col.Name] {
				num := make([]float64, len(col.Str))
				for i := range num {
					num[i] = math.NaN()
				}
				col.Kind, col.Num, col.Str = datasets.Numeric, num, nil
			}
		}
		return fn(fr, file, before)
	}
	var err error
	if hi < 0 {
		err = parquet.ReadPieces(c.ctx, c.path, names, func(fr *datasets.Frame, before int) error { return read(fr, 0, before) })
	} else {
		err = parquet.ReadPiecesOf(c.ctx, c.path, lo, hi, names, read)
	}
	if err != nil {
		return parquetError(c.ctx, err)
	}
	return nil
}

// shareParquetKinds makes the columns and the columns with a label those
// of all the processes' files, when they are dealt out: a process without
// files takes the columns of the others.
func (c *ownFile) shareParquetKinds(cols []*datasets.Column, labelled map[string]bool) ([]*datasets.Column, error) {
	var own []string
	for _, col := range cols {
		own = append(own, col.Name, strconv.Itoa(int(col.Kind)))
	}
	all, err := c.relay.Gather(own)
	if err != nil {
		return nil, err
	}
	if cols == nil {
		for _, list := range all {
			for k := 0; k+1 < len(list); k += 2 {
				kind, _ := strconv.Atoi(list[k+1])
				cols = append(cols, &datasets.Column{Name: list[k], Kind: datasets.Kind(kind)})
			}
			if cols != nil {
				break
			}
		}
	}
	if cols == nil {
		return nil, fmt.Errorf("-data %s: %w", c.path, datasets.ErrNoRows)
	}
	acc := make([]float64, len(cols))
	err = c.relay.Carry(acc, func(acc []float64) {
		for j, col := range cols {
			if labelled[col.Name] {
				acc[j]++
			}
		}
	})
	for j, col := range cols {
		labelled[col.Name] = acc[j] > 0
	}
	return cols, err
}

// parquetOwn reads the rows of the Parquet data that keep keeps, by their
// values in columns keepCols as the CSV reader would give them the fields
// (the shortest text of a number), about rows of them.
func (c *ownFile) parquetOwn(only, keepCols []string, keep func([]string, []bool) bool, rows int) (*input, error) {
	var own []*datasets.Column
	at := &datasets.Lines{} // each own row's row in the data
	var idx []int
	fields, missing := make([]string, len(keepCols)), make([]bool, len(keepCols))
	kcs := make([]*datasets.Column, len(keepCols))
	err := c.parquetPieces(c.columns, c.fileRange(only), func(fr *datasets.Frame, _, before int) error {
		if own == nil {
			for _, col := range fr.Columns() {
				o := &datasets.Column{Name: col.Name, Kind: col.Kind, Missing: make([]bool, 0, rows)}
				if col.Kind == datasets.Numeric {
					o.Num = make([]float64, 0, rows)
				} else {
					o.Str = make([]string, 0, rows)
				}
				own = append(own, o)
			}
		}
		for k, name := range keepCols {
			kc, ok := fr.Column(name)
			if !ok {
				return fmt.Errorf("%s: no column %q", c.name, name)
			}
			kcs[k] = kc
		}
		idx = idx[:0]
		for i := range fr.NumRows() {
			for k, kc := range kcs {
				fields[k], missing[k] = "", kc.Missing[i]
				switch {
				case kc.Missing[i]:
				case kc.Kind == datasets.Numeric:
					fields[k] = strconv.FormatFloat(kc.Num[i], 'g', -1, 64)
				default:
					fields[k] = kc.Str[i]
				}
			}
			if keep(fields, missing) {
				idx = append(idx, i)
				at.Add(before + i + 1)
			}
		}
		for j, col := range fr.Columns() {
			o := own[j]
			for _, i := range idx {
				if col.Kind == datasets.Numeric {
					o.Num = append(o.Num, col.Num[i])
				} else {
					o.Str = append(o.Str, col.Str[i])
				}
				o.Missing = append(o.Missing, col.Missing[i])
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	fr, err := datasets.NewFrame(own...)
	if err != nil {
		return nil, err
	}
	return &input{frame: fr, name: c.name, path: c.path, rows: at}, nil
}

// fileRange returns the run of files that holds those given, for
// parquetPieces: nil, all of them, when they are not dealt out.
func (c *ownFile) fileRange(only []string) []int {
	if c.relay == nil {
		return nil
	}
	lo, hi := len(c.files), 0
	for k, f := range c.files {
		if slices.Contains(only, f) {
			lo, hi = min(lo, k), k+1
		}
	}
	return []int{min(lo, hi), hi}
}
