// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding"
)

type pqRow struct {
	Subject string   `parquet:"subject,dict"`
	Y       float64  `parquet:"y"`
	X1      float64  `parquet:"x1"`
	X2      float64  `parquet:"x2"`
	X3      *float64 `parquet:"x3,optional"`
}

func writePQ(path string, t *table) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := parquet.NewGenericWriter[pqRow](fh, parquet.MaxRowsPerRowGroup(rowGroup), parquet.Compression(&parquet.Snappy))
	buf := make([]pqRow, 0, 4096)
	for i := range t.y {
		r := pqRow{Subject: t.subject[i], Y: t.y[i], X1: t.x1[i], X2: t.x2[i]}
		if !math.IsNaN(t.x3[i]) {
			r.X3 = &t.x3[i]
		}
		buf = append(buf, r)
		if len(buf) == cap(buf) || i == len(t.y)-1 {
			if _, err := w.Write(buf); err != nil {
				fh.Close()
				return err
			}
			buf = buf[:0]
		}
	}
	if err := w.Close(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

// pqColumn gathers one column from the pages of parquet-go.
type pqColumn struct {
	num  []float64
	str  []string
	miss []bool
	// The dictionary of the current column chunk, converted once.
	dict    parquet.Dictionary
	dictNum []float64
	dictStr []string
	intern  map[string]string
}

func readPQ(path string) (*cols, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return nil, err
	}
	f, err := parquet.OpenFile(fh, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, err
	}
	n := int(f.NumRows())
	fields := f.Schema().Fields()
	cs := make([]pqColumn, len(fields))
	for j, fd := range fields {
		if fd.Type().Kind() == parquet.ByteArray {
			cs[j].str = make([]string, 0, n)
			cs[j].intern = make(map[string]string)
		} else {
			cs[j].num = make([]float64, 0, n)
		}
		cs[j].miss = make([]bool, 0, n)
	}
	for _, rg := range f.RowGroups() {
		for j, cc := range rg.ColumnChunks() {
			if err := cs[j].readChunk(cc); err != nil {
				return nil, fmt.Errorf("column %s: %w", fields[j].Name(), err)
			}
		}
	}
	return &cols{
		subject: cs[0].str, y: cs[1].num, x1: cs[2].num, x2: cs[3].num, x3: cs[4].num, x3miss: cs[4].miss,
	}, nil
}

func (c *pqColumn) readChunk(cc parquet.ColumnChunk) error {
	pages := cc.Pages()
	defer pages.Close()
	for {
		p, err := pages.ReadPage()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		err = c.page(p)
		parquet.Release(p)
		if err != nil {
			return err
		}
	}
}

func (c *pqColumn) page(p parquet.Page) error {
	defs := p.DefinitionLevels()
	nrows := int(p.NumValues())
	data := p.Data()
	if d := p.Dictionary(); d != nil {
		if d != c.dict {
			c.setDict(d)
		}
		idx := data.Int32()
		k := 0
		for i := range nrows {
			if defs != nil && defs[i] == 0 {
				c.appendMissing()
				continue
			}
			if c.str != nil {
				c.str = append(c.str, c.dictStr[idx[k]])
			} else {
				c.num = append(c.num, c.dictNum[idx[k]])
			}
			c.miss = append(c.miss, false)
			k++
		}
		return nil
	}
	switch data.Kind() {
	case encoding.Double:
		v := data.Double()
		k := 0
		for i := range nrows {
			if defs != nil && defs[i] == 0 {
				c.appendMissing()
				continue
			}
			c.num = append(c.num, v[k])
			c.miss = append(c.miss, false)
			k++
		}
	case encoding.ByteArray:
		b, off := data.ByteArray()
		k := 0
		for i := range nrows {
			if defs != nil && defs[i] == 0 {
				c.appendMissing()
				continue
			}
			c.str = append(c.str, c.internBytes(b[off[k]:off[k+1]]))
			c.miss = append(c.miss, false)
			k++
		}
	default:
		return fmt.Errorf("unexpected kind %v", data.Kind())
	}
	return nil
}

func (c *pqColumn) appendMissing() {
	if c.str != nil {
		c.str = append(c.str, "")
	} else {
		c.num = append(c.num, math.NaN())
	}
	c.miss = append(c.miss, true)
}

func (c *pqColumn) internBytes(b []byte) string {
	if s, ok := c.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(c.intern) < 4096 {
		c.intern[s] = s
	}
	return s
}

func (c *pqColumn) setDict(d parquet.Dictionary) {
	c.dict = d
	data := d.Page().Data()
	if data.Kind() == encoding.ByteArray {
		b, off := data.ByteArray()
		c.dictStr = c.dictStr[:0]
		for k := range d.Len() {
			c.dictStr = append(c.dictStr, string(b[off[k]:off[k+1]]))
		}
		return
	}
	c.dictNum = append(c.dictNum[:0], data.Double()...)
}
