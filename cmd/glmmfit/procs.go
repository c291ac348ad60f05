// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/atomicfile"
	"github.com/sparsevi/sparsevi/mpi"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/vi"
)

// processes is the MPI job glmmfit runs in (see mpi_on.go): each process
// fits its share of the subjects, and the first writes the results.
type processes interface {
	vi.Group
	// Allgatherv collects src of every process, counts[r] values from
	// process r, into dst of every process, in rank order.
	Allgatherv(dst, src []float64, counts []int) error
	// Exchanges returns the number of sums exchanged and the time this
	// process spent in them.
	Exchanges() (sums int, spent time.Duration)
}

// launchedProcesses returns the number of processes mpirun or another PMI
// launcher says it started, 0 if none says, and unknownProcesses where a
// launcher may have started several without saying how many to MPI's
// knowledge: a PMIx rank alone (srun --mpi=pmix), or Slurm's count of a
// step's tasks, which glmmfit does not take for the number of MPI
// processes (MPI then tells it).
func launchedProcesses() int {
	for _, v := range []string{"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"} {
		if n, err := strconv.Atoi(os.Getenv(v)); err == nil && n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(os.Getenv("SLURM_STEP_NUM_TASKS")); err == nil && n > 1 || os.Getenv("PMIX_RANK") != "" {
		return unknownProcesses
	}
	return 0
}

// unknownProcesses is launchedProcesses's count when a launcher says it
// started this process but not how many others.
const unknownProcesses = -1

// checkProcesses refuses, in the words of the command line, a fit that
// does not run as several processes, before any work is shared.
func checkProcesses(procs processes, m *glmm.Model, o *fitOptions) error {
	if procs == nil || procs.Size() < 2 {
		return nil
	}
	if o.optimizer == "vogn" {
		return fmt.Errorf("-optimizer vogn does not run as several processes (mpirun -np %d); use the default, snngm, or run glmmfit alone", procs.Size())
	}
	if m.NumCrossed() > 0 {
		name, _, _, _ := m.CrossedFactor(0)
		return fmt.Errorf("crossed random effects (1 | %s) do not run as several processes (mpirun -np %d) yet; run glmmfit alone", name, procs.Size())
	}
	return nil
}

// shareBounds returns the subjects of each process: process r holds
// [bounds[r], bounds[r+1]), whole chunks of the default size.
func shareBounds(procs processes, n int) ([]int, error) {
	bounds, err := mpi.SubjectBounds(n, parallel.DefaultChunkSize, procs.Size())
	if err != nil {
		return nil, fmt.Errorf("%d processes need at least %d subjects (%d per process, a chunk); the data have %d", procs.Size(), (procs.Size()-1)*parallel.DefaultChunkSize+1, parallel.DefaultChunkSize, n)
	}
	return bounds, nil
}

// share is this process's share of a fit over several processes.
type share struct {
	procs  processes
	bounds []int // process r holds the subjects [bounds[r], bounds[r+1])
	whole  vi.Target
}

// shareTarget returns the target this process fits: its share of whole,
// with the settings' Group set, or whole itself in one process.
func shareTarget(procs processes, whole vi.Target, set *vi.Settings) (vi.Target, *share, error) {
	if procs == nil || procs.Size() < 2 {
		return whole, nil, nil
	}
	n, _, _ := whole.Dims()
	bounds, err := shareBounds(procs, n)
	if err != nil {
		return nil, nil, err
	}
	r := procs.Rank()
	t, err := vi.NewShare(whole, bounds[r], bounds[r+1])
	if err != nil {
		return nil, nil, err
	}
	set.Group = procs
	return t, &share{procs: procs, bounds: bounds, whole: whole}, nil
}

// gather returns the result of the whole fit from this process's: every
// process's subjects' means and factor blocks, in rank order, then the
// global block, as one process would have it.
func (s *share) gather(res *vi.Result) (*vi.Result, error) {
	n := s.bounds[len(s.bounds)-1]
	own := s.bounds[s.procs.Rank()+1] - s.bounds[s.procs.Rank()]
	r, g := res.R, res.G
	globalFactor := g * (g + 1) / 2
	stride := (len(res.Factor) - globalFactor) / own
	gatherPart := func(src []float64, per int, tail []float64) ([]float64, error) {
		counts := make([]int, len(s.bounds)-1)
		for k := range counts {
			counts[k] = (s.bounds[k+1] - s.bounds[k]) * per
		}
		dst := make([]float64, n*per, n*per+len(tail))
		if err := s.procs.Allgatherv(dst, src, counts); err != nil {
			return nil, err
		}
		return append(dst, tail...), nil
	}
	out := *res
	var err error
	if out.Mu, err = gatherPart(res.Mu[:own*r], r, res.Mu[own*r:]); err != nil {
		return nil, fmt.Errorf("gathering the fit from the processes: %v", err)
	}
	if out.Factor, err = gatherPart(res.Factor[:own*stride], stride, res.Factor[own*stride:]); err != nil {
		return nil, fmt.Errorf("gathering the fit from the processes: %v", err)
	}
	out.N = n
	return &out, nil
}

// checkpointFile returns this process's file of a -checkpoint or -resume
// path: the path itself alone, path.RANK in an MPI job.
func checkpointFile(path string, procs processes) string {
	if procs == nil || procs.Size() < 2 {
		return path
	}
	return fmt.Sprintf("%s.%d", path, procs.Rank())
}

// setCheckpoints sets the fit's checkpoints from -checkpoint and its start
// from -resume.
func setCheckpoints(set *vi.Settings, o *fitOptions, procs processes) error {
	if o.resume != "" {
		path := checkpointFile(o.resume, procs)
		f, err := os.Open(path)
		if err != nil {
			return fmt.Errorf("-resume: %v", err)
		}
		defer f.Close()
		ck, err := vi.ReadCheckpoint(bufio.NewReader(f))
		if err != nil {
			return fmt.Errorf("-resume %s: not a checkpoint that glmmfit wrote (%v)", path, err)
		}
		set.Resume = ck
	}
	if o.checkpoint != "" {
		path := checkpointFile(o.checkpoint, procs)
		set.CheckpointEvery = o.checkpointEvery
		set.Checkpoint = func(ck *vi.Checkpoint) error {
			f, err := atomicfile.Create(path)
			if err != nil {
				return err
			}
			w := bufio.NewWriter(f)
			if _, err := ck.WriteTo(w); err != nil {
				f.Abort()
				return err
			}
			if err := w.Flush(); err != nil {
				f.Abort()
				return err
			}
			return f.Commit()
		}
	}
	return nil
}
