// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"fmt"
	"math"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/parallel"
)

// A ShareStarter is a Starter whose start several processes can compute
// together, each holding the whole target but computing its own subjects
// (glmm.Model is one): Fit uses it for a Share over a Group.
type ShareStarter interface {
	Starter
	// StartShare is Start computed for the subjects [lo, hi) alone, with
	// the sums over all subjects carried through the processes by c; it
	// sets those subjects' entries of theta and prec (laid out for the
	// whole target) and the global ones, as Start would. lo is a multiple
	// of parallel.DefaultChunkSize, and so is hi unless it is the number of
	// subjects.
	StartShare(p *parallel.Pool, c parallel.Carrier, lo, hi int, theta, prec []float64) error
}

// A GroupStarter is a Starter whose start the processes of a Group can
// compute together, each holding a target of its own subjects alone
// (glmm.Model and rvb.Target are ones): Fit uses it for InitMode over a
// Group when the target is no Share.
type GroupStarter interface {
	Starter
	// StartGroup is Start computed by all the processes together, the
	// sums over their subjects carried by c: it sets theta and prec,
	// laid out for this process's target, to what Start of the target of
	// all the processes' subjects would give these subjects and the
	// global block. Every process but the last holds a multiple of
	// parallel.DefaultChunkSize subjects.
	StartGroup(p *parallel.Pool, c parallel.Carrier, theta, prec []float64) error
}

// Starter is implemented by targets that can find a good starting point
// cheaply, such as an approximate posterior mode and the curvature there.
// Fit uses it for InitMode; targets without it start as with InitPaper.
type Starter interface {
	// Start writes a starting mean (length d = n*r + G, laid out as theta)
	// into theta, and into prec an approximate posterior precision in the
	// compressed form of package arrowhead: for each subject the packed
	// lower triangle of S_i and the G×r block S_gi, then the packed lower
	// triangle of S_g (length arrowhead.Len(n, r, G); arrowhead.WrapSym
	// reads and writes it by element). It runs its
	// parallel loops on p, whose context stops it: Fit passes its own
	// pool, so that Settings.Workers bounds the start too.
	Start(p *parallel.Pool, theta, prec []float64) error
}

// A KeptStarter is a Starter that can also give a stochastic fit
// (Stochastic) each subject's contribution to the gradient in theta_g at
// the start, the values its control variate keeps, which the fit would
// otherwise fill by a pass over the subjects before its first (fill).
// Fit asks for them where it would fill them: a stochastic fit that starts
// near the optimum, in one process.
type KeptStarter interface {
	Starter
	// StartKept is Start that also writes into kept (G values a subject)
	// each subject's contribution to the gradient of the log joint in
	// theta_g at the starting mean's theta_g, as Target.Local adds it to
	// its gradG, averaged over local draws from the start's precision
	// blocks (or such values shifted by a common amount that is zero in
	// expectation): a value whose expectation is the same for every
	// subject as that of the stochastic fit's visits at the start. It
	// reports whether it wrote them.
	StartKept(p *parallel.Pool, theta, prec, kept []float64) (bool, error)
}

