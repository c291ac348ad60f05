// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import "gonum.org/v1/gonum/mat"

// Sym is a symmetric matrix S with the block-arrowhead pattern of T T',
// held in the compressed storage of a Factor of the same dimensions: for
// each subject the packed lower triangle of S_i and the g×r block S_gi
// (row-major), then the packed lower triangle of S_g. It is the form that
// CholRange and CholGlobal factorise and PrecRange and PrecGlobal write,
// and in which a start writes an approximate posterior precision.
type Sym struct {
	n, r, g, stride, tri int
	data                 []float64
}

// WrapSym returns the Sym of n subjects with local blocks of order r and a
// global block of order g held in data, of length Len(n, r, g).
func WrapSym(n, r, g int, data []float64) Sym {
	if n < 0 || r < 0 || g < 0 || len(data) != Len(n, r, g) {
		panic(badLen)
	}
	return Sym{n: n, r: r, g: g, stride: Stride(r, g), tri: r * (r + 1) / 2, data: data}
}

// Data returns the storage of S.
func (s Sym) Data() []float64 { return s.data }

// Local returns the packed lower triangle of S_i, aliasing the storage.
func (s Sym) Local(i int) []float64 { return s.data[i*s.stride : i*s.stride+s.tri] }

// Cross returns S_gi, g×r row-major, aliasing the storage.
func (s Sym) Cross(i int) []float64 { return s.data[i*s.stride+s.tri : (i+1)*s.stride] }

// Global returns the packed lower triangle of S_g, aliasing the storage.
func (s Sym) Global() []float64 { return s.data[s.n*s.stride:] }

// SetLocal sets the elements (a, b) and (b, a) of S_i to v.
func (s Sym) SetLocal(i, a, b int, v float64) {
	a, b = max(a, b), min(a, b)
	s.data[i*s.stride+a*(a+1)/2+b] = v
}

// SetCross sets the element of S_gi in global row k and local column a to
// v.
func (s Sym) SetCross(i, k, a int, v float64) { s.data[i*s.stride+s.tri+k*s.r+a] = v }

// SetGlobal sets the elements (a, b) and (b, a) of S_g to v.
func (s Sym) SetGlobal(a, b int, v float64) {
	a, b = max(a, b), min(a, b)
	s.data[s.n*s.stride+a*(a+1)/2+b] = v
}

// AddGlobal adds v to the elements (a, b) and (b, a) of S_g.
func (s Sym) AddGlobal(a, b int, v float64) {
	a, b = max(a, b), min(a, b)
	s.data[s.n*s.stride+a*(a+1)/2+b] += v
}

// At returns the element (i, j) of S, zero outside its pattern.
func (s Sym) At(i, j int) float64 {
	d := s.n*s.r + s.g
	if uint(i) >= uint(d) || uint(j) >= uint(d) {
		panic(badRange)
	}
	if j > i {
		i, j = j, i
	}
	nr := s.n * s.r
	switch {
	case i < nr:
		sub, a := i/s.r, i%s.r
		if j/s.r != sub {
			return 0
		}
		return s.data[sub*s.stride+a*(a+1)/2+j%s.r]
	case j < nr:
		return s.data[(j/s.r)*s.stride+s.tri+(i-nr)*s.r+j%s.r]
	default:
		a, b := i-nr, j-nr
		return s.data[s.n*s.stride+a*(a+1)/2+b]
	}
}

// Dims returns the order of S twice, as mat.Matrix asks.
func (s Sym) Dims() (r, c int) { d := s.SymmetricDim(); return d, d }

// SymmetricDim returns the order d = n*r + g of S. With At, Dims and T it
// makes Sym a mat.Symmetric.
func (s Sym) SymmetricDim() int { return s.n*s.r + s.g }

// T returns S itself, its own transpose.
func (s Sym) T() mat.Matrix { return s }
