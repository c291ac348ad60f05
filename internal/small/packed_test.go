// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package small

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestPackedCovFactorOfPrec: the lower factor C computed from a precision S
// satisfies C C' = S^-1, and PackedPrecOfCov inverts it back, against gonum.
func TestPackedCovFactorOfPrec(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, m := range []int{1, 2, 3, 7} {
		s, packed := randSPD(rng, m, float64(m))
		c := make([]float64, len(packed))
		if err := PackedCovFactorOfPrec(m, packed, c, make([]float64, 2*m*m)); err != nil {
			t.Fatal(err)
		}
		cm := mat.NewTriDense(m, mat.Lower, nil)
		for i := range m {
			for j := 0; j <= i; j++ {
				cm.SetTri(i, j, c[i*(i+1)/2+j])
			}
		}
		var cct, want mat.Dense
		cct.Mul(cm, cm.T())
		if err := want.Inverse(s); err != nil {
			t.Fatal(err)
		}
		if !mat.EqualApprox(&cct, &want, 1e-10) {
			t.Errorf("m=%d: C C' differs from S^-1", m)
		}
		back := make([]float64, len(packed))
		PackedPrecOfCov(m, c, back, make([]float64, 2*m*m))
		for j := range back {
			if math.Abs(back[j]-packed[j]) > 1e-9*math.Max(1, math.Abs(packed[j])) {
				t.Errorf("m=%d: PackedPrecOfCov entry %d = %v, want %v", m, j, back[j], packed[j])
			}
		}
	}
	indef := []float64{1, 2, 1} // [[1 2] [2 1]]
	if err := PackedCovFactorOfPrec(2, indef, make([]float64, 3), make([]float64, 8)); err == nil {
		t.Error("an indefinite precision gave no error")
	}
}

// TestPackedOuter: PackedEMAOuter and PackedAddOuter against dense
// outer products.
func TestPackedOuter(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{1, 2, 5} {
		a := make([]float64, m)
		for i := range a {
			a[i] = rng.NormFloat64()
		}
		s := make([]float64, m*(m+1)/2)
		for i := range s {
			s[i] = rng.NormFloat64()
		}
		ema, add := append([]float64(nil), s...), append([]float64(nil), s...)
		PackedEMAOuter(ema, a, 0.9)
		PackedAddOuter(add, a)
		for u := range m {
			for v := 0; v <= u; v++ {
				k := u*(u+1)/2 + v
				if want := 0.9*s[k] + 0.1*a[u]*a[v]; math.Abs(ema[k]-want) > 1e-15 {
					t.Errorf("m=%d: PackedEMAOuter (%d,%d) = %v, want %v", m, u, v, ema[k], want)
				}
				if want := s[k] + a[u]*a[v]; math.Abs(add[k]-want) > 1e-15 {
					t.Errorf("m=%d: PackedAddOuter (%d,%d) = %v, want %v", m, u, v, add[k], want)
				}
			}
		}
	}
}

// TestPackedRowSumSq: the diagonals of C C' and of (L C)(L C)' against
// gonum's products of the dense triangles.
func TestPackedRowSumSq(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{1, 2, 3, 6} {
		c := make([]float64, m*(m+1)/2)
		for k := range c {
			c[k] = rng.NormFloat64()
		}
		l := make([]float64, m*m)
		for a := range m {
			for b := 0; b <= a; b++ {
				l[a*m+b] = rng.NormFloat64()
			}
		}
		cd := mat.NewDense(m, m, nil)
		for a := range m {
			for b := 0; b <= a; b++ {
				cd.Set(a, b, c[a*(a+1)/2+b])
			}
		}
		var lc, cc, lclc mat.Dense
		lc.Mul(mat.NewDense(m, m, l), cd)
		cc.Mul(cd, cd.T())
		lclc.Mul(&lc, lc.T())
		got, got2 := make([]float64, m), make([]float64, m)
		PackedRowSumSq(m, c, got)
		LowerPackedRowSumSq(m, l, c, got2)
		for a := range m {
			if math.Abs(got[a]-cc.At(a, a)) > 1e-12*(1+cc.At(a, a)) {
				t.Errorf("m=%d: (C C')[%d,%d] = %v, want %v", m, a, a, got[a], cc.At(a, a))
			}
			if math.Abs(got2[a]-lclc.At(a, a)) > 1e-12*(1+lclc.At(a, a)) {
				t.Errorf("m=%d: ((L C)(L C)')[%d,%d] = %v, want %v", m, a, a, got2[a], lclc.At(a, a))
			}
		}
	}
}