// initMode starts the mean and the factor from the target's Starter, if it
// has one. The precision S is passed to set factorised, S = T T', and, if
// diag, its diagonal blocks as given: s holds each subject's packed lower
// triangle of S_i, then that of S_g (n*r(r+1)/2 + G(G+1)/2 values; nil
// without diag). Each family takes what it can represent. T is factorised in
// b.scratch when that holds arrowhead.Len(n, r, g) values (Fit lends it
// the buffer of the last good state, which it fills after the start), so
// that the start leaves no factor-sized garbage behind.
func initMode(b *base, diag bool, set func(s []float64, t *arrowhead.Factor) error) error {
	start := starterOf(b.target, b.ch, b.chunks.Size)
	if ks, ok := b.target.(KeptStarter); ok && b.kept != nil && b.ch == nil {
		start = func(p *parallel.Pool, theta, prec []float64) error {
			ok, err := ks.StartKept(p, theta, prec, b.kept)
			if !ok {
				b.kept = nil
			}
			return err
		}
	} else {
		b.kept = nil
	}
	if start == nil {
		return nil
	}
	var t *arrowhead.Factor
	if size := b.factorLen(); len(b.scratch) >= size {
		t = b.newFactor(b.scratch[:size:size])
		clear(t.Data())
	} else {
		t = b.newFactor(make([]float64, size))
	}
	if err := start(b.pool, b.lam[:b.d], t.Data()); err != nil {
		return fmt.Errorf("vi: initialisation: %w", err)
	}
	var prec []float64
	if diag {
		// The diagonal blocks alone: S_gi, G×r_i values a subject, is
		// what the factorisation overwrites that the block-diagonal
		// family never reads.
		s := arrowhead.SymOf(t)
		var nt int
		for i := range b.n {
			nt += len(s.Local(i))
		}
		prec = make([]float64, nt+len(s.Global()))
		k := 0
		for i := range b.n {
			k += copy(prec[k:], s.Local(i))
		}
		copy(prec[k:], s.Global())
	}
	// In a group, this process's failures join the sum below, so that all
	// processes fail together.
	var err error
	for j, m := range b.lam[:b.d] {
		if math.IsNaN(m) || math.IsInf(m, 0) {
			err = fmt.Errorf("vi: initialisation: entry %d of the starting mean is %v", j, m)
			break
		}
	}
	// Factorise in place, chunk by chunk, reducing sum_i T_gi T_gi' in order.
	gt := b.g * (b.g + 1) / 2
	parts := make([][]float64, b.chunks.Len())
	if err == nil {
		err = b.pool.Run(b.chunks.Len(), func(k int) error {
			lo, hi := b.chunks.Bounds(k)
			parts[k] = make([]float64, gt)
			return t.CholRange(lo, hi, t.Data(), parts[k])
		})
		if err != nil {
			err = fmt.Errorf("vi: initialisation: %w", err)
		}
	}
	if err != nil && b.ch == nil {
		return err
	}
	sum := make([]float64, gt)
	var acc []float64
	if b.ch != nil {
		acc = b.ch.begin(gt)
		copy(sum, acc[chainHead:])
	}
	if err == nil {
		for _, p := range parts {
			for j, x := range p {
				sum[j] += x
			}
		}
	}
	if b.ch != nil {
		copy(acc[chainHead:], sum)
		if err := b.ch.end(acc, err); err != nil {
			return err
		}
		copy(sum, acc[chainHead:])
	}
	if err := t.CholGlobal(t.Data(), sum); err != nil {
		return fmt.Errorf("vi: initialisation: %w", err)
	}
	if err := refineStart(b, t); err != nil {
		return err
	}
	return set(prec, t)
}

// factorLen returns the length of the arrowhead factor of the target.
func (b *base) factorLen() int {
	if sizes := blockSizes(b.target); sizes != nil {
		return arrowhead.LenVar(sizes, b.g)
	}
	return arrowhead.Len(b.n, b.r, b.g)
}

// newFactor lays the target's arrowhead factor over data.
func (b *base) newFactor(data []float64) *arrowhead.Factor {
	if sizes := blockSizes(b.target); sizes != nil {
		return arrowhead.WrapVar(sizes, b.g, data)
	}
	return arrowhead.Wrap(b.n, b.r, b.g, data)
}

// starterOf returns the start of a target for InitMode, nil if it has
// none: a Starter's Start, or for a Share the share's part of its whole
// target's, computed with the other processes of the group ch (nil alone)
// when the whole target is a ShareStarter and the chunks of size chunk
// align with its own.
func starterOf(t Target, ch *chain, chunk int) func(p *parallel.Pool, theta, prec []float64) error {
	if sh, ok := t.(*Share); ok {
		st, ok := sh.Target.(Starter)
		if !ok {
			return nil
		}
		var c parallel.Carrier
		if ss, ok := st.(ShareStarter); ok && ch != nil && chunk%parallel.DefaultChunkSize == 0 {
			c = ch.grp
			st = ss
		}
		return func(p *parallel.Pool, theta, prec []float64) error { return sh.start(st, c, p, theta, prec) }
	}
	if gs, ok := t.(GroupStarter); ok && ch != nil {
		// newShard refused chunks that do not align with the start's.
		return func(p *parallel.Pool, theta, prec []float64) error { return gs.StartGroup(p, ch.grp, theta, prec) }
	}
	if st, ok := t.(Starter); ok {
		return st.Start
	}
	return nil
}

// newFamily returns the approximation family of the settings, which have
// their defaults filled in.
func newFamily(t Target, set Settings, pool *parallel.Pool, sup *crossSupport, sh *shard) (family, error) {
	if err := set.validate(); err != nil {
		return nil, err
	}
	switch set.Method {
	case GVA:
		return newGVA(t, set, pool, sh, sup), nil
	case BlockDiag:
		return newRVB(t, set, pool, sh), nil
	}
	return nil, fmt.Errorf("vi: unknown method %v", set.Method)
}
