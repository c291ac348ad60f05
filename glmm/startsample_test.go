// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
)

// startSample runs m's StartSample on a pool of the given workers.
func startSample(t *testing.T, m *glmm.Model, size int, seed uint64, workers int) (theta, prec []float64) {
	t.Helper()
	n, r, g := m.Dims()
	theta = make([]float64, n*r+g)
	prec = make([]float64, arrowhead.Len(n, r, g))
	pool := parallel.NewPool(context.Background(), workers)
	defer pool.Close()
	if err := m.StartSample(pool, size, seed, theta, prec); err != nil {
		t.Fatal(err)
	}
	return theta, prec
}

// TestStartSample: the start from a sample recovers the truth within the
// sample's error, its modes are near the full start's, its precision is positive definite, it is the
// same bits on 1 and 2 workers and for the same seed, another seed gives
// another start, and a sample of every subject is Start itself.
func TestStartSample(t *testing.T) {
	for _, c := range []struct {
		family string
		cov    [][]float64
		beta   []float64
		disp   float64
		n      int
		size   int
		// The largest distance of beta from the truth and from Start's:
		// beta is the sample's, whose posterior sds are about 0.02 to
		// 0.03 here (2000 to 4000 subjects of 7 observations), about 4
		// of them.
		tolTruth, tolStart float64
	}{
		{"bernoulli", [][]float64{{1}}, []float64{-1, 0.5, 0.5, -0.5, 1}, 0, 20000, 4000, 0.12, 0.12},
		{"poisson", [][]float64{{0.5, 0.1}, {0.1, 0.3}}, []float64{0.5, 0.3, -0.2, 0.2, 0.4}, 0, 10000, 2000, 0.1, 0.1},
		{"gaussian", [][]float64{{1}}, []float64{1, 0.5, 0.5, -0.5, 1}, 0.5, 10000, 2000, 0.1, 0.1},
	} {
		t.Run(c.family, func(t *testing.T) {
			m := simulatedDisp(t, c.family, c.cov, c.beta, c.disp, c.n, 7)
			n, r, g := m.Dims()
			p := m.P()
			theta, prec := startSample(t, m, c.size, 1, 2)
			checkPositiveDefinite(t, n, r, g, prec)
			full := make([]float64, n*r+g)
			fullPrec := make([]float64, len(prec))
			if err := startModel(m, full, fullPrec); err != nil {
				t.Fatal(err)
			}
			for k, b := range c.beta {
				if d := math.Abs(theta[n*r+k] - b); d > c.tolTruth {
					t.Errorf("beta[%d] = %v, truth %v", k, theta[n*r+k], b)
				}
				if d := math.Abs(theta[n*r+k] - full[n*r+k]); d > c.tolStart {
					t.Errorf("beta[%d] = %v, Start's %v", k, theta[n*r+k], full[n*r+k])
				}
			}
			// The modes are Start's, up to the difference in theta_g.
			var worst float64
			for j := range n * r {
				worst = max(worst, math.Abs(theta[j]-full[j]))
			}
			if worst > 0.2 {
				t.Errorf("the modes differ from Start's by up to %v", worst)
			}
			_ = p
			one, onePrec := startSample(t, m, c.size, 1, 1)
			if !slices.Equal(one, theta) || !slices.Equal(onePrec, prec) {
				t.Error("1 and 2 workers give different starts")
			}
			again, _ := startSample(t, m, c.size, 1, 2)
			if !slices.Equal(again, theta) {
				t.Error("the same seed gives different starts")
			}
			other, _ := startSample(t, m, c.size, 2, 2)
			if slices.Equal(other[n*r:], theta[n*r:]) {
				t.Error("another seed gives the same global block")
			}
		})
	}
}

// TestStartSampleAll: a sample of every subject, or more, is Start; a
// negative size is an error.
func TestStartSampleAll(t *testing.T) {
	m := simulated(t, "bernoulli", [][]float64{{1}}, []float64{-1, 0.5, 0.5, -0.5, 1}, 500, 3)
	n, r, g := m.Dims()
	want := make([]float64, n*r+g)
	wantPrec := make([]float64, arrowhead.Len(n, r, g))
	if err := startModel(m, want, wantPrec); err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{0, n, n + 1} {
		got, gotPrec := startSample(t, m, size, 1, 2)
		if !slices.Equal(got, want) || !slices.Equal(gotPrec, wantPrec) {
			t.Errorf("size %d: not Start's start", size)
		}
	}
	pool := parallel.NewPool(context.Background(), 1)
	defer pool.Close()
	if err := m.StartSample(pool, -1, 1, want, wantPrec); err == nil {
		t.Error("no error for a negative size")
	}
}
