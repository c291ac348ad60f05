// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquet_test

import (
	"fmt"
	"log"

	"github.com/sparsevi/sparsevi/datasets/parquet"
)

// Read a Parquet file written by DuckDB into a Frame: the same columns,
// kinds and missing values as its CSV twin gives.
func ExampleReadFile() {
	fr, err := parquet.ReadFile("testdata/types.parquet")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(fr.NumRows(), "rows")
	for _, c := range fr.Columns() {
		var first string
		if c.Num != nil {
			first = fmt.Sprint(c.Num[1:2])
		} else {
			first = fmt.Sprintf("%q", c.Str[1:2])
		}
		fmt.Printf("%-8s %-11v %3d missing, row 2: %s\n", c.Name, c.Kind, c.NumMissing(), first)
	}
	// Output:
	// 1200 rows
	// id       numeric       0 missing, row 2: [1]
	// subject  categorical   0 missing, row 2: ["s0000"]
	// small    numeric       0 missing, row 2: [-49]
	// count    numeric       0 missing, row 2: [7]
	// quarter  numeric       0 missing, row 2: [0.25]
	// x        numeric     110 missing, row 2: [841.4709848078965]
	// price    numeric       0 missing, row 2: [0.25]
	// amount   numeric       0 missing, row 2: [1.001]
	// flag     categorical  93 missing, row 2: ["false"]
	// day      categorical   0 missing, row 2: ["2024-01-02"]
	// at       categorical   0 missing, row 2: ["2024-01-01 00:01:30.061"]
	// uid      categorical   0 missing, row 2: ["00000000-0000-0000-0000-000000000001"]
	// label    categorical 268 missing, row 2: [""]
	// late     numeric     1000 missing, row 2: [NaN]
}
