// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command mpiexchange times the exchange that combines the processes' shares
// of a global vector of G values in a distributed fit (issue 17): package
// mpi's OrderedSum, which gathers whole subtrees of the fixed summation tree
// over chunks and completes the tree in every process, against MPI's own
// MPI_Allreduce, whose order of additions is not fixed, and against the
// plain design that gathers every chunk's vector.
//
// Each figure is the median over batches of the time per call on rank 0,
// every batch starting after a barrier. Columns:
//
//	allreduce     MPI_Allreduce of G values
//	exchange      MPI_Allgatherv of the subtrees' sums and the completion
//	              of the tree: what OrderedSum adds to a fit's iteration
//	ordered sum   OrderedSum.Sum: the local subtree sums and the exchange
//	subtrees      the local subtree sums alone, no communication
//	all chunks    MPI_Allgatherv of every chunk's vector and the tree over
//	              them all
//	chain         mpi.Group's Receive and Pass of G values: the exchange
//	              of one of vi's sums over a Group (the running values
//	              passed from rank to rank, then MPI_Bcast from the last),
//	              which the fits use; it grows with the number of
//	              processes, where the ordered sum grows with its log
//	sent          values each process sends per ordered sum (rank 0)
//	received      values each process receives per ordered sum
//
// The program needs the build tag mpi (and Open MPI, see package mpi). Usage,
// from the repository root, on shared memory and on loopback TCP:
//
//	go build -tags mpi -o /tmp/mpiexchange ./benchmarks/mpiexchange
//	mpirun -np 2 --mca pml ob1 --mca btl vader,self /tmp/mpiexchange
//	mpirun -np 2 --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo /tmp/mpiexchange
//
// With -project 16,64 it also prints how many vectors each process would
// receive on 16 and 64 processes (no timing), for instance over the 390625
// chunks of 10^8 subjects:
//
//	mpirun -np 1 /tmp/mpiexchange -chunks 390625 -g 10 -project 2,16,64
//
// or sh benchmarks/mpiexchange/run.sh, which runs both and prints the load
// average. (--mca pml ob1 keeps Open MPI from choosing UCX, which ignores the
// btl setting.)
package main
