// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package mpi

import "math/bits"

// Tree is the fixed pairwise summation tree over the chunks 0..n-1, each
// chunk contributing a vector of g values.
//
// The node at level k starting at chunk i (i a multiple of 2^k) sums the
// chunks [i, min(i+2^k, n)). Level 0 holds the chunks themselves; a node
// above is its left child plus its right child, or its left child alone when
// the right child would start at or after n. The root is the node at level
// ceil(log2 n) starting at 0. Its value, element by element, depends only on
// the chunks' vectors, never on who added which subtree, and it has the
// rounding error of pairwise summation, O(log n) ulps.
type Tree struct {
	n   int // chunks
	top int // level of the root
}

// Node is one node of a Tree: the chunks [Start, min(Start+2^Level, n)).
type Node struct {
	Start, Level int
}

// NewTree returns the tree over n chunks. It panics if n < 1.
func NewTree(n int) Tree {
	if n < 1 {
		panic("mpi: tree over fewer than one chunk")
	}
	return Tree{n: n, top: bits.Len(uint(n - 1))}
}

// Len returns the number of chunks.
func (t Tree) Len() int { return t.n }

// end returns the first chunk after the node (k, i).
func (t Tree) end(k, i int) int { return min(i+1<<k, t.n) }

// Cover appends to dst the fewest nodes whose chunks together are exactly
// [lo, hi), in chunk order, and returns the extended slice. It panics unless
// 0 <= lo <= hi <= Len().
func (t Tree) Cover(dst []Node, lo, hi int) []Node {
	if lo < 0 || lo > hi || hi > t.n {
		panic("mpi: Cover: bad chunk range")
	}
	for p := lo; p < hi; {
		// The largest node starting at p that stays inside [lo, hi).
		k := t.top
		if p > 0 {
			k = min(k, bits.TrailingZeros(uint(p)))
		}
		for t.end(k, p) > hi {
			k--
		}
		dst = append(dst, Node{Start: p, Level: k})
		p = t.end(k, p)
	}
	return dst
}

// Depth returns the number of levels above the chunks: the level of the
// root.
func (t Tree) Depth() int { return t.top }

// Subtrees sets the value of each node of nodes, a Cover of some range
// [lo, hi), from the vectors of the chunks [lo, hi): chunk c's vector is
// partials[(c-lo)*g:(c-lo+1)*g], and node j's value goes to
// dst[j*g:(j+1)*g]. partials is not modified; work, of length at least
// Depth()*g, is overwritten.
func (t Tree) Subtrees(dst []float64, nodes []Node, partials []float64, g, lo int, work []float64) {
	if len(dst) != len(nodes)*g {
		panic("mpi: Subtrees: len(dst) != len(nodes)*g")
	}
	if len(work) < t.top*g {
		panic("mpi: Subtrees: len(work) < Depth()*g")
	}
	for j, nd := range nodes {
		if nd.Start < lo || (t.end(nd.Level, nd.Start)-lo)*g > len(partials) {
			panic("mpi: Subtrees: node outside the chunks of partials")
		}
		t.node(dst[j*g:(j+1)*g], partials, g, lo, nd.Level, nd.Start, work)
	}
}

// node sets out to the value of the node (k, i) from the chunk vectors in
// vals, the first being chunk lo's, using work[(k-1)*g:] and below for the
// right children's values. Reading the chunks once, in order, and keeping
// the sums of at most one node per level, it touches each chunk's vector
// only once.
func (t Tree) node(out, vals []float64, g, lo, k, i int, work []float64) {
	a := vals[(i-lo)*g : (i-lo+1)*g]
	switch j := i + 1<<max(k-1, 0); {
	case k == 0 || j >= t.n && k == 1:
		copy(out, a)
	case k == 1:
		b := vals[(j-lo)*g : (j-lo+1)*g]
		b = b[:len(a)]
		out = out[:len(a)]
		for e := range a {
			out[e] = a[e] + b[e]
		}
	default:
		t.node(out, vals, g, lo, k-1, i, work)
		if j < t.n {
			r := work[(k-2)*g : (k-1)*g]
			t.node(r, vals, g, lo, k-1, j, work)
			add(out, r)
		}
	}
}

// Join sets dst to the root of the tree from the values of nodes, a Cover of
// all the chunks in order (the Covers of consecutive ranges, concatenated):
// node j's value is vals[j*g:(j+1)*g]. vals is used as workspace and
// overwritten. Join panics if nodes are not such a cover.
func (t Tree) Join(dst []float64, nodes []Node, vals []float64, g int) {
	if len(dst) != g || len(vals) != len(nodes)*g {
		panic("mpi: Join: bad lengths")
	}
	next := 0
	at := t.join(vals, g, nodes, &next, t.top, 0)
	if next != len(nodes) {
		panic("mpi: Join: nodes do not cover the chunks")
	}
	copy(dst, vals[at*g:(at+1)*g])
}

// join sums the node (k, i) from the given nodes, starting at nodes[*next],
// in place, and returns the index of the node whose slot holds the sum.
func (t Tree) join(vals []float64, g int, nodes []Node, next *int, k, i int) int {
	if *next >= len(nodes) || nodes[*next].Start != i || nodes[*next].Level > k {
		panic("mpi: Join: nodes do not cover the chunks")
	}
	if nodes[*next].Level == k {
		*next++
		return *next - 1
	}
	a := t.join(vals, g, nodes, next, k-1, i)
	if j := i + 1<<(k-1); j < t.n {
		b := t.join(vals, g, nodes, next, k-1, j)
		add(vals[a*g:(a+1)*g], vals[b*g:(b+1)*g])
	}
	return a
}

// Sum sets dst to the root of the tree over all the chunks, chunk c's vector
// being partials[c*g:(c+1)*g]: the sum that OrderedSum computes, in one
// process. partials is not modified; work, of length at least Depth()*g, is
// overwritten.
func (t Tree) Sum(dst, partials []float64, g int, work []float64) {
	if len(dst) != g || len(partials) != t.n*g {
		panic("mpi: Sum: bad lengths")
	}
	if len(work) < t.top*g {
		panic("mpi: Sum: len(work) < Depth()*g")
	}
	t.node(dst, partials, g, 0, t.top, 0, work)
}

// add sets a to a + b, element-wise.
func add(a, b []float64) {
	b = b[:len(a)]
	for i := range a {
		a[i] += b[i]
	}
}
