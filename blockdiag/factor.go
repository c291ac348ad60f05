// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import (
	"slices"

	"github.com/james-bowman/sparse"
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/internal/small"
)

const (
	errNegativeDims = "blockdiag: negative dimension"
	errDataLength   = "blockdiag: data length does not match dimensions"
	errVecLength    = "blockdiag: vector length does not match dimension"
	errCompLength   = "blockdiag: compressed length does not match dimensions"
	errRange        = "blockdiag: subject range out of bounds"
	errSubject      = "blockdiag: subject index out of range"
	errIndex        = "blockdiag: index out of range"
	errMismatch     = "blockdiag: factor dimensions mismatch"
	errDstShape     = "blockdiag: destination dimension mismatch"
)

// Len returns the number of stored values of a factor with n subject blocks
// of order r and a global block of order g: n*r*(r+1)/2 + g*(g+1)/2.
func Len(n, r, g int) int {
	if n < 0 || r < 0 || g < 0 {
		panic(errNegativeDims)
	}
	return n*r*(r+1)/2 + g*(g+1)/2
}

// Factor is the block-diagonal lower-triangular matrix
// C = blockdiag(C_1, ..., C_n, C_g) in compressed storage; see the package
// documentation for the layout.
//
// The methods of a Factor that read it may be called concurrently; the
// range kernels that write it may run concurrently on disjoint subject
// ranges.
type Factor struct {
	n, r, g int
	tr      int // stored values per subject block, r*(r+1)/2
	nr, nt  int // offsets of the global block in vectors and in data
	data    []float64

	// off and toff, when not nil, give each subject's offset in vectors
	// and in data: its block is of variable size (NewVar, WrapVar).
	off, toff []int
}

// New returns a zero Factor with n subject blocks of order r and a global
// block of order g. Either n or r may be zero, and so may g.
func New(n, r, g int) *Factor {
	return Wrap(n, r, g, make([]float64, Len(n, r, g)))
}

// Wrap returns a Factor using data as its compressed storage, without
// copying. It panics if len(data) != Len(n, r, g).
func Wrap(n, r, g int, data []float64) *Factor {
	if len(data) != Len(n, r, g) {
		panic(errDataLength)
	}
	tr := r * (r + 1) / 2
	return &Factor{n: n, r: r, g: g, tr: tr, nr: n * r, nt: n * tr, data: data}
}

// Shape returns the number of subjects n, the order r of each subject block
// and the order g of the global block. For blocks of variable size r is 0
// (see Block).
func (f *Factor) Shape() (n, r, g int) { return f.n, f.r, f.g }

// Dims returns the order d = n*r + g of C (the sum of the block orders
// plus g for blocks of variable size) twice: with At and T, a
// Factor is a mat.Matrix, which gonum's functions read without a dense copy.
func (f *Factor) Dims() (r, c int) { d := f.Dim(); return d, d }

// T returns the transpose of C, a mat.Transpose of f.
func (f *Factor) T() mat.Matrix { return mat.Transpose{Matrix: f} }

// Dim returns the order d = n*r + g of C, the length of the vectors the
// kernels act on.
func (f *Factor) Dim() int { return f.nr + f.g }

// Data returns the compressed storage of the factor. The slice aliases the
// factor: changes to its elements change C.
func (f *Factor) Data() []float64 { return f.data }

// Local returns the packed lower triangle of C_i, subject i's block, aliasing the factor.
func (f *Factor) Local(i int) []float64 {
	if i < 0 || i >= f.n {
		panic(errSubject)
	}
	m, _, t := f.blk(i)
	e := t + m*(m+1)/2
	return f.data[t:e:e]
}

// Global returns the packed lower triangle of C_g, aliasing the factor.
func (f *Factor) Global() []float64 {
	return f.data[f.nt:]
}

// At returns the entry (i, j) of the d×d matrix C.
func (f *Factor) At(i, j int) float64 {
	d := f.Dim()
	if uint(i) >= uint(d) || uint(j) >= uint(d) {
		panic(errIndex)
	}
	if j > i {
		return 0
	}
	nr := f.nr
	if j >= nr {
		a, b := i-nr, j-nr
		return f.data[f.nt+a*(a+1)/2+b]
	}
	if i >= nr {
		return 0
	}
	s := f.subjectOf(i)
	_, o, t := f.blk(s)
	if j < o {
		return 0
	}
	a, b := i-o, j-o
	return f.data[t+a*(a+1)/2+b]
}

