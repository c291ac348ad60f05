// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/diff/fd"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/small"
	"github.com/sparsevi/sparsevi/vi"
)

var _ vi.Target = (*Target)(nil)
var _ vi.Starter = (*Target)(nil)

// TestGradientFiniteDifferences checks the log density's gradient against
// central finite differences for every family, r = 1, 2, 3 and both
// methods, at random points near the prior's bulk and far from it, and (for
// RVB2) with every mode solve started far from the mode.
func TestGradientFiniteDifferences(t *testing.T) {
	type point struct {
		name     string
		scaleB   float64 // sd of b~
		scaleG   float64 // sd of beta and of omega
		farStart float64 // RVB2: start every solve at this b (0: warm)
	}
	points := []point{
		{"near", 0.5, 0.3, 0},
		{"far", 3, 1.5, 0},
		{"far-start", 1, 1, 40},
	}
	for _, fl := range []struct {
		fam     glmm.Family
		link    glmm.Link
		crossed bool // two crossed factors, their effects in theta_g
	}{{glmm.Poisson, 0, false}, {glmm.Bernoulli, 0, false}, {glmm.Binomial, 0, false}, {glmm.Bernoulli, glmm.Probit, false}, {glmm.Binomial, glmm.Cloglog, false},
		{glmm.Poisson, 0, true}, {glmm.Bernoulli, 0, true}, {glmm.Binomial, 0, true}} {
		fam, link := fl.fam, fl.link
		for r := 1; r <= 3; r++ {
			for _, method := range []Method{RVB1, RVB2} {
				for _, pt := range points {
					if method == RVB1 && pt.farStart != 0 {
						continue
					}
					name := fmt.Sprintf("%v-%v/r=%d/%v/%s", fam, link, r, method, pt.name)
					if fl.crossed {
						name = "crossed/" + name
					}
					t.Run(name, func(t *testing.T) {
						seed := uint64(1000*int(link) + 100*int(fam) + 10*r + int(method))
						rng := rand.New(rand.NewPCG(seed, 7))
						var m *glmm.Model
						if fl.crossed {
							m = randomCrossedModel(t, rng, fam, 5, 3, r)
						} else {
							m = randomLinkModel(t, rng, fam, link, 5, 3, r, r == 2)
						}
						tg, err := New(m, method)
						if err != nil {
							t.Fatal(err)
						}
						n, _, g := tg.Dims()
						d := n*r + g
						x := make([]float64, d)
						for k := range n * r {
							x[k] = pt.scaleB * rng.NormFloat64()
						}
						for k := n * r; k < d; k++ {
							x[k] = pt.scaleG * rng.NormFloat64()
						}
						if fam == glmm.Poisson || link == glmm.Cloglog {
							// Keep exp(eta) representable with room to
							// spare, and the log joint small enough for
							// its difference quotient.
							x[n*r] = math.Min(x[n*r], 1)
						}
						ws := tg.NewWorkspace()
						f := func(x []float64) float64 {
							if pt.farStart != 0 {
								setStarts(tg, func(k int) float64 { return pt.farStart * float64(1-2*(k%2)) })
							}
							return logJoint(t, tg, ws, x, nil)
						}
						got := make([]float64, d)
						f(x)
						logJoint(t, tg, ws, x, got)
						settings := &fd.Settings{Formula: fd.Central, Step: 1e-5}
						if link == glmm.Cloglog {
							// exp(eta) of far points makes the log joint
							// large and its rounding the three-point
							// quotient's error (3e-5 at step 1e-5); five
							// points allow a larger step.
							settings = &fd.Settings{Formula: fd.Formula{
								Stencil: []fd.Point{
									{Loc: -2, Coeff: 1.0 / 12}, {Loc: -1, Coeff: -8.0 / 12},
									{Loc: 1, Coeff: 8.0 / 12}, {Loc: 2, Coeff: -1.0 / 12},
								},
								Derivative: 1,
								Step:       5e-4,
							}}
						}
						want := fd.Gradient(nil, f, x, settings)
						worst := 0.0
						for k := range d {
							e := math.Abs(got[k]-want[k]) / math.Max(1, math.Abs(want[k]))
							if e > worst {
								worst = e
							}
							if e > 1e-6 {
								t.Errorf("component %d: gradient %.10g, finite difference %.10g (rel err %.2g)", k, got[k], want[k], e)
							}
						}
						t.Logf("worst relative error %.2g", worst)
					})
				}
			}
		}
	}
}

