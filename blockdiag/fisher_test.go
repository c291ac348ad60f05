// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import (
	"fmt"
	"math"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

// The tests in this file check that the natural gradients are natural
// gradients: the Fisher information of the Gaussian family is built densely
// from its textbook form
//
//	F_ab = (d_a mu)' P (d_b mu) + 1/2 tr(P d_a Sigma P d_b Sigma),  P = Sigma^-1,
//
// with d Sigma / d C_ij = E_ij C' + C E_ji, and solved against Euclidean
// gradients.

// gaussFisher returns the Fisher information of N(mu, C C') with respect to
// (mu, the stored entries of C) for a dense lower-triangular C of order m
// whose pattern is given by on(i, j) and whose parameter index of (i, j) is
// idx(i, j) (offset by m for the mean).
func gaussFisher(c *mat.Dense, on func(i, j int) bool, idx func(i, j int) int, np int) *mat.SymDense {
	m, _ := c.Dims()
	var sigma, p mat.Dense
	sigma.Mul(c, c.T())
	if err := p.Inverse(&sigma); err != nil {
		panic(err)
	}
	f := mat.NewSymDense(m+np, nil)
	for a := range m {
		for b := range m {
			f.SetSym(a, b, p.At(a, b))
		}
	}
	// M_(ij) = P dSigma_(ij), for every structural entry.
	ms := make([]*mat.Dense, np)
	for i := range m {
		for j := 0; j <= i; j++ {
			if !on(i, j) {
				continue
			}
			e := mat.NewDense(m, m, nil)
			e.Set(i, j, 1)
			var ds, t mat.Dense
			ds.Mul(e, c.T())
			t.Mul(c, e.T())
			ds.Add(&ds, &t)
			var pm mat.Dense
			pm.Mul(&p, &ds)
			ms[idx(i, j)] = &pm
		}
	}
	for a := range np {
		for b := 0; b <= a; b++ {
			var tr mat.Dense
			tr.Mul(ms[a], ms[b])
			f.SetSym(m+a, m+b, 0.5*mat.Trace(&tr))
		}
	}
	return f
}

func solveSym(f *mat.SymDense, rhs []float64) []float64 {
	var x mat.VecDense
	if err := x.SolveVec(f, mat.NewVecDense(len(rhs), rhs)); err != nil {
		panic(err)
	}
	return vecOf(&x)
}

// blockDense returns block k (n for the global block) of the factor as a
// dense matrix, and its order.
func blockDense(s size, f *Factor, k int) (*mat.Dense, int) {
	m, c := s.r, []float64(nil)
	if k == s.n {
		m, c = s.g, f.Global()
	} else {
		c = f.Local(k)
	}
	if m == 0 {
		return nil, 0
	}
	b := mat.NewDense(m, m, nil)
	for a := range m {
		for j := 0; j <= a; j++ {
			b.Set(a, j, c[a*(a+1)/2+j])
		}
	}
	return b, m
}

// blockParts returns the entries of block k of a vector and of a
// compressed slice.
func blockParts(s size, k int, vec, comp []float64) ([]float64, []float64) {
	if k == s.n {
		return vec[s.n*s.r:], comp[s.n*s.r*(s.r+1)/2:]
	}
	t := s.r * (s.r + 1) / 2
	return vec[k*s.r : (k+1)*s.r], comp[k*t : (k+1)*t]
}

func packedIdx(i, j int) int       { return i*(i+1)/2 + j }
func lowerOn(i, j int) bool        { return i >= j }
func cat(a, b []float64) []float64 { return append(append([]float64(nil), a...), b...) }

