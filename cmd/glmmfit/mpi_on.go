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
// MPI call of the run comes from it. finish ends MPI.
func startProcesses() (procs processes, finish func(), err error) {
	if n := launchedProcesses(); n < 2 && n != unknownProcesses {
		return nil, func() {}, nil
	}
	runtime.LockOSThread()
	if err := mpi.Init(); err != nil {
		return nil, func() {}, fmt.Errorf("joining the MPI job: %v", err)
	}
	g, err := mpi.NewGroup()
	if err != nil {
		mpi.Finalize()
		return nil, func() {}, fmt.Errorf("joining the MPI job: %v", err)
	}
	if g.Size() < 2 {
		// A launcher that did not say how many it started, one.
		return nil, func() { mpi.Finalize() }, nil
	}
	return mpiGroup{g}, func() { mpi.Finalize() }, nil
}
