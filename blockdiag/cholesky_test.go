// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import (
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randSPDComp returns the compressed lower triangles of random SPD blocks
// B B' + I/2 with B standard normal.
func randSPDComp(s size, seed uint64) []float64 {
	rng := newRand(seed)
	comp := make([]float64, Len(s.n, s.r, s.g))
	fill := func(m int, c []float64) {
		b := make([]float64, m*m)
		for i := range b {
			b[i] = rng.NormFloat64()
		}
		for i := range m {
			for j := 0; j <= i; j++ {
				var v float64
				for k := range m {
					v += b[i*m+k] * b[j*m+k]
				}
				if i == j {
					v += 0.5
				}
				c[i*(i+1)/2+j] = v
			}
		}
	}
	t := s.r * (s.r + 1) / 2
	for i := range s.n {
		fill(s.r, comp[i*t:(i+1)*t])
	}
	fill(s.g, comp[s.n*t:])
	return comp
}

// symFromComp returns the dense symmetric block-diagonal matrix stored in
// comp.
func symFromComp(s size, comp []float64) *mat.SymDense {
	d := s.n*s.r + s.g
	m := mat.NewSymDense(d, nil)
	for i := range d {
		for j := 0; j <= i; j++ {
			if onPattern(s, i, j) {
				m.SetSym(i, j, comp[compOffset(s, i, j)])
			}
		}
	}
	return m
}

func TestCholeskyAgainstDense(t *testing.T) {
	for _, s := range sizes() {
		if s.n*s.r+s.g == 0 {
			continue
		}
		{
			sc := randSPDComp(s, uint64(s.n+7*s.r+31*s.g))
			orig := append([]float64(nil), sc...)
			f := New(s.n, s.r, s.g)
			run := whole{f}
			if err := run.Chol(sc); err != nil {
				t.Fatalf("%v: %v", s, err)
			}
			if !sameBits(sc, orig) {
				t.Errorf("%v: Cholesky changed its input", s)
			}
			// The whole block-diagonal matrix factorised by gonum.
			var ch mat.Cholesky
			if !ch.Factorize(symFromComp(s, sc)) {
				t.Fatalf("%v: reference not positive definite", s)
			}
			var l mat.TriDense
			ch.LTo(&l)
			want := compFromDense(s, &l)
			if err := relErr(f.Data(), want); !(err <= tol) {
				t.Errorf("%v: differs from mat.Cholesky by %.3g", s, err)
			}
			// Off the pattern gonum's factor is zero too.
			if err := relErr(offPattern(s, &l), make([]float64, len(offPattern(s, &l)))); err != 0 {
				t.Errorf("%v: reference factor not block diagonal", s)
			}
			// In place.
			g := Wrap(s.n, s.r, s.g, append([]float64(nil), sc...))
			check(t, whole{g}.Chol(g.Data()))
			if !sameBits(g.Data(), f.Data()) {
				t.Errorf("%v: in-place factorisation differs", s)
			}
			// Cov of the factor gives back the matrix.
			cv := make([]float64, len(sc))
			check(t, run.Cov(cv))
			if err := relErr(cv, sc); !(err <= tol) {
				t.Errorf("%v: C C' differs from S by %.3g", s, err)
			}
		}
	}
}

func TestCholeskyErrors(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	for _, r := range []int{1, 2, 3} {
		s := size{17, r, 4}
		last := r - 1
		// set changes entry (a, b) of block k (n for the global block).
		set := func(comp []float64, k, a, b int, v float64) {
			first := k * r
			comp[compOffset(s, first+a, first+b)] = v
		}
		for _, tc := range []struct {
			name    string
			minR    int
			spoil   func(comp []float64)
			subject int
			row     int
			nanPiv  bool
		}{
			{"indefinite", 1, func(c []float64) { set(c, 5, last, last, -4) }, 5, last, false},
			{"two failing subjects", 1, func(c []float64) { set(c, 11, 0, 0, -1); set(c, 5, last, last, -3) }, 5, last, false},
			{"singular first", 1, func(c []float64) {
				for a := range r {
					for b := 0; b <= a; b++ {
						set(c, 0, a, b, 0)
					}
				}
			}, 0, 0, false},
			{"last subject", 1, func(c []float64) { set(c, 16, last, last, -9) }, 16, last, false},
			{"global", 1, func(c []float64) { set(c, 17, 3, 3, -100) }, -1, 3, false},
			{"subject before global", 1, func(c []float64) { set(c, 17, 0, 0, -1); set(c, 9, 0, 0, -1) }, 9, 0, false},
			{"NaN off diagonal", 2, func(c []float64) { set(c, 2, last, last-1, nan) }, 2, last, true},
			{"NaN diagonal", 1, func(c []float64) { set(c, 3, 0, 0, nan) }, 3, 0, true},
			{"Inf diagonal", 1, func(c []float64) { set(c, 4, last, last, inf) }, 4, last, false},
			{"NaN global", 1, func(c []float64) { set(c, 17, 3, 1, nan) }, -1, 3, true},
		} {
			if r < tc.minR {
				continue
			}
			{
				sc := randSPDComp(s, 77)
				tc.spoil(sc)
				f := New(s.n, s.r, s.g)
				err := whole{f}.Chol(sc)
				var npd *NotPositiveDefiniteError
				if !errors.As(err, &npd) {
					t.Errorf("r=%d %s: error %v, want *NotPositiveDefiniteError", r, tc.name, err)
					continue
				}
				if npd.Subject != tc.subject || npd.Row != tc.row {
					t.Errorf("r=%d %s: subject %d row %d, want subject %d row %d", r, tc.name, npd.Subject, npd.Row, tc.subject, tc.row)
				}
				if tc.nanPiv != math.IsNaN(npd.Pivot) || (!tc.nanPiv && npd.Pivot > 0 && !math.IsInf(npd.Pivot, 1)) {
					t.Errorf("r=%d %s: pivot %v", r, tc.name, npd.Pivot)
				}
				want := "global block"
				if tc.subject >= 0 {
					want = "subject " + strconv.Itoa(tc.subject)
				}
				if !strings.Contains(err.Error(), want) {
					t.Errorf("r=%d %s: message %q does not name %q", r, tc.name, err, want)
				}
			}
		}
	}
	s := size{17, 3, 4}
	// Every indefinite block is rejected by gonum as well, so the error is
	// not spurious.
	sc := randSPDComp(s, 77)
	sc[compOffset(s, 5*3+1, 5*3+1)] = -4
	var ch mat.Cholesky
	if ch.Factorize(symFromComp(s, sc)) {
		t.Error("reference accepted the indefinite matrix")
	}
}