// TestNatGradSolvesFisher checks, block by block, that the direction of
// Algorithm 1S for one draw is F^-1 times the Euclidean gradient of that
// draw, and that the general inverse-Fisher map is F^-1 for an arbitrary
// gradient on the pattern.
func TestNatGradSolvesFisher(t *testing.T) {
	const tolF = 1e-9
	for _, s := range sizes() {
		t.Run(s.String(), func(t *testing.T) {
			fx := newFixture(t, s, uint64(7+s.n*s.r*s.g))
			nt := Len(s.n, s.r, s.g)
			dMu, dC := make([]float64, fx.d), make([]float64, nt)
			eu := make([]float64, nt)
			check(t, fx.run.NatGrad(dMu, dC, fx.z, fx.g))
			check(t, fx.run.EuclidGrad(eu, fx.z, fx.g))
			fMu, fC := make([]float64, fx.d), make([]float64, nt)
			check(t, fx.run.InvFisher(fMu, fC, fx.x, fx.aRaw))
			for k := 0; k <= s.n; k++ {
				c, m := blockDense(s, fx.f, k)
				if m == 0 {
					continue
				}
				np := m * (m + 1) / 2
				fi := gaussFisher(c, lowerOn, packedIdx, np)
				g, e := blockParts(s, k, fx.g, eu)
				wantMu, wantC := blockParts(s, k, dMu, dC)
				x := solveSym(fi, cat(g, e))
				if err := relErr(cat(wantMu, wantC), x); !(err <= tolF) {
					t.Errorf("block %d: Algorithm 1S direction differs from F^-1 grad by %.3g", k, err)
				}
				a, aC := blockParts(s, k, fx.x, fx.aRaw)
				gotMu, gotC := blockParts(s, k, fMu, fC)
				x = solveSym(fi, cat(a, aC))
				if err := relErr(cat(gotMu, gotC), x); !(err <= tolF) {
					t.Errorf("block %d: inverse-Fisher map differs from F^-1 a by %.3g", k, err)
				}
			}
		})
	}
}

// TestLemma1 checks the closed form of the Fisher information of vech(C)
// in Lemma 1 of the paper,
//
//	I(C) = L {(C^-1 (x) C^-T) K + (I (x) C^-T C^-1)} L',
//
// with K the commutation and L the (column-major) elimination matrix,
// against the textbook Gaussian Fisher information.
func TestLemma1(t *testing.T) {
	for _, m := range []int{1, 2, 3, 5, 9} {
		f := randFactor(newRand(uint64(m)), size{0, 0, m}, true)
		c, _ := blockDense(size{0, 0, m}, f, 0)
		np := m * (m + 1) / 2
		fi := gaussFisher(c, lowerOn, packedIdx, np)

		var ci mat.Dense
		if err := ci.Inverse(c); err != nil {
			t.Fatal(err)
		}
		cit := ci.T()
		k := mat.NewDense(m*m, m*m, nil)
		for i := range m {
			for j := range m {
				k.Set(j*m+i, i*m+j, 1) // K vec(X) = vec(X'), vec by columns
			}
		}
		l := mat.NewDense(np, m*m, nil)
		colVech := make([][2]int, 0, np) // (i, j) of each row of L
		for j := range m {
			for i := j; i < m; i++ {
				l.Set(len(colVech), j*m+i, 1)
				colVech = append(colVech, [2]int{i, j})
			}
		}
		var a, b, ctc, id mat.Dense
		a.Kronecker(&ci, cit)
		a.Mul(&a, k)
		ctc.Mul(cit, &ci)
		id.Kronecker(eye(m), &ctc)
		a.Add(&a, &id)
		b.Mul(l, &a)
		var lemma mat.Dense
		lemma.Mul(&b, l.T())

		var got, want []float64
		for p, ij := range colVech {
			for q, kl := range colVech {
				got = append(got, lemma.At(p, q))
				want = append(want, fi.At(m+packedIdx(ij[0], ij[1]), m+packedIdx(kl[0], kl[1])))
			}
		}
		if err := relErr(got, want); !(err <= tol) {
			t.Errorf("m=%d: Lemma 1 differs from the Gaussian Fisher information by %.3g", m, err)
		}
	}
}

func eye(m int) *mat.Dense {
	e := mat.NewDense(m, m, nil)
	for i := range m {
		e.Set(i, i, 1)
	}
	return e
}

