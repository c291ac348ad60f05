// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !mpi || !cgo

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "mpiexchange: built without -tags mpi; build with: go build -tags mpi ./benchmarks/mpiexchange")
	os.Exit(2)
}
