// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package small

import (
	"errors"
	"math"

	"gonum.org/v1/gonum/mat"
)

// The kernels below work on packed lower triangles: element (u, v), v <=
// u, of an order-m matrix at u(u+1)/2 + v, as UnpackSym reads them.

// PackedIndex returns the position of element (u, v), v <= u, in a packed
// lower triangle.
func PackedIndex(u, v int) int { return u*(u+1)/2 + v }

// PackedLen returns the length of the packed lower triangle of order m.
func PackedLen(m int) int { return m * (m + 1) / 2 }

// PackedInvChol writes into dst the packed lower Cholesky factor of S^-1
// for the packed lower SPD s of order m (dst may not alias s), in gonum's
// arithmetic: the factor of S, its inverse, then the factor of that. It
// keeps its matrices from call to call, so one PackedInvChol serves every
// block of one order.
type PackedInvChol struct {
	a   *mat.SymDense
	ch  mat.Cholesky
	inv mat.SymDense
	l   mat.TriDense
}

// NewPackedInvChol returns a PackedInvChol for matrices of order m.
func NewPackedInvChol(m int) *PackedInvChol { return &PackedInvChol{a: mat.NewSymDense(m, nil)} }

// Into writes the packed factor of the inverse of s into dst.
func (w *PackedInvChol) Into(s, dst []float64) error {
	if w.a.SymmetricDim() == 1 {
		return invChol1(s[0], dst)
	}
	return w.gonumInto(s, dst)
}

// invChol1 is Into for order 1: gonum's arithmetic (the factor l of s,
// the inverse (1/l)^2, its factor), bit for bit, without its condition
// estimate, which allocates: 19 s of CPU over RVB's start of 10^7
// subjects.
func invChol1(s float64, dst []float64) error {
	if !(s > 0) || math.IsInf(s, 0) {
		return errNotPD
	}
	x := 1 / math.Sqrt(s)
	dst[0] = math.Sqrt(x * x)
	return nil
}

var errNotPD = errors.New("precision block not positive definite")

// gonumInto is Into by gonum's Cholesky, for any order.
func (w *PackedInvChol) gonumInto(s, dst []float64) error {
	m := w.a.SymmetricDim()
	for i := range m {
		for j := 0; j <= i; j++ {
			w.a.SetSym(i, j, s[PackedIndex(i, j)])
		}
	}
	if !w.ch.Factorize(w.a) {
		return errNotPD
	}
	if err := w.ch.InverseTo(&w.inv); err != nil {
		return err
	}
	if !w.ch.Factorize(&w.inv) {
		return errors.New("covariance block not positive definite")
	}
	w.ch.LTo(&w.l)
	for i := range m {
		for j := 0; j <= i; j++ {
			dst[PackedIndex(i, j)] = w.l.At(i, j)
		}
	}
	return nil
}

// PackedPrecOfCov writes the packed lower triangle of (C C')^-1 for the packed
// lower factor c of order m. work has length 2 m^2.
func PackedPrecOfCov(m int, c, dst, work []float64) {
	full, inv := work[:m*m], work[m*m:2*m*m]
	UnpackSym(m, c, full) // LowerInv reads the lower triangle only
	LowerInv(m, full, inv)
	InvFromChol(m, inv, full)
	for a := range m {
		copy(dst[a*(a+1)/2:a*(a+1)/2+a+1], full[a*m:a*m+a+1])
	}
}

// PackedCovFactorOfPrec writes into c the packed lower triangular C with
// C C' = S^-1 for the packed lower SPD s of order m: with P the reversal
// permutation and chol(P S P) = L, C = P L^-T P. work has length 2 m^2. It
// reports a non-positive-definite S.
func PackedCovFactorOfPrec(m int, s, c, work []float64) error {
	l := work[:m*m] // chol(P S P), row-major lower
	clear(l)
	at := func(i, j int) float64 { // (P S P)(i, j) for i >= j
		a, b := m-1-i, m-1-j // a <= b
		return s[b*(b+1)/2+a]
	}
	for j := range m {
		d := at(j, j)
		for k := range j {
			d -= l[j*m+k] * l[j*m+k]
		}
		if !(d > 0) {
			return errors.New("precision block not positive definite")
		}
		d = math.Sqrt(d)
		l[j*m+j] = d
		for i := j + 1; i < m; i++ {
			x := at(i, j)
			for k := range j {
				x -= l[i*m+k] * l[j*m+k]
			}
			l[i*m+j] = x / d
		}
	}
	// U = L^-T is upper; C(i, j) = U(m-1-i, m-1-j), lower for i >= j.
	inv := work[m*m : 2*m*m] // L^-1, lower
	LowerInv(m, l, inv)
	for i := range m {
		for j := 0; j <= i; j++ {
			// U(a, b) = L^-1(b, a) with a = m-1-i <= b = m-1-j.
			a, b := m-1-i, m-1-j
			c[i*(i+1)/2+j] = inv[b*m+a]
		}
	}
	return nil
}

// PackedEMAOuter sets the packed lower triangle s to b2 s + (1-b2) a a'.
func PackedEMAOuter(s, a []float64, b2 float64) {
	for x := range a {
		for y := 0; y <= x; y++ {
			s[x*(x+1)/2+y] = b2*s[x*(x+1)/2+y] + (1-b2)*a[x]*a[y]
		}
	}
}

// PackedAddOuter adds the packed lower triangle of c c' into s.
func PackedAddOuter(s, c []float64) {
	for x := range c {
		for y := 0; y <= x; y++ {
			s[x*(x+1)/2+y] += c[x] * c[y]
		}
	}
}

// PackedDiagIndices returns the positions of the diagonal entries of a
// block factor stored as n subject blocks of stride entries each, whose
// first r(r+1)/2 are a packed lower triangle of order r, followed by a
// packed lower triangle of order g: each subject's block, then the global
// one.
func PackedDiagIndices(n, r, g, stride int) []int {
	idx := make([]int, 0, n*r+g)
	for i := range n {
		for a := range r {
			idx = append(idx, i*stride+a*(a+1)/2+a)
		}
	}
	for a := range g {
		idx = append(idx, n*stride+a*(a+1)/2+a)
	}
	return idx
}

// PackedRowSumSq writes into dst the sums of squares of the rows of the
// packed lower factor c of order m: the diagonal of C C'.
func PackedRowSumSq(m int, c, dst []float64) {
	for a := range m {
		var v float64
		for k := 0; k <= a; k++ {
			x := c[a*(a+1)/2+k]
			v += x * x
		}
		dst[a] = v
	}
}

// LowerPackedRowSumSq writes into dst the diagonal of (L C)(L C)' for the
// lower triangular L (m×m, row-major) and the packed lower factor c of
// order m.
func LowerPackedRowSumSq(m int, l, c, dst []float64) {
	for a := range m {
		var v float64
		for q := 0; q <= a; q++ {
			var x float64
			for j := q; j <= a; j++ {
				x += l[a*m+j] * c[j*(j+1)/2+q]
			}
			v += x * x
		}
		dst[a] = v
	}
}

// ReuseSym readies dst for an m×m symmetric matrix as gonum's To methods
// do: an empty dst is resized, a non-empty one must be m×m, else it panics
// with msg. For m zero, which gonum cannot hold, it resets dst and reports
// false.
func ReuseSym(dst *mat.SymDense, m int, msg string) bool {
	if m == 0 {
		dst.Reset()
		return false
	}
	if dst.IsEmpty() {
		dst.ReuseAsSym(m)
	} else if dst.SymmetricDim() != m {
		panic(msg)
	}
	return true
}
