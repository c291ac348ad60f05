// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquet_test

import (
	"fmt"
	"log"
	"path/filepath"

	"github.com/sparsevi/sparsevi/datasets/parquet"
)

// Read a Parquet file written by another library (Apache Arrow's) into a
// frame: strings are categorical, numbers numeric, nulls missing.
func ExampleReadFile() {
	fr, err := parquet.ReadFile(filepath.Join("testdata", "arrow.parquet"))
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range fr.Columns() {
		fmt.Printf("%-8s %-11v %d missing\n", c.Name, c.Kind, c.NumMissing())
	}
	// Output:
	// subject  categorical 1 missing
	// y        numeric     0 missing
	// dose     numeric     2 missing
	// visits   numeric     2 missing
	// treated  categorical 1 missing
}
