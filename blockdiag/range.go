// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import "fmt"

// NotPositiveDefiniteError reports a block of a block-diagonal matrix that is not
// positive definite, or whose factorisation met NaN or infinite values.
type NotPositiveDefiniteError struct {
	// Subject is the subject of the failing block, or -1 for the global
	// block.
	Subject int
	// Row is the row of the block at which the factorisation failed.
	Row int
	// Pivot is the failing pivot: not positive, NaN or +Inf.
	Pivot float64
}

// Error implements the error interface.
func (e *NotPositiveDefiniteError) Error() string {
	if e.Subject < 0 {
		return fmt.Sprintf("blockdiag: global block not positive definite (pivot %g at row %d)", e.Pivot, e.Row)
	}
	return fmt.Sprintf("blockdiag: block of subject %d not positive definite (pivot %g at row %d)", e.Subject, e.Pivot, e.Row)
}

func (f *Factor) checkRange(lo, hi int) {
	if lo < 0 || hi < lo || hi > f.n {
		panic(errRange)
	}
}

func (f *Factor) checkVec(v ...[]float64) {
	d := f.Dim()
	for _, x := range v {
		if len(x) != d {
			panic(errVecLength)
		}
	}
}

func (f *Factor) checkComp(v ...[]float64) {
	for _, x := range v {
		if len(x) != len(f.data) {
			panic(errCompLength)
		}
	}
}

// The kernels below come in pairs. The Range kernel acts on the blocks of
// the subjects in [lo, hi); the Global kernel acts on the global block.
// Vectors have the full length d and compressed slices the full length
// Len(n, r, g) (LenVar for blocks of variable size); a kernel reads and
// writes only the entries of its blocks. Blocks of order 1 and 2 of a
// fixed-size factor take the unrolled kernels of small.go; every other
// block, and every block of a factor of variable size, the general ones.

// MulVecRange sets dst_i = C_i x_i for the subjects i in [lo, hi). dst may
// alias x.
func (f *Factor) MulVecRange(lo, hi int, dst, x []float64) {
	f.checkRange(lo, hi)
	f.checkVec(dst, x)
	r, t := f.r, f.tr
	switch r {
	case 1:
		mulVec1(f.data[lo:hi], dst[lo:hi], x[lo:hi])
	case 2:
		mulVec2(f.data[lo*t:hi*t], dst[lo*r:hi*r], x[lo*r:hi*r])
	default:
		if f.off != nil {
			for i := lo; i < hi; i++ {
				m, o, t0 := f.blk(i)
				t1 := t0 + m*(m+1)/2
				blockMulVec(m, f.data[t0:t1], dst[o:o+m], x[o:o+m])
			}
			return
		}
		for i := lo; i < hi; i++ {
			blockMulVec(r, f.data[i*t:(i+1)*t], dst[i*r:(i+1)*r], x[i*r:(i+1)*r])
		}
	}
}

// MulVecGlobal sets dst_g = C_g x_g. dst may alias x.
func (f *Factor) MulVecGlobal(dst, x []float64) {
	f.checkVec(dst, x)
	nr := f.nr
	blockMulVec(f.g, f.Global(), dst[nr:], x[nr:])
}

// MulTransVecRange sets dst_i = C_i' x_i for the subjects i in [lo, hi).
// dst may alias x.
func (f *Factor) MulTransVecRange(lo, hi int, dst, x []float64) {
	f.checkRange(lo, hi)
	f.checkVec(dst, x)
	r, t := f.r, f.tr
	switch r {
	case 1:
		mulVec1(f.data[lo:hi], dst[lo:hi], x[lo:hi])
	case 2:
		mulTransVec2(f.data[lo*t:hi*t], dst[lo*r:hi*r], x[lo*r:hi*r])
	default:
		if f.off != nil {
			for i := lo; i < hi; i++ {
				m, o, t0 := f.blk(i)
				t1 := t0 + m*(m+1)/2
				blockMulTransVec(m, f.data[t0:t1], dst[o:o+m], x[o:o+m])
			}
			return
		}
		for i := lo; i < hi; i++ {
			blockMulTransVec(r, f.data[i*t:(i+1)*t], dst[i*r:(i+1)*r], x[i*r:(i+1)*r])
		}
	}
}

