// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
)

// trueOmega returns omega = vech(W*) for the random-effect covariance c:
// W is the lower Cholesky factor of the precision c^-1.
func trueOmega(t *testing.T, c [][]float64) []float64 {
	r := len(c)
	cov := mat.NewSymDense(r, nil)
	for i := range r {
		for j := i; j < r; j++ {
			cov.SetSym(i, j, c[i][j])
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(cov) {
		t.Fatal("covariance not positive definite")
	}
	var prec mat.SymDense
	if err := ch.InverseTo(&prec); err != nil {
		t.Fatal(err)
	}
	if !ch.Factorize(&prec) {
		t.Fatal("precision not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	w := make([]float64, r*r)
	for i := range r {
		for j := 0; j <= i; j++ {
			w[i*r+j] = l.At(i, j)
		}
	}
	omega := make([]float64, glmm.NumOmega(r))
	glmm.WToOmega(w, r, omega)
	return omega
}

// TestScoreIdentity is a joint test of the simulator, the formula and the
// model's gradients. At the true parameters the score has mean zero: for
// data simulated with random effects b, the gradient of log p(y | b, beta)
// in beta and of log p(b | omega) in omega, evaluated at the true beta,
// omega and b through glmm's Local, averages to zero over data sets; so
// does the gradient of log p(y, b) in b. Each coordinate's average over
// 2,000 data sets must be within 3 Monte Carlo standard errors of zero.
// The same average at a shifted intercept must be far from zero, which
// shows that the check has power.
func TestScoreIdentity(t *testing.T) {
	const reps = 2000
	for _, test := range []struct {
		name string
		spec datasets.SimSpec
		fam  glmm.Family
	}{
		{"poisson r=1", datasets.SimSpec{Family: "poisson", Subjects: 20, Obs: 5, Beta: []float64{0.5, -0.3, 0.4}, RECov: [][]float64{{0.5}}}, glmm.Poisson},
		{"bernoulli r=1", datasets.SimSpec{Family: "bernoulli", Subjects: 20, Obs: 5, Beta: []float64{-0.5, 1, 0.8}, RECov: [][]float64{{1}}}, glmm.Bernoulli},
		{"binomial r=1", datasets.SimSpec{Family: "binomial", Subjects: 20, Obs: 5, Beta: []float64{-0.2, 0.5, -0.5}, RECov: [][]float64{{0.7}}, Trials: 5}, glmm.Binomial},
		{"poisson r=2", datasets.SimSpec{Family: "poisson", Subjects: 20, Obs: 5, Beta: []float64{0.3, 0.2, -0.3}, RECov: [][]float64{{0.4, 0.1}, {0.1, 0.3}}}, glmm.Poisson},
		{"bernoulli r=2", datasets.SimSpec{Family: "bernoulli", Subjects: 20, Obs: 5, ObsMax: 7, Beta: []float64{0.2, -0.5, 0.6, 0.3}, RECov: [][]float64{{0.8, -0.2}, {-0.2, 0.5}}}, glmm.Bernoulli},
	} {
		t.Run(test.name, func(t *testing.T) {
			spec := test.spec
			r := len(spec.RECov)
			p := len(spec.Beta)
			omega := trueOmega(t, spec.RECov)
			thetaG := append(slices.Clone(spec.Beta), omega...)
			shifted := slices.Clone(thetaG)
			shifted[0] += 0.25
			g := len(thetaG)
			// Coordinates: beta, omega, then the sum over subjects of the
			// gradient in b_i.
			dim := g + r
			sum, sumSq := make([]float64, dim), make([]float64, dim)
			var shiftSum, shiftSumSq float64
			var f *Formula
			for rep := range reps {
				spec.Seed = uint64(1000003*rep + 17)
				fr, truth, err := datasets.Simulate(spec)
				if err != nil {
					t.Fatal(err)
				}
				if f == nil {
					if f, err = Parse(truth.Formula); err != nil {
						t.Fatalf("Parse(%q): %v", truth.Formula, err)
					}
				}
				d, err := Build(f, fr, Options{Family: test.fam})
				if err != nil {
					t.Fatalf("Build(%q): %v", truth.Formula, err)
				}
				m := d.Model()
				n, mr, mg := m.Dims()
				if n != spec.Subjects || mr != r || mg != g || m.P() != p {
					t.Fatalf("model dims n=%d r=%d G=%d p=%d, want %d %d %d %d", n, mr, mg, m.P(), spec.Subjects, r, g, p)
				}
				if rep == 0 {
					// The design must follow the simulator's model: fixed
					// columns intercept, t, x1, ... and Z = (1, t)[:r].
					want := []string{"(Intercept)", "t"}
					for k := 2; k < p; k++ {
						want = append(want, fmt.Sprintf("x%d", k-1))
					}
					if !slices.Equal(d.FixedNames(), want) {
						t.Fatalf("fixed names %q, want %q", d.FixedNames(), want)
					}
					if !slices.IsSorted(d.GroupLevels()) {
						t.Fatalf("group levels %q are not in subject order", d.GroupLevels())
					}
				}
				local := make([]float64, 0, n*r)
				for _, b := range truth.B {
					local = append(local, b...)
				}
				gradL := make([]float64, n*r)
				gradG := make([]float64, g)
				ws := m.NewWorkspace()
				if _, err := m.Local(ws, 0, n, thetaG, local, gradL, gradG); err != nil {
					t.Fatal(err)
				}
				v := gradG
				for k := range r {
					var s float64
					for i := range n {
						s += gradL[i*r+k]
					}
					v = append(v, s)
				}
				for k, x := range v {
					sum[k] += x
					sumSq[k] += x * x
				}
				clear(gradG)
				if _, err := m.Local(ws, 0, n, shifted, local, gradL, gradG); err != nil {
					t.Fatal(err)
				}
				shiftSum += gradG[0]
				shiftSumSq += gradG[0] * gradG[0]
			}
			z := make([]string, dim)
			for k := range dim {
				mean := sum[k] / reps
				se := math.Sqrt((sumSq[k]/reps - mean*mean) / (reps - 1))
				z[k] = fmt.Sprintf("%.2f", mean/se)
				if !(math.Abs(mean) < 3*se) {
					t.Errorf("coordinate %d: mean score %.4g, standard error %.4g: more than 3 standard errors from 0", k, mean, se)
				}
			}
			t.Logf("mean score / standard error by coordinate (beta, omega, b): %v", z)
			mean := shiftSum / reps
			se := math.Sqrt((shiftSumSq/reps - mean*mean) / (reps - 1))
			if !(math.Abs(mean) > 10*se) {
				t.Errorf("at a shifted intercept the mean score %.4g is within 10 standard errors (%.4g) of 0: the check has no power", mean, se)
			}
		})
	}
}