// undamped runs plain Newton (no step halving) from b for subject i and
// reports whether it reached a step below tol within maxIter iterations.
func undamped(tg *Target, ws *workspace, i int, b []float64, tol float64, maxIter int) bool {
	r := tg.r
	ws.z = tg.zRows(ws, i)
	copy(ws.center, b)
	for range maxIter {
		f := tg.evalCond(ws, i, ws.center)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return false
		}
		tg.condGradPrec(ws, i, ws.center)
		if !small.Chol(r, ws.prec, ws.rf) {
			return false
		}
		copy(ws.dir, ws.grad)
		small.SolveChol(r, ws.rf, ws.dir)
		step := 0.0
		for k := range ws.dir {
			ws.center[k] += ws.dir[k]
			step = math.Max(step, math.Abs(ws.dir[k]))
		}
		if step <= tol {
			return true
		}
		if !(step < 1e300) {
			return false
		}
	}
	return false
}

// TestDampedModeWhereUndampedFails: Bernoulli subjects whose fixed part of
// the linear predictor is about 12, under a weak prior (sd about 12), have
// their modes far from 0; plain Newton from 0 overshoots into the flat
// tails of the logistic and does not return (the test checks that it
// fails), while the damped solve converges from 0 at every evaluation and
// the gradient there agrees with finite differences.
func TestDampedModeWhereUndampedFails(t *testing.T) {
	for _, r := range []int{1, 2} {
		t.Run(fmt.Sprintf("r=%d", r), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(r)))
			m := randomModel(t, rng, glmm.Bernoulli, 4, 2, r, false)
			tg, err := NewRVB2(m)
			if err != nil {
				t.Fatal(err)
			}
			n, _, g := tg.Dims()
			x := make([]float64, n*r+g)
			x[n*r] = 12     // intercept: every eta starts near 12
			x[n*r+2] = -2.5 // log W_11: prior sd of b_1 about 12
			ws := tg.NewWorkspace().(*workspace)
			tg.setGlobal(ws, x[n*r:])
			failed := 0
			for i := range n {
				lo, hi := m.SubjectRows(i)
				tg.m.FixedEta(i, x[n*r:n*r+2], ws.eta0[:hi-lo])
				if !undamped(tg, ws, i, make([]float64, r), 1e-9, 100) {
					failed++
				}
			}
			if failed == 0 {
				t.Fatal("plain Newton converged on every subject; the case does not test damping")
			}
			f := func(x []float64) float64 {
				setStarts(tg, func(int) float64 { return 0 })
				return logJoint(t, tg, ws, x, nil)
			}
			got := make([]float64, len(x))
			f(x)
			setStarts(tg, func(int) float64 { return 0 })
			logJoint(t, tg, ws, x, got)
			want := fd.Gradient(nil, f, x, &fd.Settings{Formula: fd.Central, Step: 1e-5})
			for k := range x {
				if e := math.Abs(got[k]-want[k]) / math.Max(1, math.Abs(want[k])); e > 1e-6 {
					t.Errorf("component %d: gradient %.10g, finite difference %.10g (rel err %.2g)", k, got[k], want[k], e)
				}
			}
			t.Logf("plain Newton failed on %d of %d subjects", failed, n)
		})
	}
}

// setStarts makes the next RVB2 solve of every subject start at
// b[k] = start(k): a warm start with no predicted move.
func setStarts(tg *Target, start func(k int) float64) {
	for k := range tg.warm.mode {
		tg.warm.mode[k] = start(k)
	}
	clear(tg.warm.lam)
}
