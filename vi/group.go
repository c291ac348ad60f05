// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"errors"
	"fmt"

	"github.com/sparsevi/sparsevi/parallel"
)

// A Group joins the processes that share one fit, each holding some of the
// subjects: a fit over several machines (package mpi provides a Group over
// MPI). Set Settings.Group to it in every process.
//
// Each process passes Fit its own Target over its own subjects, and the same
// Settings. The subjects of the fit are those of all the processes in rank
// order: process r's follow those of processes 0..r-1. Every process but the
// last holds a whole number of chunks (a multiple of Settings.ChunkSize
// subjects), so that the chunks, and with them the random streams and the
// order of every sum, are those of one process holding all the subjects:
// the fit is bit-identical to that one for any number of processes and
// workers.
//
// Each sum over the subjects is carried through the processes in rank
// order: a process receives the running sums of the processes before it,
// adds its own chunks' partial sums in chunk order, exactly as one process
// would, and passes them on; the last process's values go to all. One sum
// costs Size()-1 messages in sequence and a broadcast, each of at most
// 2G+5 values, and a GVA iteration by the default rule takes four.
//
// At InitMode the processes start together: a Share from its whole
// target's start, a target of the process's subjects alone through its
// StartGroup (GroupStarter); other Starters are refused, as their start
// would be their own subjects' alone.
//
// Every decision of the fit (a target's failure, a step's safeguard,
// convergence, the time limit, cancellation) rides on these sums, so that
// all processes take it together. A process whose context is cancelled
// stops the others at the next sum: they end with Status Cancelled and
// ErrGroupStopped.
type Group interface {
	// Rank returns this process's index in [0, Size()).
	Rank() int
	// Size returns the number of processes.
	Size() int
	// Receive overwrites acc with the values the process before this one
	// passed on; the first process leaves acc as it is.
	Receive(acc []float64) error
	// Pass hands acc to the next process, then overwrites acc with the
	// values the last process passed, so that every process ends with the
	// same values. All processes call Receive and Pass alternately, in the
	// same sequence, with slices of the same length.
	Pass(acc []float64) error
}

// ErrGroupStopped is the error of a fit over a Group that another process
// stopped: its context was cancelled.
var ErrGroupStopped = errors.New("vi: another process of the group stopped the fit")

// A ProcessError reports that the target of another process of a Group
// failed; that process's own error names the subject.
type ProcessError struct {
	Rank int // the first process, in rank order, whose target failed
}

func (e *ProcessError) Error() string {
	return fmt.Sprintf("vi: the target of process %d failed", e.Rank)
}

// Slots of a chain's values ahead of the sums.
const (
	slotStop   = iota // 1 if a process's context ended
	slotFailed        // 1 + the first rank whose target failed, or 0
	chainHead
)

// chain carries sums over the subjects through the processes of a group.
// The sums start in the values after chainHead; the head holds the flags by
// which all processes agree to stop.
type chain struct {
	grp  Group
	ctx  context.Context
	rank int
	last bool // the process holds the last chunk
	buf  []float64
	err  error // the group's own failure, which ends the fit
}

func newChain(ctx context.Context, grp Group, width int) *chain {
	return &chain{grp: grp, ctx: ctx, rank: grp.Rank(), last: grp.Rank() == grp.Size()-1,
		buf: make([]float64, chainHead+width)}
}

// begin returns the running values of a sum of width values, as received
// from the process before: the sums are in acc[chainHead:].
func (c *chain) begin(width int) []float64 {
	if cap(c.buf) < chainHead+width {
		c.buf = make([]float64, chainHead+width)
	}
	acc := c.buf[:chainHead+width]
	clear(acc)
	if c.err == nil {
		if err := c.grp.Receive(acc); err != nil {
			c.err = &groupFailure{err}
		}
	}
	return acc
}

// end passes acc on, this process's error err recorded in it, and sets it
// to the group's final values. It returns the group's own failure, err if
// this process's target failed, a *ProcessError if another's did, and
// ErrGroupStopped (or the context's error) if any process was cancelled.
func (c *chain) end(acc []float64, err error) error {
	if c.ctx.Err() != nil {
		acc[slotStop] = 1
	}
	if err != nil && acc[slotFailed] == 0 {
		acc[slotFailed] = float64(c.rank + 1)
	}
	if c.err == nil {
		if err := c.grp.Pass(acc); err != nil {
			c.err = &groupFailure{err}
		}
	}
	switch {
	case c.err != nil:
		return c.err
	case acc[slotStop] != 0:
		if e := c.ctx.Err(); e != nil {
			return e
		}
		return ErrGroupStopped
	case acc[slotFailed] != 0:
		if err != nil {
			return err
		}
		return &ProcessError{Rank: int(acc[slotFailed]) - 1}
	}
	return nil
}

// agree returns whether any process has flag set.
func (c *chain) agree(flag bool) (bool, error) {
	acc := c.begin(1)
	if flag {
		acc[chainHead] = 1
	}
	err := c.end(acc, nil)
	return acc[chainHead] != 0, err
}

// groupFailure is the failure of a Group's exchange, which ends the fit.
type groupFailure struct{ err error }

