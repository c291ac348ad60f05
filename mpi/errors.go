// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package mpi

import (
	"errors"
	"fmt"
)

// ErrNotBuilt is returned by Init and every collective operation of a
// program compiled without the build tag mpi (or without cgo).
var ErrNotBuilt = errors.New("mpi: built without -tags mpi")

// ErrThread is returned by a call made from a thread other than the one
// that called Init (see the package documentation on threads).
var ErrThread = errors.New("mpi: called from a thread other than the one that called Init; lock the MPI goroutine with runtime.LockOSThread")

// ErrNotInitialized is returned by a call made before Init or after
// Finalize.
var ErrNotInitialized = errors.New("mpi: not initialized")

// Error is a failure reported by an MPI call.
type Error struct {
	Op   string // the MPI function, such as "MPI_Allgatherv"
	Code int    // MPI's error code
	Msg  string // MPI's text for Code, from MPI_Error_string
}

// Error returns the MPI function, MPI's text and the error code.
func (e *Error) Error() string {
	return fmt.Sprintf("mpi: %s: %s (error code %d)", e.Op, e.Msg, e.Code)
}
