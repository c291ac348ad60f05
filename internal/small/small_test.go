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

// randomSPD returns a random symmetric positive definite r×r matrix,
// row-major in full.
func randomSPD(rng *rand.Rand, r int) []float64 {
	b := mat.NewDense(r, r, nil)
	for i := range r {
		for j := range r {
			b.Set(i, j, rng.NormFloat64())
		}
	}
	var a mat.Dense
	a.Mul(b, b.T())
	for i := range r {
		a.Set(i, i, a.At(i, i)+0.5)
	}
	return a.RawMatrix().Data
}

// TestAgainstGonum checks every kernel against the dense gonum result.
func TestAgainstGonum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, r := range []int{1, 2, 3, 5} {
		a := randomSPD(rng, r)
		am := mat.NewSymDense(r, append([]float64(nil), a...))
		x := make([]float64, r)
		for i := range x {
			x[i] = rng.NormFloat64()
		}
		l := make([]float64, r*r)
		if !Chol(r, a, l) {
			t.Fatalf("r=%d: Chol failed on an SPD matrix", r)
		}
		var ch mat.Cholesky
		ch.Factorize(am)
		var lw mat.TriDense
		ch.LTo(&lw)
		var inv mat.SymDense
		if err := ch.InverseTo(&inv); err != nil {
			t.Fatal(err)
		}
		check := func(what string, got, want float64) {
			t.Helper()
			if math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
				t.Errorf("r=%d %s: %v, want %v", r, what, got, want)
			}
		}
		for i := range r {
			for j := range r {
				check("L", l[i*r+j], lw.At(i, j))
			}
		}
		rinv, ainv := make([]float64, r*r), make([]float64, r*r)
		LowerInv(r, l, rinv)
		InvFromChol(r, rinv, ainv)
		for i := range r {
			for j := range r {
				check("inverse", ainv[i*r+j], inv.At(i, j))
			}
		}
		xv := mat.NewVecDense(r, append([]float64(nil), x...))
		var want mat.VecDense
		want.MulVec(&inv, xv)
		got := append([]float64(nil), x...)
		SolveChol(r, l, got)
		for i := range r {
			check("SolveChol", got[i], want.AtVec(i))
		}
		want.MulVec(am, xv)
		SymMulVec(r, a, x, got)
		for i := range r {
			check("SymMulVec", got[i], want.AtVec(i))
		}
		want.MulVec(&lw, xv)
		LowerMulVec(r, l, x, got)
		for i := range r {
			check("LowerMulVec", got[i], want.AtVec(i))
		}
		want.MulVec(lw.T(), xv)
		LowerTMulVec(r, l, x, got)
		for i := range r {
			check("LowerTMulVec", got[i], want.AtVec(i))
		}
		if err := want.SolveVec(&lw, xv); err != nil {
			t.Fatal(err)
		}
		copy(got, x)
		LowerSolve(r, l, got)
		for i := range r {
			check("LowerSolve", got[i], want.AtVec(i))
		}
		if err := want.SolveVec(lw.T(), xv); err != nil {
			t.Fatal(err)
		}
		copy(got, x)
		LowerTSolve(r, l, got)
		for i := range r {
			check("LowerTSolve", got[i], want.AtVec(i))
		}
		check("Quad", Quad(r, a, x), mat.Inner(xv, am, xv))
		packed := make([]float64, 0, r*(r+1)/2)
		for u := range r {
			for v := 0; v <= u; v++ {
				packed = append(packed, am.At(u, v))
			}
		}
		full := make([]float64, r*r)
		UnpackSym(r, packed, full)
		for i := range r {
			for j := range r {
				check("UnpackSym", full[i*r+j], am.At(i, j))
			}
		}
	}
	// Not positive definite.
	if Chol(2, []float64{1, 2, 2, 1}, make([]float64, 4)) {
		t.Error("Chol accepted an indefinite matrix")
	}
}
