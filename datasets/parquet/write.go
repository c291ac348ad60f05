// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquet

import (
	"fmt"
	"io"
	"reflect"
	"strconv"

	pq "github.com/parquet-go/parquet-go"

	"github.com/sparsevi/sparsevi/datasets"
)

// Write writes the frame fr to w as Parquet, in row groups of at most
// rowsPerGroup rows (0 means 1<<17), with Snappy compression: numeric
// columns as optional DOUBLE, categorical ones as optional,
// dictionary-encoded strings, missing values as nulls, in the frame's
// order. Read gives the frame back. It is for tests and benchmarks that
// need Parquet files without importing the Parquet library themselves.
func Write(w io.Writer, fr *datasets.Frame, rowsPerGroup int) error {
	if rowsPerGroup <= 0 {
		rowsPerGroup = 1 << 17
	}
	cols := fr.Columns()
	// A struct type built at run time keeps the columns in the frame's
	// order (the library sorts the fields of a schema built from a map).
	fields := make([]reflect.StructField, len(cols))
	for j, c := range cols {
		typ, tag := reflect.TypeFor[*float64](), c.Name+",optional"
		if c.Kind == datasets.Categorical {
			typ, tag = reflect.TypeFor[*string](), c.Name+",optional,dict"
		}
		fields[j] = reflect.StructField{Name: "F" + strconv.Itoa(j), Type: typ, Tag: reflect.StructTag(`parquet:"` + tag + `"`)}
	}
	rowType := reflect.StructOf(fields)
	pw := pq.NewWriter(w, pq.SchemaOf(reflect.New(rowType).Interface()), pq.MaxRowsPerRowGroup(int64(rowsPerGroup)), pq.Compression(&pq.Snappy))
	row := reflect.New(rowType)
	for i := range fr.NumRows() {
		v := row.Elem()
		for j, c := range cols {
			f := v.Field(j)
			switch {
			case c.Missing[i]:
				f.Set(reflect.Zero(f.Type()))
			case c.Kind == datasets.Categorical:
				s := c.Str[i]
				f.Set(reflect.ValueOf(&s))
			default:
				x := c.Num[i]
				f.Set(reflect.ValueOf(&x))
			}
		}
		if err := pw.Write(row.Interface()); err != nil {
			return fmt.Errorf("parquet: writing row %d: %w", i+1, err)
		}
	}
	return pw.Close()
}
