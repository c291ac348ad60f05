// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquet_test

import (
	"math"
	"os"
	"reflect"
	"testing"

	pqgo "github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/encoding"

	"github.com/sparsevi/sparsevi/datasets"
)

// Most tests write their files with the library that package parquet
// reads with; testdata holds files written by DuckDB (testdata/duckdb)
// and by Apache Arrow's Go library (testdata/gen).

// pcol is one column of a file to write: its Parquet node and its values
// in row order, nil for a null.
type pcol struct {
	name string
	node pqgo.Node
	vals []any
}

// field names a node inside an ordered group.
type field struct {
	pqgo.Node
	name string
}

func (f field) Name() string                           { return f.name }
func (f field) Value(base reflect.Value) reflect.Value { panic("not used") }

// ordered is a group node whose fields keep the given order (the
// library's Group sorts them by name).
type ordered []pqgo.Field

func (g ordered) ID() int                     { return 0 }
func (g ordered) String() string              { return "ordered group" }
func (g ordered) Type() pqgo.Type             { return pqgo.Group{}.Type() }
func (g ordered) Optional() bool              { return false }
func (g ordered) Repeated() bool              { return false }
func (g ordered) Required() bool              { return true }
func (g ordered) Leaf() bool                  { return false }
func (g ordered) Fields() []pqgo.Field        { return g }
func (g ordered) Encoding() encoding.Encoding { return nil }
func (g ordered) Compression() compress.Codec { return nil }
func (g ordered) GoType() reflect.Type        { return reflect.TypeFor[struct{}]() }

// valueOf converts a test value to a Parquet value.
func valueOf(v any) pqgo.Value {
	switch v := v.(type) {
	case pqgo.Value:
		return v
	case [16]byte:
		return pqgo.FixedLenByteArrayValue(v[:])
	case []byte:
		return pqgo.ByteArrayValue(v)
	}
	return pqgo.ValueOf(v)
}

// writeParquet writes cols to path in row groups of rowGroup rows (all
// rows in one if zero), with options such as a small page size.
func writeParquet(t testing.TB, path string, cols []pcol, rowGroup int, opts ...pqgo.WriterOption) {
	t.Helper()
	g := make(ordered, len(cols))
	for j, c := range cols {
		g[j] = field{c.node, c.name}
	}
	schema := pqgo.NewSchema("test", g)
	fh, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	opts = append([]pqgo.WriterOption{schema}, opts...)
	if rowGroup > 0 {
		opts = append(opts, pqgo.MaxRowsPerRowGroup(int64(rowGroup)))
	}
	w := pqgo.NewWriter(fh, opts...)
	n := 0
	if len(cols) > 0 {
		n = len(cols[0].vals)
	}
	for i := range n {
		row := make(pqgo.Row, 0, len(cols))
		for j, c := range cols {
			def := 0
			if c.node.Optional() {
				def = 1
			}
			v := c.vals[i]
			if v == nil {
				row = append(row, pqgo.NullValue().Level(0, 0, j))
				continue
			}
			row = append(row, valueOf(v).Level(0, def, j))
		}
		if _, err := w.WriteRows([]pqgo.Row{row}); err != nil {
			t.Fatal(err)
		}
		if rowGroup > 0 && (i+1)%rowGroup == 0 {
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fh.Close(); err != nil {
		t.Fatal(err)
	}
}

// frameCols returns the columns of fr as Parquet columns: numbers as
// optional doubles, labels as optional strings, dictionary-encoded if
// dict.
func frameCols(fr *datasets.Frame, dict bool) []pcol {
	var cols []pcol
	for _, c := range fr.Columns() {
		p := pcol{name: c.Name, vals: make([]any, c.Len())}
		if c.Kind == datasets.Numeric {
			p.node = pqgo.Optional(pqgo.Leaf(pqgo.DoubleType))
			for i, v := range c.Num {
				if !c.Missing[i] && !math.IsNaN(v) {
					p.vals[i] = v
				}
			}
		} else {
			node := pqgo.String()
			if dict {
				node = pqgo.Encoded(node, &pqgo.RLEDictionary)
			}
			p.node = pqgo.Optional(node)
			for i, s := range c.Str {
				if !c.Missing[i] {
					p.vals[i] = s
				}
			}
		}
		cols = append(cols, p)
	}
	return cols
}

// writeFrame writes fr to path with the library.
func writeFrame(t testing.TB, path string, fr *datasets.Frame, rowGroup int, dict bool, opts ...pqgo.WriterOption) {
	t.Helper()
	writeParquet(t, path, frameCols(fr, dict), rowGroup, opts...)
}
