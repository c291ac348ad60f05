// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import "sort"

// Variable-size local blocks. A nested model (subject a holding its own
// effect and those of its a:b levels) has local blocks whose order r_i
// varies from subject to subject. Such a Factor stores the packed C_i one
// after another, subject i's at the sum of r_j(r_j+1)/2 over the subjects
// before it, and theta_i at Block's offset: the layout of the fixed-size
// case with r_i in place of r. The kernels are those of the fixed-size
// case, applied block by block.

// LenVar returns the length of the compressed storage of a factor whose
// subject i has a block of order sizes[i] and whose global block has
// order g.
func LenVar(sizes []int, g int) int {
	if g < 0 {
		panic(errNegativeDims)
	}
	var s int
	for _, r := range sizes {
		if r < 0 {
			panic(errNegativeDims)
		}
		s += r * (r + 1) / 2
	}
	return s + g*(g+1)/2
}

// NewVar returns a zero Factor whose subject i has a block of order
// sizes[i], with a global block of order g. The sizes are copied.
func NewVar(sizes []int, g int) *Factor {
	return WrapVar(sizes, g, make([]float64, LenVar(sizes, g)))
}

// WrapVar returns a Factor with subject blocks of orders sizes and a
// global block of order g whose storage is data, of length
// LenVar(sizes, g). The Factor aliases data; the sizes are copied.
func WrapVar(sizes []int, g int, data []float64) *Factor {
	if len(data) != LenVar(sizes, g) {
		panic(errDataLength)
	}
	n := len(sizes)
	f := &Factor{n: n, g: g, data: data, off: make([]int, n+1), toff: make([]int, n+1)}
	for i, r := range sizes {
		f.off[i+1] = f.off[i] + r
		f.toff[i+1] = f.toff[i] + r*(r+1)/2
	}
	f.nr, f.nt = f.off[n], f.toff[n]
	return f
}

// Variable reports whether f has subject blocks of variable size (NewVar,
// WrapVar); Shape then gives r = 0 and Block each subject's order.
func (f *Factor) Variable() bool { return f.off != nil }

// Block returns the order r_i of subject i's block and the offset of
// theta_i in vectors of length d.
func (f *Factor) Block(i int) (r, off int) {
	if i < 0 || i >= f.n {
		panic(errSubject)
	}
	r, off, _ = f.blk(i)
	return r, off
}

// Locals returns the total length of the subject blocks, d - g.
func (f *Factor) Locals() int { return f.nr }

// Span returns the positions in Data of the blocks of the subjects
// [lo, hi): they occupy Data()[start:end].
func (f *Factor) Span(lo, hi int) (start, end int) {
	f.checkRange(lo, hi)
	if f.off == nil {
		return lo * f.tr, hi * f.tr
	}
	return f.toff[lo], f.toff[hi]
}

// blk returns subject i's block order, the offset of theta_i and that of
// C_i in data.
func (f *Factor) blk(i int) (m, o, t int) {
	if f.off == nil {
		return f.r, i * f.r, i * f.tr
	}
	o = f.off[i]
	return f.off[i+1] - o, o, f.toff[i]
}

// blockOrder returns the order of subject i's block.
func (f *Factor) blockOrder(i int) int {
	m, _, _ := f.blk(i)
	return m
}

// subjectOf returns the subject whose block holds row j < Locals() of C.
func (f *Factor) subjectOf(j int) int {
	if f.off == nil {
		return j / f.r
	}
	return sort.SearchInts(f.off[1:], j+1)
}
