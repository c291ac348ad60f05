// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

const tol = 1e-10

// seedOf gives each size its own random stream.
func seedOf(s dims) uint64 { return uint64(s.n*1000 + s.r*100 + s.g) }

func TestSolveTrans(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(10, seedOf(s)))
			f := randFactor(rng, s)
			d := f.Dim()
			w := randVec(rng, d)
			w0 := append([]float64(nil), w...)
			var want mat.VecDense
			if err := want.SolveVec(denseOf(f).T(), mat.NewVecDense(d, w0)); err != nil {
				t.Fatal(err)
			}
			// Kernels over two ranges.
			x := make([]float64, d)
			f.SolveTransGlobal(x, w)
			f.SolveTransRange(0, s.n/2, x, w)
			f.SolveTransRange(s.n/2, s.n, x, w)
			checkClose(t, "kernels", x, want.RawVector().Data, tol)
			checkClose(t, "input unchanged", w, w0, 0)
			// All subjects in one range, in place.
			if err := solveTransAll(f, w, w); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "whole, in place", w, want.RawVector().Data, tol)
		})
	}
}

func TestSolve(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, seedOf(s)))
			f := randFactor(rng, s)
			d := f.Dim()
			g := randVec(rng, d)
			g0 := append([]float64(nil), g...)
			var want mat.VecDense
			if err := want.SolveVec(denseOf(f), mat.NewVecDense(d, g0)); err != nil {
				t.Fatal(err)
			}
			v := make([]float64, d)
			sum1, sum2 := make([]float64, s.g), make([]float64, s.g)
			f.SolveRange(0, s.n/3, v, g, sum1)
			f.SolveRange(s.n/3, s.n, v, g, sum2)
			for k := range sum1 {
				sum1[k] += sum2[k]
			}
			f.SolveGlobal(v, g, sum1)
			checkClose(t, "kernels", v, want.RawVector().Data, tol)
			checkClose(t, "input unchanged", g, g0, 0)
			if err := solveAll(f, g, g); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "whole, in place", g, want.RawVector().Data, tol)
		})
	}
}

func TestMul(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(12, seedOf(s)))
			f := randFactor(rng, s)
			d := f.Dim()
			x := randVec(rng, d)
			var want mat.VecDense
			want.MulVec(denseOf(f), mat.NewVecDense(d, append([]float64(nil), x...)))
			y := make([]float64, d)
			sum := make([]float64, s.g)
			f.MulVecRange(0, s.n, y, x, sum)
			f.MulVecGlobal(y, x, sum)
			checkClose(t, "kernels", y, want.RawVector().Data, tol)
			if err := mulAll(f, x, x); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "whole, in place", x, want.RawVector().Data, tol)
		})
	}
}

func TestPrecSolve(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(13, seedOf(s)))
			f := randFactor(rng, s)
			d := f.Dim()
			b := randVec(rng, d)
			// (T T')^-1 b = T^-T (T^-1 b), with dense triangular solves.
			tt := denseOf(f)
			var w, want mat.VecDense
			if err := w.SolveVec(tt, mat.NewVecDense(d, append([]float64(nil), b...))); err != nil {
				t.Fatal(err)
			}
			if err := want.SolveVec(tt.T(), &w); err != nil {
				t.Fatal(err)
			}
			x := make([]float64, d)
			if err := precSolveAll(f, x, b); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "PrecSolve", x, want.RawVector().Data, tol)
		})
	}
}

func TestDraw(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(14, seedOf(s)))
			f := randFactor(rng, s)
			d := f.Dim()
			mu, z := randVec(rng, d), randVec(rng, d)
			var x, u mat.VecDense
			if err := x.SolveVec(denseOf(f).T(), mat.NewVecDense(d, append([]float64(nil), z...))); err != nil {
				t.Fatal(err)
			}
			if err := u.SolveVec(blockDiagOf(f).T(), mat.NewVecDense(d, append([]float64(nil), z...))); err != nil {
				t.Fatal(err)
			}
			wantTheta := make([]float64, d)
			for i := range wantTheta {
				wantTheta[i] = mu[i] + x.AtVec(i)
			}
			theta, uu := make([]float64, d), make([]float64, d)
			f.DrawGlobal(theta, uu, mu, z)
			f.DrawRange(0, s.n, theta, uu, mu, z)
			checkClose(t, "theta", theta, wantTheta, tol)
			checkClose(t, "u", uu, u.RawVector().Data, tol)
			clear(theta)
			clear(uu)
			if err := drawAll(f, theta, uu, mu, z); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "whole theta", theta, wantTheta, tol)
			checkClose(t, "whole u", uu, u.RawVector().Data, tol)
		})
	}
}
