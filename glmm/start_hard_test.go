// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/glmm"
)

// hugeCounts is reliability's Poisson random-intercept model whose 60
// subjects range from all-zero counts to counts above 1e6 (log mean from
// -6 to 14, slope 0.1 in t), with first fixed-effect column x(j) and
// random-effect column z(j) at stored row j (1 in reliability's); it
// returns the model and each subject's count sum.
func hugeCounts(t *testing.T, x0, z func(j int) float64) (*glmm.Model, []float64) {
	const n, ni = 60, 4
	var y, x []float64
	var g []int
	sums := make([]float64, n)
	for i := range n {
		eta := -6 + 20*float64(i)/float64(n-1)
		for j := range ni {
			tj := float64(j) / (ni - 1)
			mu := math.Exp(eta + 0.1*tj)
			s := []float64{-1, 0, 1, 0.5}[j]
			yij := math.Max(0, math.Floor(mu+math.Sqrt(mu)*s))
			if eta < -3 {
				yij = 0
			}
			y = append(y, yij)
			x = append(x, x0(len(y)-1), tj)
			g = append(g, i)
			sums[i] += yij
		}
	}
	if sums[n-1] < 4e6 {
		t.Fatalf("largest subject's counts sum to %v", sums[n-1])
	}
	nobs := len(y)
	zs := make([]float64, nobs)
	for k := range zs {
		zs[k] = z(k)
	}
	m, err := glmm.New(glmm.Config{Family: glmm.Poisson, Y: y,
		X: mat.NewDense(nobs, 2, x), Z: mat.NewDense(nobs, 1, zs), Group: g, NumGroups: n})
	if err != nil {
		t.Fatal(err)
	}
	return m, sums
}

// TestStartHugeCounts: on counts from 0 to above 1e6 the start fits every
// subject's level and the slope, both with intercepts (which the start
// sets from the data) and without (Newton then starts from b = beta = 0,
// far from the large subjects' modes, and must still get there).
func TestStartHugeCounts(t *testing.T) {
	one := func(int) float64 { return 1 }
	for _, tc := range []struct {
		name  string
		x0, z func(j int) float64
	}{
		{"intercept", one, one},
		// Columns 1 + 1e-9 in alternate rows: the same model, but not
		// constant, so the start cannot set the levels from the data.
		{"non-constant", func(j int) float64 { return 1 + 1e-9*float64(j%2) }, func(j int) float64 { return 1 + 1e-9*float64(j%2) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, sums := hugeCounts(t, tc.x0, tc.z)
			n, r, g := m.Dims()
			theta := make([]float64, n*r+g)
			prec := make([]float64, arrowhead.Len(n, r, g))
			if err := startModel(m, theta, prec); err != nil {
				t.Fatal(err)
			}
			for k, v := range theta {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("theta[%d] = %v", k, v)
				}
			}
			beta := theta[n*r : n*r+2]
			t.Logf("beta %.4f, omega %.4f", beta, theta[n*r+2:])
			// The data are within about one Poisson sd of exp(eta + 0.1 t):
			// the large subjects fix the slope to about 1e-3.
			if math.Abs(beta[1]-0.1) > 0.02 {
				t.Errorf("slope %.4f, truth 0.1", beta[1])
			}
			// Each subject's fitted log mean against the log of its mean
			// count; the prior shrinks the small subjects a little.
			var lo, hi, mean float64 = math.Inf(1), math.Inf(-1), 0
			for i := range n {
				level := math.Log((sums[i] + 0.5) / 4)
				lo, hi, mean = min(lo, level), max(hi, level), mean+level/float64(n)
				if sums[i] < 20 {
					continue
				}
				var mu float64
				for j, z := range m.ZRows(i) {
					mu += math.Exp(tc.x0(4*i+j)*beta[0]+z*theta[i]+beta[1]*float64(j)/3) / 4
				}
				fit := math.Log(mu)
				if d := fit - math.Log(sums[i]/4); math.Abs(d) > 0.1 {
					t.Errorf("subject %d: fitted log mean count %.4f, data %.4f", i, fit, math.Log(sums[i]/4))
				}
			}
			if math.Abs(beta[0]-mean) > 1.5 {
				t.Errorf("intercept %.4f, mean of the subjects' log mean counts %.4f (from %.2f to %.2f)", beta[0], mean, lo, hi)
			}
			// The precision is positive definite.
			checkPositiveDefinite(t, n, r, g, prec)
		})
	}
}
