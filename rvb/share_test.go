// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/simshare"
	"github.com/sparsevi/sparsevi/parallel"
)

// TestShareAtStart builds the Target in goroutine processes and asks for
// the bits of NewAtStart's: the expansion of each process's rows, and the
// start of each process's subjects and of the global block against
// Start's. Each process holds either the whole model and its share of the
// subjects (NewShareAtStart, StartShare; 2 and 3 processes) or a model of
// its own subjects alone (NewGroupAtStart, StartGroup; 1, 2 and 3).
func TestShareAtStart(t *testing.T) {
	const c = glmm.StartChunk
	for _, part := range []bool{false, true} {
		for _, method := range []Method{RVB1, RVB2} {
			for _, family := range []glmm.Family{glmm.Bernoulli, glmm.Poisson} {
				d := simshare.New(family, 2*c+90, 5)
				m, whole, theta, prec := wholeStart(t, d, method)
				n := m.NumSubjects()
				splits := [][]int{{0, c, n}, {0, c, 2 * c, n}}
				if part {
					splits = append(splits, []int{0, n})
				}
				for _, bounds := range splits {
					shareStarts(t, d, part, method, bounds, m, whole, theta, prec)
				}
			}
		}
	}
}

// TestShareAtStartWide is TestShareAtStart for the start from
// startWideSubjects subjects on (lowered here), whose curvature comes from
// every startSampleStride-th chunk of subjects, counted over all the
// processes: 12 chunks of subjects and more, so that processes hold
// sampled chunks after the first.
func TestShareAtStartWide(t *testing.T) {
	const c = glmm.StartChunk
	prev := startWideSubjects
	startWideSubjects = 100
	defer func() { startWideSubjects = prev }()
	for _, part := range []bool{false, true} {
		for _, family := range []glmm.Family{glmm.Bernoulli, glmm.Poisson} {
			d := simshare.New(family, 12*c+90, 5)
			m, whole, theta, prec := wholeStart(t, d, RVB1)
			n := m.NumSubjects()
			for _, bounds := range [][]int{{0, 5 * c, n}, {0, 3 * c, 11 * c, n}} {
				shareStarts(t, d, part, RVB1, bounds, m, whole, theta, prec)
			}
		}
	}
}

// shareStarts starts the Target of d's subjects split at bounds, each
// process holding the whole model or (part) its own subjects, and checks
// each against the whole Target's start (theta, prec) and expansion.
func shareStarts(t *testing.T, d *simshare.Data, part bool, method Method, bounds []int, m *glmm.Model, whole *Target, theta, prec []float64) {
	t.Helper()
	n, r, g := m.Dims()
	groups := simshare.NewGroups(len(bounds) - 1)
	targets := make([]*Target, len(groups))
	thetas := make([][]float64, len(groups))
	precs := make([][]float64, len(groups))
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for k, grp := range groups {
		lo, hi := bounds[k], bounds[k+1]
		own, err := d.Model(0, d.N) // each process its own model
		if part {
			own, err = d.Model(lo, hi)
		}
		if err != nil {
			t.Fatal(err)
		}
		on := own.NumSubjects()
		thetas[k] = make([]float64, on*r+g)
		precs[k] = make([]float64, arrowhead.Len(on, r, g))
		wg.Go(func() {
			pool := parallel.NewPool(context.Background(), 1)
			defer pool.Close()
			if part {
				if targets[k], errs[k] = NewGroupAtStart(pool, grp, own, method); errs[k] == nil {
					errs[k] = targets[k].StartGroup(pool, grp, thetas[k], precs[k])
				}
				return
			}
			if targets[k], errs[k] = NewShareAtStart(pool, grp, lo, hi, own, method); errs[k] == nil {
				errs[k] = targets[k].StartShare(pool, grp, lo, hi, thetas[k], precs[k])
			}
		})
	}
	wg.Wait()
	for k := range groups {
		if errs[k] != nil {
			t.Fatal(errs[k])
		}
		lo, hi := bounds[k], bounds[k+1]
		where := fmt.Sprintf("%v %v, part %v, bounds %v, process %d", method, m.Family(), part, bounds, k)
		hw, qw := whole.hw, whole.qw
		if part {
			first, _ := m.SubjectRows(lo)
			_, last := m.SubjectRows(hi - 1)
			hw, qw = hw[first:last], qw[first:last]
		}
		for _, e := range []struct {
			what      string
			got, want []float64
		}{{"expansion weights", targets[k].hw, hw}, {"expansion offsets", targets[k].qw, qw}} {
			if i, ok := simshare.SameBits(e.got, e.want); !ok {
				t.Fatalf("%s: %s differ at %d", where, e.what, i)
			}
		}
		simshare.CheckStart(t, where, part, lo, hi, n, r, g, thetas[k], precs[k], theta, prec)
	}
}

