// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/simshare"
	"github.com/sparsevi/sparsevi/parallel"
)

// TestStartShare computes the start of a model by 2 and 3 goroutine
// processes, each its own subjects, and asks for the bits of Start: each
// process's subjects' entries of theta and prec, and the global ones; for
// a Bernoulli random intercept, a Poisson random slope and a Gaussian
// random intercept (whose start also fits the residual sd).
func TestStartShare(t *testing.T) {
	const c = glmm.StartChunk
	for _, family := range []glmm.Family{glmm.Bernoulli, glmm.Poisson, glmm.Gaussian} {
		d := simshare.New(family, 2*c+100, 3)
		m, theta, prec := wholeStart(t, d)
		n, r, g := m.Dims()
		for _, bounds := range [][]int{{0, c, n}, {0, c, 2 * c, n}} {
			groups := simshare.NewGroups(len(bounds) - 1)
			var wg sync.WaitGroup
			errs := make([]error, len(groups))
			thetas := make([][]float64, len(groups))
			precs := make([][]float64, len(groups))
			for k, grp := range groups {
				thetas[k] = make([]float64, len(theta))
				precs[k] = make([]float64, len(prec))
				wg.Go(func() {
					pool := parallel.NewPool(context.Background(), 1)
					defer pool.Close()
					errs[k] = m.StartShare(pool, grp, bounds[k], bounds[k+1], thetas[k], precs[k])
				})
			}
			wg.Wait()
			for k := range groups {
				if errs[k] != nil {
					t.Fatal(errs[k])
				}
				lo, hi := bounds[k], bounds[k+1]
				where := fmt.Sprintf("%v, bounds %v, process %d", family, bounds, k)
				simshare.CheckStartShare(t, where, lo, hi, n, r, g, thetas[k], precs[k], theta, prec)
			}
		}
	}
}

// TestStartGroup: processes that each hold a model of their own subjects
// alone start, with StartGroup, at the bits of the whole model's Start for
// their subjects and the global block, for 1, 2 and 3 processes; also
// where a column of X is constant over one process's rows but not over
// all of them, which the start must not take for the intercept.
func TestStartGroup(t *testing.T) {
	const c = glmm.StartChunk
	for _, tc := range []struct {
		family glmm.Family
		// edit changes the data before the models are made.
		edit func(d *simshare.Data)
	}{
		{glmm.Bernoulli, nil},
		{glmm.Poisson, nil},
		{glmm.Gaussian, nil},
		{glmm.Poisson, func(d *simshare.Data) {
			// The intercept's column is 1 in the first chunk's rows
			// and 1.5 beyond.
			for j, i := range d.Subject {
				if i >= c {
					d.X[j][0] = 1.5
				}
			}
		}},
	} {
		d := simshare.New(tc.family, 2*c+100, 3)
		if tc.edit != nil {
			tc.edit(d)
		}
		m, theta, prec := wholeStart(t, d)
		n, r, g := m.Dims()
		for _, bounds := range [][]int{{0, n}, {0, c, n}, {0, c, 2 * c, n}} {
			groups := simshare.NewGroups(len(bounds) - 1)
			var wg sync.WaitGroup
			errs := make([]error, len(groups))
			thetas := make([][]float64, len(groups))
			precs := make([][]float64, len(groups))
			for k, grp := range groups {
				lo, hi := bounds[k], bounds[k+1]
				thetas[k] = make([]float64, (hi-lo)*r+g)
				precs[k] = make([]float64, arrowhead.Len(hi-lo, r, g))
				wg.Go(func() {
					part, err := d.Model(lo, hi)
					if err != nil {
						errs[k] = err
						return
					}
					pool := parallel.NewPool(context.Background(), 1)
					defer pool.Close()
					errs[k] = part.StartGroup(pool, grp, thetas[k], precs[k])
				})
			}
			wg.Wait()
			for k := range groups {
				if errs[k] != nil {
					t.Fatal(errs[k])
				}
				where := fmt.Sprintf("%v (edited %v), bounds %v, process %d", tc.family, tc.edit != nil, bounds, k)
				simshare.CheckStartPart(t, where, bounds[k], bounds[k+1], n, r, g, thetas[k], precs[k], theta, prec)
			}
		}
	}
}

// wholeStart returns the model of all of d's subjects and its Start.
func wholeStart(t *testing.T, d *simshare.Data) (m *glmm.Model, theta, prec []float64) {
	t.Helper()
	m, err := d.Model(0, d.N)
	if err != nil {
		t.Fatal(err)
	}
	n, r, g := m.Dims()
	pool := parallel.NewPool(context.Background(), 2)
	defer pool.Close()
	theta = make([]float64, n*r+g)
	prec = make([]float64, arrowhead.Len(n, r, g))
	if err := m.Start(pool, theta, prec); err != nil {
		t.Fatal(err)
	}
	return m, theta, prec
}
