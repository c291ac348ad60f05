// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package mpi

import "fmt"

// EvenBounds returns the chunk boundaries that give each of ranks processes
// a contiguous share of n chunks, the shares differing by at most one: rank
// r holds the chunks [b[r], b[r+1]).
func EvenBounds(n, ranks int) []int {
	if n < 0 || ranks < 1 {
		panic("mpi: EvenBounds: bad arguments")
	}
	b := make([]int, ranks+1)
	for r := range b {
		b[r] = r * n / ranks
	}
	return b
}

// OrderedSum sums vectors of G values over a fixed sequence of chunks held by
// the processes of MPI_COMM_WORLD, each process holding a contiguous range of
// chunks, so that the result is bit-identical for any number of processes:
// it is always the root of the Tree over the chunks (see the package
// documentation). Sum allocates nothing.
type OrderedSum struct {
	tree   Tree
	g      int
	rank   int
	bounds []int
	local  []Node    // this process's cover of its chunks
	all    []Node    // every process's cover, in rank order
	counts []int     // values sent by each process
	work   []float64 // Subtrees' workspace
	send   []float64
	recv   []float64
	gather func(dst, src []float64, counts []int) error
}

// NewOrderedSum returns an OrderedSum of vectors of g values over the chunks
// 0..bounds[len(bounds)-1]-1, rank r holding the chunks [bounds[r],
// bounds[r+1]); bounds must have Size()+1 entries, start at 0, not decrease
// and end above 0. Every process must pass the same g and bounds.
// EvenBounds gives even shares.
func NewOrderedSum(g int, bounds []int) (*OrderedSum, error) {
	return newOrderedSum(g, bounds, Rank(), Size(), Allgatherv)
}

func newOrderedSum(g int, bounds []int, rank, size int, gather func(dst, src []float64, counts []int) error) (*OrderedSum, error) {
	if g < 1 {
		return nil, fmt.Errorf("mpi: ordered sum of vectors of %d values", g)
	}
	if len(bounds) != size+1 {
		return nil, fmt.Errorf("mpi: %d chunk bounds for %d processes, want %d", len(bounds), size, size+1)
	}
	if bounds[0] != 0 {
		return nil, fmt.Errorf("mpi: chunk bounds start at %d, not 0", bounds[0])
	}
	for r := 1; r <= size; r++ {
		if bounds[r] < bounds[r-1] {
			return nil, fmt.Errorf("mpi: chunk bounds decrease at rank %d: %d after %d", r, bounds[r], bounds[r-1])
		}
	}
	n := bounds[size]
	if n < 1 {
		return nil, fmt.Errorf("mpi: ordered sum over no chunks")
	}
	s := &OrderedSum{
		tree:   NewTree(n),
		g:      g,
		rank:   rank,
		bounds: append([]int(nil), bounds...),
		counts: make([]int, size),
		gather: gather,
	}
	for r := range size {
		before := len(s.all)
		s.all = s.tree.Cover(s.all, bounds[r], bounds[r+1])
		if r == rank {
			s.local = s.all[before:len(s.all):len(s.all)]
		}
		s.counts[r] = (len(s.all) - before) * g
	}
	s.work = make([]float64, s.tree.Depth()*g)
	s.send = make([]float64, len(s.local)*g)
	s.recv = make([]float64, len(s.all)*g)
	return s, nil
}

// Chunks returns the range of chunks [lo, hi) of this process.
func (s *OrderedSum) Chunks() (lo, hi int) {
	return s.bounds[s.rank], s.bounds[s.rank+1]
}

// Sent returns the number of values this process sends per Sum: G times the
// number of whole subtrees in its range of chunks.
func (s *OrderedSum) Sent() int { return len(s.send) }

// Sum sets dst, of length G, to the sum over all chunks of every process of
// the chunks' vectors; partials holds this process's chunks' vectors in chunk
// order, chunk lo+j's at partials[j*G:(j+1)*G], and is not modified. Every
// process must call Sum together.
func (s *OrderedSum) Sum(dst, partials []float64) error {
	lo, hi := s.Chunks()
	if len(dst) != s.g || len(partials) != (hi-lo)*s.g {
		panic("mpi: OrderedSum.Sum: bad lengths")
	}
	s.tree.Subtrees(s.send, s.local, partials, s.g, lo, s.work)
	if err := s.gather(s.recv, s.send, s.counts); err != nil {
		return err
	}
	s.tree.Join(dst, s.all, s.recv, s.g)
	return nil
}
