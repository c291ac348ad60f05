// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package small holds kernels on small r×r matrices stored row-major in
// full: the blocks of one subject's random effects. r is small (1 to a
// handful), so plain loops beat any call into a general linear algebra
// package, and they allocate nothing.
package small

import "math"

// Chol writes into l the lower Cholesky factor of the symmetric
// positive definite r×r matrix a (only its lower triangle is read) and
// zeroes the upper triangle of l. It reports false when a pivot is not
// positive and finite.
func Chol(r int, a, l []float64) bool {
	for i := range r {
		for j := 0; j <= i; j++ {
			s := a[i*r+j]
			for k := range j {
				s -= l[i*r+k] * l[j*r+k]
			}
			if i == j {
				if !(s > 0) || math.IsInf(s, 0) {
					return false
				}
				l[i*r+i] = math.Sqrt(s)
			} else {
				l[i*r+j] = s / l[j*r+j]
			}
		}
		for j := i + 1; j < r; j++ {
			l[i*r+j] = 0
		}
	}
	return true
}

// LowerInv writes the inverse of the lower triangular r×r matrix l into
// dst (lower triangular, upper triangle zeroed), by forward substitution.
func LowerInv(r int, l, dst []float64) {
	for c := range r {
		for i := range c {
			dst[i*r+c] = 0
		}
		for i := c; i < r; i++ {
			s := 0.0
			if i == c {
				s = 1
			}
			for k := c; k < i; k++ {
				s -= l[i*r+k] * dst[k*r+c]
			}
			dst[i*r+c] = s / l[i*r+i]
		}
	}
}

// InvFromChol writes into dst the inverse (R R')^-1 = R^-T R^-1 of the
// matrix with lower Cholesky factor R, given rinv = R^-1.
func InvFromChol(r int, rinv, dst []float64) {
	for u := range r {
		for v := 0; v <= u; v++ {
			s := 0.0
			for k := u; k < r; k++ {
				s += rinv[k*r+u] * rinv[k*r+v]
			}
			dst[u*r+v] = s
			dst[v*r+u] = s
		}
	}
}

// SolveChol overwrites x with (R R')^-1 x, R lower triangular.
func SolveChol(r int, rf, x []float64) {
	LowerSolve(r, rf, x)
	LowerTSolve(r, rf, x)
}

// SymMulVec writes a x into dst, a r×r in full storage.
func SymMulVec(r int, a, x, dst []float64) {
	for i := range r {
		s := 0.0
		for k, v := range a[i*r : i*r+r] {
			s += v * x[k]
		}
		dst[i] = s
	}
}

// LowerMulVec writes l x into dst, l lower triangular.
func LowerMulVec(r int, l, x, dst []float64) {
	for i := r - 1; i >= 0; i-- {
		s := 0.0
		for k := 0; k <= i; k++ {
			s += l[i*r+k] * x[k]
		}
		dst[i] = s
	}
}

// LowerTMulVec writes l' x into dst, l lower triangular.
func LowerTMulVec(r int, l, x, dst []float64) {
	for i := range r {
		s := 0.0
		for k := i; k < r; k++ {
			s += l[k*r+i] * x[k]
		}
		dst[i] = s
	}
}

// LowerSolve overwrites x with l^-1 x, l lower triangular.
func LowerSolve(r int, l, x []float64) {
	for i := range r {
		s := x[i]
		for k := range i {
			s -= l[i*r+k] * x[k]
		}
		x[i] = s / l[i*r+i]
	}
}

// LowerTSolve overwrites x with l^-T x, l lower triangular: with l the
// Cholesky factor of a precision and x standard normal, the result is a
// draw of covariance (l l')^-1.
func LowerTSolve(r int, l, x []float64) {
	for i := r - 1; i >= 0; i-- {
		s := x[i]
		for k := i + 1; k < r; k++ {
			s -= l[k*r+i] * x[k]
		}
		x[i] = s / l[i*r+i]
	}
}

// UnpackSym writes into dst (r×r, full) the symmetric matrix whose lower
// triangle is packed by rows in packed: element (u, v), v <= u, at
// u(u+1)/2 + v.
func UnpackSym(r int, packed, dst []float64) {
	for u := range r {
		row := packed[u*(u+1)/2:]
		for v := 0; v <= u; v++ {
			dst[u*r+v] = row[v]
			dst[v*r+u] = row[v]
		}
	}
}

// Quad returns x' a x for a symmetric r×r a in full storage.
func Quad(r int, a, x []float64) float64 {
	s := 0.0
	for i := range r {
		t := 0.0
		for k, v := range a[i*r : i*r+r] {
			t += v * x[k]
		}
		s += x[i] * t
	}
	return s
}
