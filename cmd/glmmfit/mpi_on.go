// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build mpi && cgo

package main

import (
	"fmt"
	"runtime"

	"github.com/sparsevi/sparsevi/mpi"
)

// mpiGroup is MPI_COMM_WORLD as glmmfit's processes.
type mpiGroup struct{ *mpi.Group }

func (mpiGroup) Allgatherv(dst, src []float64, counts []int) error {
	return mpi.Allgatherv(dst, src, counts)
}

// startProcesses joins the MPI job when a launcher started several
// processes, from main's goroutine, which it locks to its thread: every
// MPI call of the run comes from it. finish ends MPI given the run's exit
// code: a process that failed (exitFail, exitUsage) aborts the job, as the
// others may be waiting for it (-resume FILE.1 missing left process 0
// waiting for ever at the fit's first sum); the others finalise.
func startProcesses() (procs processes, finish func(code int), err error) {
	if n := launchedProcesses(); n < 2 && n != unknownProcesses {
		return nil, func(int) {}, nil
	}
	runtime.LockOSThread()
	if err := mpi.Init(); err != nil {
		return nil, func(int) {}, fmt.Errorf("joining the MPI job: %v", err)
	}
	g, err := mpi.NewGroup()
	if err != nil {
		mpi.Finalize()
		return nil, func(int) {}, fmt.Errorf("joining the MPI job: %v", err)
	}
	if g.Size() < 2 {
		// A launcher that did not say how many it started, one.
		return nil, func(int) { mpi.Finalize() }, nil
	}
	return mpiGroup{g}, func(code int) {
		if code == exitFail || code == exitUsage {
			mpi.Abort(code)
		}
		mpi.Finalize()
	}, nil
}
