// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// gaussTarget is a conjugate hierarchical model with known variances:
// y_ij = z_ij' b_i + x_ij' beta + e_ij, e_ij ~ N(0, s2), b_i ~ N(0, tau2 I),
// beta ~ N(0, s02 I). Its posterior is Gaussian with an arrowhead precision,
// so GVA contains it exactly.
type gaussTarget struct {
	n, r, g       int
	s2, tau2, s02 float64
	start         []int     // rows of subject i: start[i]..start[i+1]
	x, z, y       []float64 // row-major designs and response
}

func newGaussTarget(seed uint64, n, r, g int) *gaussTarget {
	rng := rand.New(rand.NewPCG(seed, 1))
	t := &gaussTarget{n: n, r: r, g: g, s2: 0.5, tau2: 2, s02: 9}
	t.start = make([]int, n+1)
	for i := range n {
		t.start[i+1] = t.start[i] + 2 + rng.IntN(4)
	}
	rows := t.start[n]
	t.x = make([]float64, rows*g)
	t.z = make([]float64, rows*r)
	t.y = make([]float64, rows)
	for i := range t.x {
		t.x[i] = rng.NormFloat64()
	}
	for i := range t.z {
		t.z[i] = rng.NormFloat64()
	}
	for i := range t.y {
		t.y[i] = 1 + 2*rng.NormFloat64()
	}
	return t
}

func (t *gaussTarget) Dims() (int, int, int)   { return t.n, t.r, t.g }
func (t *gaussTarget) NewWorkspace() Workspace { return nil }

func (t *gaussTarget) Global(thetaG, grad []float64) float64 {
	var lp float64
	for k, b := range thetaG {
		lp -= 0.5 * b * b / t.s02
		grad[k] -= b / t.s02
	}
	return lp - 0.5*float64(t.g)*math.Log(2*math.Pi*t.s02)
}

func (t *gaussTarget) Local(_ Workspace, lo, hi int, thetaG, local, gradLocal, gradG []float64) (float64, error) {
	r, g := t.r, t.g
	var lp float64
	for i := lo; i < hi; i++ {
		b := local[(i-lo)*r : (i-lo+1)*r]
		var gb []float64
		if gradLocal != nil {
			gb = gradLocal[(i-lo)*r : (i-lo+1)*r]
			for a := range gb {
				gb[a] = -b[a] / t.tau2
			}
		}
		for a := range b {
			lp -= 0.5 * b[a] * b[a] / t.tau2
		}
		lp -= 0.5 * float64(r) * math.Log(2*math.Pi*t.tau2)
		for j := t.start[i]; j < t.start[i+1]; j++ {
			res := t.y[j]
			for a := range r {
				res -= t.z[j*r+a] * b[a]
			}
			for k := range g {
				res -= t.x[j*g+k] * thetaG[k]
			}
			lp -= 0.5*res*res/t.s2 + 0.5*math.Log(2*math.Pi*t.s2)
			if gradLocal != nil {
				for a := range r {
					gb[a] += t.z[j*r+a] * res / t.s2
				}
				for k := range g {
					gradG[k] += t.x[j*g+k] * res / t.s2
				}
			}
		}
	}
	if math.IsNaN(lp) || math.IsInf(lp, 0) {
		return lp, fmt.Errorf("non-finite log density in subjects %d..%d", lo, hi-1)
	}
	return lp, nil
}

// supportedTarget is a gaussTarget whose subjects each depend on the first
// shared global variables and on per of the others, as subjects meet a few
// levels of a crossed factor: its rows' other covariates are zero.
type supportedTarget struct {
	*gaussTarget
	support [][]int
}

func newSupportedTarget(seed uint64, n, r, shared, levels, per int) *supportedTarget {
	g := shared + levels
	s := &supportedTarget{gaussTarget: newGaussTarget(seed, n, r, g), support: make([][]int, n)}
	rng := rand.New(rand.NewPCG(seed, 2))
	in := make([]bool, g)
	for i := range n {
		clear(in)
		for k := range shared {
			in[k] = true
		}
		for _, l := range rng.Perm(levels)[:per] {
			in[shared+l] = true
		}
		for k, ok := range in {
			if ok {
				s.support[i] = append(s.support[i], k)
			}
		}
		for j := s.start[i]; j < s.start[i+1]; j++ {
			for k, ok := range in {
				if !ok {
					s.x[j*g+k] = 0
				}
			}
		}
	}
	return s
}

func (s *supportedTarget) GlobalSupport(i int, dst []int) []int {
	return append(dst, s.support[i]...)
}

// exact returns the posterior mean, precision and log marginal likelihood,
// computed densely.
func (t *gaussTarget) exact() (mean *mat.VecDense, prec *mat.SymDense, logML float64) {
	n, r, g := t.n, t.r, t.g
	d := n*r + g
	prec = mat.NewSymDense(d, nil)
	rhs := mat.NewVecDense(d, nil)
	for i := range n {
		for a := range r {
			prec.SetSym(i*r+a, i*r+a, 1/t.tau2)
		}
	}
	for k := range g {
		prec.SetSym(n*r+k, n*r+k, 1/t.s02)
	}
	for i := range n {
		for j := t.start[i]; j < t.start[i+1]; j++ {
			row := make([]float64, d)
			for a := range r {
				row[i*r+a] = t.z[j*r+a]
			}
			for k := range g {
				row[n*r+k] = t.x[j*g+k]
			}
			for p, vp := range row {
				if vp == 0 {
					continue
				}
				rhs.SetVec(p, rhs.AtVec(p)+vp*t.y[j]/t.s2)
				for q := p; q < d; q++ {
					if row[q] != 0 {
						prec.SetSym(p, q, prec.At(p, q)+vp*row[q]/t.s2)
					}
				}
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(prec) {
		panic("gaussTarget: precision not positive definite")
	}
	mean = mat.NewVecDense(d, nil)
	if err := ch.SolveVecTo(mean, rhs); err != nil {
		panic(err)
	}
	// log p(y) = log p(y, theta) - log p(theta | y) at theta = mean.
	thetaG := mean.RawVector().Data[n*r:]
	gradL := make([]float64, n*r)
	gradG := make([]float64, g)
	lp, _ := t.Local(nil, 0, n, thetaG, mean.RawVector().Data[:n*r], gradL, gradG)
	lp += t.Global(thetaG, gradG)
	logPost := -0.5*float64(d)*math.Log(2*math.Pi) + 0.5*ch.LogDet()
	return mean, prec, lp - logPost
}
