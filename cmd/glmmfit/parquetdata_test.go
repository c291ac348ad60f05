// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"
)

// TestParquetData: glmmfit fits a Parquet file, and a directory of them,
// to the same numbers as the same data in CSV, and names the file, row and
// column of a bad value.
func TestParquetData(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "poisson", "-subjects", "50", "-obs", "5",
		"-beta", "0.3,-0.4,0.5", "-re-sd", "0.6", "-seed", "31", "-out", "d.csv"))
	rows := readCSV(t, filepath.Join(dir, "d.csv"))
	type rec struct {
		ID string  `parquet:"id,dict"`
		T  float64 `parquet:"t"`
		X1 float64 `parquet:"x1"`
		Y  float64 `parquet:"y"`
	}
	col := func(name string) int { return colIndex(t, rows[0], name) }
	var recs []rec
	for _, r := range rows[1:] {
		tv, _ := strconv.ParseFloat(r[col("t")], 64)
		x, _ := strconv.ParseFloat(r[col("x1")], 64)
		y, _ := strconv.ParseFloat(r[col("y")], 64)
		recs = append(recs, rec{r[col("id")], tv, x, y})
	}
	write := func(path string, rs []rec) {
		var b bytes.Buffer
		w := pq.NewGenericWriter[rec](&b, pq.MaxRowsPerRowGroup(64))
		if _, err := w.Write(rs); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "d.parquet"), recs)
	os.Mkdir(filepath.Join(dir, "parts"), 0o755)
	write(filepath.Join(dir, "parts", "0.parquet"), recs[:100])
	write(filepath.Join(dir, "parts", "1.parquet"), recs[100:])
	fit := func(data string) *document {
		r := glmmfit(t, dir, "", nil, "fit", "-data", data, "-formula", "y ~ t + x1 + (1 | id)", "-family", "poisson", "-format", "json", "-quiet")
		if r.code != 0 {
			t.Fatalf("%s: exit %d: %s", data, r.code, r.stderr)
		}
		return readDoc(t, []byte(r.stdout))
	}
	want := fit("d.csv")
	for _, data := range []string{"d.parquet", "parts"} {
		got := fit(data)
		for k, f := range got.Fixed {
			if f.Estimate != want.Fixed[k].Estimate || f.EstError != want.Fixed[k].EstError {
				t.Errorf("%s: %s %v ± %v, from CSV %v ± %v", data, f.Name, f.Estimate, f.EstError, want.Fixed[k].Estimate, want.Fixed[k].EstError)
			}
		}
		if got.LowerBound.Value != want.LowerBound.Value {
			t.Errorf("%s: bound %v, from CSV %v", data, got.LowerBound.Value, want.LowerBound.Value)
		}
	}
	// A count that is not one: the row and column are named.
	recs[7].Y = 2.5
	write(filepath.Join(dir, "bad.parquet"), recs)
	r := glmmfit(t, dir, "", nil, "fit", "-data", "bad.parquet", "-formula", "y ~ t + x1 + (1 | id)", "-family", "poisson")
	if r.code != 1 || !strings.Contains(r.stderr, "bad.parquet") || !strings.Contains(r.stderr, "row 8") || !strings.Contains(r.stderr, "2.5") {
		t.Errorf("a non-integer count: exit %d, %q", r.code, r.stderr)
	}
}