// MulTransVecGlobal sets dst_g = C_g' x_g. dst may alias x.
func (f *Factor) MulTransVecGlobal(dst, x []float64) {
	f.checkVec(dst, x)
	nr := f.nr
	blockMulTransVec(f.g, f.Global(), dst[nr:], x[nr:])
}

// SolveRange sets dst_i = C_i^-1 x_i for the subjects i in [lo, hi), by
// forward substitution. dst may alias x. A zero diagonal gives infinities or
// NaN, not a panic.
func (f *Factor) SolveRange(lo, hi int, dst, x []float64) {
	f.checkRange(lo, hi)
	f.checkVec(dst, x)
	r, t := f.r, f.tr
	switch r {
	case 1:
		solve1(f.data[lo:hi], dst[lo:hi], x[lo:hi])
	case 2:
		solve2(f.data[lo*t:hi*t], dst[lo*r:hi*r], x[lo*r:hi*r])
	default:
		if f.off != nil {
			for i := lo; i < hi; i++ {
				m, o, t0 := f.blk(i)
				t1 := t0 + m*(m+1)/2
				blockSolve(m, f.data[t0:t1], dst[o:o+m], x[o:o+m])
			}
			return
		}
		for i := lo; i < hi; i++ {
			blockSolve(r, f.data[i*t:(i+1)*t], dst[i*r:(i+1)*r], x[i*r:(i+1)*r])
		}
	}
}

// SolveGlobal sets dst_g = C_g^-1 x_g. dst may alias x.
func (f *Factor) SolveGlobal(dst, x []float64) {
	f.checkVec(dst, x)
	nr := f.nr
	blockSolve(f.g, f.Global(), dst[nr:], x[nr:])
}

// SolveTransRange sets dst_i = C_i^-T x_i for the subjects i in [lo, hi),
// by back substitution. dst may alias x. With x = z this is the gradient
// Sigma^-1 (theta - mu) of -log q at theta = mu + C z.
func (f *Factor) SolveTransRange(lo, hi int, dst, x []float64) {
	f.checkRange(lo, hi)
	f.checkVec(dst, x)
	r, t := f.r, f.tr
	switch r {
	case 1:
		solve1(f.data[lo:hi], dst[lo:hi], x[lo:hi])
	case 2:
		solveTrans2(f.data[lo*t:hi*t], dst[lo*r:hi*r], x[lo*r:hi*r])
	default:
		if f.off != nil {
			for i := lo; i < hi; i++ {
				m, o, t0 := f.blk(i)
				t1 := t0 + m*(m+1)/2
				blockSolveTrans(m, f.data[t0:t1], dst[o:o+m], x[o:o+m])
			}
			return
		}
		for i := lo; i < hi; i++ {
			blockSolveTrans(r, f.data[i*t:(i+1)*t], dst[i*r:(i+1)*r], x[i*r:(i+1)*r])
		}
	}
}

// SolveTransGlobal sets dst_g = C_g^-T x_g. dst may alias x.
func (f *Factor) SolveTransGlobal(dst, x []float64) {
	f.checkVec(dst, x)
	nr := f.nr
	blockSolveTrans(f.g, f.Global(), dst[nr:], x[nr:])
}

// CovMulVecRange sets dst_i = C_i C_i' x_i for the subjects i in [lo, hi),
// the product with the covariance Sigma = C C'. dst may alias x.
func (f *Factor) CovMulVecRange(lo, hi int, dst, x []float64) {
	f.checkRange(lo, hi)
	f.checkVec(dst, x)
	if f.off != nil {
		for i := lo; i < hi; i++ {
			m, o, t0 := f.blk(i)
			t1 := t0 + m*(m+1)/2
			c := f.data[t0:t1]
			d := dst[o : o+m]
			blockMulTransVec(m, c, d, x[o:o+m])
			blockMulVec(m, c, d, d)
		}
		return
	}
	r, t := f.r, f.tr
	for i := lo; i < hi; i++ {
		c := f.data[i*t : (i+1)*t]
		d := dst[i*r : (i+1)*r]
		blockMulTransVec(r, c, d, x[i*r:(i+1)*r])
		blockMulVec(r, c, d, d)
	}
}

