// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command gen writes ../arrow.parquet with Apache Arrow's Go library, a
// Parquet writer other than the one package parquet reads with, for
// TestFileOfAnotherWriter. It is a module of its own so that sparsevi
// does not depend on Arrow. From this directory:
//
//	go run . ../arrow.parquet
//
// Row i of the 12: subject "p{i/3}" (dictionary-encoded; null when
// i == 11), y = i mod 4 (INT32), dose = i/2 (DOUBLE; null when
// i mod 5 == 4), visits = 10 i (INT64; null when i mod 6 == 5), treated
// = i odd (BOOLEAN; null when i mod 7 == 6); Snappy, two row groups.
package main

import (
	"log"
	"os"
	"strconv"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/schema"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: gen OUT.parquet")
	}
	fields := schema.FieldList{
		schema.Must(schema.NewPrimitiveNodeLogical("subject", parquet.Repetitions.Optional, schema.StringLogicalType{}, parquet.Types.ByteArray, -1, -1)),
		schema.NewInt32Node("y", parquet.Repetitions.Required, -1),
		schema.NewFloat64Node("dose", parquet.Repetitions.Optional, -1),
		schema.NewInt64Node("visits", parquet.Repetitions.Optional, -1),
		schema.NewBooleanNode("treated", parquet.Repetitions.Optional, -1),
	}
	root, err := schema.NewGroupNode("schema", parquet.Repetitions.Required, fields, -1)
	if err != nil {
		log.Fatal(err)
	}
	fh, err := os.Create(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false), parquet.WithDictionaryFor("subject", true))
	w := file.NewParquetWriter(fh, root, file.WithWriterProps(props))
	for _, g := range [][2]int{{0, 7}, {7, 12}} {
		rg := w.AppendRowGroup()
		var (
			sub                            []parquet.ByteArray
			y                              []int32
			dose                           []float64
			visits                         []int64
			treated                        []bool
			dSub, dDose, dVisits, dTreated []int16
		)
		for i := g[0]; i < g[1]; i++ {
			dSub = append(dSub, def(i != 11))
			if i != 11 {
				sub = append(sub, parquet.ByteArray("p"+strconv.Itoa(i/3)))
			}
			y = append(y, int32(i%4))
			dDose = append(dDose, def(i%5 != 4))
			if i%5 != 4 {
				dose = append(dose, float64(i)/2)
			}
			dVisits = append(dVisits, def(i%6 != 5))
			if i%6 != 5 {
				visits = append(visits, int64(10*i))
			}
			dTreated = append(dTreated, def(i%7 != 6))
			if i%7 != 6 {
				treated = append(treated, i%2 == 1)
			}
		}
		write := func(f func(file.ColumnChunkWriter) error) {
			cw, err := rg.NextColumn()
			if err != nil {
				log.Fatal(err)
			}
			if err := f(cw); err != nil {
				log.Fatal(err)
			}
			if err := cw.Close(); err != nil {
				log.Fatal(err)
			}
		}
		write(func(cw file.ColumnChunkWriter) error {
			_, err := cw.(*file.ByteArrayColumnChunkWriter).WriteBatch(sub, dSub, nil)
			return err
		})
		write(func(cw file.ColumnChunkWriter) error {
			_, err := cw.(*file.Int32ColumnChunkWriter).WriteBatch(y, nil, nil)
			return err
		})
		write(func(cw file.ColumnChunkWriter) error {
			_, err := cw.(*file.Float64ColumnChunkWriter).WriteBatch(dose, dDose, nil)
			return err
		})
		write(func(cw file.ColumnChunkWriter) error {
			_, err := cw.(*file.Int64ColumnChunkWriter).WriteBatch(visits, dVisits, nil)
			return err
		})
		write(func(cw file.ColumnChunkWriter) error {
			_, err := cw.(*file.BooleanColumnChunkWriter).WriteBatch(treated, dTreated, nil)
			return err
		})
		if err := rg.Close(); err != nil {
			log.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		log.Fatal(err)
	}
}

// def returns the definition level of an optional value: 1 present, 0 null.
func def(present bool) int16 {
	if present {
		return 1
	}
	return 0
}
