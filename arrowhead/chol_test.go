// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// randSPD returns a random SPD arrowhead matrix S = T0 T0' in compressed
// storage, and S as a dense matrix.
func randSPD(rng *rand.Rand, s dims) ([]float64, *mat.SymDense) {
	t0 := denseOf(randFactor(rng, s))
	d, _ := t0.Dims()
	sd := mat.NewSymDense(d, nil)
	sd.SymOuterK(1, t0)
	return packDense(s, sd), sd
}

func TestChol(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(50, seedOf(s)))
			packed, sd := randSPD(rng, s)
			var ch mat.Cholesky
			if !ch.Factorize(sd) {
				t.Fatal("dense Cholesky failed on an SPD matrix")
			}
			var l mat.TriDense
			ch.LTo(&l)
			want := packDense(s, &l)

			f := New(s.n, s.r, s.g)
			sum := make([]float64, s.g*(s.g+1)/2)
			if err := f.CholRange(0, s.n, packed, sum); err != nil {
				t.Fatal(err)
			}
			if err := f.CholGlobal(packed, sum); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "kernels", f.Data(), want, tol)

			// In place, all subjects in one range.
			g := Wrap(s.n, s.r, s.g, append([]float64(nil), packed...))
			if err := cholAll(g, g.Data()); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "whole, in place", g.Data(), want, tol)
		})
	}
}

// precOfRandom returns a random factor T (seeded by seed and s), T T' by
// PrecRange and PrecGlobal, and T T' by a dense product.
func precOfRandom(s dims, seed uint64) (*Factor, []float64, *mat.SymDense) {
	f := randFactor(rand.New(rand.NewPCG(seed, seedOf(s))), s)
	td := denseOf(f)
	d, _ := td.Dims()
	dense := mat.NewSymDense(d, nil)
	dense.SymOuterK(1, td)
	prec := make([]float64, len(f.Data()))
	sum := make([]float64, s.g*(s.g+1)/2)
	f.PrecRange(0, s.n, prec, sum)
	f.PrecGlobal(prec, sum)
	return f, prec, dense
}

// TestPrec: PrecRange and PrecGlobal give T T' of a random factor, as a
// dense product does, and CholRange and CholGlobal give T back.
func TestPrec(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			f, prec, sd := precOfRandom(s, 51)
			checkClose(t, "T T'", prec, packDense(s, sd), tol)

			back := New(s.n, s.r, s.g)
			sum := make([]float64, s.g*(s.g+1)/2)
			if err := back.CholRange(0, s.n, prec, sum); err != nil {
				t.Fatal(err)
			}
			if err := back.CholGlobal(prec, sum); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "chol(T T')", back.Data(), f.Data(), tol)
		})
	}
}

func TestCholNotPositiveDefinite(t *testing.T) {
	s := dims{9, 2, 3}
	st := Stride(s.r, s.g)
	for _, tc := range []struct {
		name    string
		spoil   func(p []float64)
		subject int
	}{
		{"indefinite local block", func(p []float64) { p[4*st+2] = -1 }, 4},
		{"zero local pivot", func(p []float64) { p[0] = 0 }, 0},
		{"NaN in local block", func(p []float64) { p[7*st+1] = math.NaN() }, 7},
		{"two failing subjects", func(p []float64) { p[6*st] = -1; p[2*st] = -1 }, 2},
		{"indefinite global block", func(p []float64) { p[9*st+2] = -50 }, -1},
		{"NaN in global block", func(p []float64) { p[9*st] = math.NaN() }, -1},
		// S_g stays positive definite but the Schur complement does not.
		{"large cross block", func(p []float64) { p[5*st+3] = 100 }, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(51, 0))
			packed, _ := randSPD(rng, s)
			tc.spoil(packed)
			f := New(s.n, s.r, s.g)
			err := cholAll(f, packed)
			var npd *NotPositiveDefiniteError
			if !errors.As(err, &npd) {
				t.Fatalf("error %v, want *NotPositiveDefiniteError", err)
			}
			if npd.Subject != tc.subject {
				t.Errorf("subject %d, want %d (%v)", npd.Subject, tc.subject, err)
			}
		})
	}
}

// TestSym: a Sym over PrecRange's output reads T T' as a dense product
// gives it, and filling a Sym element by element with its setters gives
// the same storage.
func TestSym(t *testing.T) {
	for _, s := range allDims() {
		_, prec, dense := precOfRandom(s, 54)
		d := dense.SymmetricDim()
		sym := WrapSym(s.n, s.r, s.g, prec)
		filled := WrapSym(s.n, s.r, s.g, make([]float64, len(prec)))
		nr := s.n * s.r
		for i := range d {
			for j := range d {
				want := 0.0
				if onPattern(s, max(i, j), min(i, j)) {
					want = dense.At(i, j)
				}
				if got := sym.At(i, j); math.Abs(got-want) > tol*(1+math.Abs(want)) {
					t.Errorf("%v: S[%d,%d] = %v, want %v", s, i, j, got, want)
				}
				if j > i || !onPattern(s, i, j) {
					continue
				}
				v := dense.At(i, j)
				switch {
				case i < nr:
					filled.SetLocal(i/s.r, j%s.r, i%s.r, v)
				case j < nr:
					filled.SetCross(j/s.r, i-nr, j%s.r, v)
				case (i+j)%2 == 0:
					filled.SetGlobal(j-nr, i-nr, v)
				default:
					filled.AddGlobal(i-nr, j-nr, v)
				}
			}
		}
		checkClose(t, s.String()+": set element by element", filled.Data(), prec, tol)
		var _ mat.Symmetric = sym
		if !mat.EqualApprox(sym, dense, tol) {
			t.Errorf("%v: the Sym as a mat.Symmetric differs from the dense T T'", s)
		}
	}
}
