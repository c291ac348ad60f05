// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"math"

	"gonum.org/v1/gonum/floats"
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/internal/small"
)

const (
	badDims  = "arrowhead: negative dimension"
	badLen   = "arrowhead: slice length mismatch"
	badRange = "arrowhead: subject range out of bounds"
	badShape = "arrowhead: factor dimension mismatch"
	badAlias = "arrowhead: destination aliases the factor"
)

// Len returns the length of the compressed storage of an arrowhead factor
// with n subjects, local blocks of order r and a global block of order g:
// n*(r*(r+1)/2 + g*r) + g*(g+1)/2.
func Len(n, r, g int) int {
	if n < 0 || r < 0 || g < 0 {
		panic(badDims)
	}
	return n*Stride(r, g) + g*(g+1)/2
}

// Stride returns the number of stored elements per subject, r*(r+1)/2 + g*r:
// the packed lower triangle of T_i followed by the g×r block T_gi.
func Stride(r, g int) int {
	if r < 0 || g < 0 {
		panic(badDims)
	}
	return r*(r+1)/2 + g*r
}

// Factor is a block-arrowhead lower-triangular matrix
//
//	T = [ T_1                 ]
//	    [      ...            ]
//	    [           T_n       ]
//	    [ T_g1 ... T_gn   T_g ]
//
// of order d = n*r + g, with lower-triangular r×r blocks T_i, dense g×r
// blocks T_gi and a lower-triangular g×g block T_g, held in compressed
// storage (see the package documentation for the layout).
//
// A Factor does not check that its diagonal is nonzero; solves with a
// singular factor give infinities or NaNs, as in gonum's triangular solves.
type Factor struct {
	n, r, g int
	tri     int // r*(r+1)/2
	stride  int // tri + g*r
	data    []float64

	kind int // r, or -1 for variable-size blocks: the kernels' fast paths
	nr   int // n*r or the sum of the r_i: theta_g's offset
	gs   int // n*stride or the sum of the strides: T_g's offset

	// off, soff and coff, when not nil, hold the offsets of each subject
	// of variable-size blocks (WrapVar) in vectors, storage and CovRange's
	// local.
	off, soff, coff []int

	// rowStart and rows, if not nil, list the rows of each T_gi that may
	// be nonzero (SetRows).
	rowStart []int
	rows     []int32
}

// New returns a zero Factor with n subjects, local blocks of order r and a
// global block of order g.
func New(n, r, g int) *Factor {
	return Wrap(n, r, g, make([]float64, Len(n, r, g)))
}

// Wrap returns a Factor whose storage is data, which must have length
// Len(n, r, g). The Factor aliases data: changes to one are seen in the
// other. Wrap is how a Factor is laid over part of a larger parameter
// vector.
func Wrap(n, r, g int, data []float64) *Factor {
	if len(data) != Len(n, r, g) {
		panic(badLen)
	}
	tri := r * (r + 1) / 2
	st := tri + g*r
	return &Factor{n: n, r: r, g: g, tri: tri, stride: st, data: data, kind: r, nr: n * r, gs: n * st}
}

// Shape returns the number of subjects n, the order r of the local blocks
// (0 when they vary, see Block) and the order g of the global block.
func (f *Factor) Shape() (n, r, g int) { return f.n, f.r, f.g }

// Dims returns the order d = n*r + g of T twice: with At and T, a
// Factor is a mat.Matrix, which gonum's functions read without a dense copy.
func (f *Factor) Dims() (r, c int) { d := f.Dim(); return d, d }

// T returns the transpose of T, a mat.Transpose of f.
func (f *Factor) T() mat.Matrix { return mat.Transpose{Matrix: f} }

// Dim returns the order d = n*r + g of T.
func (f *Factor) Dim() int { return f.nr + f.g }

// Data returns the compressed storage of f. The slice aliases the Factor.
func (f *Factor) Data() []float64 { return f.data }

// Local returns the packed lower triangle of T_i, row-major: element (a, b),
// a >= b, at a*(a+1)/2 + b. The slice aliases the Factor.
func (f *Factor) Local(i int) []float64 {
	if uint(i) >= uint(f.n) {
		panic(badRange)
	}
	r, _, o := f.blk(i)
	e := o + r*(r+1)/2
	return f.data[o:e:e]
}

// Cross returns the g×r block T_gi, row-major: element (k, b) at k*r + b.
// The slice aliases the Factor.
func (f *Factor) Cross(i int) []float64 {
	if uint(i) >= uint(f.n) {
		panic(badRange)
	}
	r, _, o := f.blk(i)
	o += r * (r + 1) / 2
	return f.data[o : o+f.g*r : o+f.g*r]
}

// Global returns the packed lower triangle of T_g, row-major: element
// (a, b), a >= b, at a*(a+1)/2 + b. The slice aliases the Factor.
func (f *Factor) Global() []float64 {
	return f.data[f.gs:]
}

// Span returns the half-open range [start, end) of Data holding the blocks
// T_i and T_gi of the subjects i in [lo, hi). Step rules use it to act on
// the part of the parameter vector that belongs to a chunk of subjects.
func (f *Factor) Span(lo, hi int) (start, end int) {
	f.checkRange(lo, hi)
	if f.off != nil {
		return f.soff[lo], f.soff[hi]
	}
	return lo * f.stride, hi * f.stride
}

