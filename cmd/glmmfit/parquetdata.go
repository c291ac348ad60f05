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
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("cannot read data file: %v", pathError(err))
		}
		return nil, err // a *parquet.Error naming file, row and column
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
