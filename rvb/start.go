// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"context"
	"fmt"

	"github.com/sparsevi/sparsevi/internal/small"
)

// Start writes a starting point for vi.Fit's InitMode into theta (length
// n*r + G: the b~_i, then theta_g) and an approximate posterior precision
// into prec, in the compressed arrowhead form of vi.Starter. It implements
// vi.Starter.
//
// It transforms the model's Laplace-style start (glmm.Model.Start): theta_g
// is the model's, b~_i = L_i^-1 (b_i - lambda_i) at that theta_g (about 0
// for RVB2, whose lambda_i is the conditional mode), the local precision
// blocks are the model's transformed to b~, L_i' S_i L_i (about I), and
// the global block is the Schur complement of the model's precision, so
// that the marginal covariance of theta_g, which the reparametrisation
// leaves alone, is the model's. The cross blocks are zero, as in RVB's
// factor. For RVB2 it also seeds the warm-start modes. A Target of
// NewAtStart uses the start it computed, once.
func (t *Target) Start(ctx context.Context, theta, prec []float64) error {
	n, r, g := t.Dims()
	p := t.p
	tri, gtri := r*(r+1)/2, g*(g+1)/2
	stride := tri + g*r
	if len(theta) != n*r+g || len(prec) != n*stride+gtri {
		panic("rvb: bad length in Start")
	}
	if st := t.start; st != nil {
		// NewAtStart's start, computed once.
		copy(theta, st.theta)
		copy(prec, st.prec)
		t.start = nil
	} else if err := t.m.Start(ctx, theta, prec); err != nil {
		return err
	}
	thetaG := theta[n*r:]
	ws := t.NewWorkspace().(*workspace)
	t.setGlobal(ws, thetaG[p:])
	sg := prec[n*stride:]
	si := make([]float64, r*r)
	rf := make([]float64, r*r)
	x := make([]float64, g*r)
	tmp := make([]float64, r*r)
	for i := range n {
		if err := ctx.Err(); err != nil {
			return err
		}
		blk := prec[i*stride : (i+1)*stride]
		for u := range r {
			for v := 0; v <= u; v++ {
				si[u*r+v] = blk[u*(u+1)/2+v]
				si[v*r+u] = blk[u*(u+1)/2+v]
			}
		}
		if !small.Chol(r, si, rf) {
			return t.subjectError(i, fmt.Errorf("start: local precision %v is not positive definite", si))
		}
		// Schur complement: S_g -= (R^-1 S_gi')' (R^-1 S_gi').
		sgi := blk[tri:]
		for c := range g {
			xc := x[c*r : c*r+r]
			copy(xc, sgi[c*r:c*r+r])
			small.LowerSolve(r, rf, xc)
		}
		for c := range g {
			for e := 0; e <= c; e++ {
				s := 0.0
				for u := range r {
					s += x[c*r+u] * x[e*r+u]
				}
				sg[c*(c+1)/2+e] -= s
			}
		}
		bi := theta[i*r : (i+1)*r]
		if t.method == RVB2 {
			// Seed the warm start with the model's mode: a prediction
			// from it at the same theta_g is the mode itself.
			lo, hi := t.m.SubjectRows(i)
			copy(t.warm.mode[i*r:(i+1)*r], bi)
			clear(t.warm.lam[i*r*r : (i+1)*r*r])
			copy(t.warm.omega[i*r*r:(i+1)*r*r], ws.omega)
			clear(t.warm.hw[lo:hi])
		}
		if err := t.prepare(ws, i, thetaG[:p], t.warm); err != nil {
			return err
		}
		for u := range r {
			bi[u] -= ws.center[u]
		}
		small.LowerSolve(r, ws.l, bi)
		// L' S_i L.
		for u := range r {
			for v := range r {
				s := 0.0
				for k := v; k < r; k++ {
					s += si[u*r+k] * ws.l[k*r+v]
				}
				tmp[u*r+v] = s
			}
		}
		for u := range r {
			for v := 0; v <= u; v++ {
				s := 0.0
				for k := u; k < r; k++ {
					s += ws.l[k*r+u] * tmp[k*r+v]
				}
				blk[u*(u+1)/2+v] = s
			}
		}
		clear(sgi)
	}
	return nil
}
