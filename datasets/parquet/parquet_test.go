// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquet_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	pq "github.com/parquet-go/parquet-go"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/parquet"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// row is the test table: every type the package reads.
type row struct {
	ID    string   `parquet:"id,dict"`
	Y     float64  `parquet:"y"`
	X     *float64 `parquet:"x,optional"`
	N32   int32    `parquet:"n32"`
	N64   int64    `parquet:"n64"`
	F32   float32  `parquet:"f32"`
	Flag  bool     `parquet:"flag"`
	Group *string  `parquet:"group,optional"`
}

// table returns n rows: every fifth x and every seventh group null.
func table(n int) []row {
	rows := make([]row, n)
	for i := range rows {
		x := float64(i)/4 - 3
		g := []string{"a", "b", "c"}[i%3]
		rows[i] = row{ID: "s" + string(rune('0'+i/6)), Y: float64(i % 5), X: &x, N32: int32(i - 10), N64: int64(i) * 1000,
			F32: float32(i) / 8, Flag: i%2 == 1, Group: &g}
		if i%5 == 0 {
			rows[i].X = nil
		}
		if i%7 == 0 {
			rows[i].Group = nil
		}
	}
	return rows
}

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

// checkTable compares a frame read back with the rows.
func checkTable(t *testing.T, fr *datasets.Frame, rows []row) {
	t.Helper()
	if got := fr.Names(); !slices.Equal(got, []string{"id", "y", "x", "n32", "n64", "f32", "flag", "group"}) {
		t.Fatalf("columns %q", got)
	}
	if fr.NumRows() != len(rows) {
		t.Fatalf("%d rows, want %d", fr.NumRows(), len(rows))
	}
	col := func(name string) *datasets.Column { c, _ := fr.Column(name); return c }
	for i, r := range rows {
		want := map[string]any{"id": r.ID, "y": r.Y, "n32": float64(r.N32), "n64": float64(r.N64), "f32": float64(r.F32),
			"flag": map[bool]string{false: "FALSE", true: "TRUE"}[r.Flag]}
		for name, w := range want {
			c := col(name)
			if c.Missing[i] {
				t.Fatalf("row %d, %s: missing", i, name)
			}
			switch w := w.(type) {
			case string:
				if c.Kind != datasets.Categorical || c.Str[i] != w {
					t.Fatalf("row %d, %s: %v %q, want %q", i, name, c.Kind, c.Str[i], w)
				}
			case float64:
				if c.Kind != datasets.Numeric || c.Num[i] != w {
					t.Fatalf("row %d, %s: %v %v, want %v", i, name, c.Kind, c.Num[i], w)
				}
			}
		}
		if x := col("x"); (r.X == nil) != x.Missing[i] || r.X != nil && x.Num[i] != *r.X {
			t.Fatalf("row %d, x: %v (missing %v), want %v", i, x.Num[i], x.Missing[i], r.X)
		}
		if g := col("group"); (r.Group == nil) != g.Missing[i] || r.Group != nil && g.Str[i] != *r.Group {
			t.Fatalf("row %d, group: %q (missing %v)", i, g.Str[i], g.Missing[i])
		}
	}
}