// CovMulVecGlobal sets dst_g = C_g C_g' x_g. dst may alias x.
func (f *Factor) CovMulVecGlobal(dst, x []float64) {
	f.checkVec(dst, x)
	nr := f.nr
	c, d := f.Global(), dst[nr:]
	blockMulTransVec(f.g, c, d, x[nr:])
	blockMulVec(f.g, c, d, d)
}

// DrawRange sets theta_i = mu_i + C_i z_i for the subjects i in [lo, hi):
// with z standard normal, theta is a draw from q. theta may alias mu or z.
func (f *Factor) DrawRange(lo, hi int, theta, mu, z []float64) {
	f.checkRange(lo, hi)
	f.checkVec(theta, mu, z)
	r, t := f.r, f.tr
	switch r {
	case 1:
		draw1(f.data[lo:hi], theta[lo:hi], mu[lo:hi], z[lo:hi])
	case 2:
		draw2(f.data[lo*t:hi*t], theta[lo*r:hi*r], mu[lo*r:hi*r], z[lo*r:hi*r])
	default:
		if f.off != nil {
			for i := lo; i < hi; i++ {
				m, o, t0 := f.blk(i)
				t1 := t0 + m*(m+1)/2
				blockDraw(m, f.data[t0:t1], theta[o:o+m], mu[o:o+m], z[o:o+m])
			}
			return
		}
		for i := lo; i < hi; i++ {
			blockDraw(r, f.data[i*t:(i+1)*t], theta[i*r:(i+1)*r], mu[i*r:(i+1)*r], z[i*r:(i+1)*r])
		}
	}
}

// DrawGlobal sets theta_g = mu_g + C_g z_g. theta may alias mu or z.
func (f *Factor) DrawGlobal(theta, mu, z []float64) {
	f.checkVec(theta, mu, z)
	nr := f.nr
	blockDraw(f.g, f.Global(), theta[nr:], mu[nr:], z[nr:])
}

// LogDetRange returns the sum over the subjects i in [lo, hi) of
// log|det C_i| = sum log|diag(C_i)|. The log-density of q at
// theta = mu + C z is -d/2 log(2 pi) - log|det C| - z'z/2.
func (f *Factor) LogDetRange(lo, hi int) float64 {
	f.checkRange(lo, hi)
	ld := logAbsProd{m: 1}
	if f.off == nil {
		ld.mulDiag(f.data[lo*f.tr:hi*f.tr], f.r)
		return ld.log()
	}
	for i := lo; i < hi; i++ {
		ld.mulDiag(f.Local(i), f.blockOrder(i))
	}
	return ld.log()
}

// LogDetGlobal returns log|det C_g|.
func (f *Factor) LogDetGlobal() float64 {
	ld := logAbsProd{m: 1}
	ld.mulDiag(f.Global(), f.g)
	return ld.log()
}

// NatGradRange computes, for the subjects i in [lo, hi), the natural
// gradient of Algorithm 1S from one draw theta = mu + C z and the gradient
// gradH of h = log p - log q at theta:
//
//	dMu_i = C_i C_i' gradH_i,   dC_i = C_i halfdiag(C_i' lower(gradH_i z_i')).
//
// dMu and gradH are vectors, dC is compressed. It costs O(r^2) per subject.
// dMu may alias gradH; neither may alias z, and dC must not alias the
// factor.
func (f *Factor) NatGradRange(lo, hi int, dMu, dC, z, gradH []float64) {
	f.checkRange(lo, hi)
	f.checkVec(dMu, z, gradH)
	f.checkComp(dC)
	r, t := f.r, f.tr
	switch r {
	case 1:
		natGrad1(f.data[lo:hi], dMu[lo:hi], dC[lo:hi], z[lo:hi], gradH[lo:hi])
	case 2:
		natGrad2(f.data[lo*t:hi*t], dMu[lo*r:hi*r], dC[lo*t:hi*t], z[lo*r:hi*r], gradH[lo*r:hi*r])
	default:
		if f.off != nil {
			for i := lo; i < hi; i++ {
				m, o, t0 := f.blk(i)
				t1 := t0 + m*(m+1)/2
				blockNatGrad(m, f.data[t0:t1], dMu[o:o+m], dC[t0:t1], z[o:o+m], gradH[o:o+m])
			}
			return
		}
		for i := lo; i < hi; i++ {
			blockNatGrad(r, f.data[i*t:(i+1)*t], dMu[i*r:(i+1)*r], dC[i*t:(i+1)*t], z[i*r:(i+1)*r], gradH[i*r:(i+1)*r])
		}
	}
}

