// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"fmt"
	"math"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/internal/small"
	"github.com/sparsevi/sparsevi/parallel"
)

// rvbFamily is the Gaussian approximation with a block-diagonal covariance
// Cholesky factor C (Algorithm 1S).
type rvbFamily struct {
	*base
	c *blockdiag.Factor

	fsrc, fdst []float64

	passDraw, passGrad, passFisher func(int) error

	vs *rvbVOGN // VOGN's state, made on first use
}

func newRVB(t Target, set Settings, pool *parallel.Pool, sh *shard) *rvbFamily {
	n, r, g := t.Dims()
	tri := r * (r + 1) / 2
	sizes := blockSizes(t)
	size := blockdiag.Len(n, r, g)
	if sizes != nil {
		size = blockdiag.LenVar(sizes, g)
	}
	f := &rvbFamily{base: newBase(t, set, pool, sh, size, tri, false)}
	if sizes != nil {
		f.c = blockdiag.WrapVar(sizes, g, f.lam[f.d:])
		f.soff = make([]int, n+1)
		for i := range n {
			_, f.soff[i+1] = f.c.Span(i, i+1)
		}
	} else {
		f.c = blockdiag.Wrap(n, r, g, f.lam[f.d:])
	}
	f.labelFactor(f.c.DiagIndices())
	f.passDraw = f.drawPass
	f.passGrad = f.gradPass
	f.passFisher = f.fisherPass
	return f
}

func (f *rvbFamily) precision() bool { return false }
func (f *rvbFamily) free() int       { return len(f.lam) }
func (f *rvbFamily) check() error    { return f.checkDiag() }

// init sets the paper's start: mu = 0, unit diagonal local blocks, and a
// global block 1/sqrt(N) I with N the number of observations.
func (f *rvbFamily) init(ctx context.Context, how Init) error {
	clear(f.lam[:f.d])
	f.c.SetBlockScales(1, 1/math.Sqrt(float64(max(1, f.nobs))))
	if how == InitMode {
		// For a Gaussian target the best approximation with independent
		// blocks has covariance S_kk^-1, the inverse of each diagonal block
		// of the precision (not the marginal covariance, which is far wider
		// for the global block).
		return initMode(f.base, true, func(s []float64, _ *arrowhead.Factor) error {
			n, g := f.n, f.g
			// The subjects' blocks chunk by chunk on the pool: each is
			// its own, and the error is the first subject's that
			// failed, as in order.
			err := f.pool.Run(f.chunks.Len(), func(k int) error {
				lo, hi := f.chunks.Bounds(k)
				// One workspace for each order of block.
				var w []*small.PackedInvChol
				for i := lo; i < hi; i++ {
					r, _ := f.c.Block(i)
					if r == 0 {
						continue
					}
					for len(w) <= r {
						w = append(w, nil)
					}
					if w[r] == nil {
						w[r] = small.NewPackedInvChol(r)
					}
					slo, shi := f.c.Span(i, i+1)
					if err := w[r].Into(s[slo:shi], f.c.Local(i)); err != nil {
						return fmt.Errorf("vi: initialisation: subject %d: %w", i, err)
					}
				}
				return nil
			})
			if err != nil {
				return err
			}
			_, nt := f.c.Span(0, n)
			if err := small.NewPackedInvChol(g).Into(s[nt:], f.c.Global()); err != nil {
				return fmt.Errorf("vi: initialisation: global block: %w", err)
			}
			return nil
		})
	}
	return nil
}

func (f *rvbFamily) drawPass(k int) error {
	lo, hi := f.chunks.Bounds(k)
	f.drawChunk(k, lo, hi)
	f.c.DrawRange(lo, hi, f.theta, f.lam[:f.d], f.z)
	f.partLD[k] = f.c.LogDetRange(lo, hi)
	if err := f.localChunk(k, lo, hi); err != nil {
		return err
	}
	if f.grads && !f.noEntropy {
		// grad h = grad log p + C^-T z.
		f.c.SolveTransRange(lo, hi, f.tmp, f.z)
		f.addGrad(lo, hi, f.tmp)
	}
	return nil
}

func (f *rvbFamily) gradPass(k int) error {
	lo, hi := f.chunks.Bounds(k)
	d := f.d
	if f.euc != nil {
		copy(f.euc[f.at(lo):f.at(hi)], f.grad[f.at(lo):f.at(hi)])
		f.c.EuclidGradRange(lo, hi, f.euc[d:], f.z, f.grad)
	}
	if f.nat != nil {
		f.c.NatGradRange(lo, hi, f.nat[:d], f.nat[d:], f.z, f.grad)
	}
	return nil
}

func (f *rvbFamily) estimate(iter uint64, nat, euc []float64, noEntropy bool) (float64, error) {
	f.begin(iter, nat, euc, noEntropy)
	d, nr := f.d, f.nr
	zzg := f.drawGlobal()
	f.c.DrawGlobal(f.theta, f.lam[:d], f.z)
	lp, zz, ld, err := f.reduce(f.pool.Run(f.chunks.Len(), f.passDraw))
	if err != nil {
		return 0, err
	}
	lp = f.addGlobalTerm(lp)
	zz += zzg
	ld += f.c.LogDetGlobal()
	h := lp - (f.logNorm() - ld - 0.5*zz)
	if !f.grads {
		return h, nil
	}
	if !noEntropy {
		f.c.SolveTransGlobal(f.tmp, f.z)
		f.addGlobalGrad(f.tmp)
	}
	if euc != nil {
		copy(euc[nr:d], f.grad[nr:d])
		f.c.EuclidGradGlobal(euc[d:], f.z, f.grad)
	}
	if nat != nil {
		f.c.NatGradGlobal(nat[:d], nat[d:], f.z, f.grad)
	}
	if err := f.pool.Run(f.chunks.Len(), f.passGrad); err != nil {
		return 0, err
	}
	return h, nil
}

func (f *rvbFamily) fisher(src, dst []float64) error {
	f.fsrc, f.fdst = src, dst
	d := f.d
	f.c.InvFisherGlobal(dst[:d], dst[d:], src[:d], src[d:])
	return f.pool.Run(f.chunks.Len(), f.passFisher)
}

func (f *rvbFamily) fisherPass(k int) error {
	lo, hi := f.chunks.Bounds(k)
	d := f.d
	f.c.InvFisherRange(lo, hi, f.fdst[:d], f.fdst[d:], f.fsrc[:d], f.fsrc[d:])
	return nil
}

// globalMoments writes the global means and sds of the current state into
// mean and sd.
func (f *rvbFamily) globalMoments(mean, sd []float64) { f.momentsOf(f.lam, mean, sd) }

// momentsOf writes the global means and sds of the state lam (laid out as
// f.lam, whose factor ends with the global block) into mean and sd.
func (f *rvbFamily) momentsOf(lam, mean, sd []float64) {
	copy(mean, lam[f.nr:f.d])
	small.PackedRowSumSq(f.g, lam[len(lam)-len(f.c.Global()):], sd)
	for a, v := range sd[:f.g] {
		sd[a] = math.Sqrt(v)
	}
}
