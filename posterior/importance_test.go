// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior_test

import (
	"context"
	"math"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// TestImportanceGlobalBruteForce: on a tiny Poisson random-intercept model
// (6 subjects of 4 counts, an intercept, prior sd 2), the importance
// estimates from ImportanceGlobal of log p(y) and of the posterior means
// and sds of beta and omega agree with nested numerical integration (b_i
// by the trapezoid rule inside, beta and omega on a grid, each checked by
// halving its spacing) within 4 of their Monte Carlo standard errors plus
// 1e-3; the draws are the same for 1 and 2 workers, bit for bit.
func TestImportanceGlobalBruteForce(t *testing.T) {
	counts := [][]float64{{0, 1, 2, 1}, {3, 5, 2, 4}, {1, 0, 0, 2}, {6, 4, 7, 5}, {2, 2, 1, 3}, {0, 0, 1, 0}}
	var y []float64
	var group []int
	for i, c := range counts {
		for _, v := range c {
			y = append(y, v)
			group = append(group, i)
		}
	}
	nobs := len(y)
	ones := make([]float64, nobs)
	for k := range ones {
		ones[k] = 1
	}
	const priorSD = 2
	m, err := glmm.New(glmm.Config{Family: glmm.Poisson, Y: y, X: mat.NewDense(nobs, 1, ones), Z: mat.NewDense(nobs, 1, ones),
		Group: group, NumGroups: len(counts), PriorSD: priorSD})
	if err != nil {
		t.Fatal(err)
	}
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
	if !reflect.DeepEqual(imp.LogWeights, one.LogWeights) || !reflect.DeepEqual(imp.Global, one.Global) {
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
	if !(k < posterior.ParetoKGood) {
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
}
