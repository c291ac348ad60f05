// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package mpi is a small binding to the C API of Open MPI, and a sum over
// processes whose result does not depend on how many there are.
//
// # Build
//
// The binding is compiled only with the build tag mpi and cgo:
//
//	go build -tags mpi ./...
//
// which needs Open MPI's headers and library, found by pkg-config as ompi-c
// (Debian: libopenmpi-dev and pkg-config). Without
// the tag the package still compiles, in pure Go: Init and every collective
// return ErrNotBuilt, while Rank and Size describe a world of one process.
// Programs are started by mpirun, one process (rank) per slot:
//
//	mpirun -np 3 ./program
//
// # Threads
//
// The binding asks MPI for MPI_THREAD_FUNNELED: only the thread that called
// Init may call MPI. A Go program must therefore make every MPI call from one
// goroutine, locked to its operating-system thread by runtime.LockOSThread
// before Init is called. Init also locks the calling goroutine (the lock is
// counted and released by Finalize), and every call checks that it runs on
// the thread of Init, returning ErrThread otherwise, so that a call from
// another goroutine fails instead of corrupting MPI's state. Programs that
// compute on many goroutines send their MPI work to that one goroutine.
//
// # Errors
//
// Init sets MPI_ERRORS_RETURN on MPI_COMM_WORLD, so a failing MPI call
// returns an *Error carrying MPI's error code and its text from
// MPI_Error_string, instead of aborting the job. A caller that cannot go on
// calls Abort, which stops every process of the job.
//
// # Ordered sums
//
// MPI's own reductions (MPI_Allreduce) do not fix the order in which the
// processes' contributions are added, so a floating-point sum may change in
// its last bits with the number of processes. OrderedSum fixes the order: the
// work is cut into a fixed sequence of chunks, and the global sum is always
// the one pairwise tree over chunk index that Tree describes, whichever
// process computed which chunk. Each process reduces the whole subtrees that
// lie in its range of chunks, the subtree sums are exchanged with
// MPI_Allgatherv, and every process completes the same tree. The result is
// bit-identical for any number of processes given the same chunking, and the
// exchange carries at most about 2·log2(chunks) vectors per process.
package mpi
