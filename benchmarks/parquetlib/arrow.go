// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"math"
	"os"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

func writeArrow(path string, t *table) error {
	fields := schema.FieldList{
		schema.Must(schema.NewPrimitiveNodeLogical("subject", parquet.Repetitions.Required, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)),
		schema.NewFloat64Node("y", parquet.Repetitions.Required, -1),
		schema.NewFloat64Node("x1", parquet.Repetitions.Required, -1),
		schema.NewFloat64Node("x2", parquet.Repetitions.Required, -1),
		schema.NewFloat64Node("x3", parquet.Repetitions.Optional, -1),
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		return err
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("subject", true))
	w := file.NewParquetWriter(fh, root, file.WithWriterProps(props))
	n := len(t.y)
	for lo := 0; lo < n; lo += rowGroup {
		hi := min(n, lo+rowGroup)
		rg := w.AppendRowGroup()
		cw, err := rg.NextColumn()
		if err != nil {
			return err
		}
		sub := make([]parquet.ByteArray, hi-lo)
		for i := range sub {
			sub[i] = parquet.ByteArray(t.subject[lo+i])
		}
		if _, err := cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(sub, nil, nil); err != nil {
			return err
		}
		cw.Close()
		for _, v := range [][]float64{t.y, t.x1, t.x2} {
			cw, err := rg.NextColumn()
			if err != nil {
				return err
			}
			if _, err := cw.(*file.Float64ColumnChunkWriter).WriteBatch(v[lo:hi], nil, nil); err != nil {
				return err
			}
			cw.Close()
		}
		cw, err = rg.NextColumn()
		if err != nil {
			return err
		}
		defs := make([]int16, hi-lo)
		var vals []float64
		for i := range defs {
			if v := t.x3[lo+i]; !math.IsNaN(v) {
				defs[i] = 1
				vals = append(vals, v)
			}
		}
		if _, err := cw.(*file.Float64ColumnChunkWriter).WriteBatch(vals, defs, nil); err != nil {
			return err
		}
		cw.Close()
		if err := rg.Close(); err != nil {
			return err
		}
	}
	return w.Close()
}

const arrowBatch = 4096

// arrowColumn gathers one column from arrow-go's typed column readers.
type arrowColumn struct {
	num    []float64
	str    []string
	miss   []bool
	intern map[string]string
	// Buffers for one batch.
	defs []int16
	fv   []float64
	bv   []parquet.ByteArray
}

func readArrow(path string) (*cols, error) {
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	n := int(r.NumRows())
	sc := r.MetaData().Schema
	cs := make([]arrowColumn, sc.NumColumns())
	for j := range cs {
		c := &cs[j]
		if sc.Column(j).PhysicalType() == parquet.Types.ByteArray {
			c.str = make([]string, 0, n)
			c.intern = make(map[string]string)
			c.bv = make([]parquet.ByteArray, arrowBatch)
		} else {
			c.num = make([]float64, 0, n)
			c.fv = make([]float64, arrowBatch)
		}
		c.miss = make([]bool, 0, n)
		c.defs = make([]int16, arrowBatch)
	}
	for g := range r.NumRowGroups() {
		rg := r.RowGroup(g)
		for j := range cs {
			cr, err := rg.Column(j)
			if err != nil {
				return nil, err
			}
			maxDef := sc.Column(j).MaxDefinitionLevel()
			if err := cs[j].readChunk(cr, maxDef); err != nil {
				return nil, fmt.Errorf("column %s: %w", sc.Column(j).Name(), err)
			}
			cr.Close()
		}
	}
	return &cols{
		subject: cs[0].str, y: cs[1].num, x1: cs[2].num, x2: cs[3].num, x3: cs[4].num, x3miss: cs[4].miss,
	}, nil
}

func (c *arrowColumn) readChunk(cr file.ColumnChunkReader, maxDef int16) error {
	for cr.HasNext() {
		var total int64
		var err error
		switch cr := cr.(type) {
		case *file.Float64ColumnChunkReader:
			total, _, err = cr.ReadBatch(arrowBatch, c.fv, c.defs, nil)
			k := 0
			for i := range int(total) {
				if maxDef > 0 && c.defs[i] < maxDef {
					c.num = append(c.num, math.NaN())
					c.miss = append(c.miss, true)
					continue
				}
				c.num = append(c.num, c.fv[k])
				c.miss = append(c.miss, false)
				k++
			}
		case *file.ByteArrayColumnChunkReader:
			total, _, err = cr.ReadBatch(arrowBatch, c.bv, c.defs, nil)
			k := 0
			for i := range int(total) {
				if maxDef > 0 && c.defs[i] < maxDef {
					c.str = append(c.str, "")
					c.miss = append(c.miss, true)
					continue
				}
				c.str = append(c.str, c.internBytes(c.bv[k]))
				c.miss = append(c.miss, false)
				k++
			}
		default:
			return fmt.Errorf("unexpected reader %T", cr)
		}
		if err != nil {
			return err
		}
	}
	return cr.Err()
}

// internBytes shares the string of a repeated label; without a dictionary
// per chunk at this level, a bounded map does it.
func (c *arrowColumn) internBytes(b []byte) string {
	if s, ok := c.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(c.intern) < 1<<20 {
		c.intern[s] = s
	}
	return s
}
