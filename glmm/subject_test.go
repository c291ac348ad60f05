// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
)

// TestSubjectLogDensity: where PrepareSubject takes a subject (a random
// intercept with the canonical link of Bernoulli, binomial or Poisson
// data), SubjectLogDensity gives Local's value and gradient and
// LocalHessian's Hessian, near the data and at points far out (where the
// products of exponentials give way to direct ones), with crossed factors
// too, and SubjectThirdDerivative the Hessian's derivative; elsewhere it
// declines.
func TestSubjectLogDensity(t *testing.T) {
	type subjectCase struct {
		problemCase
		crossed bool // two crossed factors, r = 1
	}
	var cases []subjectCase
	for _, c := range problemCases() {
		cases = append(cases, subjectCase{problemCase: c})
	}
	for _, fam := range []glmm.Family{glmm.Bernoulli, glmm.Binomial, glmm.Poisson} {
		cases = append(cases, subjectCase{problemCase{fam: fam, r: 1, seed: 900 + uint64(fam)}, true})
	}
	for _, c := range cases {
		var pr problem
		if c.crossed {
			_, pr.mod, pr.local, pr.thetaG = crossedProblemR(t, c.fam, c.seed, 1)
		} else {
			pr = c.problem(t)
		}
		n, r, g := pr.mod.Dims()
		fast := r == 1 && (c.fam == glmm.Bernoulli || c.fam == glmm.Binomial || c.fam == glmm.Poisson)
		ws, ref := pr.mod.NewWorkspace(), pr.mod.NewWorkspace()
		gg := make([]float64, g)
		for i := range n {
			if got := pr.mod.PrepareSubject(ws, i, pr.thetaG); got != fast {
				t.Fatalf("%v: PrepareSubject %v, want %v", c, got, fast)
			}
			if !fast {
				break
			}
			for _, b := range []float64{pr.local[i], 0, -6, 9, -320, 350} {
				var grad, hess [1]float64
				got, err := pr.mod.SubjectLogDensity(ws, []float64{b}, grad[:], hess[:])
				if err != nil {
					t.Fatal(err)
				}
				var wantGrad, wantHess [1]float64
				clear(gg)
				want, err := pr.mod.Local(ref, i, i+1, pr.thetaG, []float64{b}, wantGrad[:], gg)
				if err != nil {
					t.Fatal(err)
				}
				pr.mod.LocalHessian(ref, i, pr.thetaG, []float64{b}, wantHess[:])
				for _, v := range []struct {
					name      string
					got, want float64
				}{{"value", got, want}, {"gradient", grad[0], wantGrad[0]}, {"Hessian", hess[0], wantHess[0]}} {
					if math.Abs(v.got-v.want) > 1e-12*(1+math.Abs(v.want)) {
						t.Errorf("%v subject %d at b = %g: %s %v, Local's %v", c, i, b, v.name, v.got, v.want)
					}
				}
				// Without gradient and Hessian, the same value.
				if v, _ := pr.mod.SubjectLogDensity(ws, []float64{b}, nil, nil); v != got {
					t.Errorf("%v subject %d: value %v without derivatives, %v with", c, i, v, got)
				}
				// The third derivative, by central differences of
				// LocalHessian's Hessian.
				const h = 1e-4
				var up, down [1]float64
				pr.mod.LocalHessian(ref, i, pr.thetaG, []float64{b + h}, up[:])
				pr.mod.LocalHessian(ref, i, pr.thetaG, []float64{b - h}, down[:])
				want3 := (up[0] - down[0]) / (2 * h)
				if got3 := pr.mod.SubjectThirdDerivative(ws, []float64{b}); math.Abs(got3-want3) > 1e-6*(1+math.Abs(want3)) {
					t.Errorf("%v subject %d at b = %g: third derivative %v, differences %v", c, i, b, got3, want3)
				}
			}
		}
	}
}