// At returns element (i, j) of T as a d×d matrix, zero off the pattern.
func (f *Factor) At(i, j int) float64 {
	d := f.Dim()
	if uint(i) >= uint(d) || uint(j) >= uint(d) {
		panic(badRange)
	}
	if j > i {
		return 0
	}
	nr := f.nr
	switch {
	case i < nr:
		s := f.subjectOf(i)
		_, o, so := f.blk(s)
		if j < o {
			return 0
		}
		a, b := i-o, j-o
		return f.data[so+a*(a+1)/2+b]
	case j < nr:
		k := i - nr
		s := f.subjectOf(j)
		r, o, so := f.blk(s)
		return f.data[so+r*(r+1)/2+k*r+j-o]
	default:
		a, b := i-nr, j-nr
		return f.data[f.gs+a*(a+1)/2+b]
	}
}

// DiagIndices returns the positions in Data of the diagonal of T, in the
// order of T's rows: each subject's block, then the global block.
func (f *Factor) DiagIndices() []int {
	if f.off == nil {
		return small.PackedDiagIndices(f.n, f.r, f.g, f.stride)
	}
	idx := make([]int, 0, f.nr+f.g)
	for i := range f.n {
		r, _, so := f.blk(i)
		for a := range r {
			idx = append(idx, so+a*(a+1)/2+a)
		}
	}
	for a := range f.g {
		idx = append(idx, f.gs+a*(a+1)/2+a)
	}
	return idx
}

// SetIdentity sets T = scale*I.
func (f *Factor) SetIdentity(scale float64) {
	clear(f.data)
	for i := range f.n {
		r, _, so := f.blk(i)
		t := f.data[so:]
		for a := range r {
			t[a*(a+1)/2+a] = scale
		}
	}
	tg := f.Global()
	for a := range f.g {
		tg[a*(a+1)/2+a] = scale
	}
}

// CopyFrom copies the elements of src into f. The dimensions must match.
func (f *Factor) CopyFrom(src *Factor) {
	f.checkSame(src)
	copy(f.data, src.data)
}

// AddScaled sets T = T + alpha*N where n holds N in compressed storage.
// It is the update T <- T + rho*N of a natural-gradient step.
func (f *Factor) AddScaled(alpha float64, n []float64) {
	if len(n) != len(f.data) {
		panic(badLen)
	}
	floats.AddScaled(f.data, alpha, n)
}

// AddScaledRange sets T_i += alpha*N_i and T_gi += alpha*N_gi for the
// subjects i in [lo, hi). The slice n holds N in compressed storage.
func (f *Factor) AddScaledRange(lo, hi int, alpha float64, n []float64) {
	if len(n) != len(f.data) {
		panic(badLen)
	}
	s, e := f.Span(lo, hi)
	floats.AddScaled(f.data[s:e], alpha, n[s:e])
}

// AddScaledGlobal sets T_g += alpha*N_g, where n holds N in compressed
// storage.
func (f *Factor) AddScaledGlobal(alpha float64, n []float64) {
	if len(n) != len(f.data) {
		panic(badLen)
	}
	o := f.gs
	floats.AddScaled(f.data[o:], alpha, n[o:])
}

// LogDet returns log|det T| = sum over the diagonal of log|T_jj|. It runs
// over the subjects in order; LogDetRange and LogDetGlobal split it for
// chunked loops.
func (f *Factor) LogDet() float64 {
	return f.LogDetRange(0, f.n) + f.LogDetGlobal()
}

// LogDetRange returns the sum of log|T_i,aa| over the subjects i in
// [lo, hi).
func (f *Factor) LogDetRange(lo, hi int) float64 {
	f.checkRange(lo, hi)
	var s float64
	for i := lo; i < hi; i++ {
		r, _, so := f.blk(i)
		t := f.data[so:]
		for a := range r {
			s += math.Log(math.Abs(t[a*(a+1)/2+a]))
		}
	}
	return s
}

// LogDetGlobal returns the sum of log|T_g,aa|.
func (f *Factor) LogDetGlobal() float64 {
	tg := f.Global()
	var s float64
	for a := range f.g {
		s += math.Log(math.Abs(tg[a*(a+1)/2+a]))
	}
	return s
}

func (f *Factor) checkRange(lo, hi int) {
	if lo < 0 || hi > f.n || lo > hi {
		panic(badRange)
	}
}

func (f *Factor) checkSame(o *Factor) {
	if f.n != o.n || f.r != o.r || f.g != o.g || f.nr != o.nr || len(f.data) != len(o.data) {
		panic(badShape)
	}
}

// checkVec panics unless every slice has length d = n*r + g.
func (f *Factor) checkVec(vs ...[]float64) {
	d := f.nr + f.g
	for _, v := range vs {
		if len(v) != d {
			panic(badLen)
		}
	}
}

// checkDst panics unless dst has the length of the compressed storage and
// does not share it.
func (f *Factor) checkDst(dst []float64) {
	if len(dst) != len(f.data) {
		panic(badLen)
	}
	if len(dst) > 0 && &dst[0] == &f.data[0] {
		panic(badAlias)
	}
}
