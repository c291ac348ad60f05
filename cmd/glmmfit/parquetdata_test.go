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

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/parquet"
)

// TestParquetData: glmmfit fits a Parquet file, and a directory of them,
// to the same numbers as the same data in CSV, and names the file, row and
// column of a bad value.
func TestParquetData(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "poisson", "-subjects", "50", "-obs", "5",
		"-beta", "0.3,-0.4,0.5", "-re-sd", "0.6", "-seed", "31", "-out", "d.csv"))
	fr, err := datasets.ReadFile(filepath.Join(dir, "d.csv"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(path string, f *datasets.Frame) {
		var b bytes.Buffer
		if err := parquet.Write(&b, f, 64); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rows := func(lo, hi int) []int {
		var idx []int
		for i := lo; i < hi; i++ {
			idx = append(idx, i)
		}
		return idx
	}
	write(filepath.Join(dir, "d.parquet"), fr)
	os.Mkdir(filepath.Join(dir, "parts"), 0o755)
	write(filepath.Join(dir, "parts", "0.parquet"), fr.Rows(rows(0, 100)))
	write(filepath.Join(dir, "parts", "1.parquet"), fr.Rows(rows(100, fr.NumRows())))
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
	// A numeric grouping column is read as categorical with the labels a
	// CSV file would hold: 1000000, not 1e+06.
	id, _ := fr.Column("id")
	num := make([]float64, len(id.Str))
	for i, lab := range id.Str {
		n, _ := strconv.Atoi(strings.TrimLeft(lab, "s0"))
		num[i] = float64(1_000_000 + n)
	}
	numFrame, err := datasets.NewFrame(datasets.NewNumeric("id", num), mustCol(t, fr, "t"), mustCol(t, fr, "x1"), mustCol(t, fr, "y"))
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(dir, "numid.parquet"), numFrame)
	doc := fit("numid.parquet")
	if lv := doc.RandomEffects.Subjects[0].Level; lv != "1000001" {
		t.Errorf("first subject's label %q, want 1000001", lv)
	}

	// A count that is not one: the row and column are named.
	y, _ := fr.Column("y")
	y.Num[7] = 2.5
	write(filepath.Join(dir, "bad.parquet"), fr)
	r := glmmfit(t, dir, "", nil, "fit", "-data", "bad.parquet", "-formula", "y ~ t + x1 + (1 | id)", "-family", "poisson")
	if r.code != 1 || !strings.Contains(r.stderr, "bad.parquet") || !strings.Contains(r.stderr, "row 8") || !strings.Contains(r.stderr, "2.5") {
		t.Errorf("a non-integer count: exit %d, %q", r.code, r.stderr)
	}
}

// mustCol returns the named column of fr.
func mustCol(t *testing.T, fr *datasets.Frame, name string) *datasets.Column {
	t.Helper()
	c, ok := fr.Column(name)
	if !ok {
		t.Fatalf("no column %q", name)
	}
	return c
}
