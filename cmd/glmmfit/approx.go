// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"math/rand/v2"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// Methods of -method.
const (
	methodAuto = "auto"
	methodGVA  = posterior.GVA
	methodRVB1 = posterior.RVB1
	methodRVB2 = posterior.RVB2
)

// Expansion points of RVB (-expansion).
const (
	// expansionStart expands the log-likelihood about the linear
	// predictor at the start's approximate posterior mode
	// (rvb.NewAtStart).
	expansionStart = posterior.AtStart
	// expansionJeffreys expands it about the paper's data-based point
	// (rvb.DefaultExpansion), as fit files without an expansion did.
	expansionJeffreys = posterior.Jeffreys
)

// approx is a fitted Gaussian approximation together with the model it
// approximates. For RVB the local blocks of the fit's mean and factor are
// the reparametrised b~_i; draws are mapped back to b_i.
type approx struct {
	method string
	model  *glmm.Model
	rt     *rvb.Target // nil for GVA
	n, r   int
	g      int
	// res and target are the fit (its Mu and Factor are the state) and
	// what it was of, which a fit file saves (posterior.SavedFit).
	res    *vi.Result
	target vi.Target
}

// newTarget returns the vi target and vi method of the named method, RVB
// expanded about the named point (posterior.NewTarget), and the RVB target
// (nil for GVA).
func newTarget(ctx context.Context, method, expansion string, m *glmm.Model) (vi.Target, vi.Method, *rvb.Target, error) {
	t, vm, err := posterior.NewTarget(ctx, m, method, expansion)
	if err != nil {
		return nil, 0, nil, err
	}
	rt, _ := t.(*rvb.Target)
	return t, vm, rt, nil
}

// sampler draws theta = (b_1, ..., b_n, beta, omega) from q, with the
// random effects on their original scale.
type sampler struct {
	a            *approx
	seed, stream uint64
	pcg          *rand.PCG
	rng          *rand.Rand
	z, u         []float64
	ws           any
	bt, bi       []float64
}

// newSampler returns a sampler whose draws depend only on seed and stream.
func (a *approx) newSampler(seed, stream uint64) *sampler {
	d := a.n*a.r + a.g
	pcg := rand.NewPCG(0, 0)
	s := &sampler{a: a, seed: seed, stream: stream, pcg: pcg, rng: rand.New(pcg), z: make([]float64, d), u: make([]float64, d)}
	if a.rt != nil {
		s.ws = a.rt.NewWorkspace()
		s.bt = make([]float64, a.r)
		s.bi = make([]float64, a.r)
	}
	return s
}

// seedFor points the sampler's generator at the stream of draw k of block
// b: 0 for theta_g, i+1 for subject i.
func (s *sampler) seedFor(k uint64, b int) {
	s1, s2 := parallel.StreamSeed(s.seed, s.stream<<40|k, uint64(b))
	s.pcg.Seed(s1, s2)
}

// draw writes draw k of theta_g and of the random effects b_i of the listed
// subjects into theta (length n*r + G); the entries of the other subjects
// are left undefined. Every block has its own stream for each draw, so a
// draw of a subject depends on k alone, not on the list or on the order in
// which draws are made.
func (s *sampler) draw(k uint64, theta []float64, subjects []int) error {
	a := s.a
	r := a.r
	nr := a.n * r
	s.seedFor(k, 0)
	for j := nr; j < len(s.z); j++ {
		s.z[j] = s.rng.NormFloat64()
	}
	for _, i := range subjects {
		s.seedFor(k, i+1)
		for j := i * r; j < (i+1)*r; j++ {
			s.z[j] = s.rng.NormFloat64()
		}
	}
	if a.rt == nil {
		f := arrowhead.Wrap(a.n, r, a.g, a.res.Factor)
		f.DrawGlobal(theta, s.u, a.res.Mu, s.z)
		for _, i := range subjects {
			f.DrawRange(i, i+1, theta, s.u, a.res.Mu, s.z)
		}
		return nil
	}
	f := blockdiag.Wrap(a.n, r, a.g, a.res.Factor)
	f.DrawGlobal(theta, a.res.Mu, s.z)
	thetaG := theta[nr:]
	for _, i := range subjects {
		f.DrawRange(i, i+1, theta, a.res.Mu, s.z)
		copy(s.bt, theta[i*r:(i+1)*r])
		// b_i = lambda_i(theta_g) + L_i(theta_g) b~_i
		if err := a.rt.MapLocal(s.ws, i, thetaG, s.bt, s.bi); err != nil {
			return err
		}
		copy(theta[i*r:(i+1)*r], s.bi)
	}
	return nil
}