func (e *groupFailure) Error() string { return "vi: group: " + e.err.Error() }
func (e *groupFailure) Unwrap() error { return e.err }

// fatal reports whether an error of the target's evaluation ends the fit
// rather than counting as a failed step: a cancellation or the group's
// failure.
func fatal(err error) bool {
	var gf *groupFailure
	return stopped(err) || errors.As(err, &gf)
}

// stopped reports whether the error ends a fit as a cancellation.
func stopped(err error) bool {
	return errors.Is(err, ErrGroupStopped) || errors.Is(err, parallel.ErrProcessStopped) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// shard is this process's share of a fit over a Group.
type shard struct {
	ch         *chain
	firstChunk int // this process's first chunk among all
	chunks     int // every process's chunks
	n, nobs    int // every process's subjects and observations
}

// newShard checks that the processes of set.Group hold compatible targets,
// each but the last a whole number of chunks, and returns this process's
// place among them. partial is the target's count of global variables
// outside some subject's support (newCrossSupport).
func newShard(ctx context.Context, set Settings, target Target, partial int) (*shard, error) {
	grp := set.Group
	size, rank := grp.Size(), grp.Rank()
	if size < 1 || rank < 0 || rank >= size {
		return nil, fmt.Errorf("vi: group of %d processes gives this one rank %d", size, rank)
	}
	// Refusals that depend only on the settings and the target's kind are
	// the same in every process: each returns before any exchange.
	if _, ok := set.Rule.(VOGN); ok {
		return nil, fmt.Errorf("vi: %w: Settings.Rule is VOGN, which does not run over a Group; use a gradient rule such as Snngm", ErrSettings)
	}
	cs := set.ChunkSize
	if cs <= 0 {
		cs = parallel.DefaultChunkSize
	}
	if _, ok := target.(Starter); ok && set.Init == InitMode {
		// A Share is no Starter: Fit starts it from its whole target.
		_, group := target.(GroupStarter)
		switch {
		case !group:
			return nil, fmt.Errorf("vi: %w: Settings.Init is InitMode, and the target's start is its own subjects' alone; use InitPaper, a GroupStarter, or a Share of the whole target", ErrSettings)
		case cs%parallel.DefaultChunkSize != 0:
			return nil, fmt.Errorf("vi: %w: Settings.ChunkSize %d with InitMode over a Group: the start's chunks are of %d subjects; use a multiple of it", ErrSettings, cs, parallel.DefaultChunkSize)
		}
	}
	n, r, g := target.Dims()
	nobs := n
	if no, ok := target.(NumObser); ok {
		nobs = no.NumObs()
	}
	const (
		sChunks = iota
		sN
		sObs
		sR
		sG
		sBad  // 1 + the first rank at fault
		sWhy  // what is wrong there
		width // values exchanged
	)
	const (
		whyEmpty = iota + 1
		whyChunks
		whyDims
		whySupport
	)
	// The widest sum is reduce's.
	ch := newChain(ctx, grp, max(width, 3+2*g))
	acc := ch.begin(width)
	v := acc[chainHead:]
	first := int(v[sChunks])
	if rank == 0 {
		v[sR], v[sG] = float64(r), float64(g)
	}
	var why float64
	switch {
	case n < 1:
		why = whyEmpty
	case rank < size-1 && n%cs != 0:
		why = whyChunks
	case float64(r) != v[sR] || float64(g) != v[sG]:
		why = whyDims
	case partial > 0:
		why = whySupport
	}
	if why != 0 && v[sBad] == 0 {
		v[sBad], v[sWhy] = float64(rank+1), why
	}
	v[sChunks] += float64((n + cs - 1) / cs)
	v[sN] += float64(n)
	v[sObs] += float64(nobs)
	if err := ch.end(acc, nil); err != nil {
		return nil, err
	}
	if bad := int(v[sBad]) - 1; bad >= 0 {
		switch v[sWhy] {
		case whyEmpty:
			return nil, fmt.Errorf("vi: process %d of the group holds no subjects", bad)
		case whyChunks:
			return nil, fmt.Errorf("vi: process %d of the group holds a number of subjects that is not a multiple of the chunk size %d; every process but the last must hold whole chunks", bad, cs)
		case whyDims:
			return nil, fmt.Errorf("vi: process %d of the group has a target whose local or global block differs in size from process 0's", bad)
		default:
			return nil, fmt.Errorf("vi: process %d of the group has a target whose subjects depend on parts of the global block (GlobalSupporter), which does not run over a Group yet", bad)
		}
	}
	return &shard{ch: ch, firstChunk: first, chunks: int(v[sChunks]), n: int(v[sN]), nobs: int(v[sObs])}, nil
}

// free returns the number of free variational parameters over all the
// processes, fam being this process's family over localN subjects: the
// global ones are counted once.
func (sh *shard) free(fam family) (int, error) {
	acc := sh.ch.begin(1)
	acc[chainHead] += float64(fam.free() - fam.globalLen())
	if err := sh.ch.end(acc, nil); err != nil {
		return 0, err
	}
	return int(acc[chainHead]) + fam.globalLen(), nil
}
