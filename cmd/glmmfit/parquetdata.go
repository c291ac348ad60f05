// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"errors"
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

// readParquetInput reads a Parquet file or directory with package
// parquet; columns named in categorical are read as categorical, with
// the labels the CSV of the same data would give. Errors in a file are
// *parquet.ParseError values naming the file, row and column; rows are
// counted, there being no lines, so in.lines is nil.
func readParquetInput(ctx context.Context, path string, categorical []string) (*input, error) {
	fr, err := parquet.ReadFileContext(ctx, path, parquet.Options{Categorical: categorical})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var pe *parquet.ParseError
		if !errors.As(err, &pe) {
			err = fmt.Errorf("cannot read data file: %v", pathError(err))
		}
		return nil, err
	}
	return &input{frame: fr, name: filepath.Base(path), path: path}, nil
}
