// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"math/rand/v2"
	"testing"
)

// TestCholZeroRows: with r = 1, CholRange skips the zero rows of each
// S_gi, as a crossed factor's subject leaves most of them; the factor of
// T T' is T again, with those rows exactly zero.
func TestCholZeroRows(t *testing.T) {
	for _, s := range []dims{{7, 1, 5}, {12, 1, 9}, {3, 2, 6}} {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(8, seedOf(s)))
			f := randFactor(rng, s)
			for i := range s.n {
				c := f.Cross(i)
				for k := range s.g {
					if rng.IntN(3) > 0 {
						clear(c[k*s.r : (k+1)*s.r])
					}
				}
			}
			prec := make([]float64, len(f.Data()))
			sum := make([]float64, s.g*(s.g+1)/2)
			f.PrecRange(0, s.n, prec, sum)
			f.PrecGlobal(prec, sum)
			back := New(s.n, s.r, s.g)
			clear(sum)
			if err := back.CholRange(0, s.n, prec, sum); err != nil {
				t.Fatal(err)
			}
			if err := back.CholGlobal(prec, sum); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "factor", back.Data(), f.Data(), tol)
			for i := range s.n {
				for j, v := range f.Cross(i) {
					if v == 0 && back.Cross(i)[j] != 0 {
						t.Fatalf("subject %d: entry %d of T_gi is %v, want 0", i, j, back.Cross(i)[j])
					}
				}
			}
		})
	}
}

// BenchmarkCholRangeRows times CholRange at insteval's shape: 2972
// subjects, r = 1, G = 1148, 28 nonzero rows of S_gi each.
func BenchmarkCholRangeRows(b *testing.B) {
	const n, r, g, rows = 2972, 1, 1148, 28
	rng := rand.New(rand.NewPCG(2, 2))
	s := make([]float64, Len(n, r, g))
	st := Stride(r, g)
	for i := range n {
		blk := s[i*st : (i+1)*st]
		blk[0] = 30 + rng.Float64()
		for _, k := range rng.Perm(g)[:rows] {
			blk[1+k] = rng.NormFloat64()
		}
	}
	f := New(n, r, g)
	sum := make([]float64, g*(g+1)/2)
	for b.Loop() {
		clear(sum)
		if err := f.CholRange(0, n, s, sum); err != nil {
			b.Fatal(err)
		}
	}
}
