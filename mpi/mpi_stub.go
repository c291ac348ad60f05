// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !mpi || !cgo

package mpi

// This file stands in for the binding in builds without the tag mpi or
// without cgo. Each comment says what the binding does, then what this
// build does.

// Init initializes MPI with MPI_THREAD_FUNNELED, from a goroutine locked to
// its thread. Without -tags mpi it returns ErrNotBuilt.
func Init() error { return ErrNotBuilt }

// Finalize shuts MPI down. Without -tags mpi it returns ErrNotBuilt.
func Finalize() error { return ErrNotBuilt }

// Rank returns the rank of this process in MPI_COMM_WORLD. Without -tags mpi
// it returns 0: a program is the only process of its world.
func Rank() int { return 0 }

// Size returns the number of processes in MPI_COMM_WORLD. Without -tags mpi
// it returns 1: a program is the only process of its world.
func Size() int { return 1 }

// Abort stops every process of the job with the exit code code. Without
// -tags mpi it returns ErrNotBuilt.
func Abort(code int) error { return ErrNotBuilt }

// Barrier returns when every process has called it. Without -tags mpi it
// returns ErrNotBuilt.
func Barrier() error { return ErrNotBuilt }

// Bcast copies buf of the process root into buf of every other process.
// Without -tags mpi it returns ErrNotBuilt.
func Bcast(buf []float64, root int) error { return ErrNotBuilt }

// Send sends buf to the process dest with the given tag. Without -tags mpi
// it returns ErrNotBuilt.
func Send(buf []float64, dest, tag int) error { return ErrNotBuilt }

// Recv receives into buf what the process src sent with the given tag.
// Without -tags mpi it returns ErrNotBuilt.
func Recv(buf []float64, src, tag int) error { return ErrNotBuilt }

// Gather collects src of every process into dst of the process root, in
// rank order. Without -tags mpi it returns ErrNotBuilt.
func Gather(dst, src []float64, root int) error { return ErrNotBuilt }

// Allgather collects src of every process into dst of every process, in
// rank order. Without -tags mpi it returns ErrNotBuilt.
func Allgather(dst, src []float64) error { return ErrNotBuilt }

// Allgatherv collects src of every process, counts[r] values from rank r,
// into dst of every process, in rank order. Without -tags mpi it returns
// ErrNotBuilt.
func Allgatherv(dst, src []float64, counts []int) error { return ErrNotBuilt }

// AllgatherBytes collects a byte slice of any length from every process and
// returns them all, indexed by rank. Without -tags mpi it returns
// ErrNotBuilt.
func AllgatherBytes(src []byte) ([][]byte, error) { return nil, ErrNotBuilt }

// Allreduce sets dst to the element-wise sum of src over every process, in
// an order MPI does not fix. Without -tags mpi it returns ErrNotBuilt.
func Allreduce(dst, src []float64) error { return ErrNotBuilt }

// ready reports whether MPI may be called. Without -tags mpi it returns
// ErrNotBuilt.
func ready() error { return ErrNotBuilt }
