// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
		if _, ok := fr.Column(c); ok {
			if err := fr.SetCategorical(c); err != nil {
				return nil, fmt.Errorf("%s: column %q: %v", name, c, err)
			}
		}
	}
	return &input{frame: fr, name: name, path: path}, nil
}
