// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"
)

// NumOmega returns r(r+1)/2, the number of random-effect precision
// parameters omega for r random effects.
func NumOmega(r int) int { return r * (r + 1) / 2 }

// OmegaIndex returns the position in omega of entry (k, l), k >= l, of W*:
// omega is vech(W*) taken column-major, (0,0), (1,0), ..., (r-1,0), (1,1), ....
func OmegaIndex(k, l, r int) int {
	if l < 0 || k < l || k >= r {
		panic("glmm: omega index out of range")
	}
	return l*r - l*(l-1)/2 + k - l
}

// OmegaToW writes into dst (r×r, row-major) the lower-triangular factor W of
// the random-effect precision W W', where omega = vech(W*) column-major and W*
// is W with the log of its diagonal on the diagonal. The upper triangle of
// dst is zeroed.
//
// W is the Cholesky factor of the precision, not of the covariance: b_i ~
// N(0, (W W')^-1). Software that factors the covariance reports different
// numbers.
func OmegaToW(omega []float64, r int, dst []float64) {
	if len(omega) != NumOmega(r) || len(dst) != r*r {
		panic("glmm: bad length in OmegaToW")
	}
	clear(dst)
	idx := 0
	for l := range r {
		dst[l*r+l] = math.Exp(omega[idx])
		idx++
		for k := l + 1; k < r; k++ {
			dst[k*r+l] = omega[idx]
			idx++
		}
	}
}

// WToOmega is the inverse of OmegaToW: it writes vech(W*) of the lower
// triangle of w (r×r, row-major, positive diagonal) into omega.
func WToOmega(w []float64, r int, omega []float64) {
	if len(omega) != NumOmega(r) || len(w) != r*r {
		panic("glmm: bad length in WToOmega")
	}
	idx := 0
	for l := range r {
		omega[idx] = math.Log(w[l*r+l])
		idx++
		for k := l + 1; k < r; k++ {
			omega[idx] = w[k*r+l]
			idx++
		}
	}
}

// Precision returns the random-effect precision W W' given omega.
func Precision(omega []float64, r int) *mat.SymDense {
	w := make([]float64, r*r)
	OmegaToW(omega, r, w)
	prec := mat.NewSymDense(r, nil)
	prec.SymOuterK(1, mat.NewDense(r, r, w))
	return prec
}

// RECov returns the covariance (W W')^-1 = W^-T W^-1 of each b_i given omega.
func RECov(omega []float64, r int) *mat.SymDense {
	w := make([]float64, r*r)
	OmegaToW(omega, r, w)
	// Solve W V = I for V = W^-1 by forward substitution, then W^-T W^-1 =
	// V'V.
	v := make([]float64, r*r)
	for c := range r {
		for i := c; i < r; i++ {
			s := 0.0
			if i == c {
				s = 1
			}
			for k := c; k < i; k++ {
				s -= w[i*r+k] * v[k*r+c]
			}
			v[i*r+c] = s / w[i*r+i]
		}
	}
	cov := mat.NewSymDense(r, nil)
	cov.SymOuterK(1, mat.NewDense(r, r, v).T())
	return cov
}

// RESDCorr returns the standard deviations of the random effects and their
// correlation matrix given omega.
func RESDCorr(omega []float64, r int) (sd []float64, corr *mat.SymDense) {
	cov := RECov(omega, r)
	sd = make([]float64, r)
	for i := range r {
		sd[i] = math.Sqrt(cov.At(i, i))
	}
	corr = mat.NewSymDense(r, nil)
	for i := range r {
		for j := i; j < r; j++ {
			corr.SetSym(i, j, cov.At(i, j)/(sd[i]*sd[j]))
		}
	}
	return sd, corr
}

// OmegaNames returns the names of the entries of omega for random effects
// with the given names: "log W[a,a]" on the diagonal of W*, "W[b,a]" below
// it, in omega's column-major order.
func OmegaNames(randomNames []string) []string {
	r := len(randomNames)
	out := make([]string, 0, NumOmega(r))
	for l := range r {
		out = append(out, fmt.Sprintf("log W[%s,%s]", randomNames[l], randomNames[l]))
		for k := l + 1; k < r; k++ {
			out = append(out, fmt.Sprintf("W[%s,%s]", randomNames[k], randomNames[l]))
		}
	}
	return out
}