// TestPackedInvChol: the factor L written for a packed SPD S is lower
// triangular with a positive diagonal and L L' = S^-1 (against gonum's
// inverse of the dense S), and one PackedInvChol serves two matrices; a
// matrix that is not positive definite is an error.
func TestPackedInvChol(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range []int{1, 2, 4} {
		w := NewPackedInvChol(m)
		for range 2 {
			s, packed := randSPD(rng, m, 1)
			l := make([]float64, PackedLen(m))
			if err := w.Into(packed, l); err != nil {
				t.Fatal(err)
			}
			L := mat.NewDense(m, m, nil)
			for i := range m {
				if l[PackedIndex(i, i)] <= 0 {
					t.Errorf("m=%d: diagonal %d is %v", m, i, l[PackedIndex(i, i)])
				}
				for j := 0; j <= i; j++ {
					L.Set(i, j, l[PackedIndex(i, j)])
				}
			}
			var got, want mat.Dense
			got.Mul(L, L.T())
			if err := want.Inverse(s); err != nil {
				t.Fatal(err)
			}
			if !mat.EqualApprox(&got, &want, 1e-10) {
				t.Errorf("m=%d: L L' is not the inverse of S", m)
			}
		}
	}
	bad := []float64{1, 2, 1} // [[1 2] [2 1]]
	if err := NewPackedInvChol(2).Into(bad, make([]float64, 3)); err == nil {
		t.Error("an indefinite matrix passed")
	}
}

// randSPD returns A A' + shift I for a standard normal m×m A, and its
// packed lower triangle.
func randSPD(rng *rand.Rand, m int, shift float64) (*mat.SymDense, []float64) {
	a := mat.NewDense(m, m, nil)
	for i := range m {
		for j := range m {
			a.Set(i, j, rng.NormFloat64())
		}
	}
	s := mat.NewSymDense(m, nil)
	s.SymOuterK(1, a)
	packed := make([]float64, PackedLen(m))
	for i := range m {
		s.SetSym(i, i, s.At(i, i)+shift)
		for j := 0; j <= i; j++ {
			packed[PackedIndex(i, j)] = s.At(i, j)
		}
	}
	return s, packed
}

// TestInvChol1: Into inverts 1×1 blocks as gonum's Cholesky does
// (gonumInto), bit for bit, over magnitudes from 1e-300 to 1e300, and
// refuses what it refuses.
func TestInvChol1(t *testing.T) {
	w := NewPackedInvChol(1)
	rng := rand.New(rand.NewPCG(1, 2))
	got, want := make([]float64, 1), make([]float64, 1)
	for k := range 100_000 {
		s := math.Exp(rng.Float64()*1380 - 690)
		if k%3 == 0 {
			s = 1 + rng.NormFloat64()*0.1
		}
		err := w.Into([]float64{s}, got)
		errG := w.gonumInto([]float64{s}, want)
		if (err == nil) != (errG == nil) {
			t.Fatalf("s=%v: Into error %v, gonum's %v", s, err, errG)
		}
		if err == nil && math.Float64bits(got[0]) != math.Float64bits(want[0]) {
			t.Fatalf("s=%v: Into %v, gonum's %v", s, got[0], want[0])
		}
	}
	for _, s := range []float64{0, -1, math.NaN()} {
		if w.Into([]float64{s}, got) == nil || w.gonumInto([]float64{s}, want) == nil {
			t.Errorf("s=%v accepted", s)
		}
	}
}