// NatGradGlobal is NatGradRange for the global block.
func (f *Factor) NatGradGlobal(dMu, dC, z, gradH []float64) {
	f.checkVec(dMu, z, gradH)
	f.checkComp(dC)
	nr, nt := f.nr, f.nt
	blockNatGrad(f.g, f.Global(), dMu[nr:], dC[nt:], z[nr:], gradH[nr:])
}

// EuclidGradRange sets, for the subjects i in [lo, hi), the one-draw
// estimate dC_i = lower(gradH_i z_i') of the Euclidean gradient of the
// lower bound with respect to C_i. The estimate for mu is gradH itself.
func (f *Factor) EuclidGradRange(lo, hi int, dC, z, gradH []float64) {
	f.checkRange(lo, hi)
	f.checkVec(z, gradH)
	f.checkComp(dC)
	r, t := f.r, f.tr
	switch r {
	case 1:
		euclidGrad1(dC[lo:hi], z[lo:hi], gradH[lo:hi])
	case 2:
		euclidGrad2(dC[lo*t:hi*t], z[lo*r:hi*r], gradH[lo*r:hi*r])
	default:
		if f.off != nil {
			for i := lo; i < hi; i++ {
				m, o, t0 := f.blk(i)
				t1 := t0 + m*(m+1)/2
				blockEuclidGrad(m, dC[t0:t1], z[o:o+m], gradH[o:o+m])
			}
			return
		}
		for i := lo; i < hi; i++ {
			blockEuclidGrad(r, dC[i*t:(i+1)*t], z[i*r:(i+1)*r], gradH[i*r:(i+1)*r])
		}
	}
}

// EuclidGradGlobal is EuclidGradRange for the global block.
func (f *Factor) EuclidGradGlobal(dC, z, gradH []float64) {
	f.checkVec(z, gradH)
	f.checkComp(dC)
	nr, nt := f.nr, f.nt
	blockEuclidGrad(f.g, dC[nt:], z[nr:], gradH[nr:])
}

// InvFisherRange applies the inverse Fisher information of
// (mu, vech(C_1), ..., vech(C_n), vech(C_g)) to a Euclidean gradient with
// mean part aMu and factor part aC (compressed, on the pattern of C), for
// the subjects i in [lo, hi):
//
//	dMu_i = C_i C_i' aMu_i,   dC_i = C_i halfdiag(C_i' aC_i).
//
// This is Lemma 1 (iii) of the paper blockwise. It costs O(r^3) per
// subject. dMu may alias aMu and dC may alias aC; dC must not alias the
// factor.
func (f *Factor) InvFisherRange(lo, hi int, dMu, dC, aMu, aC []float64) {
	f.checkRange(lo, hi)
	f.checkVec(dMu, aMu)
	f.checkComp(dC, aC)
	r, t := f.r, f.tr
	switch r {
	case 1:
		invFisher1(f.data[lo:hi], dMu[lo:hi], dC[lo:hi], aMu[lo:hi], aC[lo:hi])
	case 2:
		invFisher2(f.data[lo*t:hi*t], dMu[lo*r:hi*r], dC[lo*t:hi*t], aMu[lo*r:hi*r], aC[lo*t:hi*t])
	default:
		if f.off != nil {
			for i := lo; i < hi; i++ {
				m, o, t0 := f.blk(i)
				t1 := t0 + m*(m+1)/2
				c := f.data[t0:t1]
				d := dMu[o : o+m]
				blockMulTransVec(m, c, d, aMu[o:o+m])
				blockMulVec(m, c, d, d)
				blockInvFisher(m, c, dC[t0:t1], aC[t0:t1])
			}
			return
		}
		for i := lo; i < hi; i++ {
			c := f.data[i*t : (i+1)*t]
			d := dMu[i*r : (i+1)*r]
			blockMulTransVec(r, c, d, aMu[i*r:(i+1)*r])
			blockMulVec(r, c, d, d)
			blockInvFisher(r, c, dC[i*t:(i+1)*t], aC[i*t:(i+1)*t])
		}
	}
}

