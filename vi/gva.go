// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"math"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/parallel"
)

// gva is the Gaussian approximation with a block-arrowhead precision
// Cholesky factor T (Algorithm 2S).
type gva struct {
	*base
	t  *arrowhead.Factor
	tz []float64 // T_g z_g

	// Fisher map arguments.
	fsrc, fdst []float64

	fv []float64 // (T T')^-1 a_mu in progress; made on the first fisher

	vs *vognState // VOGN's state, made on first use

	// support, if not nil, holds the rows of each T_gi that may be
	// nonzero (GlobalSupporter); the others stay zero: the factor's
	// kernels (SetRows) and the step rules' spans skip them, and the
	// start and the Fisher map, which fill them, zero them.
	support *crossSupport

	// chunked, when not nil, holds a draw's theta, grad and tmp chunk by
	// chunk, and gives Snngm the natural gradient block by block
	// (gvaChunks); base's theta, grad and tmp are then nil.
	chunked *gvaChunks

	passDraw, passSolve, passNat, passFisher1, passFisher2 func(int) error
}

// newGVA returns the family; sup, if not nil, is the supports of the
// T_gi (GlobalSupporter).
func newGVA(t Target, set Settings, pool *parallel.Pool, sh *shard, sup *crossSupport) *gva {
	n, r, g := t.Dims()
	tri := r * (r + 1) / 2
	stride := tri + g*r
	_, snngm := set.Rule.(Snngm)
	sizes := blockSizes(t)
	chunked := chunkedGVA && snngm && sh == nil && sup == nil && pool != nil && n > 0 && r > 0 && sizes == nil
	size := arrowhead.Len(n, r, g)
	if sizes != nil {
		size = arrowhead.LenVar(sizes, g)
	}
	f := &gva{base: newBase(t, set, pool, sh, size, stride, chunked)}
	f.t = f.newFactor(f.lam[f.d:])
	if sizes != nil {
		f.soff = make([]int, n+1)
		for i := range n {
			f.soff[i+1], _ = f.t.Span(0, i+1)
		}
	}
	if sup != nil {
		f.support = sup
		f.t.SetRows(sup.start, sup.rows)
	}
	f.tz = make([]float64, g)
	if chunked {
		f.chunked = newGVAChunks(f)
	} else {
		f.labelFactor(f.t.DiagIndices())
	}
	f.passDraw = f.drawPass
	f.passSolve = f.solvePass
	f.passNat = f.natPass
	f.passFisher1 = f.fisherPass1
	f.passFisher2 = f.fisherPass2
	return f
}

func (f *gva) precision() bool { return true }

// stepBlocks leaves out the rows of T_gi outside the supports.
func (f *gva) stepBlocks() [][]span {
	if f.support == nil {
		return f.base.stepBlocks()
	}
	return f.ownGlobal(f.support.stepBlocks(f.chunks, f.r, f.g, f.stride, len(f.lam)))
}

func (f *gva) free() int {
	n := len(f.lam)
	if f.support != nil {
		n -= (f.n*f.g - len(f.support.rows)) * f.r
	}
	return n
}
func (f *gva) check() error { return f.checkDiag() }

func (f *gva) init(ctx context.Context, how Init) error {
	clear(f.lam[:f.d])
	f.t.SetIdentity(math.Sqrt(float64(max(1, f.nobs))))
	if how == InitMode {
		return initMode(f.base, false, func(_ []float64, t *arrowhead.Factor) error {
			f.t.CopyFrom(t)
			f.t.ClearUnlisted(0, f.n, f.t.Data())
			return nil
		})
	}
	return nil
}

// drawPass draws the subjects of chunk k, evaluates the target there and
// starts the solve v = T^-1 grad h.
func (f *gva) drawPass(k int) error {
	lo, hi := f.chunks.Bounds(k)
	f.drawChunk(k, lo, hi)
	mu := f.lam[:f.d]
	f.t.DrawRange(lo, hi, f.theta, f.tmp, mu, f.z)
	f.partLD[k] = f.t.LogDetRange(lo, hi)
	if err := f.localChunk(k, lo, hi); err != nil {
		return err
	}
	if !f.grads {
		return nil
	}
	// u = T_d^-T z is in tmp; keep it for the Euclidean gradient.
	s1 := f.partS1[k]
	clear(s1)
	if !f.noEntropy {
		// grad h = grad log p + T z: v holds T z for the chunk.
		f.t.MulVecRange(lo, hi, f.v, f.z, s1)
		f.addGrad(lo, hi, f.v)
	}
	return nil
}