// TestSubjectQuadrature: SubjectQuadrature's sums equal those of
// SubjectLogDensity point by point, for Bernoulli data without weights
// (with crossed factors too, and on a subject of 3000 rows whose
// likelihood leaves the range of a float64), and it declines elsewhere
// and at points beyond maxSubjectEta.
func TestSubjectQuadrature(t *testing.T) {
	type quadCase struct {
		name string
		mod  *glmm.Model
		thetaG,
		local []float64
		want bool // declines unless set
		at   []struct{ b0, l float64 }
	}
	var cases []quadCase
	for _, c := range problemCases() {
		if c.r != 1 || !(c.fam == glmm.Bernoulli || c.fam == glmm.Binomial || c.fam == glmm.Poisson) {
			continue
		}
		pr := c.problem(t)
		cases = append(cases, quadCase{c.String(), pr.mod, pr.thetaG, pr.local, c.fam == glmm.Bernoulli && c.plain, nil})
	}
	for _, fam := range []glmm.Family{glmm.Bernoulli, glmm.Poisson} {
		cfg, mod, local, thetaG := crossedProblemR(t, fam, 910+uint64(fam), 1)
		cases = append(cases, quadCase{"crossed " + fam.String(), mod, thetaG, local, fam == glmm.Bernoulli && cfg.Weights == nil, nil})
	}
	// One subject of 3000 Bernoulli rows, nearly all 0 at eta near 3.
	const rows = 3000
	xl, zl := mat.NewDense(rows, 1, nil), mat.NewDense(rows, 1, nil)
	long := glmm.Config{Family: glmm.Bernoulli, X: xl, Z: zl, Y: make([]float64, rows), Group: make([]int, rows), NumGroups: 1}
	for k := range rows {
		xl.Set(k, 0, 1+0.1*float64(k%7))
		zl.Set(k, 0, 1)
		if k%500 == 0 {
			long.Y[k] = 1
		}
	}
	lm, err := glmm.New(long)
	if err != nil {
		t.Fatal(err)
	}
	// Points 0.1 apart, where the log density changes by hundreds.
	cases = append(cases, quadCase{"3000 rows", lm, []float64{2.5, 0}, []float64{0.4}, true, []struct{ b0, l float64 }{{0.4, 45}, {-0.5, 60}}})

	x := []float64{-4.5, -2, -0.7, 0, 0.7, 2, 4.5}
	logw := []float64{-3, -1.2, -0.4, -0.3, -0.4, -1.2, -3}
	jac := []float64{1.6, 1.4, 1.2, 1, 0.8, 0.6, 0.4} // a bent grid's
	for _, c := range cases {
		n, _, _ := c.mod.Dims()
		ws := c.mod.NewWorkspace()
		var took int
		for i := range n {
			if !c.mod.PrepareSubject(ws, i, c.thetaG) {
				t.Fatalf("%s: PrepareSubject declined subject %d", c.name, i)
			}
			ats := c.at
			if ats == nil {
				ats = []struct{ b0, l float64 }{{c.local[i], 0.8}, {-3, 2.5}, {1, 0.3}, {-299, 1}}
			}
			for _, at := range ats {
				f, err := c.mod.SubjectLogDensity(ws, []float64{at.b0}, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				s0, s1, s2, ok := c.mod.SubjectQuadrature(ws, at.b0, at.l, x, logw, jac, f)
				beyond := math.Abs(at.b0)+4.5/at.l > 300
				if ok != (c.want && !beyond) {
					t.Fatalf("%s subject %d at b0 %v: ok %v, want %v", c.name, i, at.b0, ok, c.want && !beyond)
				}
				if !ok {
					continue
				}
				took++
				var w0, w1, w2 float64
				for p := range x {
					b := x[p]/at.l + at.b0
					fx, err := c.mod.SubjectLogDensity(ws, []float64{b}, nil, nil)
					if err != nil {
						t.Fatal(err)
					}
					v := jac[p] * math.Exp(logw[p]+fx-f)
					w0, w1, w2 = w0+v, w1+v*b, w2+v*b*b
				}
				// Rounding in log p, of order |f| ulps, is relative in v.
				tol := 1e-12 * (1 + math.Abs(f)) * (w0 + w2)
				for _, v := range [][2]float64{{s0, w0}, {s1, w1}, {s2, w2}} {
					if !(math.Abs(v[0]-v[1]) <= tol) {
						t.Errorf("%s subject %d at b0 %v, l %v: sums %v %v %v, point by point %v %v %v", c.name, i, at.b0, at.l, s0, s1, s2, w0, w1, w2)
						break
					}
				}
			}
		}
		if c.want && took == 0 {
			t.Errorf("%s: no sum taken", c.name)
		}
	}
}