// InvFisherGlobal is InvFisherRange for the global block.
func (f *Factor) InvFisherGlobal(dMu, dC, aMu, aC []float64) {
	f.checkVec(dMu, aMu)
	f.checkComp(dC, aC)
	nr, nt := f.nr, f.nt
	c, d := f.Global(), dMu[nr:]
	blockMulTransVec(f.g, c, d, aMu[nr:])
	blockMulVec(f.g, c, d, d)
	blockInvFisher(f.g, c, dC[nt:], aC[nt:])
}

// CovRange stores in the compressed dst the lower triangles of the marginal
// covariances Sigma_i = C_i C_i' of the subjects i in [lo, hi). Blocks are
// independent under q, so these and the global block are all of Sigma. dst
// must not alias the factor.
func (f *Factor) CovRange(lo, hi int, dst []float64) {
	f.checkRange(lo, hi)
	f.checkComp(dst)
	if f.off != nil {
		for i := lo; i < hi; i++ {
			m, _, t0 := f.blk(i)
			t1 := t0 + m*(m+1)/2
			blockCov(m, f.data[t0:t1], dst[t0:t1])
		}
		return
	}
	r, t := f.r, f.tr
	for i := lo; i < hi; i++ {
		blockCov(r, f.data[i*t:(i+1)*t], dst[i*t:(i+1)*t])
	}
}

// CovGlobal stores in dst the lower triangle of C_g C_g'.
func (f *Factor) CovGlobal(dst []float64) {
	f.checkComp(dst)
	nt := f.nt
	blockCov(f.g, f.Global(), dst[nt:])
}

// CholRange sets C_i, for the subjects i in [lo, hi), to the lower
// Cholesky factor of the symmetric positive definite block S_i whose lower
// triangle is stored in the compressed s. s may alias the factor's storage,
// in which case the blocks are factorised in place.
//
// If a block is not positive definite, or its factorisation meets NaN or
// +Inf, CholRange stops and returns a *NotPositiveDefiniteError for the first such
// subject; the blocks of earlier subjects have been factorised and the
// failing block is partly overwritten.
func (f *Factor) CholRange(lo, hi int, s []float64) error {
	f.checkRange(lo, hi)
	f.checkComp(s)
	r, t := f.r, f.tr
	switch r {
	case 1:
		if k, piv := cholesky1(f.data[lo:hi], s[lo:hi]); k >= 0 {
			return &NotPositiveDefiniteError{Subject: lo + k, Row: 0, Pivot: piv}
		}
	case 2:
		if k, row, piv := cholesky2(f.data[lo*t:hi*t], s[lo*t:hi*t]); k >= 0 {
			return &NotPositiveDefiniteError{Subject: lo + k, Row: row, Pivot: piv}
		}
	default:
		if f.off != nil {
			for i := lo; i < hi; i++ {
				m, _, t0 := f.blk(i)
				t1 := t0 + m*(m+1)/2
				if row, piv, ok := blockCholesky(m, f.data[t0:t1], s[t0:t1]); !ok {
					return &NotPositiveDefiniteError{Subject: i, Row: row, Pivot: piv}
				}
			}
			return nil
		}
		for i := lo; i < hi; i++ {
			if row, piv, ok := blockCholesky(r, f.data[i*t:(i+1)*t], s[i*t:(i+1)*t]); !ok {
				return &NotPositiveDefiniteError{Subject: i, Row: row, Pivot: piv}
			}
		}
	}
	return nil
}

// CholGlobal is CholRange for the global block; its error has
// Subject -1.
func (f *Factor) CholGlobal(s []float64) error {
	f.checkComp(s)
	nt := f.nt
	if row, piv, ok := blockCholesky(f.g, f.Global(), s[nt:]); !ok {
		return &NotPositiveDefiniteError{Subject: -1, Row: row, Pivot: piv}
	}
	return nil
}
