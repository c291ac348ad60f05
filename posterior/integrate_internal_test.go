// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
)

// slopeModels are a Bernoulli random intercept (the path of
// PrepareSubject) and a Poisson random slope (Local's), with a theta_g
// for each.
func slopeModels(t *testing.T) []struct {
	name  string
	m     *glmm.Model
	theta []float64
} {
	t.Helper()
	build := func(family string, fam glmm.Family, recov [][]float64) *glmm.Model {
		return simulated(t, datasets.SimSpec{Family: family, Subjects: 40, Obs: 6,
			Beta: []float64{-0.5, 0.3}, RECov: recov, Seed: 5}, fam)
	}
	return []struct {
		name  string
		m     *glmm.Model
		theta []float64
	}{
		{"bernoulli intercept", build("bernoulli", glmm.Bernoulli, [][]float64{{4}}), []float64{-0.4, 0.2, -0.6}},
		{"poisson slope", build("poisson", glmm.Poisson, [][]float64{{0.5, 0.1}, {0.1, 0.3}}), []float64{-0.4, 0.2, 0.3, 0.1, -0.2}},
	}
}

// simulated returns the model of data simulated by spec, fitted with the
// family fam.
func simulated(t *testing.T, spec datasets.SimSpec, fam glmm.Family) *glmm.Model {
	t.Helper()
	fr, truth, err := datasets.Simulate(spec)
	if err != nil {
		t.Fatal(err)
	}
	f, err := formula.Parse(truth.Formula)
	if err != nil {
		t.Fatal(err)
	}
	d, err := formula.Build(f, fr, formula.Options{Family: fam})
	if err != nil {
		t.Fatal(err)
	}
	return d.Model()
}