// wholeStart returns the model of all of d's subjects, its Target by
// NewAtStart and the Target's Start.
func wholeStart(t *testing.T, d *simshare.Data, method Method) (m *glmm.Model, whole *Target, theta, prec []float64) {
	t.Helper()
	m, err := d.Model(0, d.N)
	if err != nil {
		t.Fatal(err)
	}
	n, r, g := m.Dims()
	pool := parallel.NewPool(context.Background(), 2)
	defer pool.Close()
	if whole, err = NewAtStart(pool, m, method); err != nil {
		t.Fatal(err)
	}
	theta = make([]float64, n*r+g)
	prec = make([]float64, arrowhead.Len(n, r, g))
	if err := whole.Start(pool, theta, prec); err != nil {
		t.Fatal(err)
	}
	return m, whole, theta, prec
}

// TestSummarizeGroup summarises a block-diagonal fit in 1, 2 and 3
// goroutine processes, each holding a Target of its own subjects alone,
// and asks for the bits of the whole Target's Summarize: each process's
// subjects' means and sds, the global ones, and the number of draws, which
// the subjects of other processes may decide.
func TestSummarizeGroup(t *testing.T) {
	for _, method := range []Method{RVB1, RVB2} {
		d := simshare.New(glmm.Poisson, 600, 4)
		m, err := d.Model(0, d.N)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := New(m, method)
		if err != nil {
			t.Fatal(err)
		}
		n, r, g := whole.Dims()
		rng := rand.New(rand.NewPCG(3, 4))
		mu := make([]float64, n*r+g)
		for k := range mu {
			mu[k] = 0.3 * rng.NormFloat64()
		}
		factor := make([]float64, blockdiag.Len(n, r, g))
		c := blockdiag.Wrap(n, r, g, factor)
		for i := range n {
			ci := c.Local(i)
			for a := range r {
				ci[a*(a+1)/2+a] = 0.3 + 0.5*rng.Float64()
			}
		}
		for a := range g {
			c.Global()[a*(a+1)/2+a] = 0.1
		}
		const maxDraws = 400
		want, err := whole.Summarize(context.Background(), 0, mu, factor, maxDraws, 5)
		if err != nil {
			t.Fatal(err)
		}
		localLen := blockdiag.Len(1, r, 0)
		for _, bounds := range [][]int{{0, n}, {0, 200, n}, {0, 100, 350, n}} {
			groups := simshare.NewGroups(len(bounds) - 1)
			got := make([]*Summary, len(groups))
			errs := make([]error, len(groups))
			var wg sync.WaitGroup
			for k, grp := range groups {
				lo, hi := bounds[k], bounds[k+1]
				part, err := d.Model(lo, hi)
				if err != nil {
					t.Fatal(err)
				}
				tk, err := New(part, method)
				if err != nil {
					t.Fatal(err)
				}
				muK := append(slices.Clone(mu[lo*r:hi*r]), mu[n*r:]...)
				factorK := append(slices.Clone(factor[lo*localLen:hi*localLen]), factor[n*localLen:]...)
				wg.Go(func() {
					got[k], errs[k] = tk.SummarizeGroup(context.Background(), grp, 0, muK, factorK, maxDraws, 5)
				})
			}
			wg.Wait()
			for k, s := range got {
				if errs[k] != nil {
					t.Fatal(errs[k])
				}
				lo, hi := bounds[k], bounds[k+1]
				where := fmt.Sprintf("%v, bounds %v, process %d", method, bounds, k)
				if s.Draws != want.Draws {
					t.Fatalf("%s: %d draws, want %d", where, s.Draws, want.Draws)
				}
				for _, e := range []struct {
					what      string
					got, want []float64
				}{
					{"local means", s.LocalMean, want.LocalMean[lo*r : hi*r]},
					{"local sds", s.LocalSD, want.LocalSD[lo*r : hi*r]},
					{"global means and sds", append(slices.Clone(s.GlobalMean), s.GlobalSD...), append(slices.Clone(want.GlobalMean), want.GlobalSD...)},
					{"largest error", []float64{s.MaxRelMCSE}, []float64{want.MaxRelMCSE}},
				} {
					if i, ok := simshare.SameBits(e.got, e.want); !ok {
						t.Fatalf("%s: %s differ at %d", where, e.what, i)
					}
				}
			}
		}
		t.Logf("%v: %d draws, largest relative error %.3f", method, want.Draws, want.MaxRelMCSE)
	}
}

// TestShareAtStartStopped builds the Targets of three goroutine processes
// together, then cancels one process's pool before their shared
// StartGroup or StartShare, whose Schur complement passes the global block
// from process to process, and asks that all of them return.
func TestShareAtStartStopped(t *testing.T) {
	d := simshare.New(glmm.Poisson, 2*glmm.StartChunk+90, 5)
	simshare.CheckStopped(t, d.N, func(part bool, lo, hi int, grp *simshare.Group) (simshare.Starter, error) {
		pool := parallel.NewPool(context.Background(), 1)
		defer pool.Close()
		if part {
			own, err := d.Model(lo, hi)
			if err != nil {
				return nil, err
			}
			return NewGroupAtStart(pool, grp, own, RVB1)
		}
		whole, err := d.Model(0, d.N)
		if err != nil {
			return nil, err
		}
		return NewShareAtStart(pool, grp, lo, hi, whole, RVB1)
	})
}
