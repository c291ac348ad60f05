// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import "math"

// The functions in this file act on one lower-triangular block of order m
// packed by rows in c (entry (a, b), a >= b, at a*(a+1)/2+b) and on vectors
// of length m. They are the only place where the arithmetic lives; the range
// and global kernels slice the blocks out and call them.

// blockMulVec sets dst = C x. dst may alias x: rows are formed from the
// bottom up, and row i reads only x[0..i].
func blockMulVec(m int, c, dst, x []float64) {
	for i := m - 1; i >= 0; i-- {
		row := c[i*(i+1)/2 : i*(i+1)/2+i+1]
		xi := x[:i+1]
		var s float64
		for j, v := range row {
			s += v * xi[j]
		}
		dst[i] = s
	}
}

// blockMulTransVec sets dst = C' x. dst may alias x: entry a reads only
// x[a..m-1] and the entries are formed from the top down.
func blockMulTransVec(m int, c, dst, x []float64) {
	for a := 0; a < m; a++ {
		var s float64
		k := a*(a+1)/2 + a
		for i := a; i < m; i++ {
			s += c[k] * x[i]
			k += i + 1
		}
		dst[a] = s
	}
}

// blockSolve sets dst = C^-1 x by forward substitution. dst may alias x.
func blockSolve(m int, c, dst, x []float64) {
	for i := 0; i < m; i++ {
		off := i * (i + 1) / 2
		row := c[off : off+i]
		s := x[i]
		for j, v := range row {
			s -= v * dst[j]
		}
		dst[i] = s / c[off+i]
	}
}

// blockSolveTrans sets dst = C^-T x by back substitution. dst may alias x.
func blockSolveTrans(m int, c, dst, x []float64) {
	for a := m - 1; a >= 0; a-- {
		s := x[a]
		k := (a+1)*(a+2)/2 + a
		for i := a + 1; i < m; i++ {
			s -= c[k] * dst[i]
			k += i + 1
		}
		dst[a] = s / c[a*(a+1)/2+a]
	}
}

// blockDraw sets theta = mu + C z. theta may alias mu or z.
func blockDraw(m int, c, theta, mu, z []float64) {
	for i := m - 1; i >= 0; i-- {
		row := c[i*(i+1)/2 : i*(i+1)/2+i+1]
		zi := z[:i+1]
		s := mu[i]
		for j, v := range row {
			s += v * zi[j]
		}
		theta[i] = s
	}
}

// logAbsProd accumulates log|x_1 ... x_k| as a product m and a binary
// exponent e, so that a log-determinant takes one logarithm per range of
// subjects instead of one per diagonal entry, without overflow. It must
// start as logAbsProd{m: 1}.
//
// Factors and products within 2^±500 are multiplied directly: no overflow
// or underflow is possible, and for diagonals near 1 the exponent stays 0,
// so log(m) does not cancel against e*ln2. Anything else (extreme values,
// zero, infinities, NaN) takes the slow path through math.Frexp, which
// also renormalises m.
type logAbsProd struct {
	m float64
	e int
}

// mulDiag multiplies p by the diagonal entries of the consecutive packed
// blocks of order m in c.
func (p *logAbsProd) mulDiag(c []float64, m int) {
	const lo, hi = 0x1p-500, 0x1p500
	t := m * (m + 1) / 2
	if t == 0 {
		return
	}
	pm := p.m
	for b := 0; b+t <= len(c); b += t {
		blk := c[b : b+t : b+t]
		for a := range m {
			x := math.Abs(blk[a*(a+3)/2]) // entry (a, a)
			if x >= lo && x <= hi {
				if y := pm * x; y >= lo && y <= hi {
					pm = y
					continue
				}
			}
			p.m = pm
			p.mulSlow(x)
			pm = p.m
		}
	}
	p.m = pm
}

func (p *logAbsProd) mulSlow(a float64) {
	fr, ex := math.Frexp(a)
	m, em := math.Frexp(p.m * fr) // |p.m| and fr within [2^-1022, 2^500]
	p.m, p.e = m, p.e+ex+em
}

func (p *logAbsProd) log() float64 {
	return math.Log(p.m) + float64(p.e)*math.Ln2
}

