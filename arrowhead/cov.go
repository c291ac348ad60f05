// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/internal/small"
)

// With P_i = T_g^-1 T_gi T_i^-1 the inverse of T is
//
//	T^-1 = [ T_i^-1 on the block diagonal,  0      ]
//	       [ -P_1 ... -P_n                  T_g^-1 ]
//
// so Sigma = T^-T T^-1 has the blocks
//
//	Sigma_gg = T_g^-T T_g^-1,
//	Sigma_ii = T_i^-T T_i^-1 + P_i' P_i,
//	Sigma_ig = -P_i' T_g^-1,
//
// none of which needs Sigma_gg or any other subject.

// CovGlobal writes into dst (length g*g, row-major) the marginal covariance
// of theta_g under N(mu, (T T')^-1), Sigma_gg = T_g^-T T_g^-1.
func (f *Factor) CovGlobal(dst []float64) {
	if len(dst) != f.g*f.g {
		panic(badLen)
	}
	invLower(f.g, f.Global(), dst)
	gramLower(f.g, dst)
}

// CovRange writes, for the subjects i in [lo, hi), the marginal covariance
// Cov(theta_i) into local (length CovLen(), n*r*r; r×r row-major at
// local[CovOffset(i):], i*r*r) and the cross-covariance Cov(theta_i,
// theta_g) into cross (length (d-g)*g; r×g row-major at cross[o*g:] for
// theta_i's offset o, i*r*g):
//
//	Cov(theta_i)          = T_i^-T T_i^-1 + P_i' P_i,
//	Cov(theta_i, theta_g) = -P_i' T_g^-1,   P_i = T_g^-1 T_gi T_i^-1.
//
// It costs O(g^2 r + r^3) per subject and needs no other subject. Calls on
// disjoint ranges may run concurrently.
func (f *Factor) CovRange(lo, hi int, local, cross []float64) {
	f.checkRange(lo, hi)
	g := f.g
	if len(local) != f.CovLen() || len(cross) != f.nr*g {
		panic(badLen)
	}
	for i := lo; i < hi; i++ {
		r, o, _ := f.blk(i)
		c := f.CovOffset(i)
		x := cross[o*g : (o+r)*g]
		f.covLocal(i, local[c:c+r*r], x)
		// Sigma_ig = -P_i' T_g^-1, row by row: each row is -T_g^-T x_p.
		for p := range r {
			xp := x[p*g : (p+1)*g]
			trsvT(g, f.Global(), xp)
			for k := range xp {
				xp[k] = -xp[k]
			}
		}
	}
}

// covLocal writes Cov(theta_i) into li (r×r) and P_i' into x (r×g), as
// CovRange's first steps.
func (f *Factor) covLocal(i int, li, x []float64) {
	g := f.g
	r, _, so := f.blk(i)
	tri := r * (r + 1) / 2
	tg := f.Global()
	ti, c := f.data[so:so+tri], f.data[so+tri:so+Stride(r, g)]
	// x = T_gi', then T_i^-T T_gi' column by column.
	for k := range g {
		crossColT(r, ti, c[k*r:k*r+r], x, g, k)
	}
	// Rows of x become the rows of P_i' = (T_i^-T T_gi') T_g^-T.
	for p := range r {
		trsvN(g, tg, x[p*g:(p+1)*g])
	}
	invLower(r, ti, li)
	gramLower(r, li)
	for p := range r {
		xp := x[p*g : (p+1)*g]
		for q := 0; q <= p; q++ {
			xq := x[q*g : (q+1)*g]
			var s float64
			for k, v := range xp {
				s += v * xq[k]
			}
			li[p*r+q] += s
			if q != p {
				li[q*r+p] = li[p*r+q]
			}
		}
	}
}

// crossColT sets column j of the row-major r×ld x to T_i^-T t, for the
// packed lower T_i = ti and a row t of T_gi.
func crossColT(r int, ti, t, x []float64, ld, j int) {
	for p := range r {
		x[p*ld+j] = t[p]
	}
	for p := r - 1; p >= 0; p-- {
		s := x[p*ld+j]
		for q := p + 1; q < r; q++ {
			s -= ti[q*(q+1)/2+p] * x[q*ld+j]
		}
		x[p*ld+j] = s / ti[p*(p+1)/2+p]
	}
}

// LocalCovRange writes, for the subjects i in [lo, hi), the marginal
// covariance Cov(theta_i) into local (length CovLen()), as CovRange does,
// given covG, the g×g Sigma_gg of CovGlobal:
//
//	Cov(theta_i) = T_i^-T T_i^-1 + X_i Sigma_gg X_i',  X_i = T_i^-T T_gi'.
//
// For a T_gi with m nonzero rows this costs O(r^2 m^2 + r g) instead of
// CovRange's O(r g^2): the global variables may be the levels of a factor
// crossed with the subjects, of which each subject meets few. A subject
// whose T_gi has more than g/2 nonzero rows is done as CovRange does it,
// with the same result to the last bit. Calls on disjoint ranges may run
// concurrently.
func (f *Factor) LocalCovRange(lo, hi int, covG, local []float64) {
	f.checkRange(lo, hi)
	g := f.g
	if len(local) != f.CovLen() || len(covG) != g*g {
		panic(badLen)
	}
	var x []float64
	nz := make([]int, 0, g)
	for i := lo; i < hi; i++ {
		r, _, so := f.blk(i)
		tri := r * (r + 1) / 2
		if len(x) < r*g {
			x = make([]float64, r*g)
		}
		co := f.CovOffset(i)
		li := local[co : co+r*r]
		ti, c := f.data[so:so+tri], f.data[so+tri:so+Stride(r, g)]
		nz = nonzeroRows(r, c, nz[:0])
		if 2*len(nz) > g {
			f.covLocal(i, li, x)
			continue
		}
		// x holds X_i on the nonzero rows only, r×m.
		m := len(nz)
		for j, k := range nz {
			crossColT(r, ti, c[k*r:k*r+r], x, m, j)
		}
		invLower(r, ti, li)
		gramLower(r, li)
		for p := range r {
			xp := x[p*m : (p+1)*m]
			for q := 0; q <= p; q++ {
				xq := x[q*m : (q+1)*m]
				var s float64
				for j, k := range nz {
					row := covG[k*g:]
					var t float64
					for l, kl := range nz {
						t += row[kl] * xq[l]
					}
					s += xp[j] * t
				}
				li[p*r+q] += s
				if q != p {
					li[q*r+p] = li[p*r+q]
				}
			}
		}
	}
}

