// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestNewFrameErrors(t *testing.T) {
	num := func(name string, n int) *Column { return NewNumeric(name, make([]float64, n)) }
	for _, test := range []struct {
		name string
		cols []*Column
		err  error
	}{
		{"length mismatch", []*Column{num("a", 3), num("b", 2)}, ErrLength},
		{"duplicate", []*Column{num("a", 3), num("a", 3)}, ErrDuplicate},
		{"empty name", []*Column{num("", 3)}, ErrEmptyName},
		{"nil column", []*Column{nil}, ErrBadColumn},
		{"numeric with labels", []*Column{{Name: "a", Kind: Numeric, Num: []float64{1}, Str: []string{"x"}}}, ErrBadColumn},
		{"categorical with numbers", []*Column{{Name: "a", Kind: Categorical, Str: []string{"x"}, Num: []float64{1}}}, ErrBadColumn},
		{"unknown kind", []*Column{{Name: "a", Kind: Kind(7)}}, ErrBadColumn},
		{"missing flags short", []*Column{{Name: "a", Kind: Numeric, Num: []float64{1, 2}, Missing: []bool{false}}}, ErrBadColumn},
	} {
		t.Run(test.name, func(t *testing.T) {
			if _, err := NewFrame(test.cols...); !errors.Is(err, test.err) {
				t.Errorf("got %v, want %v", err, test.err)
			}
		})
	}
}

func TestFrame(t *testing.T) {
	x := NewNumeric("x", []float64{3, math.NaN(), 1, 2.5})
	g := NewCategorical("g", []string{"b", "a", "", "b"})
	f, err := NewFrame(x, g)
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 4 || f.NumCols() != 2 || !slices.Equal(f.Names(), []string{"x", "g"}) {
		t.Fatalf("got %d×%d %q", f.NumRows(), f.NumCols(), f.Names())
	}
	if c, ok := f.Column("g"); !ok || c != g {
		t.Error("Column(g) did not return g")
	}
	if _, ok := f.Column("nope"); ok {
		t.Error("Column(nope) found a column")
	}
	if err := f.Add(NewNumeric("short", []float64{1})); !errors.Is(err, ErrLength) {
		t.Errorf("Add short column: %v", err)
	}
	if err := f.Add(NewNumeric("x", make([]float64, 4))); !errors.Is(err, ErrDuplicate) {
		t.Errorf("Add duplicate: %v", err)
	}
	// Columns returns a copy of the list.
	f.Columns()[0] = nil
	if f.Columns()[0] != x {
		t.Error("Columns exposes the frame's slice")
	}

	if x.NumMissing() != 1 || g.NumMissing() != 1 {
		t.Errorf("NumMissing: %d, %d", x.NumMissing(), g.NumMissing())
	}
	if lev := g.Levels(); !slices.Equal(lev, []string{"a", "b"}) {
		t.Errorf("Levels = %q", lev)
	}
	if x.Levels() != nil {
		t.Error("numeric Levels not nil")
	}

	sub := f.Rows([]int{3, 0, 3})
	sx, _ := sub.Column("x")
	sg, _ := sub.Column("g")
	if sub.NumRows() != 3 || !slices.Equal(sx.Num, []float64{2.5, 3, 2.5}) || !slices.Equal(sg.Str, []string{"b", "b", "b"}) {
		t.Errorf("Rows: %v %q", sx.Num, sg.Str)
	}
	sx.Num[0] = 99
	if x.Num[3] != 2.5 {
		t.Error("Rows shares storage with the original")
	}
	if empty := f.Rows(nil); empty.NumRows() != 0 || empty.NumCols() != 2 {
		t.Errorf("Rows(nil) is %d×%d", empty.NumRows(), empty.NumCols())
	}

	if err := f.SetCategorical("x"); err != nil {
		t.Fatal(err)
	}
	if x.Kind != Categorical || x.Num != nil || !slices.Equal(x.Str, []string{"3", "", "1", "2.5"}) ||
		!slices.Equal(x.Missing, []bool{false, true, false, false}) {
		t.Errorf("SetCategorical: %v %q %v", x.Kind, x.Str, x.Missing)
	}
	if lev := x.Levels(); !slices.Equal(lev, []string{"1", "2.5", "3"}) {
		t.Errorf("levels after SetCategorical: %q", lev)
	}
	if err := f.SetCategorical("nope"); !errors.Is(err, ErrNoColumn) {
		t.Errorf("SetCategorical(nope): %v", err)
	}

	var zero Frame
	if err := zero.Add(NewNumeric("a", []float64{1, 2})); err != nil || zero.NumRows() != 2 {
		t.Errorf("zero Frame Add: %v, %d rows", err, zero.NumRows())
	}
}

func TestLevelsOrder(t *testing.T) {
	// Byte order, as R's C-locale factor levels: "10" < "2", "B" < "a".
	c := NewCategorical("g", []string{"2", "10", "a", "B", "2", "1"})
	want := []string{"1", "10", "2", "B", "a"}
	if got := c.Levels(); !slices.Equal(got, want) {
		t.Errorf("Levels = %q, want %q", got, want)
	}
}

func TestDataDir(t *testing.T) {
	if got := DataDir("/x/y"); got != "/x/y" {
		t.Errorf("DataDir(flag) = %q", got)
	}
	t.Setenv("SPARSEVI_DATA", "/from/env")
	if got := DataDir(""); got != "/from/env" {
		t.Errorf("DataDir with env = %q", got)
	}
	if got := DataDir("/flag"); got != "/flag" {
		t.Errorf("flag does not win over env: %q", got)
	}

	t.Setenv("SPARSEVI_DATA", "")
	root := t.TempDir()
	want := filepath.Join(root, "shared", "datasets")
	deep := filepath.Join(root, "main", "pkg", "sub")
	for _, d := range []string{want, deep} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(deep)
	if got := DataDir(""); got != want {
		t.Errorf("DataDir from %s = %q, want %q", deep, got, want)
	}
	t.Chdir(filepath.Join(root, "main"))
	if got := DataDir(""); got != "../shared/datasets" {
		t.Errorf("DataDir from main = %q, want the default", got)
	}
	other := t.TempDir()
	t.Chdir(other)
	if got := DataDir(""); got != "../shared/datasets" && !strings.HasSuffix(got, filepath.Join("shared", "datasets")) {
		t.Errorf("DataDir with no data = %q", got)
	}
}