// TestReadTypes: every supported type and nulls come back as the CSV
// reader would give them, across several row groups, from a file and from
// a directory of files in the order of their names.
func TestReadTypes(t *testing.T) {
	dir := t.TempDir()
	rows := table(40)
	write(t, filepath.Join(dir, "all.parquet"), rows, 7)
	fr, err := parquet.ReadFile(filepath.Join(dir, "all.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	checkTable(t, fr, rows)

	parts := filepath.Join(dir, "parts")
	if err := os.Mkdir(parts, 0o755); err != nil {
		t.Fatal(err)
	}
	// Written out of order: the names decide the order.
	write(t, filepath.Join(parts, "part-2.parquet"), rows[25:], 4)
	write(t, filepath.Join(parts, "part-0.parquet"), rows[:10], 3)
	write(t, filepath.Join(parts, "part-1.parquet"), rows[10:25], 100)
	if err := os.WriteFile(filepath.Join(parts, "README"), []byte("not data"), 0o644); err != nil {
		t.Fatal(err)
	}
	fr, err = parquet.ReadFile(parts)
	if err != nil {
		t.Fatal(err)
	}
	checkTable(t, fr, rows)
}

// TestReadErrors: what a user can get wrong is an error naming the file,
// and the column and row where there is one.
func TestReadErrors(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "good.parquet"), table(10), 5)
	type other struct {
		ID string  `parquet:"id"`
		Y  float64 `parquet:"y"`
	}
	mixed := filepath.Join(dir, "mixed")
	os.Mkdir(mixed, 0o755)
	write(t, filepath.Join(mixed, "a.parquet"), table(10), 5)
	write(t, filepath.Join(mixed, "b.parquet"), []other{{"s", 1}}, 5)
	type nan struct {
		X float64 `parquet:"x"`
	}
	write(t, filepath.Join(dir, "nan.parquet"), []nan{{1}, {2}, {math.NaN()}}, 5)
	type big struct {
		N int64 `parquet:"n"`
	}
	write(t, filepath.Join(dir, "big.parquet"), []big{{1}, {1<<53 + 1}}, 5)
	type nested struct {
		V []float64 `parquet:"v"`
	}
	write(t, filepath.Join(dir, "nested.parquet"), []nested{{[]float64{1, 2}}}, 5)
	os.WriteFile(filepath.Join(dir, "junk.parquet"), []byte("PAR1 this is not a parquet file at all PAR1"), 0o644)
	os.Mkdir(filepath.Join(dir, "empty"), 0o755)
	for _, c := range []struct {
		path string
		is   error
		msg  []string
	}{
		{"mixed", parquet.ErrSchema, []string{"b.parquet", "2 columns, the first file has 8"}},
		{"nan.parquet", datasets.ErrNonFinite, []string{"nan.parquet", `row 3, column "x"`, "NaN"}},
		{"big.parquet", parquet.ErrInexact, []string{`row 2, column "n"`, "9007199254740993"}},
		{"nested.parquet", parquet.ErrUnsupported, []string{`column "v"`, "repeated"}},
		{"junk.parquet", nil, []string{"junk.parquet"}},
		{"empty", parquet.ErrNoFiles, []string{"empty", "no .parquet files"}},
		{"absent.parquet", os.ErrNotExist, []string{"absent.parquet"}},
	} {
		_, err := parquet.ReadFile(filepath.Join(dir, c.path))
		// ReadPieces gives the same errors.
		perr := parquet.ReadPieces(context.Background(), filepath.Join(dir, c.path), nil, func(*datasets.Frame, int) error { return nil })
		for _, err := range []error{err, perr} {
			if err == nil {
				t.Errorf("%s: no error", c.path)
				continue
			}
			if c.is != nil && !errors.Is(err, c.is) {
				t.Errorf("%s: %v does not wrap %v", c.path, err, c.is)
			}
			for _, m := range c.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%s: %q does not say %q", c.path, err, m)
				}
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := parquet.ReadFileContext(ctx, filepath.Join(dir, "good.parquet")); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled read: %v", err)
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
		want := map[bool]string{false: "FALSE", true: "TRUE"}[i%2 == 1]
		if (i%7 == 6) != treated.Missing[i] || i%7 != 6 && treated.Str[i] != want {
			t.Errorf("row %d treated %q (missing %v)", i, treated.Str[i], treated.Missing[i])
		}
	}
}

// TestWriteRoundTrip: a frame with numbers, labels and missing values of
// both kinds, written by Write in several row groups, reads back equal.
func TestWriteRoundTrip(t *testing.T) {
	fr, err := datasets.NewFrame(
		datasets.NewCategorical("subject", []string{"a", "b", "", "a", "c", "b", "a"}),
		datasets.NewNumeric("y", []float64{0, 1, 2, math.NaN(), 4, 5, 6}),
		datasets.NewNumeric("x", []float64{-1.5, 0, 1e-300, 2, math.NaN(), 3, 7.25}),
	)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := parquet.Write(&b, fr, 3); err != nil {
		t.Fatal(err)
	}
	back, err := parquet.Read(context.Background(), bytes.NewReader(b.Bytes()), int64(b.Len()), "mem")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Names(), fr.Names()) {
		t.Fatalf("columns %q, want %q", back.Names(), fr.Names())
	}
	for _, c := range fr.Columns() {
		got, _ := back.Column(c.Name)
		if got.Kind != c.Kind || !slices.Equal(got.Missing, c.Missing) {
			t.Fatalf("%s: kind %v missing %v, want %v %v", c.Name, got.Kind, got.Missing, c.Kind, c.Missing)
		}
		for i := range c.Missing {
			if c.Missing[i] {
				continue
			}
			if c.Kind == datasets.Categorical && got.Str[i] != c.Str[i] || c.Kind == datasets.Numeric && got.Num[i] != c.Num[i] {
				t.Errorf("%s row %d differs", c.Name, i+1)
			}
		}
	}
}

