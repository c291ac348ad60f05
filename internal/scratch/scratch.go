// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package scratch lays out float64 scratch space for concurrent workers so
// that no two workers' slices share a cache line. Workers add into their
// partial sums and write their workspaces once per subject or row; two
// workers writing to one line would take turns owning it, and a loop that
// should run twice as fast on two cores would not.
package scratch

// Line is the size in bytes of a processor cache line (64 on amd64 and
// arm64), and LineFloats the number of float64s in it.
const (
	Line       = 64
	LineFloats = Line / 8
)

// Partials returns k slices of length g, one per chunk, in one allocation,
// with a cache line or more between any two.
func Partials(k, g int) [][]float64 {
	stride := (g+LineFloats-1)/LineFloats*LineFloats + LineFloats
	buf := make([]float64, k*stride+LineFloats)
	out := make([][]float64, k)
	for j := range out {
		o := LineFloats + j*stride
		out[j] = buf[o : o+g : o+g]
	}
	return out
}

// Carver hands out consecutive slices of one buffer padded by a cache line
// at both ends: the scratch space of one worker, away from any other's.
type Carver struct {
	buf []float64
	off int
}

// NewCarver returns a Carver for n float64s in all.
func NewCarver(n int) *Carver {
	return &Carver{buf: make([]float64, LineFloats+n+LineFloats), off: LineFloats}
}

// Take returns the next k float64s, zeroed. It panics if fewer than k of the
// n given to NewCarver are left.
func (c *Carver) Take(k int) []float64 {
	if c.off+k > len(c.buf)-LineFloats {
		panic("scratch: Carver out of space")
	}
	s := c.buf[c.off : c.off+k : c.off+k]
	c.off += k
	return s
}
