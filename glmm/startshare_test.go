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

// TestStartShare computes the start of a model by goroutine processes and
// asks for the bits of Start: each process's subjects' entries of theta
// and prec, and the global ones; for a Bernoulli random intercept, a
// Poisson random slope and a Gaussian random intercept (whose start also
// fits the residual sd). Each process holds either the whole model and
// its share of the subjects (StartShare; 2 and 3 processes) or a model of
// its own subjects alone (StartGroup; 1, 2 and 3), the latter also where a
// column of X is constant over one process's rows but not over all of
// them, which the start must not take for the intercept.
func TestStartShare(t *testing.T) {
	const c = glmm.StartChunk
	for _, tc := range []struct {
		family glmm.Family
		part   bool
		// edit changes the data before the models are made.
		edit func(d *simshare.Data)
	}{
		{glmm.Bernoulli, false, nil},
		{glmm.Poisson, false, nil},
		{glmm.Gaussian, false, nil},
		{glmm.Bernoulli, true, nil},
		{glmm.Poisson, true, nil},
		{glmm.Gaussian, true, nil},
		{glmm.Poisson, true, func(d *simshare.Data) {
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
		splits := [][]int{{0, c, n}, {0, c, 2 * c, n}}
		if tc.part {
			splits = append(splits, []int{0, n})
		}
		for _, bounds := range splits {
			groups := simshare.NewGroups(len(bounds) - 1)
			var wg sync.WaitGroup
			errs := make([]error, len(groups))
			thetas := make([][]float64, len(groups))
			precs := make([][]float64, len(groups))
			for k, grp := range groups {
				lo, hi := bounds[k], bounds[k+1]
				own := m
				if tc.part {
					var err error
					if own, err = d.Model(lo, hi); err != nil {
						t.Fatal(err)
					}
				}
				on := own.NumSubjects()
				thetas[k] = make([]float64, on*r+g)
				precs[k] = make([]float64, arrowhead.Len(on, r, g))
				wg.Go(func() {
					pool := parallel.NewPool(context.Background(), 1)
					defer pool.Close()
					if tc.part {
						errs[k] = own.StartGroup(pool, grp, thetas[k], precs[k])
					} else {
						errs[k] = own.StartShare(pool, grp, lo, hi, thetas[k], precs[k])
					}
				})
			}
			wg.Wait()
			for k := range groups {
				if errs[k] != nil {
					t.Fatal(errs[k])
				}
				lo, hi := bounds[k], bounds[k+1]
				where := fmt.Sprintf("%v (part %v, edited %v), bounds %v, process %d", tc.family, tc.part, tc.edit != nil, bounds, k)
				simshare.CheckStart(t, where, tc.part, lo, hi, n, r, g, thetas[k], precs[k], theta, prec)
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

// TestStartShareStopped cancels one process's pool before a start shared
// by three goroutine processes and asks that all of them return, whether
// the cancelled process stops before the first sum (StartShare) or after
// it (StartGroup, whose first sum is the number of subjects).
func TestStartShareStopped(t *testing.T) {
	d := simshare.New(glmm.Bernoulli, 2*glmm.StartChunk+100, 3)
	simshare.CheckStopped(t, d.N, func(part bool, lo, hi int, _ *simshare.Group) (simshare.Starter, error) {
		if part {
			return d.Model(lo, hi)
		}
		return d.Model(0, d.N)
	})
}