// TestReadPieces: the row groups that ReadPieces passes on, put together,
// are the frame ReadFile reads, from a file and from a directory, each
// piece one row group with the rows before it counted; a subset of the
// columns comes in the order asked; an unknown column, an error of the
// callback and a cancelled context end the read.
func TestReadPieces(t *testing.T) {
	dir := t.TempDir()
	rows := table(40)
	write(t, filepath.Join(dir, "one.parquet"), rows, 7)
	parts := filepath.Join(dir, "parts")
	os.Mkdir(parts, 0o755)
	write(t, filepath.Join(parts, "a.parquet"), rows[:15], 7)
	write(t, filepath.Join(parts, "b.parquet"), rows[15:], 7)
	for _, c := range []struct {
		path  string
		sizes []int
	}{
		{"one.parquet", []int{7, 7, 7, 7, 7, 5}},
		{"parts", []int{7, 7, 1, 7, 7, 7, 4}},
	} {
		var sizes []int
		var pieces []*datasets.Frame
		err := parquet.ReadPieces(context.Background(), filepath.Join(dir, c.path), nil, func(fr *datasets.Frame, before int) error {
			if want := sum(sizes); before != want {
				t.Errorf("%s: piece %d after %d rows, want %d", c.path, len(sizes), before, want)
			}
			sizes = append(sizes, fr.NumRows())
			pieces = append(pieces, fr)
			return nil
		})
		if err != nil {
			t.Fatalf("%s: %v", c.path, err)
		}
		if !slices.Equal(sizes, c.sizes) {
			t.Errorf("%s: pieces of %v rows, want %v", c.path, sizes, c.sizes)
		}
		checkTable(t, concat(t, pieces), rows)
		var names []string
		err = parquet.ReadPieces(context.Background(), filepath.Join(dir, c.path), []string{"group", "y"}, func(fr *datasets.Frame, _ int) error {
			names = fr.Names()
			return nil
		})
		if err != nil || !slices.Equal(names, []string{"group", "y"}) {
			t.Errorf("%s: columns group, y: %q, %v", c.path, names, err)
		}
	}
	path := filepath.Join(dir, "one.parquet")
	none := func(*datasets.Frame, int) error { return nil }
	if err := parquet.ReadPieces(context.Background(), path, []string{"y", "nope"}, none); !errors.Is(err, datasets.ErrNoColumn) || !strings.Contains(err.Error(), "nope") {
		t.Errorf("an unknown column: %v", err)
	}
	stop := errors.New("stop")
	calls := 0
	err := parquet.ReadPieces(context.Background(), path, nil, func(*datasets.Frame, int) error { calls++; return stop })
	if err != stop || calls != 1 {
		t.Errorf("the callback's error: %v after %d calls", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := parquet.ReadPieces(ctx, path, nil, none); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled read: %v", err)
	}
}

// sum returns the sum of xs.
func sum(xs []int) int {
	s := 0
	for _, x := range xs {
		s += x
	}
	return s
}

// concat returns the rows of frames of the same columns, one after another.
func concat(t *testing.T, frames []*datasets.Frame) *datasets.Frame {
	t.Helper()
	var cols []*datasets.Column
	for _, fr := range frames {
		for j, c := range fr.Columns() {
			if len(cols) <= j {
				cols = append(cols, &datasets.Column{Name: c.Name, Kind: c.Kind})
			}
			cols[j].Num = append(cols[j].Num, c.Num...)
			cols[j].Str = append(cols[j].Str, c.Str...)
			cols[j].Missing = append(cols[j].Missing, c.Missing...)
		}
	}
	out, err := datasets.NewFrame(cols...)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestReadPiecesOf reads the files of a directory of three in runs, and
// asks that the runs' pieces be those of ReadPieces, with their files'
// indices and the rows before them in all the files, and that the
// footers of the files not read be checked all the same.
func TestReadPiecesOf(t *testing.T) {
	dir := t.TempDir()
	rows := table(40)
	write(t, filepath.Join(dir, "a.parquet"), rows[:15], 7)
	write(t, filepath.Join(dir, "b.parquet"), rows[15:22], 7)
	write(t, filepath.Join(dir, "c.parquet"), rows[22:], 7)
	files, err := parquet.Files(dir)
	if err != nil || len(files) != 3 || filepath.Base(files[2]) != "c.parquet" {
		t.Fatalf("Files: %q, %v", files, err)
	}
	type piece struct{ file, before, rows int }
	var whole []piece
	err = parquet.ReadPieces(context.Background(), dir, nil, func(fr *datasets.Frame, before int) error {
		whole = append(whole, piece{before: before, rows: fr.NumRows()})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fileOf := []int{0, 0, 0, 1, 2, 2, 2} // row groups of 7: 7+7+1, 7, 7+7+4
	for _, run := range [][2]int{{0, 3}, {0, 1}, {1, 3}, {2, 3}, {1, 1}} {
		var got []piece
		var frames []*datasets.Frame
		err := parquet.ReadPiecesOf(context.Background(), dir, run[0], run[1], nil, func(fr *datasets.Frame, file, before int) error {
			got = append(got, piece{file, before, fr.NumRows()})
			frames = append(frames, fr)
			return nil
		})
		if err != nil {
			t.Fatalf("files %v: %v", run, err)
		}
		var want []piece
		for k, p := range whole {
			if run[0] <= fileOf[k] && fileOf[k] < run[1] {
				want = append(want, piece{fileOf[k], p.before, p.rows})
			}
		}
		if !slices.Equal(got, want) {
			t.Errorf("files %v: pieces %v, want %v", run, got, want)
		}
		if len(frames) > 0 {
			edges := []int{0, 15, 22, 40}
			checkTable(t, concat(t, frames), rows[edges[run[0]]:edges[run[1]]])
		}
	}
	// A damaged footer of a file not read is found.
	if err := os.WriteFile(files[2], []byte("PAR1 not a footer PAR1"), 0o644); err != nil {
		t.Fatal(err)
	}
	none := func(*datasets.Frame, int, int) error { return nil }
	if err := parquet.ReadPiecesOf(context.Background(), dir, 0, 1, nil, none); err == nil || !strings.Contains(err.Error(), "c.parquet") {
		t.Errorf("a damaged file not read: %v", err)
	}
}
