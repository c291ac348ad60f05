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

// startAt runs m's StartAt at thetaG on a pool of the given workers.
func startAt(t *testing.T, m *glmm.Model, thetaG []float64, workers int) (theta, prec []float64) {
	t.Helper()
	n, r, g := m.Dims()
	theta = make([]float64, n*r+g)
	prec = make([]float64, arrowhead.Len(n, r, g))
	pool := parallel.NewPool(context.Background(), workers)
	defer pool.Close()
	if err := m.StartAt(pool, thetaG, theta, prec); err != nil {
		t.Fatal(err)
	}
	return theta, prec
}

// TestStartAt: at Start's own theta_g, StartAt's subjects' means are
// Start's, up to Start's own last step, and its precision is positive
// definite; it is the same bits on 1 and 2 workers; and on a sample of
// the subjects (Sample) Start's theta_g is the truth's within the
// sample's error.
func TestStartAt(t *testing.T) {
	for _, c := range []struct {
		family string
		cov    [][]float64
		beta   []float64
		disp   float64
		n      int
		size   int
		// The largest distance of a subject's mean from Start's, and of
		// the sample's beta from the truth: the sample's posterior sds
		// are about 0.02 to 0.03 here (2000 to 4000 subjects of 7
		// observations), about 4 of them.
		tolMode, tolTruth float64
	}{
		{"bernoulli", [][]float64{{1}}, []float64{-1, 0.5, 0.5, -0.5, 1}, 0, 20000, 4000, 0.05, 0.12},
		{"poisson", [][]float64{{0.5, 0.1}, {0.1, 0.3}}, []float64{0.5, 0.3, -0.2, 0.2, 0.4}, 0, 10000, 2000, 0.05, 0.1},
		{"gaussian", [][]float64{{1}}, []float64{1, 0.5, 0.5, -0.5, 1}, 0.5, 10000, 2000, 0.05, 0.1},
	} {
		t.Run(c.family, func(t *testing.T) {
			m := simulatedDisp(t, c.family, c.cov, c.beta, c.disp, c.n, 7)
			n, r, g := m.Dims()
			full := make([]float64, n*r+g)
			fullPrec := make([]float64, arrowhead.Len(n, r, g))
			if err := startModel(m, full, fullPrec); err != nil {
				t.Fatal(err)
			}
			theta, prec := startAt(t, m, full[n*r:], 2)
			checkPositiveDefinite(t, n, r, g, prec)
			if !slices.Equal(theta[n*r:], full[n*r:]) {
				t.Errorf("theta_g is %v, not the given %v", theta[n*r:], full[n*r:])
			}
			var worst float64
			for j := range n * r {
				worst = max(worst, math.Abs(theta[j]-full[j]))
			}
			if worst > c.tolMode {
				t.Errorf("the subjects' means differ from Start's by up to %v", worst)
			}
			one, onePrec := startAt(t, m, full[n*r:], 1)
			if !slices.Equal(one, theta) || !slices.Equal(onePrec, prec) {
				t.Error("1 and 2 workers give different starts")
			}
			sub, err := m.Sample(c.size, 1)
			if err != nil {
				t.Fatal(err)
			}
			ns, _, _ := sub.Dims()
			ts := make([]float64, ns*r+g)
			if err := startModel(sub, ts, make([]float64, arrowhead.Len(ns, r, g))); err != nil {
				t.Fatal(err)
			}
			for k, b := range c.beta {
				if d := math.Abs(ts[ns*r+k] - b); d > c.tolTruth {
					t.Errorf("the sample's beta[%d] = %v, truth %v", k, ts[ns*r+k], b)
				}
			}
		})
	}
}

// TestSample: a sample has the subjects asked for, each with the rows
// of a subject of the model, in increasing order, the same for the same
// seed and others for another; a sample of every subject is the model,
// and a negative size is an error.
func TestSample(t *testing.T) {
	m := simulated(t, "poisson", [][]float64{{0.5}}, []float64{0.5, 0.3, -0.2, 0.2, 0.4}, 3000, 3)
	n, _, _ := m.Dims()
	rows := func(mod *glmm.Model, i int) []float64 {
		y, _, _ := mod.Response(i)
		return y
	}
	pick := func(size int, seed uint64) []int {
		sub, err := m.Sample(size, seed)
		if err != nil {
			t.Fatal(err)
		}
		ns, _, _ := sub.Dims()
		if ns != size || sub.P() != m.P() || sub.Family() != m.Family() {
			t.Fatalf("a sample of %d subjects has %d, p = %d, family %v", size, ns, sub.P(), sub.Family())
		}
		// Each subject of the sample is a subject of the model, in
		// increasing order.
		var at []int
		j := 0
		for s := range ns {
			for j < n && !slices.Equal(rows(m, j), rows(sub, s)) {
				j++
			}
			if j == n {
				t.Fatalf("the sample's subject %d is no later subject of the model", s)
			}
			at = append(at, j)
			j++
		}
		return at
	}
	a := pick(500, 1)
	if b := pick(500, 1); !slices.Equal(a, b) {
		t.Error("the same seed gives different samples")
	}
	if b := pick(500, 2); slices.Equal(a, b) {
		t.Error("seeds 1 and 2 give the same sample")
	}
	for _, size := range []int{n, n + 1} {
		if sub, err := m.Sample(size, 1); err != nil || sub != m {
			t.Errorf("a sample of %d of %d subjects is not the model (%v)", size, n, err)
		}
	}
	if _, err := m.Sample(-1, 1); err == nil {
		t.Error("no error for a negative size")
	}
}
