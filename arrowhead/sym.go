// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"sort"

	"gonum.org/v1/gonum/mat"
)

// Sym is a symmetric matrix S with the block-arrowhead pattern of T T',
// held in the compressed storage of a Factor of the same dimensions: for
// each subject the packed lower triangle of S_i and the g×r block S_gi
// (row-major), then the packed lower triangle of S_g. It is the form that
// CholRange and CholGlobal factorise and PrecRange and PrecGlobal write,
// and in which a start writes an approximate posterior precision.
type Sym struct {
	n, r, g, stride, tri int
	// off and soff, for local blocks of variable size (WrapSymVar), are
	// the offsets of each subject's variables and of its storage, n+1
	// each; nil otherwise.
	off, soff []int
	data      []float64
}

// WrapSym returns the Sym of n subjects with local blocks of order r and a
// global block of order g held in data, of length Len(n, r, g).
func WrapSym(n, r, g int, data []float64) Sym {
	if n < 0 || r < 0 || g < 0 || len(data) != Len(n, r, g) {
		panic(badLen)
	}
	return Sym{n: n, r: r, g: g, stride: Stride(r, g), tri: r * (r + 1) / 2, data: data}
}

// WrapSymVar returns the Sym whose subject i has a local block of order
// sizes[i], with a global block of order g, held in data of length
// LenVar(sizes, g): the layout of WrapVar's Factor. The sizes are copied.
func WrapSymVar(sizes []int, g int, data []float64) Sym {
	if len(data) != LenVar(sizes, g) {
		panic(badLen)
	}
	n := len(sizes)
	s := Sym{n: n, g: g, off: make([]int, n+1), soff: make([]int, n+1), data: data}
	for i, r := range sizes {
		s.off[i+1] = s.off[i] + r
		s.soff[i+1] = s.soff[i] + Stride(r, g)
	}
	return s
}

// SymOf returns the Sym held in the storage of f, laid out as f's (fixed
// or variable sizes): the form in which a start writes a precision into a
// Factor's storage before it is factorised there in place.
func SymOf(f *Factor) Sym {
	if f.off == nil {
		return WrapSym(f.n, f.r, f.g, f.data)
	}
	return Sym{n: f.n, g: f.g, off: f.off, soff: f.soff, data: f.data}
}

// blk returns subject i's order r_i and the offset of its storage.
func (s Sym) blk(i int) (r, so int) {
	if s.off == nil {
		return s.r, i * s.stride
	}
	return s.off[i+1] - s.off[i], s.soff[i]
}

// Data returns the storage of S.
func (s Sym) Data() []float64 { return s.data }

// Local returns the packed lower triangle of S_i, aliasing the storage.
func (s Sym) Local(i int) []float64 {
	r, so := s.blk(i)
	return s.data[so : so+r*(r+1)/2]
}

// Cross returns S_gi, g×r_i row-major, aliasing the storage.
func (s Sym) Cross(i int) []float64 {
	r, so := s.blk(i)
	return s.data[so+r*(r+1)/2 : so+Stride(r, s.g)]
}

// Global returns the packed lower triangle of S_g, aliasing the storage.
func (s Sym) Global() []float64 { return s.data[len(s.data)-s.g*(s.g+1)/2:] }

// SetLocal sets the elements (a, b) and (b, a) of S_i to v.
func (s Sym) SetLocal(i, a, b int, v float64) {
	a, b = max(a, b), min(a, b)
	_, so := s.blk(i)
	s.data[so+a*(a+1)/2+b] = v
}

// SetCross sets the element of S_gi in global row k and local column a to
// v.
func (s Sym) SetCross(i, k, a int, v float64) {
	r, so := s.blk(i)
	s.data[so+r*(r+1)/2+k*r+a] = v
}

// AddCross adds v to the element of S_gi in global row k and local column
// a.
func (s Sym) AddCross(i, k, a int, v float64) {
	r, so := s.blk(i)
	s.data[so+r*(r+1)/2+k*r+a] += v
}

// SetGlobal sets the elements (a, b) and (b, a) of S_g to v.
func (s Sym) SetGlobal(a, b int, v float64) {
	a, b = max(a, b), min(a, b)
	s.Global()[a*(a+1)/2+b] = v
}

// AddGlobal adds v to the elements (a, b) and (b, a) of S_g.
func (s Sym) AddGlobal(a, b int, v float64) {
	a, b = max(a, b), min(a, b)
	s.Global()[a*(a+1)/2+b] += v
}

// nr returns the number of local variables.
func (s Sym) nr() int {
	if s.off == nil {
		return s.n * s.r
	}
	return s.off[s.n]
}

// subjectOf returns the subject whose local block holds variable j < nr
// and j's position in it.
func (s Sym) subjectOf(j int) (i, a int) {
	if s.off == nil {
		return j / s.r, j % s.r
	}
	i = sort.SearchInts(s.off[1:], j+1)
	return i, j - s.off[i]
}

// At returns the element (i, j) of S, zero outside its pattern.
func (s Sym) At(i, j int) float64 {
	nr := s.nr()
	d := nr + s.g
	if uint(i) >= uint(d) || uint(j) >= uint(d) {
		panic(badRange)
	}
	if j > i {
		i, j = j, i
	}
	switch {
	case i < nr:
		sub, a := s.subjectOf(i)
		sj, b := s.subjectOf(j)
		if sj != sub {
			return 0
		}
		return s.Local(sub)[a*(a+1)/2+b]
	case j < nr:
		sub, b := s.subjectOf(j)
		r, _ := s.blk(sub)
		return s.Cross(sub)[(i-nr)*r+b]
	default:
		a, b := i-nr, j-nr
		return s.Global()[a*(a+1)/2+b]
	}
}

// Dims returns the order of S twice, as mat.Matrix asks.
func (s Sym) Dims() (r, c int) { d := s.SymmetricDim(); return d, d }

// SymmetricDim returns the order d = n*r + g of S. With At, Dims and T it
// makes Sym a mat.Symmetric.
func (s Sym) SymmetricDim() int { return s.nr() + s.g }

// T returns S itself, its own transpose.
func (s Sym) T() mat.Matrix { return s }