// TestJointFisher builds the Fisher information of the whole parameter
// (mu, compressed C) densely for small sizes, checks that it is block
// diagonal (mean orthogonal to C, blocks orthogonal to each other, as
// section 7.1 of the paper states), and that solving with it reproduces the
// blockwise natural gradient.
func TestJointFisher(t *testing.T) {
	for _, s := range []size{{1, 1, 1}, {1, 2, 4}, {3, 1, 4}, {3, 2, 1}, {3, 3, 4}} {
		t.Run(s.String(), func(t *testing.T) {
			fx := newFixture(t, s, 11)
			nt := Len(s.n, s.r, s.g)
			fi := gaussFisher(fx.c, func(i, j int) bool { return onPattern(s, i, j) },
				func(i, j int) int { return compOffset(s, i, j) }, nt)
			// Entries of F between different parameter blocks vanish.
			blockOfParam := func(p int) int {
				if p < fx.d {
					return -1 // mean
				}
				q := p - fx.d
				if q < s.n*s.r*(s.r+1)/2 {
					return q / (s.r * (s.r + 1) / 2)
				}
				return s.n
			}
			var worst, scale float64
			for a := range fx.d + nt {
				for b := range fx.d + nt {
					v := math.Abs(fi.At(a, b))
					scale = max(scale, v)
					if blockOfParam(a) != blockOfParam(b) && !(a < fx.d && b < fx.d && sameMeanBlock(s, a, b)) {
						worst = max(worst, v)
					}
				}
			}
			if worst > tol*scale {
				t.Errorf("Fisher information not block diagonal: off-block entry %.3g (scale %.3g)", worst, scale)
			}
			eu := make([]float64, nt)
			dMu, dC := make([]float64, fx.d), make([]float64, nt)
			check(t, fx.run.EuclidGrad(eu, fx.z, fx.g))
			check(t, fx.run.NatGrad(dMu, dC, fx.z, fx.g))
			x := solveSym(fi, cat(fx.g, eu))
			if err := relErr(cat(dMu, dC), x); !(err <= 1e-9) {
				t.Errorf("natural gradient differs from the joint Fisher solve by %.3g", err)
			}
		})
	}
}

// sameMeanBlock reports whether mean entries a and b belong to the same
// block of Sigma^-1, which is where the mean part of F is non-zero.
func sameMeanBlock(s size, a, b int) bool {
	ba, _ := blockOf(s, a)
	bb, _ := blockOf(s, b)
	return ba == bb
}

// TestGeneralMapReproducesAlgorithm1S applies the inverse-Fisher map to the
// Euclidean gradient of one draw and compares with the direction of
// Algorithm 1S for that draw, computed by its O(r^2) formula.
func TestGeneralMapReproducesAlgorithm1S(t *testing.T) {
	for _, s := range sizes() {
		fx := newFixture(t, s, uint64(3*s.n+s.g))
		nt := Len(s.n, s.r, s.g)
		eu := make([]float64, nt)
		check(t, fx.run.EuclidGrad(eu, fx.z, fx.g))
		gMu, gC := make([]float64, fx.d), make([]float64, nt)
		check(t, fx.run.InvFisher(gMu, gC, fx.g, eu))
		dMu, dC := make([]float64, fx.d), make([]float64, nt)
		check(t, fx.run.NatGrad(dMu, dC, fx.z, fx.g))
		if err := relErr(gMu, dMu); !(err <= tol) {
			t.Errorf("%v: mean parts differ by %.3g", s, err)
		}
		if err := relErr(gC, dC); !(err <= tol) {
			t.Errorf("%v: factor parts differ by %.3g", s, err)
		}
	}
}

// gaussTarget is log p(theta) = -1/2 (theta-c)' P (theta-c) with a dense
// SPD P; the lower bound of q = N(mu, C C') is then, up to a constant,
//
//	L = -1/2 tr(P C C') - 1/2 (mu-c)' P (mu-c) + log|det C|.
type gaussTarget struct {
	p *mat.SymDense
	c []float64
}

