// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// crossedProblem adds two crossed factors (4 and 3 levels) to a random
// problem of the family and returns the model and a random point.
func crossedProblem(t *testing.T, fam glmm.Family, seed uint64) (glmm.Config, *glmm.Model, []float64, []float64) {
	return crossedProblemR(t, fam, seed, 2)
}

// crossedProblemR is crossedProblem with r random effects per subject.
func crossedProblemR(t *testing.T, fam glmm.Family, seed uint64, r int) (glmm.Config, *glmm.Model, []float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 17))
	const n, p = 8, 3
	cfg := randomConfig(rng, fam, n, p, r, false)
	nobs := len(cfg.Y)
	for c, nl := range []int{4, 3} {
		cr := glmm.Crossed{Name: fmt.Sprintf("f%d", c), NumLevels: nl, Index: make([]int, nobs)}
		for k := range cr.Index {
			cr.Index[k] = rng.IntN(nl)
		}
		cfg.Crossed = append(cfg.Crossed, cr)
	}
	mod, err := glmm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	thetaG := withDispersion(rng, fam, randomGlobal(rng, p, r))
	for _, cr := range cfg.Crossed {
		for range cr.NumLevels {
			thetaG = append(thetaG, 0.8*rng.NormFloat64())
		}
		thetaG = append(thetaG, 0.3*rng.NormFloat64())
	}
	return cfg, mod, randomLocal(rng, n, r), thetaG
}

// TestCrossedLogJoint compares the log joint of a model with crossed
// factors with the reference: the model without them, its offsets
// holding the crossed effects u_l = exp(-omega_u) v_l, plus the prior of
// the standardised effects v_l and of omega_u written out.
func TestCrossedLogJoint(t *testing.T) {
	for _, fam := range allFamilies {
		cfg, mod, local, thetaG := crossedProblem(t, fam, uint64(fam))
		_, _, g := mod.Dims()
		base := len(thetaG) - (4 + 1 + 3 + 1)
		if g != len(thetaG) {
			t.Fatalf("%v: G = %d, want %d", fam, g, len(thetaG))
		}
		plain := cfg
		plain.Crossed = nil
		plain.Offset = slices.Clone(cfg.Offset)
		var prior float64
		next := base
		for c, cr := range cfg.Crossed {
			v := thetaG[next : next+cr.NumLevels]
			w := thetaG[next+cr.NumLevels]
			a := mod.CrossedWeights(c)
			for k, l := range cr.Index {
				plain.Offset[k] += math.Exp(-a[l]*w) * v[l]
			}
			for l, x := range v {
				if !(a[l] > 0 && a[l] <= 1) {
					t.Fatalf("%v: weight %v", fam, a[l])
				}
				sd := math.Exp(-(1 - a[l]) * w)
				prior += -0.5*math.Log(2*math.Pi) - math.Log(sd) - x*x/(2*sd*sd)
			}
			prior += -0.5*math.Log(2*math.Pi*100) - w*w/200
			next += cr.NumLevels + 1
		}
		want := referenceLogJoint(plain, local, thetaG[:base], 10) + prior
		got, _ := logJoint(t, mod, local, thetaG, false)
		if math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("%v: log joint %v, reference %v", fam, got, want)
		}
		names := mod.GlobalNames()
		if names[base] != "f0[1]" || names[base+4] != "omega(f0)" || len(names) != g {
			t.Errorf("%v: global names %q", fam, names[base:])
		}
	}
}

// TestCrossedGradientFD checks the gradient, crossed effects and their
// omega included, against finite differences.
func TestCrossedGradientFD(t *testing.T) {
	for _, fam := range allFamilies {
		_, mod, local, thetaG := crossedProblem(t, fam, 40+uint64(fam))
		checkGradientFD(t, fam.String(), mod, local, thetaG)
	}
}

// TestCrossedErrors: bad crossed factors are errors naming the factor.
func TestCrossedErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cfg := randomConfig(rng, glmm.Poisson, 5, 2, 1, false)
	nobs := len(cfg.Y)
	for _, c := range []struct {
		name string
		cr   glmm.Crossed
		want error
	}{
		{"short index", glmm.Crossed{Name: "item", NumLevels: 2, Index: make([]int, nobs-1)}, glmm.ErrLength},
		{"one level", glmm.Crossed{Name: "item", NumLevels: 1, Index: make([]int, nobs)}, glmm.ErrConfig},
		{"bad level", glmm.Crossed{Name: "item", NumLevels: 2, Index: slices.Repeat([]int{2}, nobs)}, glmm.ErrGroup},
		{"too many levels", glmm.Crossed{Name: "item", NumLevels: glmm.MaxCrossedLevels + 1, Index: make([]int, nobs)}, glmm.ErrUnsupportedModel},
	} {
		cc := cfg
		cc.Crossed = []glmm.Crossed{c.cr}
		_, err := glmm.New(cc)
		if !errors.Is(err, c.want) || !containsAll(err.Error(), "item") {
			t.Errorf("%s: %v, want %v naming the factor", c.name, err, c.want)
		}
	}
}

