// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// vechIndex returns the position of element (i, j), i >= j, of a d×d matrix
// in the column-major vech.
func vechIndex(d, i, j int) int { return j*d - j*(j-1)/2 + i - j }

// lemma1Fisher builds, for a lower-triangular d×d T, the Fisher information
// of vech(T) in N(mu, (T T')^-1) by Lemma 1 of Tan's paper:
//
//	I(T) = L {(T^-1 ⊗ T^-T) K + (I ⊗ T^-T T^-1)} L',
//
// with vec column-major, K vec(X) = vec(X') and L vec(X) = vech(X).
func lemma1Fisher(t *testing.T, tt *mat.Dense) *mat.Dense {
	d, _ := tt.Dims()
	dd, dh := d*d, d*(d+1)/2
	tinv := denseInverse(t, tt)
	var sig mat.Dense
	sig.Mul(tinv.T(), tinv)
	k := mat.NewDense(dd, dd, nil)
	l := mat.NewDense(dh, dd, nil)
	for i := range d {
		for j := range d {
			k.Set(j*d+i, i*d+j, 1)
			if i >= j {
				l.Set(vechIndex(d, i, j), j*d+i, 1)
			}
		}
	}
	id := mat.NewDiagDense(d, nil)
	for i := range d {
		id.SetDiag(i, 1)
	}
	var a, b, inner, lm, out mat.Dense
	a.Kronecker(tinv, tinv.T())
	a.Mul(&a, k)
	b.Kronecker(id, &sig)
	inner.Add(&a, &b)
	lm.Mul(l, &inner)
	out.Mul(&lm, l.T())
	return &out
}

// traceFisher builds the same Fisher information from the general Gaussian
// formula F_pq = tr(Sigma dOmega_p Sigma dOmega_q)/2 with Omega = T T' and
// dOmega_p = E_p T' + T E_p', as an independent check of lemma1Fisher.
func traceFisher(t *testing.T, tt *mat.Dense) *mat.Dense {
	d, _ := tt.Dims()
	dh := d * (d + 1) / 2
	tinv := denseInverse(t, tt)
	var sig mat.Dense
	sig.Mul(tinv.T(), tinv)
	// sd[p] = Sigma dOmega_p.
	sd := make([]*mat.Dense, dh)
	for j := range d {
		for i := j; i < d; i++ {
			e := mat.NewDense(d, d, nil)
			e.Set(i, j, 1)
			var do, et mat.Dense
			do.Mul(e, tt.T())
			et.Mul(tt, e.T())
			do.Add(&do, &et)
			var m mat.Dense
			m.Mul(&sig, &do)
			sd[vechIndex(d, i, j)] = &m
		}
	}
	f := mat.NewDense(dh, dh, nil)
	for p := range dh {
		for q := range dh {
			var m mat.Dense
			m.Mul(sd[p], sd[q])
			f.Set(p, q, mat.Trace(&m)/2)
		}
	}
	return f
}

// patternFisher restricts the Fisher information of vech(T) to the stored
// elements of the arrowhead factor, in storage order: the Fisher information
// of the sparse parametrisation.
func patternFisher(s dims, full *mat.Dense) *mat.Dense {
	d := s.n*s.r + s.g
	p := pos(s)
	f := mat.NewDense(len(p), len(p), nil)
	for a, ij := range p {
		for b, kl := range p {
			f.Set(a, b, full.At(vechIndex(d, ij[0], ij[1]), vechIndex(d, kl[0], kl[1])))
		}
	}
	return f
}

var fisherDims = []dims{{1, 1, 1}, {2, 1, 2}, {2, 2, 2}, {3, 2, 3}, {3, 1, 3}, {2, 3, 2}, {3, 2, 1}}

func TestLemma1Fisher(t *testing.T) {
	for _, s := range fisherDims {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(30, seedOf(s)))
			tt := denseOf(randFactor(rng, s))
			a, b := lemma1Fisher(t, tt), traceFisher(t, tt)
			checkClose(t, "Lemma 1 vs trace formula", a.RawMatrix().Data, b.RawMatrix().Data, 1e-10)
		})
	}
}

// TestNatGradIsSparseNaturalGradient solves with the explicitly built Fisher
// information of the sparse parametrisation (mu, stored elements of T) for
// the Euclidean gradient of one draw, and matches Algorithm 2S.
func TestNatGradIsSparseNaturalGradient(t *testing.T) {
	for _, s := range fisherDims {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(31, seedOf(s)))
			f := randFactor(rng, s)
			d := f.Dim()
			tt := denseOf(f)
			fs := patternFisher(s, lemma1Fisher(t, tt))
			dr := denseDraw(t, rng, f)

			// Euclidean gradient of the draw, densely: grad h for mu and the
			// entries of -(theta - mu) v' on the pattern for T.
			x := make([]float64, d)
			for i := range x {
				x[i] = dr.theta[i] - dr.mu[i]
			}
			var gfull mat.Dense
			gfull.Outer(-1, mat.NewVecDense(d, x), mat.NewVecDense(d, dr.v))
			gs := packDense(s, &gfull)

			var wantT mat.VecDense
			if err := wantT.SolveVec(fs, mat.NewVecDense(len(gs), gs)); err != nil {
				t.Fatal(err)
			}
			var prec mat.Dense
			prec.Mul(tt, tt.T())
			var wantMu mat.VecDense
			if err := wantMu.SolveVec(&prec, mat.NewVecDense(d, append([]float64(nil), dr.grad...))); err != nil {
				t.Fatal(err)
			}

			nat := make([]float64, len(f.Data()))
			if err := natGradAll(f, nat, dr.z, dr.v); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "factor part", nat, wantT.RawVector().Data, 1e-9)
			mu := make([]float64, d)
			if err := solveTransAll(f, mu, dr.v); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "mean part", mu, wantMu.RawVector().Data, 1e-9)

			// The dense natural gradient T halfdiag(T' lower(G)) restricted
			// to the pattern is a different vector once there are two
			// subjects: the test can tell them apart.
			var h, nd mat.Dense
			h.Mul(tt.T(), lowerOf(&gfull, false))
			nd.Mul(tt, lowerOf(&h, true))
			if e := relDiff(packDense(s, &nd), wantT.RawVector().Data); s.n >= 2 && e < 1e-3 {
				t.Errorf("dense natural gradient restricted to the pattern agrees to %.2g", e)
			}

			// The general inverse Fisher map on an arbitrary gradient.
			a := randVec(rng, len(gs))
			var wantA mat.VecDense
			if err := wantA.SolveVec(fs, mat.NewVecDense(len(a), append([]float64(nil), a...))); err != nil {
				t.Fatal(err)
			}
			inv := make([]float64, len(a))
			if err := invFisherAll(f, inv, a); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "inverse Fisher map", inv, wantA.RawVector().Data, 1e-9)
		})
	}
}