// blockNatGrad computes the natural gradient of Algorithm 1S for one block:
// dMu = C C' g and dC = C halfdiag(C' lower(g z')).
//
// For a >= b the entry (a, b) of C' lower(g z') is y_a z_b with y = C' g, so
// dC_ij = z_j (sum_{a=j..i} C_ia y_a - C_ij y_j / 2), and the full sum at
// j = 0 is (C y)_i, the mean direction. One pass over each row from the
// diagonal leftwards gives both. y is kept in dMu, which may therefore alias
// g but not z.
func blockNatGrad(m int, c, dMu, dC, z, g []float64) {
	blockMulTransVec(m, c, dMu, g)
	y := dMu
	for i := m - 1; i >= 0; i-- {
		off := i * (i + 1) / 2
		var s float64
		for j := i; j >= 0; j-- {
			cy := c[off+j] * y[j]
			s += cy
			dC[off+j] = z[j] * (s - 0.5*cy)
		}
		// Rows above i still need y[0..i-1] only.
		dMu[i] = s
	}
}

// blockEuclidGrad sets dC = lower(g z').
func blockEuclidGrad(m int, dC, z, g []float64) {
	for i := 0; i < m; i++ {
		off := i * (i + 1) / 2
		gi := g[i]
		row := dC[off : off+i+1]
		for j := range row {
			row[j] = gi * z[j]
		}
	}
}

// blockInvFisher applies the inverse Fisher information of vech(C) to a
// Euclidean gradient A on the lower triangle: dC = C halfdiag(C' A).
// dC may alias a.
func blockInvFisher(m int, c, dC, a []float64) {
	// Hbar = halfdiag(C' A), row by row from the top: row p of Hbar reads
	// rows p..m-1 of A, so overwriting row p in place is safe.
	for p := 0; p < m; p++ {
		offp := p * (p + 1) / 2
		for b := 0; b <= p; b++ {
			var s float64
			k := offp + p // C_pp, then C_{p+1,p}, ...
			l := offp + b // A_pb, then A_{p+1,b}, ...
			for q := p; q < m; q++ {
				s += c[k] * a[l]
				k += q + 1
				l += q + 1
			}
			if b == p {
				s *= 0.5
			}
			dC[offp+b] = s
		}
	}
	// N = C Hbar, row by row from the bottom: row i of N reads rows j..i
	// of Hbar in column j, and entry (i, j) itself only for N_ij.
	for i := m - 1; i >= 0; i-- {
		offi := i * (i + 1) / 2
		for j := 0; j <= i; j++ {
			var s float64
			l := j*(j+1)/2 + j // Hbar_jj, then Hbar_{j+1,j}, ...
			for p := j; p <= i; p++ {
				s += c[offi+p] * dC[l]
				l += p + 1
			}
			dC[offi+j] = s
		}
	}
}

// blockCov sets dst to the lower triangle of C C'. dst must not alias c.
func blockCov(m int, c, dst []float64) {
	for i := 0; i < m; i++ {
		offi := i * (i + 1) / 2
		for j := 0; j <= i; j++ {
			offj := j * (j + 1) / 2
			var s float64
			for k := 0; k <= j; k++ {
				s += c[offi+k] * c[offj+k]
			}
			dst[offi+j] = s
		}
	}
}

// blockCholesky sets l to the lower Cholesky factor of the symmetric matrix
// whose lower triangle is s, row by row (Cholesky–Banachiewicz). l may alias
// s. On failure it returns the row whose pivot is not positive and finite,
// and that pivot; NaN anywhere in a row of s reaches the row's pivot.
func blockCholesky(m int, l, s []float64) (row int, pivot float64, ok bool) {
	for i := 0; i < m; i++ {
		offi := i * (i + 1) / 2
		for j := 0; j < i; j++ {
			offj := j * (j + 1) / 2
			v := s[offi+j]
			for k := 0; k < j; k++ {
				v -= l[offi+k] * l[offj+k]
			}
			l[offi+j] = v / l[offj+j]
		}
		v := s[offi+i]
		for k := 0; k < i; k++ {
			v -= l[offi+k] * l[offi+k]
		}
		if !pivotOK(v) {
			return i, v, false
		}
		l[offi+i] = math.Sqrt(v)
	}
	return 0, 0, true
}
