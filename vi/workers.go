// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"runtime"

	"github.com/sparsevi/sparsevi/parallel"
)

// An ObsCounter reports the number of observations of a target. Targets
// that implement it (glmm.Model and rvb.Target do) let Fit size its worker
// pool by the work of a pass over the subjects rather than by their number.
type ObsCounter interface {
	NumObs() int
}

// WorkPerWorker is the work of one pass over the subjects, in observations
// times local variables (or subjects times local variables for a target
// that does not count its observations), below which an extra worker costs
// more in synchronisation than it saves. On the 2-core development machine
// two workers ran a GVA iteration of 300 Bernoulli subjects (2,100
// observations) no faster than one, and of 1,000 subjects (7,000
// observations) 1.6 times as fast (benchmarks/bench, BenchmarkIteration
// with -subjects).
const WorkPerWorker = 3000

// DefaultWorkers returns the number of workers Fit uses for target when
// Settings.Workers is 0: one per WorkPerWorker of work in a pass over the
// subjects, at least one and at most maxWorkers. Small fits then run on one
// goroutine and neither wait for nor spin on others, so that no fit is
// slower for having more cores.
func DefaultWorkers(target Target, maxWorkers int) int {
	n, r, _ := target.Dims()
	work := n * max(r, 1)
	if oc, ok := target.(ObsCounter); ok {
		work = max(work, oc.NumObs()*max(r, 1))
	}
	w := (work + WorkPerWorker - 1) / WorkPerWorker
	return max(1, min(w, maxWorkers))
}

// WorkersFor returns the number of workers Fit runs target on under the
// settings: Workers if it is positive, else DefaultWorkers with at most
// one per core and one per chunk of subjects. Work that comes before the
// fit, such as a start computed to build the target (rvb.NewAtStart),
// runs on a pool of this many workers so that Workers: 1 keeps a whole
// fit on one goroutine.
func (s Settings) WorkersFor(target Target) int {
	if s.Workers > 0 {
		return s.Workers
	}
	n, _, _ := target.Dims()
	cs := s.ChunkSize
	if cs <= 0 {
		cs = parallel.DefaultChunkSize
	}
	chunks := max(1, (n+cs-1)/cs)
	return DefaultWorkers(target, min(runtime.GOMAXPROCS(0), chunks))
}