func (f *gva) natPass(k int) error {
	lo, hi := f.chunks.Bounds(k)
	d := f.d
	if f.nat != nil {
		f.t.NatGradRange(lo, hi, f.nat[d:], f.z, f.v, f.tz)
		f.t.SolveTransRange(lo, hi, f.nat[:d], f.v)
	}
	if f.euc != nil {
		copy(f.euc[f.at(lo):f.at(hi)], f.grad[f.at(lo):f.at(hi)])
		f.t.EuclidGradRange(lo, hi, f.euc[d:], f.theta, f.lam[:d], f.tmp, f.v)
	}
	return nil
}

// solvePass is v_i = T_i^-1 grad_i with the partial sums of T_gi v_i.
func (f *gva) solvePass(k int) error {
	lo, hi := f.chunks.Bounds(k)
	s := f.partG[k]
	clear(s)
	f.t.SolveRange(lo, hi, f.v, f.grad, s)
	return nil
}

func (f *gva) estimate(iter uint64, nat, euc []float64, noEntropy bool) (float64, error) {
	if f.chunked != nil {
		if nat != nil || euc != nil {
			panic("vi: gradients of a chunked GVA family are taken block by block")
		}
		return f.chunked.estimate(iter, false)
	}
	f.begin(iter, nat, euc, noEntropy)
	d, nr := f.d, f.nr
	mu := f.lam[:d]
	zzg := f.drawGlobal()
	f.t.DrawGlobal(f.theta, f.tmp, mu, f.z)
	lp, zz, ld, err := f.reduce(f.pool.Run(f.chunks.Len(), f.passDraw))
	if err != nil {
		return 0, err
	}
	lp = f.addGlobalTerm(lp)
	zz += zzg
	ld += f.t.LogDetGlobal()
	h := lp - (f.logNorm() + ld - 0.5*zz)
	if !f.grads {
		return h, nil
	}
	if !noEntropy {
		// (T z)_g = T_g z_g + sum_i T_gi z_i.
		f.t.MulVecGlobal(f.v, f.z, f.sumS1)
		f.addGlobalGrad(f.v)
	}
	// v = T^-1 grad h: local blocks, then the global block.
	if err := f.reduceG(f.pool.Run(f.chunks.Len(), f.passSolve)); err != nil {
		return 0, err
	}
	f.t.SolveGlobal(f.v, f.grad, f.sumG)
	if nat != nil {
		f.t.NatGradGlobal(nat[d:], f.z, f.v, f.tz)
		f.t.SolveTransGlobal(nat[:d], f.v)
	}
	if euc != nil {
		copy(euc[nr:d], f.grad[nr:d])
		f.t.EuclidGradGlobal(euc[d:], f.tmp, f.v)
	}
	if err := f.pool.Run(f.chunks.Len(), f.passNat); err != nil {
		return 0, err
	}
	return h, nil
}

// fisher maps a Euclidean gradient src = (a_mu, A) on the pattern of T to
// the natural gradient dst = ((T T')^-1 a_mu, N).
func (f *gva) fisher(src, dst []float64) error {
	f.fsrc, f.fdst = src, dst
	d := f.d
	if f.fv == nil {
		// Only the rules that step along Euclidean gradients map them:
		// Snngm's fits never hold it.
		f.fv = make([]float64, d)
	}
	if err := f.reduceG(f.pool.Run(f.chunks.Len(), f.passFisher1)); err != nil {
		return err
	}
	f.t.SolveGlobal(f.fv, src[:d], f.sumG)
	f.t.SolveTransGlobal(dst[:d], f.fv)
	f.t.InvFisherGlobal(dst[d:], src[d:])
	return f.pool.Run(f.chunks.Len(), f.passFisher2)
}

func (f *gva) fisherPass1(k int) error {
	lo, hi := f.chunks.Bounds(k)
	s := f.partG[k]
	clear(s)
	f.t.SolveRange(lo, hi, f.fv, f.fsrc[:f.d], s)
	return nil
}

func (f *gva) fisherPass2(k int) error {
	lo, hi := f.chunks.Bounds(k)
	d := f.d
	f.t.SolveTransRange(lo, hi, f.fdst[:d], f.fv)
	f.t.InvFisherRange(lo, hi, f.fdst[d:], f.fsrc[d:])
	f.t.ClearUnlisted(lo, hi, f.fdst[d:])
	return nil
}
