// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/internal/scratch"
	"github.com/sparsevi/sparsevi/internal/small"
)

// rvbVOGN is the state VOGN keeps beside lambda for the block-diagonal
// family: the precision S in the compressed form of blockdiag (packed lower
// blocks) and the momentum.
type rvbVOGN struct {
	vognCore
	work   [][]float64 // per chunk: scratch of 2 r^2; the global block uses its own
	gwork  []float64
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
		small.PackedPrecOfCov(r, f.c.Local(i), vs.s[i*tri:(i+1)*tri], make([]float64, 2*r*r))
	}
	small.PackedPrecOfCov(g, f.c.Global(), vs.s[n*tri:], vs.gwork)
	vs.wire(f.base, vognOps{
		drawGlobal: func() { f.c.DrawGlobal(f.theta, f.lam[:f.d], f.z) },
		drawRange: func(lo, hi int) float64 {
			f.c.DrawRange(lo, hi, f.theta, f.lam[:f.d], f.z)
			return f.c.LogDetRange(lo, hi)
		},
		update:       f.vognUpdate,
		logDetGlobal: f.c.LogDetGlobal,
		global:       n * tri,
	})
	vs.passMu = f.vognMuPass
	f.vs = vs
}

// vognUpdate updates subject i's block of S.
func (f *rvbFamily) vognUpdate(i int, ai, _ []float64) {
	tri := f.r * (f.r + 1) / 2
	small.PackedEMAOuter(f.vs.s[i*tri:(i+1)*tri], ai, f.vs.b2)
}

// vognMuPass takes the mean step and refactors each subject block.
func (f *rvbFamily) vognMuPass(k int) error {
	lo, hi := f.chunks.Bounds(k)
	vs := f.vs
	r := f.r
	tri := r * (r + 1) / 2
	for i := lo; i < hi; i++ {
		c := f.c.Local(i)
		if err := small.PackedCovFactorOfPrec(r, vs.s[i*tri:(i+1)*tri], c, vs.work[k]); err != nil {
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

func (f *rvbFamily) vognStep(iter uint64, rule VOGN, alpha float64) (float64, error) {
	f.vognInit()
	vs := f.vs
	h, err := vs.evaluate(f.base, iter, rule, alpha)
	if err != nil {
		return 0, err
	}
	d, nr, g := f.d, f.n*f.r, f.g
	sg := vs.s[vs.ops.global:]
	if err := small.PackedCovFactorOfPrec(g, sg, f.c.Global(), vs.gwork); err != nil {
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
