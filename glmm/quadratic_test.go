// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

var _ vi.QuadraticStarter = (*glmm.Model)(nil)

// TestQuadraticGiven: a Gaussian model with crossed factors holds its
// variance parameters (omega, psi and each factor's omega_u) and no
// other; the other families and models without crossed factors decline.
// Given the held ones the log density is quadratic in the rest: its
// negative Hessian there (central differences of the gradient at the
// start) is constant, the start's precision is it up to the lag of
// sigma's last update, with no coupling to the held variables, and a
// Newton step with the start's precision (densely) cuts the gradient
// over 20-fold, as does a second one (54- and 48-fold here; on insteval
// 530- and 430-fold, from 18.7 to 8e-5).
func TestQuadraticGiven(t *testing.T) {
	for _, fam := range []glmm.Family{glmm.Poisson, glmm.Bernoulli, glmm.NegBinomial} {
		_, mod, _, _ := crossedProblem(t, fam, 3)
		if held, ok := mod.QuadraticGiven(nil); ok || len(held) != 0 {
			t.Errorf("%v: QuadraticGiven %v, %v; want none, false", fam, held, ok)
		}
	}
	plain := gaussianNoCrossed(t)
	if _, ok := plain.QuadraticGiven(nil); ok {
		t.Errorf("a Gaussian model without crossed factors reports itself quadratic")
	}

	_, mod, _, _ := crossedProblemR(t, glmm.Gaussian, 7, 2)
	n, r, g := mod.Dims()
	p := mod.P()
	nr := n * r
	d := nr + g
	held, ok := mod.QuadraticGiven([]int{-1})
	if !ok {
		t.Fatal("a Gaussian model with crossed factors does not report itself quadratic")
	}
	want := []int{-1, p, p + 1, p + 2, p + 3} // omega (3 entries for r = 2), psi
	for c := range mod.NumCrossed() {
		_, _, _, omega := mod.CrossedFactor(c)
		want = append(want, omega)
	}
	if !slices.Equal(held, want) {
		t.Fatalf("QuadraticGiven appended %v, want %v", held, want)
	}
	held = held[1:]
	isHeld := func(j int) bool { return j >= nr && slices.Contains(held, j-nr) }

	theta := make([]float64, d)
	prec := make([]float64, arrowhead.Len(n, r, g))
	if err := startModel(mod, theta, prec); err != nil {
		t.Fatal(err)
	}
	full := gradOf(t, mod)
	grad := func(th []float64) []float64 {
		gr := full(th)
		for j := range gr {
			if isHeld(j) {
				gr[j] = 0
			}
		}
		return gr
	}
	negHess := func(at []float64) *mat.SymDense {
		const h = 1e-4
		hs := mat.NewSymDense(d, nil)
		for j := range d {
			if isHeld(j) {
				hs.SetSym(j, j, 1)
				continue
			}
			up, dn := slices.Clone(at), slices.Clone(at)
			up[j] += h
			dn[j] -= h
			gu, gd := grad(up), grad(dn)
			for k := 0; k <= j; k++ {
				if !isHeld(k) {
					hs.SetSym(j, k, -(gu[k]-gd[k])/(2*h))
				}
			}
		}
		return hs
	}
	s := arrowhead.WrapSym(n, r, g, prec)
	hs := negHess(theta)
	for a := range d {
		for b := range d {
			got := s.At(a, b)
			if a != b && (isHeld(a) || isHeld(b)) {
				if got != 0 {
					t.Errorf("start's precision couples held variable: (%d, %d) = %v", a, b, got)
				}
				continue
			}
			if isHeld(a) || isHeld(b) {
				continue
			}
			if w := hs.At(a, b); math.Abs(got-w) > 0.02*math.Max(1, math.Abs(w)) {
				t.Errorf("start's precision (%d, %d) = %.6g, negative Hessian %.6g", a, b, got, w)
			}
		}
	}
	// Constant Hessian: the same elsewhere.
	far := slices.Clone(theta)
	for j := range far {
		if !isHeld(j) {
			far[j] += 0.5 * math.Cos(float64(j))
		}
	}
	if h2 := negHess(far); !mat.EqualApprox(hs, h2, 1e-5) {
		t.Errorf("the negative Hessian given the held variables is not constant")
	}
	// Newton steps with the start's precision.
	sd := mat.NewSymDense(d, nil)
	for a := range d {
		for b := 0; b <= a; b++ {
			sd.SetSym(a, b, s.At(a, b))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sd) {
		t.Fatal("start's precision not positive definite")
	}
	norms := []float64{floats.Norm(grad(theta), 2)}
	for range 2 {
		var step mat.VecDense
		if err := ch.SolveVecTo(&step, mat.NewVecDense(d, grad(theta))); err != nil {
			t.Fatal(err)
		}
		floats.Add(theta, step.RawVector().Data)
		norms = append(norms, floats.Norm(grad(theta), 2))
	}
	if !(norms[1] < norms[0]/20 && norms[2] < norms[1]/20) {
		t.Errorf("gradient norms over Newton steps %v: want each step to cut it over 20-fold", norms)
	}
}

// gaussianNoCrossed returns a Gaussian model without crossed factors.
func gaussianNoCrossed(t *testing.T) *glmm.Model {
	cfg, _, _, _ := crossedProblem(t, glmm.Gaussian, 5)
	cfg.Crossed = nil
	mod, err := glmm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// gradOf returns the gradient of mod's log joint as a function of theta.
func gradOf(t *testing.T, mod *glmm.Model) func(theta []float64) []float64 {
	n, r, g := mod.Dims()
	ws := mod.NewWorkspace()
	return func(th []float64) []float64 {
		gr := make([]float64, n*r+g)
		if _, err := mod.Local(ws, 0, n, th[n*r:], th[:n*r], gr[:n*r], gr[n*r:]); err != nil {
			t.Fatal(err)
		}
		mod.Global(th[n*r:], gr[n*r:])
		return gr
	}
}

// TestQuadraticFitRecovers: a Gaussian model with 400 subjects crossed
// with 80 items (more than vi.StepShared, so that the refined start takes
// the short step), simulated with known truth, is fitted by default: beta,
// sigma and the sds cover their truth, and the fit agrees with one at the
// default step (Snngm's Alpha0 set, so neither the divisor nor the skipped
// refinement applies) within a tenth of a posterior sd in every global
// mean. (Without the step in the variance parameters log sigma stayed
// 0.49 posterior sd from where the default step went; two fits at it with
// tol 1e-4 ended within 0.06 of each other.)
func TestQuadraticFitRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("fits a model of 6000 observations twice")
	}
	rng := rand.New(rand.NewPCG(4, 4))
	const n, items, per = 400, 80, 15
	const itemSD, subjSD, sigma = 0.6, 0.8, 1.0
	beta := []float64{1.5, -0.4}
	uTrue := make([]float64, items)
	for l := range uTrue {
		uTrue[l] = itemSD * rng.NormFloat64()
	}
	var y, xm, z []float64
	var group, item []int
	for i := range n {
		b := subjSD * rng.NormFloat64()
		for range per {
			l := rng.IntN(items)
			xv := rng.NormFloat64()
			y = append(y, beta[0]+beta[1]*xv+b+uTrue[l]+sigma*rng.NormFloat64())
			xm, z = append(xm, 1, xv), append(z, 1)
			group, item = append(group, i), append(item, l)
		}
	}
	mod := itemModel(t, glmm.Gaussian, y, xm, z, group, item, n, items)
	nn, r, g := mod.Dims()
	short, err := vi.Fit(context.Background(), mod, vi.Settings{Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if a0 := short.Rule.(vi.Snngm).Alpha0; a0 >= vi.DefaultAlpha0*vi.StepShared/items {
		t.Fatalf("Alpha0 %v: the short step was not taken", a0)
	}
	long, err := vi.Fit(context.Background(), mod, vi.Settings{Seed: 5, Rule: vi.Snngm{Alpha0: vi.DefaultAlpha0 * vi.StepShared / items}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("iterations: short step %d, default step %d; bounds %.2f and %.2f", short.Iterations, long.Iterations, short.LowerBound, long.LowerBound)
	cov := short.GlobalCov()
	mu := short.Mu[nn*r:]
	sd := func(k int) float64 { return math.Sqrt(cov.At(k, k)) }
	p := mod.P()
	_, _, _, omega := mod.CrossedFactor(0)
	psi := p + glmm.NumOmega(r)
	for _, c := range []struct {
		name  string
		k     int
		truth float64
	}{
		{"beta[0]", 0, beta[0]},
		{"beta[1]", 1, beta[1]},
		{"log sigma", psi, math.Log(sigma)},
		{"omega_item", omega, -math.Log(itemSD)},
		{"omega_subject", p, -math.Log(subjSD)},
	} {
		if math.Abs(mu[c.k]-c.truth) > 2.5*sd(c.k) {
			t.Errorf("%s = %.4f ± %.4f, truth %.4f", c.name, mu[c.k], sd(c.k), c.truth)
		}
	}
	lmu := long.Mu[nn*r:]
	for k := range g {
		if d := math.Abs(mu[k] - lmu[k]); d > 0.1*sd(k) {
			t.Errorf("global mean %d: short step %.5f, default step %.5f (%.2f posterior sd apart)", k, mu[k], lmu[k], d/sd(k))
		}
	}
}
