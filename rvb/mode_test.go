// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
)

// TestModeConvergesOnPaperData solves RVB2's conditional mode of every
// subject of Toenail and HERS at 200 values of theta_g drawn from twice the
// spread of a Laplace approximation of their posterior, both cold (from
// RVB1's centre) and warm (from the mode at the previous draw, as in a
// fit). Every solve must converge, and at the mode the gradient of the
// model's own log density in b_i (package glmm's, an independent code)
// must vanish.
func TestModeConvergesOnPaperData(t *testing.T) {
	for _, name := range []string{"toenail", "hers"} {
		t.Run(name, func(t *testing.T) {
			m := paperModel(t, name)
			tg, err := NewRVB2(m)
			if err != nil {
				t.Fatal(err)
			}
			n, r, g := tg.Dims()
			tri := r * (r + 1) / 2
			theta := make([]float64, n*r+g)
			prec := make([]float64, n*(tri+g*r)+g*(g+1)/2)
			if err := tg.Start(testPool(t), theta, prec); err != nil {
				t.Fatal(err)
			}
			// Start's global block is the marginal precision of theta_g.
			sg := mat.NewSymDense(g, nil)
			for a := range g {
				for c := 0; c <= a; c++ {
					sg.SetSym(a, c, prec[n*(tri+g*r)+a*(a+1)/2+c])
				}
			}
			var ch mat.Cholesky
			if !ch.Factorize(sg) {
				t.Fatal("global precision of the start is not positive definite")
			}
			var cov mat.SymDense
			if err := ch.InverseTo(&cov); err != nil {
				t.Fatal(err)
			}
			var cc mat.Cholesky
			if !cc.Factorize(&cov) {
				t.Fatal("global covariance is not positive definite")
			}
			var l mat.TriDense
			cc.LTo(&l)
			mu := append([]float64(nil), theta[n*r:]...)

			rng := rand.New(rand.NewPCG(5, 6))
			ws := tg.NewWorkspace().(*workspace)
			mws := m.NewWorkspace()
			thetaG := make([]float64, g)
			z := make([]float64, g)
			warm := newWarmStart(n*r, n*r*r, m.NumObs())
			modes := make([]float64, n*r)
			grad := make([]float64, n*r)
			gradG := make([]float64, g)
			worst := 0.0
			for draw := range 200 {
				for a := range z {
					z[a] = 2 * rng.NormFloat64()
				}
				for a := range g {
					v := mu[a]
					for c := 0; c <= a; c++ {
						v += l.At(a, c) * z[c]
					}
					thetaG[a] = v
				}
				tg.setGlobal(ws, thetaG)
				for i := range n {
					for _, start := range []string{"cold", "warm"} {
						var w *warmStart
						if start == "warm" {
							w = warm
						}
						if err := tg.prepare(ws, i, thetaG, w); err != nil {
							t.Fatalf("draw %d, %s start: %v", draw, start, err)
						}
					}
					copy(modes[i*r:(i+1)*r], ws.center)
				}
				if _, err := m.Local(mws, 0, n, thetaG, modes, grad, gradG); err != nil {
					t.Fatal(err)
				}
				for i := range n {
					// The gradient Z'e - Omega b against the scale of its
					// terms, the curvature times the mode's size.
					tg.prepare(ws, i, thetaG, nil)
					scale := 0.0
					for k := range r * r {
						scale = math.Max(scale, math.Abs(ws.prec[k]))
					}
					for a := range r {
						e := math.Abs(grad[i*r+a]) / (scale * (1 + math.Abs(modes[i*r+a])))
						worst = math.Max(worst, e)
						if e > 1e-12 {
							t.Errorf("draw %d, subject %d: gradient %.3g at the mode %v", draw, i, grad[i*r+a], modes[i*r:(i+1)*r])
						}
					}
				}
			}
			t.Logf("%d subjects × 200 draws: worst relative gradient at the mode %.2g", n, worst)
		})
	}
}

// TestModeError: a subject whose solve cannot converge within the
// iteration limit is reported with its name and the Newton context.
func TestModeError(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := randomModel(t, rng, glmm.Bernoulli, 3, 2, 1, false)
	tg, err := NewRVB2(m, MaxNewton(1), ModeTol(1e-300))
	if err != nil {
		t.Fatal(err)
	}
	n, r, g := tg.Dims()
	x := make([]float64, n*r+g)
	x[n*r] = 3
	_, err = tg.Local(tg.NewWorkspace(), 0, n, x[n*r:], x[:n*r], nil, nil)
	if err == nil {
		t.Fatal("no error from a solve limited to one Newton iteration")
	}
	want := fmt.Sprintf("rvb: group %q (subject 0)", m.GroupLevels()[0])
	if got := err.Error(); len(got) < len(want) || got[:len(want)] != want {
		t.Errorf("error %q does not start with %q", got, want)
	}
	t.Log(err)
}