// TestCrossedFitRecovers: a Bernoulli model with 300 subjects crossed with
// 30 items, simulated with item sd 1 and subject sd 0.8, is fitted by GVA
// from Start: the intercept and slope cover their truth, the item effects
// correlate with theirs above 0.9, and the item sd's interval holds 1.
func TestCrossedFitRecovers(t *testing.T) {
	if testing.Short() {
		t.Skip("fits a model of 6000 observations")
	}
	rng := rand.New(rand.NewPCG(9, 9))
	const n, items, per = 300, 30, 20
	beta := []float64{-0.3, 0.7}
	uTrue := make([]float64, items)
	for l := range uTrue {
		uTrue[l] = rng.NormFloat64()
	}
	var y, x []float64
	var group, item []int
	for i := range n {
		b := 0.8 * rng.NormFloat64()
		for range per {
			l := rng.IntN(items)
			xv := rng.NormFloat64()
			eta := beta[0] + beta[1]*xv + b + uTrue[l]
			yv := 0.0
			if rng.Float64() < 1/(1+math.Exp(-eta)) {
				yv = 1
			}
			y, x, group, item = append(y, yv), append(x, xv), append(group, i), append(item, l)
		}
	}
	nobs := len(y)
	xm := make([]float64, 2*nobs)
	z := make([]float64, nobs)
	for k := range nobs {
		xm[2*k], xm[2*k+1], z[k] = 1, x[k], 1
	}
	mod := itemModel(t, glmm.Bernoulli, y, xm, z, group, item, n, items)
	nn, r, g := mod.Dims()
	theta := make([]float64, nn*r+g)
	prec := make([]float64, arrowhead.Len(nn, r, g))
	if err := startModel(mod, theta, prec); err != nil {
		t.Fatal(err)
	}
	checkPositiveDefinite(t, nn, r, g, prec)
	res, err := vi.Fit(context.Background(), mod, vi.Settings{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	cov := res.GlobalCov()
	mu := res.Mu[nn*r:]
	for k, b := range beta {
		sd := math.Sqrt(cov.At(k, k))
		if math.Abs(mu[k]-b) > 2.5*sd {
			t.Errorf("beta[%d] = %.3f ± %.3f, truth %v", k, mu[k], sd, b)
		}
	}
	_, _, first, omega := mod.CrossedFactor(0)
	var sxy, sxx, syy, mx, my float64
	tau := math.Exp(-mu[omega])
	wt := mod.CrossedWeights(0)
	u := func(l int) float64 { return math.Pow(tau, wt[l]) * mu[first+l] }
	for l := range items {
		mx += u(l) / items
		my += uTrue[l] / items
	}
	for l := range items {
		a, b := u(l)-mx, uTrue[l]-my
		sxy, sxx, syy = sxy+a*b, sxx+a*a, syy+b*b
	}
	if c := sxy / math.Sqrt(sxx*syy); c < 0.9 {
		t.Errorf("item effects correlate %.3f with the truth", c)
	}
	wsd := math.Sqrt(cov.At(omega, omega))
	lo, hi := math.Exp(-(mu[omega] + 1.96*wsd)), math.Exp(-(mu[omega] - 1.96*wsd))
	t.Logf("item sd %.3f [%.3f, %.3f]; %d iterations", math.Exp(-mu[omega]), lo, hi, res.Iterations)
	if !(lo < 1 && 1 < hi) {
		t.Errorf("item sd interval [%.3f, %.3f] misses 1", lo, hi)
	}
}

// itemModel returns the model of family fam with response y, the design
// rows (1, x) in xm, a random intercept (z) for n subjects by group and a
// crossed factor "item" of the given levels.
func itemModel(t *testing.T, fam glmm.Family, y, xm, z []float64, group, item []int, n, items int) *glmm.Model {
	t.Helper()
	nobs := len(y)
	mod, err := glmm.New(glmm.Config{
		Family: fam, Y: y, X: denseOf(nobs, 2, xm), Z: denseOf(nobs, 1, z),
		Group: group, NumGroups: n, Crossed: []glmm.Crossed{{Name: "item", Index: item, NumLevels: items}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// denseOf returns the rows×cols matrix of data.
func denseOf(rows, cols int, data []float64) *mat.Dense { return mat.NewDense(rows, cols, data) }

// containsAll reports whether s contains every one of subs.
func containsAll(s string, subs ...string) bool {
	for _, x := range subs {
		if !strings.Contains(s, x) {
			return false
		}
	}
	return true
}

// TestGlobalSupport: a subject's support holds beta, omega and psi, and of
// each crossed factor the levels its rows meet and omega_u; its log
// density does not change, and its gradient is zero, outside it.
func TestGlobalSupport(t *testing.T) {
	missed := 0
	for _, fam := range allFamilies {
		cfg, mod, local, thetaG := crossedProblem(t, fam, uint64(fam)+40)
		n, r, g := mod.Dims()
		base := g - (4 + 1 + 3 + 1)
		ws := mod.NewWorkspace()
		for i := range n {
			want := make([]int, 0, g)
			for j := range base {
				want = append(want, j)
			}
			off := base
			for _, cr := range cfg.Crossed {
				met := make([]bool, cr.NumLevels)
				for k, grp := range cfg.Group {
					if grp == i {
						met[cr.Index[k]] = true
					}
				}
				for l, ok := range met {
					if ok {
						want = append(want, off+l)
					} else {
						missed++
					}
				}
				want = append(want, off+cr.NumLevels)
				off += cr.NumLevels + 1
			}
			got := mod.GlobalSupport(i, nil)
			if !slices.Equal(got, want) {
				t.Fatalf("%v subject %d: support %v, want %v", fam, i, got, want)
			}
			li := local[i*r : (i+1)*r]
			gl := make([]float64, r)
			gg := make([]float64, g)
			lp, err := mod.Local(ws, i, i+1, thetaG, li, gl, gg)
			if err != nil {
				t.Fatal(err)
			}
			moved := slices.Clone(thetaG)
			for j := range g {
				if slices.Contains(got, j) {
					continue
				}
				if gg[j] != 0 {
					t.Errorf("%v subject %d: gradient %v in global %d outside the support", fam, i, gg[j], j)
				}
				moved[j] += 1.5
			}
			if lp2, _ := mod.Local(ws, i, i+1, moved, li, nil, nil); lp2 != lp {
				t.Errorf("%v subject %d: log density %v, %v after moving the globals outside the support", fam, i, lp, lp2)
			}
		}
	}
	if missed == 0 {
		t.Fatal("every subject met every level: the test checks nothing outside the supports")
	}
}

// TestStartCrossedCoupling: for a Gaussian response, whose log likelihood
// has a constant Hessian given sigma, the start's precision holds the
// negative Hessian of the log joint between each crossed effect and
// itself, the subjects' b_i, beta and the other factor's effects (central
// differences of the gradient at the start).
func TestStartCrossedCoupling(t *testing.T) {
	_, mod, _, _ := crossedProblem(t, glmm.Gaussian, 7)
	n, r, g := mod.Dims()
	d := n*r + g
	theta := make([]float64, d)
	prec := make([]float64, arrowhead.Len(n, r, g))
	if err := startModel(mod, theta, prec); err != nil {
		t.Fatal(err)
	}
	grad := gradOf(t, mod)
	// hess(j) is column j of the negative Hessian.
	hess := func(j int) []float64 {
		const h = 1e-4
		up, dn := slices.Clone(theta), slices.Clone(theta)
		up[j] += h
		dn[j] -= h
		gu, gd := grad(up), grad(dn)
		col := make([]float64, d)
		for k := range col {
			col[k] = -(gu[k] - gd[k]) / (2 * h)
		}
		return col
	}
	s := arrowhead.WrapSym(n, r, g, prec)
	p := mod.P()
	checked := 0
	for c := range mod.NumCrossed() {
		_, levels, first, _ := mod.CrossedFactor(c)
		for l := range levels {
			k := first + l
			col := hess(n*r + k)
			check := func(what string, got, want float64) {
				t.Helper()
				checked++
				if math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
					t.Errorf("factor %d level %d, %s: start's precision %.8g, negative Hessian %.8g", c, l, what, got, want)
				}
			}
			for i := range n {
				for a := range r {
					check(fmt.Sprintf("b_%d[%d]", i, a), s.Cross(i)[k*r+a], col[i*r+a])
				}
			}
			for a := range p {
				check(fmt.Sprintf("beta[%d]", a), s.At(n*r+k, n*r+a), col[n*r+a])
			}
			check("itself", s.At(n*r+k, n*r+k), col[n*r+k])
			if c > 0 {
				_, other, first0, _ := mod.CrossedFactor(0)
				for m := range other {
					check(fmt.Sprintf("factor 0 level %d", m), s.At(n*r+k, n*r+first0+m), col[n*r+first0+m])
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("nothing checked")
	}
}
