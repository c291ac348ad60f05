// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"math"
	"slices"
	"sync/atomic"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/internal/small"
)

// GlobalCov returns the covariance of the global block under the fitted
// approximation.
func (r *Result) GlobalCov() *mat.SymDense {
	g := r.G
	dst := make([]float64, g*g)
	switch r.Method {
	case GVA:
		copy(dst, r.gvaCovGlobal())
	case BlockDiag:
		// blockdiag stores covariances in its compressed (packed lower) form.
		f := r.blockDiag()
		packed := make([]float64, len(r.Factor))
		f.CovGlobal(packed)
		small.UnpackSym(g, packed[len(packed)-g*(g+1)/2:], dst)
	}
	return mat.NewSymDense(g, dst)
}

// GlobalMoments returns the means and sds of the global block under the
// fitted approximation.
func (r *Result) GlobalMoments() (mean, sd []float64) {
	cov := r.GlobalCov()
	sd = make([]float64, r.G)
	for a := range sd {
		sd[a] = math.Sqrt(cov.At(a, a))
	}
	return r.Mu[len(r.Mu)-r.G:], sd
}

// LocalMoments returns the means and sds of every local variable under
// the fitted approximation, laid out as Mu's local part (subject-major,
// with Sizes each subject's block after those before it). For a
// Reparametrised result they are those of the transformed variables, not
// of the random effects: rvb.Target.Summarize maps them back.
func (r *Result) LocalMoments() (mean, sd []float64) {
	nr := len(r.Mu) - r.G
	cov := r.LocalCov()
	sd = make([]float64, nr)
	off, co := 0, 0
	for i := range r.N {
		m := r.R
		if r.Sizes != nil {
			m = r.Sizes[i]
		}
		for a := range m {
			sd[off+a] = math.Sqrt(cov[co+a*m+a])
		}
		off += m
		co += m * m
	}
	return r.Mu[:nr:nr], sd
}

// LocalCov returns the covariances of every subject's local block, r×r
// row-major at [i*r*r:] (with Sizes, r_i×r_i after the blocks of the
// subjects before it), under the fitted approximation.
func (r *Result) LocalCov() []float64 {
	size := r.N * r.R * r.R
	for _, m := range r.Sizes {
		size += m * m
	}
	dst := make([]float64, size)
	switch r.Method {
	case GVA:
		f := r.arrowhead()
		// From Sigma_gg: with crossed levels among the globals a subject's
		// T_gi has few nonzero rows, and the blocks cost O(r^2 m^2)
		// instead of O(r G^2) each.
		f.LocalCovRange(0, r.N, r.gvaCovGlobal(), dst)
	case BlockDiag:
		f := r.blockDiag()
		packed := make([]float64, len(r.Factor))
		f.CovRange(0, r.N, packed)
		off := 0
		for i := range r.N {
			m, _ := f.Block(i)
			lo, hi := f.Span(i, i+1)
			small.UnpackSym(m, packed[lo:hi], dst[off:off+m*m])
			off += m * m
		}
	}
	return dst
}

// globalCov is GVA's Sigma_gg = T_g^-T T_g^-1 (g×g row-major) with the
// global block of the factor it came from. The summaries ask for it
// several times (glmmfit's text summary five: the fixed effects, their
// correlation, the scales, the diagnostics and the local covariances),
// and it costs O(g^3): 0.7 s each with insteval's 1148 global variables.
type globalCov struct {
	tg, cov []float64
}

// covCache holds the last globalCov of a Result and its copies.
type covCache struct{ last atomic.Pointer[globalCov] }

// gvaCovGlobal returns Sigma_gg of a GVA result, computed once while the
// factor's global block stays as it was (Mu and Factor are exported and
// may be changed in place: the block is compared bit for bit, which
// costs O(g^2)). The slice must not be modified. Concurrent calls are
// safe, as GlobalCov's were before it kept the result.
func (r *Result) gvaCovGlobal() []float64 {
	f := r.arrowhead()
	tg := f.Global()
	if r.cov != nil {
		if c := r.cov.last.Load(); c != nil && len(c.cov) == r.G*r.G && sameBits(c.tg, tg) {
			return c.cov
		}
	}
	cov := make([]float64, r.G*r.G)
	f.CovGlobal(cov)
	if r.cov != nil {
		r.cov.last.Store(&globalCov{tg: slices.Clone(tg), cov: cov})
	}
	return cov
}

// arrowhead lays GVA's factor over the Result's.
func (r *Result) arrowhead() *arrowhead.Factor {
	if r.Sizes != nil {
		return arrowhead.WrapVar(r.Sizes, r.G, r.Factor)
	}
	return arrowhead.Wrap(r.N, r.R, r.G, r.Factor)
}

// blockDiag lays the block-diagonal factor over the Result's.
func (r *Result) blockDiag() *blockdiag.Factor {
	if r.Sizes != nil {
		return blockdiag.WrapVar(r.Sizes, r.G, r.Factor)
	}
	return blockdiag.Wrap(r.N, r.R, r.G, r.Factor)
}

// sameBits reports whether a and b hold the same bits.
func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for j, x := range a {
		if math.Float64bits(x) != math.Float64bits(b[j]) {
			return false
		}
	}
	return true
}