// adapted returns an Integrator of m on one worker, adapted at thetaG.
func adapted(t *testing.T, m *glmm.Model, thetaG []float64) *Integrator {
	t.Helper()
	in, err := NewIntegrator(context.Background(), m, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := in.Adapt(thetaG, 0); err != nil {
		in.Close()
		t.Fatal(err)
	}
	return in
}

// exactMode returns subject i's conditional mode at thetaG by Newton's
// method on the target's own gradient and Hessian, run far past the
// Integrator's tolerance, from b.
func exactMode(t *testing.T, m *glmm.Model, i int, thetaG, b []float64) []float64 {
	t.Helper()
	_, r, g := m.Dims()
	ws := m.NewWorkspace()
	b = append([]float64(nil), b...)
	grad, gG, h := make([]float64, r), make([]float64, g), make([]float64, r*r)
	for range 50 {
		clear(grad)
		if _, err := m.Local(ws, i, i+1, thetaG, b, grad, gG); err != nil {
			t.Fatal(err)
		}
		m.LocalHessian(ws, i, thetaG, b, h)
		var step mat.VecDense
		if err := step.SolveVec(mat.NewDense(r, r, h), mat.NewVecDense(r, grad)); err != nil {
			t.Fatal(err)
		}
		for a := range r {
			b[a] -= step.AtVec(a)
		}
	}
	return b
}

// TestIntegratorSlopes: the slopes of the modes that Adapt keeps are the
// derivatives of the exact modes in theta_g by central differences, and
// Newton's start from them is nearer the mode at a nearby theta_g than
// the mode at Adapt's.
func TestIntegratorSlopes(t *testing.T) {
	for _, c := range slopeModels(t) {
		t.Run(c.name, func(t *testing.T) {
			n, r, g := c.m.Dims()
			in := adapted(t, c.m, c.theta)
			defer in.Close()
			if in.slope == nil {
				t.Fatal("no slopes kept")
			}
			const h = 1e-4
			for _, i := range []int{0, n / 2, n - 1} {
				mode := exactMode(t, c.m, i, c.theta, in.start[i*r:(i+1)*r])
				for a := range r {
					if d := math.Abs(mode[a] - in.start[i*r+a]); d > 1e-3 {
						t.Errorf("subject %d: start %v, exact mode %v", i, in.start[i*r:(i+1)*r], mode)
					}
				}
				th := append([]float64(nil), c.theta...)
				for k := range g {
					th[k] = c.theta[k] + h
					up := exactMode(t, c.m, i, th, mode)
					th[k] = c.theta[k] - h
					down := exactMode(t, c.m, i, th, mode)
					th[k] = c.theta[k]
					for a := range r {
						want := (up[a] - down[a]) / (2 * h)
						got := in.slope[(i*r+a)*g+k]
						if math.Abs(got-want) > 1e-3*(1+math.Abs(want)) {
							t.Errorf("subject %d: d b_%d / d theta_%d = %v, differences give %v", i, a, k, got, want)
						}
					}
				}
				// Away by 0.05 in every variable: the start predicted is
				// nearer the mode than the mode at Adapt's theta_g.
				for k := range g {
					th[k] = c.theta[k] + 0.05
				}
				far := exactMode(t, c.m, i, th, mode)
				var plain, pred float64
				for a := range r {
					p := in.start[i*r+a]
					for k := range g {
						p += in.slope[(i*r+a)*g+k] * (th[k] - c.theta[k])
					}
					plain += (in.start[i*r+a] - far[a]) * (in.start[i*r+a] - far[a])
					pred += (p - far[a]) * (p - far[a])
				}
				if !(pred < 0.05*plain) {
					t.Errorf("subject %d: predicted start %g from the mode, against %g without slopes", i, math.Sqrt(pred), math.Sqrt(plain))
				}
			}
		})
	}
}

// TestIntegratorSlopesValues: LogLik and LocalMoments with the slopes
// agree with those without them, at theta_g away from Adapt's, to the
// tolerance of Newton's method (the mode moves a bent grid with it, whose
// value then moves within the grid's error, here 1e-3 in all).
func TestIntegratorSlopesValues(t *testing.T) {
	for _, c := range slopeModels(t) {
		t.Run(c.name, func(t *testing.T) {
			in := adapted(t, c.m, c.theta)
			defer in.Close()
			th := append([]float64(nil), c.theta...)
			for k := range th {
				th[k] += 0.1 * float64(k%3-1)
			}
			with, err := in.LogLik(th)
			if err != nil {
				t.Fatal(err)
			}
			mWith, cWith, err := in.LocalMoments(th, []float64{1})
			if err != nil {
				t.Fatal(err)
			}
			in.slope = nil
			without, err := in.LogLik(th)
			if err != nil {
				t.Fatal(err)
			}
			mWithout, cWithout, err := in.LocalMoments(th, []float64{1})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(with-without) > 1e-5 {
				t.Errorf("log p(y | theta_g) %v with slopes, %v without", with, without)
			}
			for k := range mWith {
				if math.Abs(mWith[k]-mWithout[k]) > 1e-6 {
					t.Errorf("mean %d: %v with slopes, %v without", k, mWith[k], mWithout[k])
				}
			}
			for k := range cWith {
				if math.Abs(cWith[k]-cWithout[k]) > 1e-6 {
					t.Errorf("covariance %d: %v with slopes, %v without", k, cWith[k], cWithout[k])
				}
			}
		})
	}
}

// TestIntegratorBentGrid: on Bernoulli subjects under a random-intercept
// sd of 4, many with no event and so skewed, the bent grid at the default
// tolerance takes fewer points than the straight one and is within it of
// log p(y | theta_g) by the straight grid at 1e-7 nats, at Adapt's theta_g
// and away from it; at 1e-7 both grids agree.
func TestIntegratorBentGrid(t *testing.T) {
	m := simulated(t, datasets.SimSpec{Family: "bernoulli", Subjects: 150, Obs: 7,
		Beta: []float64{-2, -0.4}, RECov: [][]float64{{16}}, Seed: 12}, glmm.Bernoulli)
	at := []float64{-2, -0.4, -math.Log(4)}
	thetas := [][]float64{at, {-1.7, -0.45, -math.Log(5)}, {-2.3, -0.35, -math.Log(3.2)}}
	integrate := func(bent bool, tol float64) (vals []float64, points int) {
		in, err := NewIntegrator(context.Background(), m, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer in.Close()
		if !bent {
			in.sk = nil
		}
		if _, err := in.Adapt(at, tol); err != nil {
			t.Fatal(err)
		}
		for _, l := range in.level {
			points += in.grids[l].nodes
		}
		for _, th := range thetas {
			v, err := in.LogLik(th)
			if err != nil {
				t.Fatal(err)
			}
			vals = append(vals, v)
		}
		return vals, points
	}
	want, _ := integrate(false, 1e-7)
	fine, _ := integrate(true, 1e-7)
	bent, bentPoints := integrate(true, 0)
	straight, straightPoints := integrate(false, 0)
	t.Logf("points: bent %d, straight %d", bentPoints, straightPoints)
	if !(bentPoints < straightPoints*3/4) {
		t.Errorf("the bent grid takes %d points, the straight one %d", bentPoints, straightPoints)
	}
	for k := range want {
		if math.Abs(fine[k]-want[k]) > 1e-4 {
			t.Errorf("theta_g %v at 1e-7: bent %v, straight %v", thetas[k], fine[k], want[k])
		}
		if math.Abs(bent[k]-want[k]) > DefaultQuadratureTol {
			t.Errorf("theta_g %v: bent %v (straight %v), straight at 1e-7 %v", thetas[k], bent[k], straight[k], want[k])
		}
	}
}
