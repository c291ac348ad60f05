// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/glmm"
)

// TestSubjectLogDensity: where PrepareSubject takes a subject (a random
// intercept with the canonical link of Bernoulli, binomial or Poisson
// data), SubjectLogDensity gives Local's value and gradient and
// LocalHessian's Hessian, near the data and at points far out (where the
// products of exponentials give way to direct ones), with crossed factors
// too; elsewhere it declines.
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
			}
		}
	}
}
