// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !mpi || !cgo

package mpi

// Init returns ErrNotBuilt: the program was compiled without the build tag
// mpi or without cgo. The MPI build initializes MPI with
// MPI_THREAD_FUNNELED; see the package documentation.
func Init() error { return ErrNotBuilt }

// Finalize returns ErrNotBuilt.
func Finalize() error { return ErrNotBuilt }

// Rank returns 0: without MPI a program is the only process of its world.
func Rank() int { return 0 }

// Size returns 1: without MPI a program is the only process of its world.
func Size() int { return 1 }

// Abort returns ErrNotBuilt.
func Abort(code int) error { return ErrNotBuilt }

// Barrier returns ErrNotBuilt.
func Barrier() error { return ErrNotBuilt }

// Bcast returns ErrNotBuilt.
func Bcast(buf []float64, root int) error { return ErrNotBuilt }

// Gather returns ErrNotBuilt.
func Gather(dst, src []float64, root int) error { return ErrNotBuilt }

// Allgather returns ErrNotBuilt.
func Allgather(dst, src []float64) error { return ErrNotBuilt }

// Allgatherv returns ErrNotBuilt.
func Allgatherv(dst, src []float64, counts []int) error { return ErrNotBuilt }

// AllgatherBytes returns ErrNotBuilt.
func AllgatherBytes(src []byte) ([][]byte, error) { return nil, ErrNotBuilt }

// Allreduce returns ErrNotBuilt.
func Allreduce(dst, src []float64) error { return ErrNotBuilt }
