// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"math"

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
		arrowhead.Wrap(r.N, r.R, g, r.Factor).CovGlobal(dst)
	case BlockDiag:
		// blockdiag stores covariances in its compressed (packed lower) form.
		f := blockdiag.Wrap(r.N, r.R, g, r.Factor)
		packed := make([]float64, blockdiag.Len(r.N, r.R, g))
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
	return r.Mu[r.N*r.R:], sd
}

// LocalCov returns the covariances of every subject's local block, r×r
// row-major at [i*r*r:], under the fitted approximation.
func (r *Result) LocalCov() []float64 {
	dst := make([]float64, r.N*r.R*r.R)
	switch r.Method {
	case GVA:
		// From Sigma_gg: with crossed levels among the globals a subject's
		// T_gi has few nonzero rows, and the blocks cost O(r^2 m^2)
		// instead of O(r G^2) each.
		f := arrowhead.Wrap(r.N, r.R, r.G, r.Factor)
		covG := make([]float64, r.G*r.G)
		f.CovGlobal(covG)
		f.LocalCovRange(0, r.N, covG, dst)
	case BlockDiag:
		f := blockdiag.Wrap(r.N, r.R, r.G, r.Factor)
		packed := make([]float64, blockdiag.Len(r.N, r.R, r.G))
		f.CovRange(0, r.N, packed)
		tri := r.R * (r.R + 1) / 2
		for i := range r.N {
			small.UnpackSym(r.R, packed[i*tri:(i+1)*tri], dst[i*r.R*r.R:(i+1)*r.R*r.R])
		}
	}
	return dst
}
