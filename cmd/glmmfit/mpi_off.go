// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !mpi || !cgo

package main

import "fmt"

// startProcesses refuses to run as one of several processes of a launcher
// such as mpirun: built without MPI, each would fit every subject and
// write the same files.
func startProcesses() (procs processes, finish func(code int), err error) {
	if n := launchedProcesses(); n > 1 {
		return nil, func(int) {}, fmt.Errorf("started as one of %d processes (mpirun), but this glmmfit was built without MPI: build it with go build -tags mpi ./cmd/glmmfit", n)
	}
	return nil, func(int) {}, nil
}
