// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"errors"
	"math"
	"slices"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
)

// fuzzFrame makes a frame of up to 40 rows from data: a count y, a 0/1
// response b, a logical l, numeric x and t (some values missing or
// negative), a numeric code k, categorical f (a-d, some missing) and h, and
// groups g and id.
func fuzzFrame(data []byte) *datasets.Frame {
	n := min(1+len(data)/4, 40)
	at := func(i, k int) byte {
		if len(data) == 0 {
			return byte(i*31 + k*7)
		}
		return data[(4*i+k)%len(data)]
	}
	y, b, x, tt, k := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	f, h, g, id, l := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i := range n {
		c0, c1, c2, c3 := at(i, 0), at(i, 1), at(i, 2), at(i, 3)
		y[i] = float64(c0 % 6)
		if c0 == 255 {
			y[i] = math.NaN()
		}
		b[i] = float64(c1 % 2)
		x[i] = float64(int8(c1)) / 8
		if c1 == 128 {
			x[i] = math.NaN()
		}
		tt[i] = float64(c2%7) / 3
		k[i] = float64(c3 % 3 * 5)
		f[i] = string(rune('a' + c2%4))
		if c2 == 200 {
			f[i] = ""
		}
		h[i] = []string{"u", "v"}[c3%2]
		g[i] = "g" + strconv.Itoa(int(c3%5))
		id[i] = strconv.Itoa(i / 3)
		l[i] = []string{"FALSE", "TRUE"}[(c0^c3)%2]
	}
	fr, err := datasets.NewFrame(
		datasets.NewNumeric("y", y), datasets.NewNumeric("b", b), datasets.NewCategorical("l", l),
		datasets.NewNumeric("x", x), datasets.NewNumeric("t", tt), datasets.NewNumeric("k", k),
		datasets.NewCategorical("f", f), datasets.NewCategorical("h", h),
		datasets.NewCategorical("g", g), datasets.NewCategorical("id", id),
	)
	if err != nil {
		panic(err)
	}
	return fr
}