func newGaussTarget(s size, seed uint64) gaussTarget {
	rng := newRand(seed)
	d := s.n*s.r + s.g
	b := mat.NewDense(d, d, nil)
	for i := range d {
		for j := range d {
			b.Set(i, j, rng.NormFloat64()/math.Sqrt(float64(d)))
		}
	}
	p := mat.NewSymDense(d, nil)
	p.SymOuterK(1, b)
	for i := range d {
		p.SetSym(i, i, p.At(i, i)+1)
	}
	return gaussTarget{p: p, c: randVec(rng, d)}
}

func (gt gaussTarget) elbo(s size, mu, comp []float64) float64 {
	cd := denseFromComp(s, comp)
	var pc mat.Dense
	pc.Mul(gt.p, cd)
	var tr float64
	d := len(mu)
	for i := range d {
		for j := range d {
			tr += pc.At(i, j) * cd.At(i, j)
		}
	}
	dm := make([]float64, d)
	for i := range dm {
		dm[i] = mu[i] - gt.c[i]
	}
	q := mat.Inner(mat.NewVecDense(d, dm), gt.p, mat.NewVecDense(d, dm))
	ld, _ := mat.LogDet(cd)
	return -0.5*tr - 0.5*q + ld
}

// gradH sets grad = grad log p(theta) + C^-T z.
func (gt gaussTarget) gradH(f *Factor, grad, theta, z []float64) {
	n, _, _ := f.Shape()
	f.SolveTransRange(0, n, grad, z)
	f.SolveTransGlobal(grad, z)
	d := len(theta)
	dt := make([]float64, d)
	for i := range dt {
		dt[i] = theta[i] - gt.c[i]
	}
	pd := mulDense(gt.p, dt)
	for i := range grad {
		grad[i] -= pd[i]
	}
}

