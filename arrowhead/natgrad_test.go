// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

// draw is one sample of Algorithm 2S computed densely: z, theta = mu +
// T^-T z, u = T_d^-T z, a gradient grad h and v = T^-1 grad h.
type draw struct {
	mu, z, theta, u, grad, v []float64
}

func denseDraw(t *testing.T, rng *rand.Rand, f *Factor) draw {
	t.Helper()
	d := f.Dim()
	tt, td := denseOf(f), blockDiagOf(f)
	dr := draw{mu: randVec(rng, d), z: randVec(rng, d), grad: randVec(rng, d)}
	var x, u, v mat.VecDense
	if err := x.SolveVec(tt.T(), mat.NewVecDense(d, append([]float64(nil), dr.z...))); err != nil {
		t.Fatal(err)
	}
	if err := u.SolveVec(td.T(), mat.NewVecDense(d, append([]float64(nil), dr.z...))); err != nil {
		t.Fatal(err)
	}
	if err := v.SolveVec(tt, mat.NewVecDense(d, append([]float64(nil), dr.grad...))); err != nil {
		t.Fatal(err)
	}
	dr.theta = make([]float64, d)
	for i := range d {
		dr.theta[i] = dr.mu[i] + x.AtVec(i)
	}
	dr.u, dr.v = u.RawVector().Data, v.RawVector().Data
	return dr
}

// lowerOf keeps the lower triangle of m; halfDiag also halves the diagonal.
func lowerOf(m *mat.Dense, halfDiag bool) *mat.Dense {
	r, c := m.Dims()
	out := mat.NewDense(r, c, nil)
	for i := range r {
		for j := 0; j <= i && j < c; j++ {
			v := m.At(i, j)
			if i == j && halfDiag {
				v /= 2
			}
			out.Set(i, j, v)
		}
	}
	return out
}

// restrict zeroes the entries of m off the pattern of T.
func restrict(s dims, m *mat.Dense) *mat.Dense {
	r, c := m.Dims()
	out := mat.NewDense(r, c, nil)
	for i := range r {
		for j := range c {
			if onPattern(s, i, j) {
				out.Set(i, j, m.At(i, j))
			}
		}
	}
	return out
}

// theorem4 is the dense form of Theorem 4 of Tan's paper: N = T Hbar with
// H = T_d' lower(G) for the arrowhead Euclidean-gradient matrix G built from
// A_i, B_gi, A_g by G_i = A_i + T_i^-T T_gi' B_gi, G_gi = B_gi, G_g = A_g.
// grad holds A_i, B_gi, A_g in storage order.
func theorem4(t *testing.T, s dims, f *Factor, grad []float64) *mat.Dense {
	t.Helper()
	d := f.Dim()
	gm := mat.NewDense(d, d, nil)
	for k, ij := range pos(s) {
		gm.Set(ij[0], ij[1], grad[k])
	}
	tt := denseOf(f)
	nr := s.n * s.r
	for i := range s.n {
		if s.g == 0 {
			break
		}
		lo, hi := i*s.r, (i+1)*s.r
		ti := tt.Slice(lo, hi, lo, hi)
		tgi := tt.Slice(nr, d, lo, hi)
		bgi := gm.Slice(nr, d, lo, hi)
		var m, y mat.Dense
		m.Mul(tgi.T(), bgi)
		if err := y.Solve(ti.T(), &m); err != nil {
			t.Fatal(err)
		}
		blk := gm.Slice(lo, hi, lo, hi).(*mat.Dense)
		blk.Add(blk, &y)
	}
	var h, n mat.Dense
	h.Mul(blockDiagOf(f).T(), lowerOf(gm, false))
	n.Mul(tt, lowerOf(&h, true))
	return &n
}

func TestNatGradMatchesTheorem4(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(20, seedOf(s)))
			f := randFactor(rng, s)
			dr := denseDraw(t, rng, f)
			d := f.Dim()
			// Algorithm 2S: G-bar is -u v' on the pattern of T.
			var uv mat.Dense
			uv.Outer(-1, mat.NewVecDense(d, dr.u), mat.NewVecDense(d, dr.v))
			g := mat.NewDense(d, d, nil)
			g.Copy(restrict(s, &uv))
			var h, want mat.Dense
			h.Mul(blockDiagOf(f).T(), g)
			want.Mul(denseOf(f), lowerOf(&h, true))
			for i := range d {
				for j := range d {
					if !onPattern(s, i, j) && math.Abs(want.At(i, j)) > 1e-12 {
						t.Fatalf("dense T Hbar is nonzero off the pattern at (%d,%d)", i, j)
					}
				}
			}
			dst := make([]float64, Len(s.n, s.r, s.g))
			tz := make([]float64, s.g)
			f.NatGradGlobal(dst, dr.z, dr.v, tz)
			f.NatGradRange(0, s.n, dst, dr.z, dr.v, tz)
			checkClose(t, "kernels", dst, packDense(s, &want), tol)
			if s.g > 0 {
				nr := s.n * s.r
				var tzWant mat.VecDense
				tzWant.MulVec(denseOf(f).Slice(nr, d, nr, d), mat.NewVecDense(s.g, dr.z[nr:]))
				checkClose(t, "T_g z_g", tz, tzWant.RawVector().Data, tol)
			}

			clear(dst)
			if err := natGradAll(f, dst, dr.z, dr.v); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "whole", dst, packDense(s, &want), tol)

		})
	}
}

