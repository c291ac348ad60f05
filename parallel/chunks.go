// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parallel

// DefaultChunkSize is the number of subjects in a chunk unless the caller
// chooses otherwise. It is large enough to amortise scheduling and small
// enough to balance load on a few cores.
const DefaultChunkSize = 256

// Chunking cuts the subjects 0..N-1 into consecutive chunks of Size subjects;
// the last chunk may be shorter.
type Chunking struct {
	N    int // number of subjects
	Size int // subjects per chunk
}

// NewChunking returns the chunking of n subjects into chunks of size subjects.
// A size of zero or less selects DefaultChunkSize.
func NewChunking(n, size int) Chunking {
	if n < 0 {
		panic("parallel: negative number of subjects")
	}
	if size <= 0 {
		size = DefaultChunkSize
	}
	return Chunking{N: n, Size: size}
}

// Len returns the number of chunks.
func (c Chunking) Len() int {
	return (c.N + c.Size - 1) / c.Size
}

// Bounds returns the half-open range of subjects [lo, hi) of chunk k.
func (c Chunking) Bounds(k int) (lo, hi int) {
	lo = k * c.Size
	hi = min(lo+c.Size, c.N)
	return lo, hi
}

// A Carrier carries running sums through the processes that share a
// computation over the chunks, each holding a contiguous range of them
// (vi.Group is one): Receive overwrites acc with the sums of the processes
// before, the first process leaving it as it is; Pass hands acc on and
// overwrites it with the last process's sums, which every process then
// holds. A process that adds its own chunks' terms in order between the two
// calls computes the sums one process holding every chunk would.
type Carrier interface {
	Receive(acc []float64) error
	Pass(acc []float64) error
}
