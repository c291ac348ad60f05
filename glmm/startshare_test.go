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
			thetas, precs := shareStarts(t, d, m, tc.part, bounds)
			for k := range thetas {
				where := fmt.Sprintf("%v (part %v, edited %v), bounds %v, process %d", tc.family, tc.part, tc.edit != nil, bounds, k)
				simshare.CheckStart(t, where, tc.part, bounds[k], bounds[k+1], n, r, g, thetas[k], precs[k], theta, prec)
			}
		}
	}
}

// TestStartShareSample is TestStartShare with the rule of many subjects
// lowered to the test's 612 (glmm.SampleStartSubjects: Start's rounds over
// a sample of 300 of them, then one round over all of them): the
// processes draw the same sample by the subjects' indices among all of
// them, with StartGroup each gathering the sample's rows from the
// processes that hold them, and give the bits of Start in one process,
// which are not those of the rounds over all the subjects.
func TestStartShareSample(t *testing.T) {
	const c = glmm.StartChunk
	defer glmm.SetStartSample(500, 300)()
	for _, family := range []glmm.Family{glmm.Bernoulli, glmm.Poisson, glmm.Gaussian} {
		d := simshare.New(family, 2*c+100, 3)
		m, theta, prec := wholeStart(t, d)
		n, r, g := m.Dims()
		whole := make([]float64, n*r+g)
		pool := parallel.NewPool(context.Background(), 1)
		if err := m.StartWhole(pool, whole, make([]float64, len(prec))); err != nil {
			t.Fatal(err)
		}
		pool.Close()
		if _, same := simshare.SameBits(whole[n*r:], theta[n*r:]); same {
			t.Fatalf("%v: Start did not start from the sample", family)
		}
		for _, part := range []bool{false, true} {
			splits := [][]int{{0, c, n}, {0, c, 2 * c, n}}
			if part {
				splits = append(splits, []int{0, n})
			}
			for _, bounds := range splits {
				thetas, precs := shareStarts(t, d, m, part, bounds)
				for k := range thetas {
					where := fmt.Sprintf("%v (part %v), bounds %v, process %d", family, part, bounds, k)
					simshare.CheckStart(t, where, part, bounds[k], bounds[k+1], n, r, g, thetas[k], precs[k], theta, prec)
				}
			}
		}
	}
}

// TestStartCertified: Start's Newton steps that skip the line search's
// pass over the data where the bound on the logit's third derivative
// certifies the full step (certified) give the bits of the line search,
// over all the subjects and from a sample of them (the rule of many
// subjects lowered as in TestStartShareSample), for the Bernoulli data
// where it applies and the Poisson, where it does not.
func TestStartCertified(t *testing.T) {
	for _, family := range []glmm.Family{glmm.Bernoulli, glmm.Poisson} {
		d := simshare.New(family, 2*glmm.StartChunk+100, 3)
		for _, sampled := range []bool{false, true} {
			restore := func() {}
			if sampled {
				restore = glmm.SetStartSample(500, 300)
			}
			_, theta, prec := wholeStart(t, d)
			restoreCert := glmm.SetCertifySteps(false)
			_, lsTheta, lsPrec := wholeStart(t, d)
			restoreCert()
			restore()
			if i, ok := simshare.SameBits(theta, lsTheta); !ok {
				t.Errorf("%v (sampled %v): theta differs from the line search's at %d", family, sampled, i)
			}
			if i, ok := simshare.SameBits(prec, lsPrec); !ok {
				t.Errorf("%v (sampled %v): prec differs from the line search's at %d", family, sampled, i)
			}
		}
	}
}

// shareStarts computes the start of d's model m in goroutine processes
// holding the subjects between bounds, each with the whole model
// (StartShare) or, with part, a model of its own subjects alone
// (StartGroup), and returns each process's theta and prec.
func shareStarts(t *testing.T, d *simshare.Data, m *glmm.Model, part bool, bounds []int) (thetas, precs [][]float64) {
	t.Helper()
	_, r, g := m.Dims()
	groups := simshare.NewGroups(len(bounds) - 1)
	var wg sync.WaitGroup
	errs := make([]error, len(groups))
	thetas = make([][]float64, len(groups))
	precs = make([][]float64, len(groups))
	for k, grp := range groups {
		lo, hi := bounds[k], bounds[k+1]
		own := m
		if part {
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
			if part {
				errs[k] = own.StartGroup(pool, grp, thetas[k], precs[k])
			} else {
				errs[k] = own.StartShare(pool, grp, lo, hi, thetas[k], precs[k])
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	return thetas, precs
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
