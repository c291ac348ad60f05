// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"errors"
	"math"

	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/internal/scratch"
)

// rvbVOGN is the state VOGN keeps beside lambda for the block-diagonal
// family: the precision S in the compressed form of blockdiag (packed lower
// blocks) and the momentum.
type rvbVOGN struct {
	vognCore
	work   [][]float64 // per chunk: scratch of 2 r^2; the global block uses its own
	gwork  []float64
	passS  func(int) error
	passMu func(int) error
}

func (f *rvbFamily) vognInit() {
	if f.vs != nil {
		return
	}
	n, r, g := f.n, f.r, f.g
	vs := &rvbVOGN{
		vognCore: newVOGNCore(f.base, blockdiag.Len(n, r, g)),
		work:     scratch.Partials(f.chunks.Len(), 2*r*r),
		gwork:    make([]float64, 2*g*g),
	}
	// S = (C C')^-1 blockwise at the start.
	tri := r * (r + 1) / 2
	for i := range n {
		precOfCov(r, f.c.Local(i), vs.s[i*tri:(i+1)*tri], make([]float64, 2*r*r))
	}
	precOfCov(g, f.c.Global(), vs.s[n*tri:], vs.gwork)
	vs.passS = f.vognSPass
	vs.passMu = f.vognMuPass
	f.vs = vs
}

// precOfCov writes the packed lower triangle of (C C')^-1 for the packed
// lower factor c of order m. work has length 2 m^2.
func precOfCov(m int, c, dst, work []float64) {
	inv := work[:m*m] // C^-1, row-major lower
	clear(inv)
	for col := range m {
		// Solve C x = e_col by forward substitution.
		for i := col; i < m; i++ {
			s := 0.0
			if i == col {
				s = 1
			}
			for k := col; k < i; k++ {
				s -= c[i*(i+1)/2+k] * inv[k*m+col]
			}
			inv[i*m+col] = s / c[i*(i+1)/2+i]
		}
	}
	// (C C')^-1 = C^-T C^-1.
	for a := range m {
		for b := 0; b <= a; b++ {
			var x float64
			for k := a; k < m; k++ {
				x += inv[k*m+a] * inv[k*m+b]
			}
			dst[a*(a+1)/2+b] = x
		}
	}
}

// covFactorOfPrec writes into c the packed lower triangular C with
// C C' = S^-1 for the packed lower SPD s of order m: with P the reversal
// permutation and chol(P S P) = L, C = P L^-T P. work has length 2 m^2. It
// reports a non-positive-definite S.
func covFactorOfPrec(m int, s, c, work []float64) error {
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
	clear(inv)
	for col := range m {
		for i := col; i < m; i++ {
			x := 0.0
			if i == col {
				x = 1
			}
			for k := col; k < i; k++ {
				x -= l[i*m+k] * inv[k*m+col]
			}
			inv[i*m+col] = x / l[i*m+i]
		}
	}
	for i := range m {
		for j := 0; j <= i; j++ {
			// U(a, b) = L^-1(b, a) with a = m-1-i <= b = m-1-j.
			a, b := m-1-i, m-1-j
			c[i*(i+1)/2+j] = inv[b*m+a]
		}
	}
	return nil
}

// vognSPass draws the chunk's subjects, evaluates each subject's gradient
// and updates its precision block.
func (f *rvbFamily) vognSPass(k int) error {
	lo, hi := f.chunks.Bounds(k)
	vs := f.vs
	f.drawChunk(k, lo, hi)
	f.c.DrawRange(lo, hi, f.theta, f.lam[:f.d], f.z)
	f.partLD[k] = f.c.LogDetRange(lo, hi)
	tri := f.r * (f.r + 1) / 2
	cc := vs.partCC[k]
	clear(f.partG[k])
	clear(cc)
	var lp float64
	for i := lo; i < hi; i++ {
		ai, ci, li, err := f.vognSubject(k, i, vs.priorG)
		if err != nil {
			return err
		}
		lp += li
		emaOuterTri(vs.s[i*tri:(i+1)*tri], ai, vs.b2)
		addOuterTri(cc, ci)
	}
	f.partLP[k] = lp
	return nil
}

// vognMuPass takes the mean step and refactors each subject block.
func (f *rvbFamily) vognMuPass(k int) error {
	lo, hi := f.chunks.Bounds(k)
	vs := f.vs
	r := f.r
	tri := r * (r + 1) / 2
	for i := lo; i < hi; i++ {
		c := f.c.Local(i)
		if err := covFactorOfPrec(r, vs.s[i*tri:(i+1)*tri], c, vs.work[k]); err != nil {
			return err
		}
	}
	// mu_i += alpha C_i C_i' m^_i with the new C (S^-1 = C C').
	f.c.CovMulVecRange(lo, hi, f.tmp, f.grad)
	for j := lo * r; j < hi*r; j++ {
		f.lam[j] += vs.alpha * f.tmp[j]
	}
	return nil
}

func (f *rvbFamily) vognStep(iter uint64, set Settings, alpha float64) (float64, error) {
	f.vognInit()
	vs := f.vs
	vs.begin(set, alpha)
	f.iter = iter
	d, nr, n, g := f.d, f.n*f.r, f.n, f.g
	zzg := f.drawGlobal()
	f.c.DrawGlobal(f.theta, f.lam[:d], f.z)
	lpg := vs.priorShare(f.base)
	if err := f.pool.Run(f.chunks.Len(), vs.passS); err != nil {
		return 0, err
	}
	lp, zz, ld := f.reduce()
	ld += f.c.LogDetGlobal()
	h := lp + lpg - (f.logNorm() - ld - 0.5*(zz+zzg))
	vs.globalGradient(f.base)
	tri := f.r * (f.r + 1) / 2
	sg := vs.s[n*tri:]
	vs.emaGlobal(sg)
	vs.momentum(f.grad)
	if err := covFactorOfPrec(g, sg, f.c.Global(), vs.gwork); err != nil {
		return 0, err
	}
	f.c.CovMulVecGlobal(f.tmp, f.grad)
	for j := nr; j < d; j++ {
		f.lam[j] += alpha * f.tmp[j]
	}
	if err := f.pool.Run(f.chunks.Len(), vs.passMu); err != nil {
		return 0, err
	}
	return h, nil
}

func (f *rvbFamily) vognReset() { f.vs = nil }
