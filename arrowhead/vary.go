// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import "sort"

// Variable-size local blocks. A nested model (subject a holding its own
// effect and those of its a:b levels) has local blocks whose order r_i
// varies from subject to subject. Such a Factor stores subject i's packed
// T_i and its g×r_i block T_gi at SubjectOffset's storage position, and
// theta_i at Block's offset: the layout of the fixed-size case with r_i in
// place of r, so memory stays linear in the number of local variables.

// LenVar returns the length of the compressed storage of an arrowhead
// factor whose subject i has a local block of order sizes[i] and whose
// global block has order g.
func LenVar(sizes []int, g int) int {
	if g < 0 {
		panic(badDims)
	}
	var s int
	for _, r := range sizes {
		if r < 0 {
			panic(badDims)
		}
		s += Stride(r, g)
	}
	return s + g*(g+1)/2
}

// NewVar returns a zero Factor whose subject i has a local block of order
// sizes[i], with a global block of order g. The sizes are copied.
func NewVar(sizes []int, g int) *Factor {
	return WrapVar(sizes, g, make([]float64, LenVar(sizes, g)))
}

// WrapVar returns a Factor with local blocks of orders sizes and a global
// block of order g whose storage is data, of length LenVar(sizes, g). The
// Factor aliases data; the sizes are copied.
func WrapVar(sizes []int, g int, data []float64) *Factor {
	if len(data) != LenVar(sizes, g) {
		panic(badLen)
	}
	n := len(sizes)
	f := &Factor{n: n, g: g, kind: -1, data: data,
		off: make([]int, n+1), soff: make([]int, n+1), coff: make([]int, n+1)}
	for i, r := range sizes {
		f.off[i+1] = f.off[i] + r
		f.soff[i+1] = f.soff[i] + Stride(r, g)
		f.coff[i+1] = f.coff[i] + r*r
	}
	f.nr, f.gs = f.off[n], f.soff[n]
	return f
}

// Variable reports whether f has local blocks of variable size (NewVar,
// WrapVar); Shape then gives r = 0 and Block each subject's size.
func (f *Factor) Variable() bool { return f.off != nil }

// Block returns the order r_i of subject i's local block and the offset of
// theta_i in vectors of length d.
func (f *Factor) Block(i int) (r, off int) {
	r, off, _ = f.blk(i)
	return r, off
}

// Locals returns the total length of the local blocks, d - g.
func (f *Factor) Locals() int { return f.nr }

// CovLen returns the length of CovRange's and LocalCovRange's local:
// the sum over subjects of r_i^2, Cov(theta_i) at CovOffset(i).
func (f *Factor) CovLen() int {
	if f.off == nil {
		return f.n * f.r * f.r
	}
	return f.coff[f.n]
}

// CovOffset returns the offset of subject i's r_i×r_i Cov(theta_i) in
// CovRange's local.
func (f *Factor) CovOffset(i int) int {
	if f.off == nil {
		return i * f.r * f.r
	}
	return f.coff[i]
}

// blk returns subject i's order r_i, the offset of theta_i and that of its
// storage.
func (f *Factor) blk(i int) (r, o, so int) {
	if f.off == nil {
		return f.r, i * f.r, i * f.stride
	}
	o = f.off[i]
	return f.off[i+1] - o, o, f.soff[i]
}

// subjectOf returns the subject whose local block holds row j < nr of T.
func (f *Factor) subjectOf(j int) int {
	if f.off == nil {
		return j / f.r
	}
	return sort.SearchInts(f.off[1:], j+1)
}