// expectedGrads returns the exact expectation over z of the one-draw
// Euclidean and natural gradients: for a quadratic log p they are linear in
// z, so the average over the 2d points z = ±sqrt(d) e_j, whose mean is 0
// and second moment I, is exact.
func expectedGrads(fx *fixture, gt gaussTarget, mu []float64) (eMu, eC, nMu, nC []float64) {
	d, nt := fx.d, len(fx.f.Data())
	eMu, eC = make([]float64, d), make([]float64, nt)
	nMu, nC = make([]float64, d), make([]float64, nt)
	z, theta, g := make([]float64, d), make([]float64, d), make([]float64, d)
	e, dMu, dC := make([]float64, nt), make([]float64, d), make([]float64, nt)
	w := 1 / float64(2*d)
	for j := range d {
		for _, sign := range []float64{1, -1} {
			clear(z)
			z[j] = sign * math.Sqrt(float64(d))
			must(fx.run.Draw(theta, mu, z))
			gt.gradH(fx.f, g, theta, z)
			must(fx.run.EuclidGrad(e, z, g))
			must(fx.run.NatGrad(dMu, dC, z, g))
			for i := range d {
				eMu[i] += w * g[i]
				nMu[i] += w * dMu[i]
			}
			for i := range nt {
				eC[i] += w * e[i]
				nC[i] += w * dC[i]
			}
		}
	}
	return eMu, eC, nMu, nC
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

// TestGradientsOfLowerBound checks that the expected one-draw Euclidean
// gradient is the gradient of the lower bound, by central finite
// differences, and that the expected natural gradient is F^-1 times it.
func TestGradientsOfLowerBound(t *testing.T) {
	for _, s := range []size{{1, 1, 1}, {3, 2, 4}, {3, 3, 1}, {17, 1, 4}} {
		t.Run(s.String(), func(t *testing.T) {
			fx := newFixture(t, s, 21)
			gt := newGaussTarget(s, 22)
			nt := len(fx.f.Data())
			eMu, eC, nMu, nC := expectedGrads(fx, gt, fx.mu)

			lambda := cat(fx.mu, fx.f.Data())
			fdGrad := fd.Gradient(nil, func(x []float64) float64 {
				return gt.elbo(s, x[:fx.d], x[fx.d:])
			}, lambda, &fd.Settings{Formula: fd.Central, Step: 1e-5})
			if err := relErr(cat(eMu, eC), fdGrad); !(err <= 1e-7) {
				t.Errorf("expected Euclidean gradient differs from finite differences by %.3g", err)
			}

			fi := gaussFisher(fx.c, func(i, j int) bool { return onPattern(s, i, j) },
				func(i, j int) int { return compOffset(s, i, j) }, nt)
			if fx.d+nt > 60 {
				return
			}
			x := solveSym(fi, cat(eMu, eC))
			if err := relErr(cat(nMu, nC), x); !(err <= 1e-9) {
				t.Errorf("expected natural gradient differs from F^-1 grad L by %.3g", err)
			}
		})
	}
}

// TestNatGradVanishesAtOptimum: for a Gaussian target with precision P the
// best block-diagonal Gaussian has mean c and block covariances P_kk^-1
// (the fixed point of the variational Bayes updates). There the expected
// natural gradient is zero; this fixes every sign in the direction.
func TestNatGradVanishesAtOptimum(t *testing.T) {
	for _, s := range []size{{1, 2, 1}, {3, 2, 4}, {17, 3, 9}} {
		t.Run(s.String(), func(t *testing.T) {
			fx := newFixture(t, s, 31)
			gt := newGaussTarget(s, 32)
			// S = blockdiag(P_kk^-1), factorised by the package.
			sComp := make([]float64, len(fx.f.Data()))
			for k := 0; k <= s.n; k++ {
				first, m := k*s.r, s.r
				if k == s.n {
					first, m = s.n*s.r, s.g
				}
				blk := mat.NewSymDense(m, nil)
				for i := range m {
					for j := range m {
						blk.SetSym(i, j, gt.p.At(first+i, first+j))
					}
				}
				var ch mat.Cholesky
				if !ch.Factorize(blk) {
					t.Fatal("P_kk not positive definite")
				}
				var inv mat.SymDense
				must(ch.InverseTo(&inv))
				for i := range m {
					for j := 0; j <= i; j++ {
						sComp[compOffset(s, first+i, first+j)] = inv.At(i, j)
					}
				}
			}
			check(t, fx.run.Chol(sComp))
			_, _, nMu, nC := expectedGrads(fx, gt, gt.c)
			var size float64
			for _, v := range cat(nMu, nC) {
				size = max(size, math.Abs(v))
			}
			if size > 1e-12 {
				t.Errorf("expected natural gradient at the optimum has max entry %.3g", size)
			}
			// Away from it, it is not zero: the test can fail.
			fx.f.Data()[0] *= 1.5
			_, _, nMu, nC = expectedGrads(fx, gt, fx.mu)
			size = 0
			for _, v := range cat(nMu, nC) {
				size = max(size, math.Abs(v))
			}
			if size < 1e-3 {
				t.Errorf("expected natural gradient away from the optimum is %.3g", size)
			}
		})
	}
}

func ExampleFactor_NatGradRange() {
	// One subject block of order 2 and a global block of order 1.
	f := New(1, 2, 1)
	f.SetBlockScales(1, 0.5)
	z := []float64{1, -1, 2}
	gradH := []float64{0.5, 0.25, -1}
	dMu := make([]float64, f.Dim())
	dC := make([]float64, Len(1, 2, 1))
	f.NatGradRange(0, 1, dMu, dC, z, gradH)
	f.NatGradGlobal(dMu, dC, z, gradH)
	fmt.Println("mean direction C C' grad h:", dMu)
	fmt.Println("factor direction (packed):", dC)
	// Output:
	// mean direction C C' grad h: [0.5 0.25 -0.25]
	// factor direction (packed): [0.25 0.25 -0.125 -0.25]
}
