// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// Methods of -method.
const (
	methodAuto = "auto"
	methodGVA  = posterior.GVA
	methodRVB1 = posterior.RVB1
	methodRVB2 = posterior.RVB2
)

// Expansion points of RVB (-expansion).
const (
	// expansionStart expands the log-likelihood about the linear
	// predictor at the start's approximate posterior mode
	// (rvb.NewAtStart).
	expansionStart = posterior.AtStart
	// expansionJeffreys expands it about the paper's data-based point
	// (rvb.DefaultExpansion), as fit files without an expansion did.
	expansionJeffreys = posterior.Jeffreys
)

// approx is a fitted Gaussian approximation together with the model it
// approximates. For RVB the local blocks of the fit's mean and factor are
// the reparametrised b~_i, which package posterior maps back to b_i.
type approx struct {
	model *glmm.Model
	// res and target are the fit (its Mu and Factor are the state) and
	// what it was of, which a fit file saves (posterior.SavedFit).
	res    *vi.Result
	target vi.Target
	// corr is the fit's importance correction of theta_g where it can be
	// trusted (-correct), which predictions are drawn from; nil otherwise.
	corr *posterior.GlobalImportance
}

// newStartPool returns the pool of a start that the processes of an MPI
// job compute together: it finishes what it starts, so that a signal stops
// them together at the fit's first sum.
func newStartPool(ctx context.Context, threads int, m *glmm.Model) *parallel.Pool {
	return parallel.NewPollingPool(context.WithoutCancel(ctx), vi.Settings{Workers: threads}.WorkersFor(m))
}

// newTarget returns the vi target and vi method of the named method, RVB
// expanded about the named point (posterior.NewTarget), and the RVB target
// (nil for GVA). RVB's start runs on as many workers as the fit will
// (threads as -threads).
//
// In an MPI job the processes compute RVB's start together, each its
// share of the subjects (rvb.NewShareAtStart; with shard, m holds the
// process's subjects alone: rvb.NewGroupAtStart), on a pool that finishes
// what it starts: a signal stops them together at the fit's first sum.
func newTarget(ctx context.Context, procs processes, shard bool, threads int, method, expansion string, m *glmm.Model) (vi.Target, vi.Method, *rvb.Target, error) {
	if procs != nil && procs.Size() > 1 && method != methodGVA && expansion == expansionStart {
		pool := newStartPool(ctx, threads, m)
		defer pool.Close()
		meth := rvb.RVB1
		if method == methodRVB2 {
			meth = rvb.RVB2
		}
		if shard {
			// m holds this process's subjects alone.
			t, err := rvb.NewGroupAtStart(pool, procs, m, meth)
			if err != nil {
				return nil, 0, nil, err
			}
			return t, vi.BlockDiag, t, nil
		}
		n, _, _ := m.Dims()
		bounds, err := shareBounds(procs, n)
		if err != nil {
			return nil, 0, nil, err
		}
		k := procs.Rank()
		t, err := rvb.NewShareAtStart(pool, procs, bounds[k], bounds[k+1], m, meth)
		if err != nil {
			return nil, 0, nil, err
		}
		return t, vi.BlockDiag, t, nil
	}
	pool := parallel.NewPollingPool(ctx, vi.Settings{Workers: threads}.WorkersFor(m))
	t, vm, err := posterior.NewTarget(pool, m, method, expansion)
	pool.Close()
	if err != nil {
		return nil, 0, nil, err
	}
	rt, _ := t.(*rvb.Target)
	return t, vm, rt, nil
}

// sampleStart reports whether a fit of n subjects builds its RVB target
// at the start of a sample of the subjects (newSampleTarget): a -batch
// fit of an RVB method expanded at the start, unless -out saves it, since
// a fit file records the expansion at the full start, which loading it
// computes again; and only below glmm.SampleStartSubjects, from where the
// model's own start runs over a sample: cheaper, and where the full
// batch starts. At 10^6 Bernoulli subjects the stochastic fit from the
// model's start ended within 0.008 sds of the full batch (target built in
// 7.3 s), from newSampleTarget's 0.21 sds (10.4 s), its bound 9 nats
// lower (go run ./benchmarks/svi -n 1000000 -batch 100000 -targets rvb1
// -start, -sample -1 against -sample 0).
func sampleStart(o *fitOptions, method, expansion string, n int) bool {
	return o.batch > 0 && method != methodGVA && expansion == expansionStart && o.out == "" && n < glmm.SampleStartSubjects
}

// newSampleTarget is newTarget for a -batch fit (sampleStart): the RVB
// target of the named method expanded at the start of a sample of the
// subjects, corrected over all of them (rvb.NewAtSampleStart, its
// default size, the sample drawn from seed), which costs a fraction of
// the model's start over all of them. It returns the sample's size too,
// 0 when the sample is every subject (the target is then newTarget's).
func newSampleTarget(ctx context.Context, threads int, method string, seed uint64, m *glmm.Model) (vi.Target, vi.Method, *rvb.Target, int, error) {
	meth := rvb.RVB1
	if method == methodRVB2 {
		meth = rvb.RVB2
	}
	n, _, _ := m.Dims()
	size := glmm.DefaultSampleSize(n)
	if size >= n {
		size = 0
	}
	pool := parallel.NewPollingPool(ctx, vi.Settings{Workers: threads}.WorkersFor(m))
	defer pool.Close()
	t, err := rvb.NewAtSampleStart(pool, m, meth, 0, seed)
	if err != nil {
		return nil, 0, nil, 0, err
	}
	return t, vi.BlockDiag, t, size, nil
}
