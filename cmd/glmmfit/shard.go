// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// A fit with -shard runs in an MPI job whose processes each keep the rows
// of their own subjects alone (formula.Options.Part): each fits a model
// of its share (glmm.Model.StartGroup and rvb.NewGroupAtStart start them
// together), summarises its own subjects, and passes on what the first
// process needs to report the whole fit: the counts and constants of the
// data, the checks of the data that span every subject, and each
// subject's summaries.

// sharded reports whether the fit runs with -shard in an MPI job of
// several processes.
func sharded(procs processes, o *fitOptions) bool {
	return o.shard && procs != nil && procs.Size() > 1
}

// partOf returns the formula.Options.Part of this process: its share of
// the subjects by shareBounds.
func partOf(procs processes) func(n int) (lo, hi int, err error) {
	return func(n int) (int, int, error) {
		bounds, err := shareBounds(procs, n)
		if err != nil {
			return 0, 0, err
		}
		r := procs.Rank()
		return bounds[r], bounds[r+1], nil
	}
}

// wholeData is what the first process of a -shard fit reports of all the
// processes' data: what one process holding them would read off its
// model.
type wholeData struct {
	subjects, observations int
	dataConstant           float64 // glmm.Model.DataConstant's bits
	constant               string  // constantResponse's, "" if not constant
	flat                   []string
}

// shareData passes the counts, the data constant and the data's checks of
// every process's model m through the processes in rank order, and
// returns what all of them add up to.
func shareData(procs processes, m *glmm.Model) (*wholeData, error) {
	r := m.R()
	// Counts, the data constant carried subject by subject, then the
	// number of processes whose response is all 0, all successes, and
	// whose each random effect does not vary within a subject.
	acc := make([]float64, 5+r)
	if err := procs.Receive(acc); err != nil {
		return nil, err
	}
	n, _, _ := m.Dims()
	acc[0] += float64(n)
	acc[1] += float64(m.NumObs())
	acc[2] = m.DataConstantFrom(acc[2])
	zero, full := responseIs(m)
	if zero {
		acc[3]++
	}
	if full {
		acc[4]++
	}
	flat := flatRandomEffects(m)
	for a, name := range m.RandomNames() {
		if slices.Contains(flat, name) {
			acc[5+a]++
		}
	}
	if err := procs.Pass(acc); err != nil {
		return nil, err
	}
	all := float64(procs.Size())
	w := &wholeData{subjects: int(acc[0]), observations: int(acc[1]), dataConstant: acc[2]}
	switch {
	case acc[3] == all:
		w.constant = "0"
	case acc[4] == all:
		w.constant = "a success"
	}
	for a, name := range m.RandomNames() {
		if acc[5+a] == all {
			w.flat = append(w.flat, name)
		}
	}
	return w, nil
}

// summarizeShare returns the summaries of this process's share of a
// -shard fit, with every process's subjects gathered in rank order.
func summarizeShare(ctx context.Context, procs processes, res *vi.Result, t vi.Target, m *glmm.Model, levels []string, bounds []int, draws int, seed uint64) (*posterior.Summary, error) {
	s, err := posterior.SummarizeFitGroup(ctx, procs, res, t, m, draws, seed)
	if err != nil {
		if errors.Is(err, context.Canceled) {
			// Every process stops its summaries together.
			err = fmt.Errorf("%w: %w", err, errSummariesStopped)
		}
		return nil, err
	}
	r := m.R()
	own := make([]float64, 0, 2*r*len(s.Subjects))
	for _, e := range s.Subjects {
		own = append(own, e.Mean...)
		own = append(own, e.SD...)
	}
	counts := make([]int, len(bounds)-1)
	for k := range counts {
		counts[k] = 2 * r * (bounds[k+1] - bounds[k])
	}
	all := make([]float64, 2*r*bounds[len(bounds)-1])
	if err := procs.Allgatherv(all, own, counts); err != nil {
		return nil, fmt.Errorf("gathering the summaries from the processes: %v", err)
	}
	s.Subjects = make([]posterior.SubjectEffects, len(levels))
	for i := range s.Subjects {
		v := all[2*r*i : 2*r*(i+1)]
		s.Subjects[i] = posterior.SubjectEffects{Level: levels[i], Mean: v[:r:r], SD: v[r:]}
	}
	return s, nil
}

// errSummariesStopped marks the summaries of a -shard fit stopped in some
// process by a signal or the time limit, which all the processes see.
var errSummariesStopped = errors.New("the summaries were stopped")

// scope is what a correction of q runs over: the subjects and
// observations of all the processes, and with -shard their group and each
// process's first subject (bounds, the last entry the number of
// subjects).
type scope struct {
	n, nobs int
	grp     processes
	bounds  []int
}

// aloneScope is the scope of a fit in one process, or of one without
// -shard.
func aloneScope(m *glmm.Model) scope {
	n, _, _ := m.Dims()
	return scope{n: n, nobs: m.NumObs()}
}

// shardScope is the scope of a -shard fit of all the processes' data.
func shardScope(procs processes, whole *wholeData) (scope, error) {
	bounds, err := shareBounds(procs, whole.subjects)
	if err != nil {
		return scope{}, err
	}
	return scope{n: whole.subjects, nobs: whole.observations, grp: procs, bounds: bounds}, nil
}

// gather replaces the correction's moments of this process's subjects (r
// random effects each) by those of every process's, in rank order.
func (sc scope) gather(imp *posterior.GlobalImportance, r int) error {
	k := len(sc.bounds) - 1
	for _, part := range []struct {
		vals  *[]float64
		width int
	}{{&imp.LocalMean, r}, {&imp.LocalCov, r * r}} {
		counts := make([]int, k)
		for q := range counts {
			counts[q] = part.width * (sc.bounds[q+1] - sc.bounds[q])
		}
		all := make([]float64, part.width*sc.n)
		if err := sc.grp.Allgatherv(all, *part.vals, counts); err != nil {
			return err
		}
		*part.vals = all
	}
	return nil
}