// invLower writes the inverse of the packed lower L of order m into the
// lower triangle of the dense row-major m×m dst and zeroes the rest.
//
// Column j of the inverse is X[j][j] = 1/L[j][j] and, for a > j,
//
//	X[a][j] = -(sum over c = j, ..., a-1 of L[a][c] X[c][j]) / L[a][a],
//
// summed in that order. The columns are taken invBlock at a time and each
// row a of the block at once, so that the inner loop runs along rows of
// L and of dst rather than down a column of dst, a cache line a term at
// G in the hundreds; every entry is the same sum in the same order as
// column by column.
func invLower(m int, l, dst []float64) {
	clear(dst[:m*m])
	var acc [invBlock]float64
	for j0 := 0; j0 < m; j0 += invBlock {
		j1 := min(j0+invBlock, m)
		for a := j0; a < m; a++ {
			row := l[a*(a+1)/2 : a*(a+1)/2+a+1]
			// Columns j < min(a, j1) of the block take the sum; column a
			// (if in the block) the diagonal.
			w := min(a, j1) - j0
			s := acc[:w]
			clear(s)
			for c := j0; c < a; c++ {
				lac := row[c]
				// X[c][j] is needed for j <= c only (and is zero beyond).
				axpyInto(s, lac, dst[c*m+j0:c*m+min(c+1, j1)])
			}
			out := dst[a*m+j0 : a*m+j0+w]
			for k, v := range s {
				out[k] = -v / row[a]
			}
			if a < j1 {
				dst[a*m+a] = 1 / row[a]
			}
		}
	}
}

// axpyInto adds alpha x[k] to s[k] for k < len(x), four at a time.
func axpyInto(s []float64, alpha float64, x []float64) {
	s = s[:len(x)]
	k := 0
	for ; k+3 < len(x); k += 4 {
		xx := x[k : k+4 : k+4]
		ss := s[k : k+4 : k+4]
		ss[0] += alpha * xx[0]
		ss[1] += alpha * xx[1]
		ss[2] += alpha * xx[2]
		ss[3] += alpha * xx[3]
	}
	for ; k < len(x); k++ {
		s[k] += alpha * x[k]
	}
}

// invBlock is the number of columns invLower computes together: 512
// bytes of each row of the result, the block's rows 64 KiB at G = 128
// and 0.6 MiB at insteval's G = 1148.
const invBlock = 64

// gramLower overwrites the dense row-major m×m x, whose lower triangle holds
// a lower-triangular L, with the symmetric L' L:
//
//	(L' L)[a][b] = sum over k = max(a, b), ..., m-1 of L[k][a] L[k][b],
//
// summed in that order. Row a of the result is accumulated along the rows
// k of L, which the inner loop reads in place, rather than down two of
// its columns. Entry (a, b), b >= a, is written to the upper triangle
// when row a is done: later rows a' > a read only columns a' and beyond
// of rows k >= a' of L, none of which an earlier row overwrote (row a's
// diagonal is the only entry of the lower triangle it writes). The lower
// triangle is then copied from the upper.
func gramLower(m int, x []float64) {
	acc := make([]float64, m)
	for a := range m {
		s := acc[a:m]
		clear(s)
		for k := a; k < m; k++ {
			// b from a to k: L[k][b] is zero beyond.
			axpyInto(s, x[k*m+a], x[k*m+a:k*m+k+1])
		}
		copy(x[a*m+a:a*m+m], s)
	}
	for a := range m {
		for b := a + 1; b < m; b++ {
			x[b*m+a] = x[a*m+b]
		}
	}
}

// LocalCovTo stores in dst the marginal covariance Cov(theta_i) of subject
// i's local block, as CovRange does for one subject. If dst is empty it is
// resized to r×r; otherwise it must be r×r. If r is zero, dst is reset to
// empty.
func (f *Factor) LocalCovTo(i int, dst *mat.SymDense) {
	if uint(i) >= uint(f.n) {
		panic(badRange)
	}
	r, _, _ := f.blk(i)
	li := make([]float64, r*r)
	if r > 0 {
		f.covLocal(i, li, make([]float64, r*f.g))
	}
	symTo(r, li, dst)
}

// GlobalCovTo stores in dst the marginal covariance Cov(theta_g) =
// T_g^-T T_g^-1 of the global block. If dst is empty it is resized to g×g;
// otherwise it must be g×g. If g is zero, dst is reset to empty.
func (f *Factor) GlobalCovTo(dst *mat.SymDense) {
	cov := make([]float64, f.g*f.g)
	f.CovGlobal(cov)
	symTo(f.g, cov, dst)
}

// symTo copies the dense row-major symmetric m×m a into dst.
func symTo(m int, a []float64, dst *mat.SymDense) {
	if !small.ReuseSym(dst, m, badShape) {
		return
	}
	for x := range m {
		for y := x; y < m; y++ {
			dst.SetSym(x, y, a[x*m+y])
		}
	}
}
