// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquet_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/parquet"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// write writes rows to path in row groups of perGroup rows.
func write[T any](t *testing.T, path string, rows []T, perGroup int64) {
	t.Helper()
	var b bytes.Buffer
	w := pq.NewGenericWriter[T](&b, pq.MaxRowsPerRowGroup(perGroup))
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestSameFitAsCSV: the same data as CSV and as Parquet give the same
// frame and bit-identical fits.
func TestSameFitAsCSV(t *testing.T) {
	dir := t.TempDir()
	sim, _, err := datasets.Simulate(datasets.SimSpec{Family: "poisson", Subjects: 60, Obs: 5, Beta: []float64{0.3, -0.4, 0.2}, RECov: [][]float64{{0.4}}, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	var csv bytes.Buffer
	if err := datasets.WriteCSV(&csv, sim); err != nil {
		t.Fatal(err)
	}
	fromCSV, err := datasets.ReadCSV(&csv)
	if err != nil {
		t.Fatal(err)
	}
	type simRow struct {
		ID string  `parquet:"id,dict"`
		T  float64 `parquet:"t"`
		X1 float64 `parquet:"x1"`
		Y  int64   `parquet:"y"`
	}
	id, _ := sim.Column("id")
	tc, _ := sim.Column("t")
	x1, _ := sim.Column("x1")
	y, _ := sim.Column("y")
	rows := make([]simRow, sim.NumRows())
	for i := range rows {
		rows[i] = simRow{id.Str[i], tc.Num[i], x1.Num[i], int64(y.Num[i])}
	}
	path := filepath.Join(dir, "sim.parquet")
	write(t, path, rows, 64)
	fromPQ, err := parquet.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sameFrame(t, fromPQ, fromCSV)
	fit := func(fr *datasets.Frame) *vi.Result {
		f, err := formula.Parse("y ~ t + x1 + (1 | id)")
		if err != nil {
			t.Fatal(err)
		}
		d, err := formula.Build(f, fr, formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto})
		if err != nil {
			t.Fatal(err)
		}
		res, err := vi.Fit(context.Background(), d.Model(), vi.Settings{Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	a, b := fit(fromCSV), fit(fromPQ)
	if !slices.Equal(a.Mu, b.Mu) || !slices.Equal(a.Factor, b.Factor) || a.LowerBound != b.LowerBound {
		t.Errorf("the fits differ: bound %v (CSV) and %v (Parquet)", a.LowerBound, b.LowerBound)
	}
}

// TestFileOfAnotherWriter reads testdata/arrow.parquet, written by Apache
// Arrow's Go library (testdata/gen): Snappy pages, dictionary-encoded
// strings, nulls in every column.
func TestFileOfAnotherWriter(t *testing.T) {
	fr, err := parquet.ReadFile(filepath.Join("testdata", "arrow.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if fr.NumRows() != 12 || !slices.Equal(fr.Names(), []string{"subject", "y", "dose", "visits", "treated"}) {
		t.Fatalf("%d rows, columns %q", fr.NumRows(), fr.Names())
	}
	s, _ := fr.Column("subject")
	y, _ := fr.Column("y")
	dose, _ := fr.Column("dose")
	visits, _ := fr.Column("visits")
	treated, _ := fr.Column("treated")
	// The generator's rule for row i: subject "p{i/3}", y = i mod 4,
	// dose = i/2 (null when i mod 5 == 4), visits = 10 i (null when
	// i mod 6 == 5), treated = i odd (null when i mod 7 == 6), subject
	// null when i == 11.
	for i := range 12 {
		if s.Kind != datasets.Categorical || (i == 11) != s.Missing[i] || i != 11 && s.Str[i] != "p"+string(rune('0'+i/3)) {
			t.Errorf("row %d subject %q (missing %v)", i, s.Str[i], s.Missing[i])
		}
		if y.Num[i] != float64(i%4) {
			t.Errorf("row %d y %v", i, y.Num[i])
		}
		if (i%5 == 4) != dose.Missing[i] || i%5 != 4 && dose.Num[i] != float64(i)/2 {
			t.Errorf("row %d dose %v (missing %v)", i, dose.Num[i], dose.Missing[i])
		}
		if (i%6 == 5) != visits.Missing[i] || i%6 != 5 && visits.Num[i] != float64(10*i) {
			t.Errorf("row %d visits %v (missing %v)", i, visits.Num[i], visits.Missing[i])
		}
		want := map[bool]string{false: "false", true: "true"}[i%2 == 1]
		if (i%7 == 6) != treated.Missing[i] || i%7 != 6 && treated.Str[i] != want {
			t.Errorf("row %d treated %q (missing %v)", i, treated.Str[i], treated.Missing[i])
		}
	}
}
