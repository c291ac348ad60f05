// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// gradient5 returns the gradient of f at x by the five-point central
// stencil of step h, whose truncation error is O(h^4). At these points an
// entry of omega can have a natural scale of W_kk = e^-4, where the O(h^2)
// error of the three-point stencil is 1e-6 even at h = 1e-5; with five
// points, h = 1e-4 keeps truncation near 1e-9 and the rounding of RVB2's
// mode solves (about 1e-11 in the log density) near 1e-7.
func gradient5(f func([]float64) float64, x []float64, h float64) []float64 {
	g := make([]float64, len(x))
	y := append([]float64(nil), x...)
	at := func(k int, s float64) float64 {
		y[k] = x[k] + s
		v := f(y)
		y[k] = x[k]
		return v
	}
	for k := range x {
		g[k] = (at(k, -2*h) - 8*at(k, -h) + 8*at(k, h) - at(k, 2*h)) / (12 * h)
	}
	return g
}

// TestGradientExtremePrecision checks the log density's gradient against
// fourth-order central finite differences where a variance component has collapsed or
// exploded: log-diagonals of W of +8 and +15 (Omega up to e^30 times the
// data's curvature Z'HZ, so that Lambda_i is Omega^-1 to rounding and
// b_i is pinned at 0 in that direction), -4 (Lambda_i is the data's
// (Z'HZ)^-1), and off-diagonals of W of ±10. These are the regions a fit
// of a weakly identified random slope visits (a slope SD near 0 with a
// wide q on log W); the derivative of L_i through Lambda_i and the
// Jacobian -1/2 log|Omega + Z'HZ| must stay accurate there.
func TestGradientExtremePrecision(t *testing.T) {
	type point struct {
		name string
		diag []float64 // log W_kk, k = 2..r (W_11 stays near 1)
		off  float64   // every off-diagonal of W*
	}
	points := []point{
		{"huge", []float64{15, 8}, 0},
		{"huge-off", []float64{8, 15}, 10},
		{"tiny", []float64{-4, -4}, 0},
		{"tiny-off", []float64{-4, 8}, -10},
	}
	for _, fam := range []glmm.Family{glmm.Poisson, glmm.Binomial} {
		for r := 2; r <= 3; r++ {
			for _, method := range []Method{RVB1, RVB2} {
				for _, pt := range points {
					name := fmt.Sprintf("%v/r=%d/%v/%s", fam, r, method, pt.name)
					t.Run(name, func(t *testing.T) {
						rng := rand.New(rand.NewPCG(uint64(31*int(fam)+r), uint64(method)))
						m := randomModel(t, rng, fam, 5, 2, r, false)
						tg, err := New(m, method)
						if err != nil {
							t.Fatal(err)
						}
						n, _, g := tg.Dims()
						d := n*r + g
						x := make([]float64, d)
						for k := range n * r {
							x[k] = rng.NormFloat64()
						}
						x[n*r] = 0.3
						x[n*r+1] = -0.2
						omega := x[n*r+2:]
						for l := range r {
							for k := l; k < r; k++ {
								switch {
								case k == l && k == 0:
									omega[glmm.OmegaIndex(k, l, r)] = 0.2
								case k == l:
									omega[glmm.OmegaIndex(k, l, r)] = pt.diag[k-1]
								default:
									omega[glmm.OmegaIndex(k, l, r)] = pt.off
								}
							}
						}
						ws := tg.NewWorkspace()
						f := func(x []float64) float64 { return logJoint(t, tg, ws, x, nil) }
						got := make([]float64, d)
						f(x)
						logJoint(t, tg, ws, x, got)
						want := gradient5(f, x, 1e-4)
						worst := 0.0
						for k := range d {
							e := math.Abs(got[k]-want[k]) / math.Max(1, math.Abs(want[k]))
							worst = math.Max(worst, e)
							if !(e <= 1e-6) {
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

// weakSlopeModel is the random-slope Poisson model of a data set on which
// the slope is weakly identified: `glmmfit simulate -family poisson
// -subjects 150 -obs 6 -beta 0.8,-0.6,0.4 -re-cov '0.3,0.05;0.05,0.2'
// -seed 11` with the rows at t = 1 left out, fitted by
// y ~ t + x1 + (1 + t | id). The random intercept alone has the larger
// evidence (a bound of -1319.7 against about -1323.6), so under the
// N(0, 10^2) prior on log W_tt much of the posterior lies on a plateau of
// slope SD near 0.
func weakSlopeModel(t testing.TB) *glmm.Model {
	t.Helper()
	fr, _, err := datasets.Simulate(datasets.SimSpec{
		Family: "poisson", Subjects: 150, Obs: 6, Seed: 11,
		Beta:  []float64{0.8, -0.6, 0.4},
		RECov: [][]float64{{0.3, 0.05}, {0.05, 0.2}},
	})
	if err != nil {
		t.Fatal(err)
	}
	tc, ok := fr.Column("t")
	if !ok {
		t.Fatal("no column t")
	}
	var keep []int
	for i, v := range tc.Num {
		if v < 1 {
			keep = append(keep, i)
		}
	}
	f, err := formula.Parse("y ~ t + x1 + (1 + t | id)")
	if err != nil {
		t.Fatal(err)
	}
	d, err := formula.Build(f, fr.Rows(keep), formula.Options{Family: glmm.Poisson})
	if err != nil {
		t.Fatal(err)
	}
	return d.Model()
}

// TestRVB1WeakRandomSlope fits the weak random slope of weakSlopeModel
// with RVB1 and Snngm from vi's default start, over seeds, and requires
// every fit to converge within 2 nats of GVA's bound (or above it), and
// the slope's log-precision log W_tt to stay near the peak of its
// posterior (a mean below 3 and a q standard deviation below 1) unless the
// fit found the better optimum on the plateau (a bound at least 1 nat
// above GVA's).
//
// At Snngm's step alpha0 = 0.01 (vi.DefaultAlpha0BlockDiag when this test was
// written) seeds 5 and 6 fail: the step, about 0.28 in lambda per
// iteration, knocks log W_tt (posterior SD 0.23) off its peak onto the
// plateau, where the gradient is heavy-tailed (rare draws of small
// log W_tt give gradients 10^3 times the typical one) and Snngm's
// per-iteration normalisation g/||g|| discards their size, so the mean
// step no longer points uphill; the fit drifts to a wide q on log W_tt
// (mean 7.6, SD 5.9) with a bound of -1382, 57 nats below GVA's, and
// declares convergence. The bound's gradient there is correct
// (TestGradientExtremePrecision) and points back uphill. A step of at
// most 0.003 keeps every seed on the peak, so the test uses that until
// vi's default is as small. (RVB's Snngm has since normalised by the moving
// root mean square of the norms, which keeps the weight of such draws; see
// reliability's TestRVBFlatVariance.)
//
// A collapsed slope SD is not wrong in itself on these data: a q on the
// plateau (log W_tt about N(10, 3^2)) reached by Adam has the bound
// -1321.5, above the peak's -1323.6 and GVA's -1325.3.
func TestRVB1WeakRandomSlope(t *testing.T) {
	m := weakSlopeModel(t)
	ctx := context.Background()
	gva, err := vi.Fit(ctx, m, vi.Settings{Method: vi.GVA, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := NewRVB1(m)
	if err != nil {
		t.Fatal(err)
	}
	n, r, g := tg.Dims()
	p := m.P()
	k := p + glmm.OmegaIndex(1, 1, r) // log W_tt in theta_g
	alpha0 := min(vi.DefaultAlpha0BlockDiag, 0.003)
	for seed := uint64(1); seed <= 8; seed++ {
		res, err := vi.Fit(ctx, tg, vi.Settings{Method: vi.BlockDiag, Seed: seed, Rule: vi.Snngm{Alpha0: alpha0}})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		cg := blockdiag.Wrap(n, r, g, res.Factor).Global()
		var v float64
		for q := 0; q <= k; q++ {
			v += cg[k*(k+1)/2+q] * cg[k*(k+1)/2+q]
		}
		mean, sd := res.Mu[n*r+k], math.Sqrt(v)
		t.Logf("seed %d: bound %.2f ± %.2f (GVA %.2f), %v after %d iterations; log W_tt %.2f ± %.2f",
			seed, res.LowerBound, res.LowerBoundSE, gva.LowerBound, res.Status, res.Iterations, mean, sd)
		if res.LowerBound < gva.LowerBound-2 {
			t.Errorf("seed %d: bound %.2f more than 2 nats below GVA's %.2f", seed, res.LowerBound, gva.LowerBound)
		}
		if !(mean < 3 && sd < 1) && res.LowerBound < gva.LowerBound+1 {
			t.Errorf("seed %d: the slope SD collapsed (log W_tt %.2f ± %.2f) with no better bound: %.2f", seed, mean, sd, res.LowerBound)
		}
	}
}
