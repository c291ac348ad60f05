// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior_test

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// TestImportanceGlobalBruteForce: on a tiny Poisson random-intercept model
// (6 subjects of 4 counts, an intercept, prior sd 2), the importance
// estimates from ImportanceGlobal of log p(y) and of the posterior means
// and sds of beta and omega agree with nested numerical integration (b_i
// by the trapezoid rule inside, beta and omega on a grid, each checked by
// halving its spacing) within 4 of their Monte Carlo standard errors plus
// 1e-3, and each subject's posterior mean and sd of b_i within 10% of its
// sd (q's sds are 17-20% too small; the importance figures' Monte Carlo
// error is about 4%); the draws are the same for 1 and 2 workers, bit for
// bit.
func TestImportanceGlobalBruteForce(t *testing.T) {
	m, counts := tinyPoisson(t, 1, 1)
	const priorSD = 2
	ctx := context.Background()
	res, err := vi.Fit(ctx, m, vi.Settings{Seed: 3, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	imp, err := posterior.ImportanceGlobal(ctx, res, m, posterior.ImportanceSettings{Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	one, err := posterior.ImportanceGlobal(ctx, res, m, posterior.ImportanceSettings{Seed: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(imp.LogWeights, one.LogWeights) || !reflect.DeepEqual(imp.Global, one.Global) || !reflect.DeepEqual(imp.LocalCov, one.LocalCov) {
		t.Error("the draws differ between 1 and 2 workers")
	}

	// The posterior of (beta, omega) on a grid spanning 12 of q's sds
	// either side of its mean.
	logPrior := func(x float64) float64 {
		return -0.5*math.Log(2*math.Pi*priorSD*priorSD) - 0.5*x*x/(priorSD*priorSD)
	}
	cov := res.GlobalCov()
	mu := res.Mu[len(counts):]
	sb, so := math.Sqrt(cov.At(0, 0)), math.Sqrt(cov.At(1, 1))
	type moments struct {
		logp     float64
		mean, sd [2]float64
	}
	brute := func(steps int, h float64) moments {
		db, do := 24*sb/float64(steps), 24*so/float64(steps)
		var lv []float64
		var pts [][2]float64
		for a := 0; a <= steps; a++ {
			for b := 0; b <= steps; b++ {
				th := [2]float64{mu[0] - 12*sb + float64(a)*db, mu[1] - 12*so + float64(b)*do}
				v := bruteLogLik(counts, 1, []float64{th[0], 0}, th[1:], h) + logPrior(th[0]) + logPrior(th[1]) + math.Log(db*do)
				if a == 0 || a == steps {
					v += math.Log(0.5)
				}
				if b == 0 || b == steps {
					v += math.Log(0.5)
				}
				lv = append(lv, v)
				pts = append(pts, th)
			}
		}
		top := math.Inf(-1)
		for _, v := range lv {
			top = max(top, v)
		}
		var z float64
		var s1, s2 [2]float64
		for k, v := range lv {
			w := math.Exp(v - top)
			z += w
			for c := range 2 {
				s1[c] += w * pts[k][c]
				s2[c] += w * pts[k][c] * pts[k][c]
			}
		}
		var out moments
		out.logp = top + math.Log(z)
		for c := range 2 {
			out.mean[c] = s1[c] / z
			out.sd[c] = math.Sqrt(s2[c]/z - out.mean[c]*out.mean[c])
		}
		return out
	}
	coarse, fine := brute(60, 0.1), brute(120, 0.05)
	if math.Abs(coarse.logp-fine.logp) > 1e-4 {
		t.Fatalf("the grid has not converged: log p(y) %v with twice the spacing, %v", coarse.logp, fine.logp)
	}
	logp, se, err := posterior.LogMarginal(imp.LogWeights)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(logp-fine.logp) > 4*se+1e-3 {
		t.Errorf("log p(y) %v ± %v, brute force %v", logp, se, fine.logp)
	}
	w, k, _ := posterior.PSIS(imp.LogWeights)
	if !(k < posterior.ParetoKBad) {
		t.Errorf("Pareto k %v on a target the proposal covers", k)
	}
	for c, name := range []string{"beta", "omega"} {
		x := make([]float64, len(w))
		for s := range w {
			x[s] = imp.Global[s*2+c]
		}
		got := posterior.WeightedMarginal(name, x, w)
		if math.Abs(got.Mean-fine.mean[c]) > 4*got.MCSE.Mean+1e-3 || math.Abs(got.SD-fine.sd[c]) > 4*got.MCSE.SD+1e-3 {
			t.Errorf("%s: %.4f ± %.4f (MCSE %.4f, %.4f), brute force %.4f ± %.4f", name, got.Mean, got.SD, got.MCSE.Mean, got.MCSE.SD, fine.mean[c], fine.sd[c])
		}
		t.Logf("%s: importance %.4f ± %.4f, brute force %.4f ± %.4f, q %.4f ± %.4f", name, got.Mean, got.SD, fine.mean[c], fine.sd[c], mu[c], math.Sqrt(cov.At(c, c)))
	}
	t.Logf("log p(y): %.4f ± %.4f, brute force %.5f; k %.2f (q's %.2f), %d to %d nodes", logp, se, fine.logp, k, imp.QK, imp.FewestNodes, imp.MostNodes)

	// Each subject's posterior mean and sd of b_i: the grid's posterior
	// weights times b_i's conditional moments by the trapezoid rule.
	bm, bs, _, _ := bruteLocalMoments(counts, mu, sb, so, 60, 0.05, logPrior)
	if imp.LocalMean == nil {
		t.Fatal("no local moments")
	}
	qcov := res.LocalCov()
	for i := range counts {
		got, sd := imp.LocalMean[i], math.Sqrt(imp.LocalCov[i])
		t.Logf("b_%d: %.4f ± %.4f, brute force %.4f ± %.4f, q %.4f ± %.4f", i+1, got, sd, bm[i], bs[i], res.Mu[i], math.Sqrt(qcov[i]))
		if math.Abs(got-bm[i]) > 0.1*bs[i] || math.Abs(sd/bs[i]-1) > 0.1 {
			t.Errorf("b_%d: %.4f ± %.4f, brute force %.4f ± %.4f", i+1, got, sd, bm[i], bs[i])
		}
	}
}

// bruteLocalMoments returns each subject's posterior mean and sd of b_i
// in tinyPoisson(1, 1)'s model: (beta, omega) on a grid of steps+1 points
// a side spanning 12 sds either side of mu, b_i = exp(-omega) u with u by
// the trapezoid rule of spacing h on [-9, 9]. It also returns the
// posterior mean and sd of each subject's linear predictor beta + b_i and,
// last, of a new subject's, beta + b with b ~ N(0, exp(-2 omega)).
func bruteLocalMoments(counts [][]float64, mu []float64, sb, so float64, steps int, h float64, logPrior func(float64) float64) (mean, sd, etaMean, etaSD []float64) {
	n := len(counts)
	db, do := 24*sb/float64(steps), 24*so/float64(steps)
	var logw []float64
	var m1, m2, h1, h2 [][]float64
	for a := 0; a <= steps; a++ {
		for c := 0; c <= steps; c++ {
			beta, omega := mu[0]-12*sb+float64(a)*db, mu[1]-12*so+float64(c)*do
			s := math.Exp(-omega)
			lw := logPrior(beta) + logPrior(omega)
			e1, e2 := make([]float64, n), make([]float64, n)
			for i, cs := range counts {
				var sum, lfact float64
				for _, v := range cs {
					sum += v
					lg, _ := math.Lgamma(v + 1)
					lfact += lg
				}
				k := float64(len(cs))
				var z, z1, z2 float64
				for u := -9.0; u <= 9+h/2; u += h {
					b := s * u
					eta := beta + b
					d := math.Exp(sum*eta - k*math.Exp(eta) - lfact - 0.5*u*u)
					z += d
					z1 += d * b
					z2 += d * b * b
				}
				lw += math.Log(z * h / math.Sqrt(2*math.Pi))
				e1[i], e2[i] = z1/z, z2/z
			}
			f1, f2 := make([]float64, n+1), make([]float64, n+1)
			for i := range n {
				f1[i], f2[i] = beta+e1[i], beta*beta+2*beta*e1[i]+e2[i]
			}
			f1[n], f2[n] = beta, beta*beta+s*s
			logw = append(logw, lw)
			m1, m2 = append(m1, e1), append(m2, e2)
			h1, h2 = append(h1, f1), append(h2, f2)
		}
	}
	top := math.Inf(-1)
	for _, v := range logw {
		top = max(top, v)
	}
	var tot float64
	mean, sd = make([]float64, n), make([]float64, n)
	etaMean, etaSD = make([]float64, n+1), make([]float64, n+1)
	sec, etaSec := make([]float64, n), make([]float64, n+1)
	for k, v := range logw {
		w := math.Exp(v - top)
		tot += w
		for i := range n {
			mean[i] += w * m1[k][i]
			sec[i] += w * m2[k][i]
		}
		for i := range n + 1 {
			etaMean[i] += w * h1[k][i]
			etaSec[i] += w * h2[k][i]
		}
	}
	for i := range n {
		mean[i] /= tot
		sd[i] = math.Sqrt(sec[i]/tot - mean[i]*mean[i])
	}
	for i := range n + 1 {
		etaMean[i] /= tot
		etaSD[i] = math.Sqrt(etaSec[i]/tot - etaMean[i]*etaMean[i])
	}
	return mean, sd, etaMean, etaSD
}

// gaussToy is a target whose joint density is Gaussian: theta_g ~ N(0,
// 2² I) in two dimensions, and for each subject b_i ~ N(theta_0 +
// x_i theta_1, 1) and y_i ~ N(b_i, 0.5²). Its posterior of theta_g, with
// the b_i integrated out, is exactly Gaussian.
type gaussToy struct{ x, y []float64 }

func (gaussToy) NewWorkspace() vi.Workspace { return nil }

func (m gaussToy) Dims() (n, r, g int) { return len(m.y), 1, 2 }

func (gaussToy) Global(th, grad []float64) float64 {
	var f float64
	for c, v := range th {
		f += -0.5*math.Log(2*math.Pi*4) - 0.5*v*v/4
		if grad != nil {
			grad[c] -= v / 4
		}
	}
	return f
}

func (m gaussToy) Local(_ vi.Workspace, lo, hi int, th, local, gl, gg []float64) (float64, error) {
	var f float64
	for i := lo; i < hi; i++ {
		b := local[i-lo]
		e := b - th[0] - m.x[i]*th[1]
		d := m.y[i] - b
		f += -math.Log(2*math.Pi*0.5) - 0.5*e*e - 0.5*d*d/0.25
		if gl != nil {
			gl[i-lo] = -e + d/0.25
			gg[0] += e
			gg[1] += e * m.x[i]
		}
	}
	return f, nil
}

func (gaussToy) LocalHessian(_ vi.Workspace, _ int, _, _, h []float64) { h[0] = -1 - 1/0.25 }

// TestImportanceGlobalParetoK: the Pareto k of q's marginal of theta_g is
// below 0.5 where the posterior is exactly Gaussian and q fits it, and
// above 0.7 where q's marginal is three times too narrow; there the
// adapted proposal brings it below 0.7.
func TestImportanceGlobalParetoK(t *testing.T) {
	m := gaussToy{x: []float64{-1, -0.5, 0, 0.5, 1, 1.5}, y: []float64{0.3, -0.2, 1.1, 0.8, 1.9, 1.4}}
	ctx := context.Background()
	res, err := vi.Fit(ctx, m, vi.Settings{Seed: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	imp, err := posterior.ImportanceGlobal(ctx, res, m, posterior.ImportanceSettings{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fitted q: k %.2f", imp.QK)
	if !(imp.QK < posterior.ParetoKGood) {
		t.Errorf("Pareto k %.2f of q on a Gaussian posterior that q fits", imp.QK)
	}
	narrow := *res
	narrow.Factor = append([]float64(nil), res.Factor...)
	for k := range narrow.Factor {
		narrow.Factor[k] *= 3
	}
	imp, err = posterior.ImportanceGlobal(ctx, &narrow, m, posterior.ImportanceSettings{Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("q three times too narrow: k %.2f, adapted in %d rounds %.2f", imp.QK, imp.Rounds, imp.K)
	if !(imp.QK > posterior.ParetoKBad) || !(imp.K < posterior.ParetoKBad) || imp.Rounds == 0 {
		t.Errorf("q three times too narrow: k %.2f, adapted in %d rounds %.2f", imp.QK, imp.Rounds, imp.K)
	}
}

// TestImportanceGlobalRandomSlope: on tinyPoisson's counts with a random
// intercept and slope and no fixed effects (theta_g = omega, G = 3), the
// importance estimates of log p(y) and of omega's posterior means and sds
// agree, within 4 Monte Carlo standard errors plus 1e-3, with the
// trapezoid rule on a grid of omega (checked against a coarser grid) over
// log p(y | omega) by an Integrator, which TestIntegratorBruteForce checks
// against brute force for r = 2. q's sd of the slope's log precision is a
// third of the posterior's there (q's k 0.8), and the adapted proposal
// recovers it.
func TestImportanceGlobalRandomSlope(t *testing.T) {
	m, _ := tinyPoisson(t, 0, 2)
	ctx := context.Background()
	res, err := vi.Fit(ctx, m, vi.Settings{Seed: 3, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	imp, err := posterior.ImportanceGlobal(ctx, res, m, posterior.ImportanceSettings{Seed: 4, Draws: 4000})
	if err != nil {
		t.Fatal(err)
	}
	in, err := posterior.NewIntegrator(ctx, m, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	n, r, g := m.Dims()
	mu := res.Mu[n*r:]
	cov := res.GlobalCov()
	if _, err := in.Adapt(mu, 1e-4); err != nil {
		t.Fatal(err)
	}
	sd, half := make([]float64, g), make([]float64, g)
	for c := range g {
		sd[c] = math.Sqrt(cov.At(c, c))
		// q's sd of the slope's log precision is a third of the
		// posterior's: the grid spans at least 6 either side of q's mean.
		half[c] = max(7*sd[c], 6)
	}
	// grid returns log p(y) and omega's posterior means and sds by the
	// trapezoid rule on steps+1 points a side.
	grid := func(steps int) (logp float64, mean, sdev [3]float64) {
		var lw []float64
		var pts [][3]float64
		th := make([]float64, g)
		logCell := 0.0
		for c := range g {
			logCell += math.Log(2 * half[c] / float64(steps))
		}
		for a := 0; a <= steps; a++ {
			for b := 0; b <= steps; b++ {
				for e := 0; e <= steps; e++ {
					idx := [3]int{a, b, e}
					v := logCell
					for c := range g {
						th[c] = mu[c] - half[c] + 2*half[c]*float64(idx[c])/float64(steps)
						if idx[c] == 0 || idx[c] == steps {
							v += math.Log(0.5)
						}
					}
					ll, err := in.LogLik(th)
					if err != nil {
						t.Fatal(err)
					}
					lw = append(lw, v+ll+m.Global(th, nil))
					pts = append(pts, [3]float64{th[0], th[1], th[2]})
				}
			}
		}
		top := math.Inf(-1)
		for _, v := range lw {
			top = max(top, v)
		}
		var z float64
		var s1, s2 [3]float64
		for k, v := range lw {
			w := math.Exp(v - top)
			z += w
			for c := range 3 {
				s1[c] += w * pts[k][c]
				s2[c] += w * pts[k][c] * pts[k][c]
			}
		}
		for c := range 3 {
			mean[c] = s1[c] / z
			sdev[c] = math.Sqrt(s2[c]/z - mean[c]*mean[c])
		}
		return top + math.Log(z), mean, sdev
	}
	coarse, cmean, _ := grid(20)
	logp, mean, sdev := grid(28)
	// The grids' difference in omega's means is part of the tolerance.
	gridErr := 0.0
	for c := range g {
		gridErr = max(gridErr, math.Abs(cmean[c]-mean[c]))
	}
	if math.Abs(coarse-logp) > 1e-3 || gridErr > 0.01 {
		t.Fatalf("the grid has not converged: log p(y) %v with 20 steps, %v with 28; omega_2 %v, %v", coarse, logp, cmean[2], mean[2])
	}
	got, se, err := posterior.LogMarginal(imp.LogWeights)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("log p(y): %.4f ± %.4f, grid %.4f; k %.2f (q's %.2f)", got, se, logp, imp.K, imp.QK)
	if math.Abs(got-logp) > 4*se+1e-3 {
		t.Errorf("log p(y) %v ± %v, grid %v", got, se, logp)
	}
	w, _, _ := posterior.PSIS(imp.LogWeights)
	for c := range g {
		x := make([]float64, len(w))
		for s := range w {
			x[s] = imp.Global[s*g+c]
		}
		wm := posterior.WeightedMarginal("omega", x, w)
		t.Logf("omega_%d: %.4f ± %.4f (MCSE %.4f, %.4f), grid %.4f ± %.4f, q %.4f ± %.4f", c, wm.Mean, wm.SD, wm.MCSE.Mean, wm.MCSE.SD, mean[c], sdev[c], mu[c], sd[c])
		if math.Abs(wm.Mean-mean[c]) > 4*wm.MCSE.Mean+1e-3+gridErr || math.Abs(wm.SD-sdev[c]) > 4*wm.MCSE.SD+1e-3+gridErr {
			t.Errorf("omega_%d: %.4f ± %.4f, grid %.4f ± %.4f", c, wm.Mean, wm.SD, mean[c], sdev[c])
		}
	}
}

// TestImportanceGlobalRefines: where q's marginal is a little too narrow
// (its sds 1/1.6 of the posterior's, a true Pareto k of 1 - 1/1.6² =
// 0.61), a quarter of the draws can find k below 0.5 and keep q where all
// of them do not: then the second set, adapted to their weights, brings k
// below 0.5. At every seed, whichever way the draws went, the means and
// sds of theta_g agree with the exact Gaussian posterior within 4 Monte
// Carlo standard errors.
func TestImportanceGlobalRefines(t *testing.T) {
	m := gaussToy{x: []float64{-1, -0.5, 0, 0.5, 1, 1.5}, y: []float64{0.3, -0.2, 1.1, 0.8, 1.9, 1.4}}
	// The exact posterior: y_i ~ N(theta_0 + x_i theta_1, 1.25), theta ~
	// N(0, 4 I).
	var prec [4]float64
	var rhs [2]float64
	prec[0], prec[3] = 0.25, 0.25
	for i, x := range m.x {
		row := [2]float64{1, x}
		for a := range 2 {
			rhs[a] += row[a] * m.y[i] / 1.25
			for c := range 2 {
				prec[2*a+c] += row[a] * row[c] / 1.25
			}
		}
	}
	det := prec[0]*prec[3] - prec[1]*prec[2]
	cov := [4]float64{prec[3] / det, -prec[1] / det, -prec[2] / det, prec[0] / det}
	mean := [2]float64{cov[0]*rhs[0] + cov[1]*rhs[1], cov[2]*rhs[0] + cov[3]*rhs[1]}

	ctx := context.Background()
	res, err := vi.Fit(ctx, m, vi.Settings{Seed: 1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	narrow := *res
	narrow.Factor = append([]float64(nil), res.Factor...)
	for k := range narrow.Factor {
		narrow.Factor[k] *= 1.6
	}
	refined := 0
	for seed := uint64(1); seed <= 12; seed++ {
		imp, err := posterior.ImportanceGlobal(ctx, &narrow, m, posterior.ImportanceSettings{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		if imp.Mixed {
			refined++
			if len(imp.LogWeights) != 2*posterior.DefaultImportanceDraws || imp.Rounds != 1 {
				t.Errorf("seed %d: %d draws after %d rounds, want %d after 1", seed, len(imp.LogWeights), imp.Rounds, 2*posterior.DefaultImportanceDraws)
			}
			if !(imp.K < posterior.ParetoKGood) {
				t.Errorf("seed %d: k %.2f after the second set (q's %.2f)", seed, imp.K, imp.QK)
			}
		}
		w, _, _ := posterior.PSIS(imp.LogWeights)
		for c := range 2 {
			x := make([]float64, len(w))
			for s := range w {
				x[s] = imp.Global[2*s+c]
			}
			got := posterior.WeightedMarginal("theta", x, w)
			sd := math.Sqrt(cov[3*c])
			if math.Abs(got.Mean-mean[c]) > 4*got.MCSE.Mean || math.Abs(got.SD-sd) > 4*got.MCSE.SD {
				t.Errorf("seed %d theta_%d: %.4f ± %.4f (MCSE %.4f, %.4f), exact %.4f ± %.4f", seed, c, got.Mean, got.SD, got.MCSE.Mean, got.MCSE.SD, mean[c], sd)
			}
		}
	}
	t.Logf("%d of 12 seeds drew the second set", refined)
	if refined == 0 {
		t.Error("no seed drew the second set: the test checks nothing")
	}
}