func TestEuclidGrad(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(21, seedOf(s)))
			f := randFactor(rng, s)
			dr := denseDraw(t, rng, f)
			d := f.Dim()
			// -(theta - mu) v' on the pattern (the dense G_2 of Theorem 1).
			x := make([]float64, d)
			for i := range x {
				x[i] = dr.theta[i] - dr.mu[i]
			}
			var want mat.Dense
			want.Outer(-1, mat.NewVecDense(d, x), mat.NewVecDense(d, dr.v))
			dst := make([]float64, Len(s.n, s.r, s.g))
			f.EuclidGradGlobal(dst, dr.u, dr.v)
			f.EuclidGradRange(0, s.n, dst, dr.theta, dr.mu, dr.u, dr.v)
			checkClose(t, "kernels", dst, packDense(s, &want), tol)
			clear(dst)
			if err := euclidGradAll(f, dst, dr.theta, dr.mu, dr.u, dr.v); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "whole", dst, packDense(s, &want), tol)
		})
	}
}

// TestEuclidGradFiniteDifference checks that the Euclidean gradient of one
// draw is the derivative of phi(T) = h(mu + T^-T z) with z held fixed, by
// central differences over the compressed storage.
func TestEuclidGradFiniteDifference(t *testing.T) {
	for _, s := range []dims{{1, 1, 1}, {3, 2, 2}, {2, 3, 3}, {4, 1, 4}} {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(22, seedOf(s)))
			f := randFactor(rng, s)
			d := f.Dim()
			mu, z := randVec(rng, d), randVec(rng, d)
			// A smooth h coupling every coordinate: -(x-c)'A(x-c)/2 + sum sin x.
			c := randVec(rng, d)
			am := mat.NewDense(d, d, randVec(rng, d*d))
			var a mat.Dense
			a.Mul(am, am.T())
			h := func(th []float64) float64 {
				diff := make([]float64, d)
				var s float64
				for i := range th {
					diff[i] = th[i] - c[i]
					s += math.Sin(th[i])
				}
				dv := mat.NewVecDense(d, diff)
				return s - 0.5*mat.Inner(dv, &a, dv)
			}
			gradH := func(th []float64) []float64 {
				diff := make([]float64, d)
				for i := range th {
					diff[i] = th[i] - c[i]
				}
				var ad mat.VecDense
				ad.MulVec(&a, mat.NewVecDense(d, diff))
				g := make([]float64, d)
				for i := range g {
					g[i] = math.Cos(th[i]) - ad.AtVec(i)
				}
				return g
			}
			phi := func(data []float64) float64 {
				ff := Wrap(s.n, s.r, s.g, data)
				theta, u := make([]float64, d), make([]float64, d)
				ff.DrawGlobal(theta, u, mu, z)
				ff.DrawRange(0, s.n, theta, u, mu, z)
				return h(theta)
			}
			want := fd.Gradient(nil, phi, f.Data(), &fd.Settings{Formula: fd.Central, Step: 1e-5})

			theta, u, v := make([]float64, d), make([]float64, d), make([]float64, d)
			f.DrawGlobal(theta, u, mu, z)
			f.DrawRange(0, s.n, theta, u, mu, z)
			g := gradH(theta)
			sum := make([]float64, s.g)
			f.SolveRange(0, s.n, v, g, sum)
			f.SolveGlobal(v, g, sum)
			got := make([]float64, len(f.Data()))
			f.EuclidGradGlobal(got, u, v)
			f.EuclidGradRange(0, s.n, got, theta, mu, u, v)
			checkClose(t, "finite differences", got, want, 1e-6)
		})
	}
}

func TestInvFisherMatchesTheorem4(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(23, seedOf(s)))
			f := randFactor(rng, s)
			a := randVec(rng, len(f.Data()))
			a0 := append([]float64(nil), a...)
			want := packDense(s, theorem4(t, s, f, a))
			dst := make([]float64, len(a))
			f.InvFisherGlobal(dst, a)
			f.InvFisherRange(0, s.n, dst, a)
			checkClose(t, "kernels", dst, want, tol)
			checkClose(t, "input unchanged", a, a0, 0)
			clear(dst)
			if err := invFisherAll(f, dst, a); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "whole", dst, want, tol)
		})
	}
}

// TestInvFisherOfEuclidGrad: the general inverse Fisher map applied to the
// Euclidean gradient of a draw is Algorithm 2S's direction for that draw.
func TestInvFisherOfEuclidGrad(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(24, seedOf(s)))
			f := randFactor(rng, s)
			dr := denseDraw(t, rng, f)
			m := len(f.Data())
			eg, nat, inv := make([]float64, m), make([]float64, m), make([]float64, m)
			if err := euclidGradAll(f, eg, dr.theta, dr.mu, dr.u, dr.v); err != nil {
				t.Fatal(err)
			}
			if err := invFisherAll(f, inv, eg); err != nil {
				t.Fatal(err)
			}
			if err := natGradAll(f, nat, dr.z, dr.v); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "F^-1 (Euclidean gradient) vs Algorithm 2S", inv, nat, tol)
		})
	}
}