// FuzzBuild checks that Build never panics, that its errors are of the
// documented types, and that what it builds is consistent: dimensions agree
// with the model and NewData on the rows used reproduces the design.
func FuzzBuild(f *testing.F) {
	for _, s := range []struct {
		formula string
		data    []byte
		flags   uint8
	}{
		{"y ~ x*f + (1 + t | id)", []byte("the quick brown fox jumps over the lazy dog"), 0},
		{"b ~ f:h + log(t) + (1 | g)", []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, 1},
		{"cbind(y, b) ~ factor(k) + offset(t) + (x || id)", []byte("0123456789abcdefghij"), 2},
		{"l ~ 0 + f + h + (1 | id)", []byte{255, 128, 200, 0, 17, 99, 3, 250}, 3},
		{"y ~ x + (1 | id) + (0 + t | id)", []byte("zzzzzzzzzzzzzzzz"), 4},
		{"x ~ t + f + (1 + t | id) + (1 | g)", []byte("gaussian crossed with g"), 64 | 128},
		{"y ~ f + offset(t) + (1 | id) + (1 | h)", []byte{9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 99, 98}, 65},
		{"y ~ t + (1 + t | g) + (1 + t | id)", []byte("slopes on two factors"), 1},
		// len(data) % 3 picks the nesting policy: 2 nests always.
		{"b ~ x + (1 | id/g)", []byte("nested: id:g within id."), 1},
		{"y ~ t + (1 | id) + (1 | id:h)", []byte("interaction, crossed"), 0},
		{"b ~ x + (1 | g) + (1 | id)", []byte("not nested: NestAlways refuses!!"), 1},
		{"x ~ t + (1 | id/f)", []byte("gaussian nested with missing f.."), 64},
	} {
		f.Add(s.formula, s.data, s.flags)
	}
	f.Fuzz(func(t *testing.T, src string, data []byte, flags uint8) {
		fm, err := Parse(src)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q): %T", src, err)
			}
			return
		}
		fr := fuzzFrame(data)
		opts := Options{
			Family:  []glmm.Family{0, glmm.Poisson, glmm.Bernoulli, glmm.Binomial}[flags%4],
			Missing: MissingPolicy(flags / 4 % 2),
		}
		if flags&8 != 0 {
			opts.DoubleBar = CorrelatedDoubleBar
		}
		if flags&16 != 0 {
			opts.Reference = map[string]string{"f": "c", "h": "v"}
		}
		if flags&32 != 0 {
			opts.Offset = "t"
		}
		if flags&64 != 0 {
			opts.Family = []glmm.Family{glmm.Gaussian, glmm.NegBinomial}[flags%2]
		}
		if flags&128 != 0 {
			opts.Prior = PriorAuto
		}
		opts.Nest = NestPolicy(len(data) % 3)
		d, err := Build(fm, fr, opts)
		if err != nil {
			var de *DataError
			if !errors.As(err, &de) {
				t.Fatalf("Build(%q): error %v is a %T, want *DataError", src, err, err)
			}
			if de.Row > fr.NumRows() || de.Pos > len(src)+1 {
				t.Fatalf("Build(%q): error %v locates row %d or column %d outside the input", src, err, de.Row, de.Pos)
			}
			return
		}
		rows := d.Rows()
		if nm := d.Nested(); nm != nil {
			// Each level of a is a subject whose block holds its effect
			// and its a:b levels'; the design's groups are a:b's.
			n, _, _ := nm.Dims()
			total := 0
			for _, r := range nm.BlockSizes() {
				total += r
			}
			outer, inner := nm.Levels()
			if nm.NumObs() != len(rows) || nm.NumFixed() != len(d.FixedNames()) || n != len(outer) || total != n+len(inner) || !slices.Equal(d.GroupLevels(), inner) {
				t.Fatalf("Build(%q): nested model %d obs, p=%d, %d subjects of %d levels of a, %d effects of %d levels of a:b; design %d rows, %d names, %d group levels",
					src, nm.NumObs(), nm.NumFixed(), n, len(outer), total, len(inner), len(rows), len(d.FixedNames()), len(d.GroupLevels()))
			}
			return
		}
		m := d.Model()
		if m.NumObs() != len(rows) || m.P() != len(d.FixedNames()) || m.R() != len(d.RandomNames()) {
			t.Fatalf("Build(%q): model %d obs, p=%d, r=%d; design %d rows, %d, %d names", src, m.NumObs(), m.P(), m.R(), len(rows), len(d.FixedNames()), len(d.RandomNames()))
		}
		if m.NumSubjects() != len(d.GroupLevels()) {
			t.Fatalf("Build(%q): %d subjects, %d levels", src, m.NumSubjects(), len(d.GroupLevels()))
		}
		X, Z, group, known, err := d.NewData(fr.Rows(rows))
		if err != nil {
			t.Fatalf("Build(%q): NewData on the training rows: %v", src, err)
		}
		if (X == nil) != (d.X() == nil) || X != nil && !mat.Equal(X, d.X()) || !mat.Equal(Z, d.Z()) {
			t.Fatalf("Build(%q): NewData on the training rows gives another design", src)
		}
		for k, g := range group {
			if !known[k] || g != d.Group()[k] {
				t.Fatalf("Build(%q): NewData puts row %d in group %d (known %v), want %d", src, k, g, known[k], d.Group()[k])
			}
		}
		crossed, err := d.NewCrossed(fr.Rows(rows))
		if err != nil {
			t.Fatalf("Build(%q): NewCrossed on the training rows: %v", src, err)
		}
		if len(crossed) != m.NumCrossed() {
			t.Fatalf("Build(%q): %d crossed factors from NewCrossed, the model has %d", src, len(crossed), m.NumCrossed())
		}
		for c, idx := range crossed {
			want := d.Config().Crossed[c].Index
			for k, l := range idx {
				if l != want[k] {
					t.Fatalf("Build(%q): NewCrossed puts row %d at level %d of factor %d, want %d", src, k, l, c, want[k])
				}
			}
		}
	})
}