// DiagIndices returns the positions in Data of the diagonal of C, in the
// order of C's rows: each subject's block, then the global block.
func (f *Factor) DiagIndices() []int {
	if f.off == nil {
		return small.PackedDiagIndices(f.n, f.r, f.g, f.tr)
	}
	idx := make([]int, 0, f.Dim())
	for i := range f.n {
		m, _, t := f.blk(i)
		for a := range m {
			idx = append(idx, t+a*(a+1)/2+a)
		}
	}
	for a := range f.g {
		idx = append(idx, f.nt+a*(a+1)/2+a)
	}
	return idx
}

// SetIdentity sets C to scale times the identity.
func (f *Factor) SetIdentity(scale float64) {
	f.SetBlockScales(scale, scale)
}

// SetBlockScales sets C to the diagonal matrix with local on the diagonals
// of the subject blocks and global on the diagonal of the global block.
// The paper initialises RVB with local = 1 and global = 1/sqrt(N), N the
// number of observations.
func (f *Factor) SetBlockScales(local, global float64) {
	clear(f.data)
	for i := range f.n {
		blk := f.Local(i)
		for a := range f.blockOrder(i) {
			blk[a*(a+1)/2+a] = local
		}
	}
	blk := f.Global()
	for a := range f.g {
		blk[a*(a+1)/2+a] = global
	}
}

// CopyFrom copies the values of src into f. It panics if the dimensions
// differ.
func (f *Factor) CopyFrom(src *Factor) {
	if f.n != src.n || f.r != src.r || f.g != src.g || !slices.Equal(f.off, src.off) {
		panic(errMismatch)
	}
	copy(f.data, src.data)
}

// LocalCovTo stores in dst the marginal covariance C_i C_i' of the local
// block of subject i. If dst is empty it is resized to r×r; otherwise it
// must be r×r (r_i×r_i for blocks of variable size). If r is zero, dst is
// reset to empty.
func (f *Factor) LocalCovTo(i int, dst *mat.SymDense) {
	c := f.Local(i)
	covTo(f.blockOrder(i), c, dst)
}

// GlobalCovTo stores in dst the marginal covariance C_g C_g' of the global
// block. If dst is empty it is resized to g×g; otherwise it must be g×g.
// If g is zero, dst is reset to empty.
func (f *Factor) GlobalCovTo(dst *mat.SymDense) {
	covTo(f.g, f.Global(), dst)
}

func covTo(m int, c []float64, dst *mat.SymDense) {
	if !small.ReuseSym(dst, m, errDstShape) {
		return
	}
	for i := range m {
		for j := 0; j <= i; j++ {
			var s float64
			for k := 0; k <= j; k++ {
				s += c[i*(i+1)/2+k] * c[j*(j+1)/2+k]
			}
			dst.SetSym(i, j, s)
		}
	}
}

// ToTriDense returns C as a new dense d×d lower-triangular matrix. It is
// meant for tests and small problems.
func (f *Factor) ToTriDense() *mat.TriDense {
	d := f.Dim()
	if d == 0 {
		return &mat.TriDense{}
	}
	t := mat.NewTriDense(d, mat.Lower, nil)
	f.each(func(i, j int, v float64) { t.SetTri(i, j, v) })
	return t
}

// ToCSR returns C as a new d×d sparse matrix in compressed sparse row form.
// Every stored entry of the lower triangles is a structural entry, zero or
// not, so the matrix has len(Data()) entries; the packed row-major storage
// of the blocks is already in CSR order, and the data are copied.
func (f *Factor) ToCSR() *sparse.CSR {
	d := f.Dim()
	ia := make([]int, d+1)
	ja := make([]int, 0, len(f.data))
	row := 0
	f.each(func(i, j int, _ float64) {
		for row < i {
			row++
			ia[row] = len(ja)
		}
		ja = append(ja, j)
	})
	for row < d {
		row++
		ia[row] = len(ja)
	}
	return sparse.NewCSR(d, d, ia, ja, append([]float64(nil), f.data...))
}

// each calls fn for every stored entry of C in storage order, which is row
// order, with its global row and column.
func (f *Factor) each(fn func(i, j int, v float64)) {
	k := 0
	for s := range f.n {
		m, base, _ := f.blk(s)
		for a := range m {
			for b := 0; b <= a; b++ {
				fn(base+a, base+b, f.data[k])
				k++
			}
		}
	}
	base := f.nr
	for a := range f.g {
		for b := 0; b <= a; b++ {
			fn(base+a, base+b, f.data[k])
			k++
		}
	}
}
