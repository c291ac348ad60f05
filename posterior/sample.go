// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"math"
	"math/rand/v2"
	"slices"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// Stream indices of the draws of q made after the fit, so that the
// draws of one use never depend on those of another.
const (
	summaryStream    = 1 // SummarizeFit's draws of omega (RVB)
	predictStream    = 2 // Predict's draws of q
	newSubjectStream = 3 // Predict's random effects of new subjects
	correctedStream  = 4 // Predict's random effects of known subjects under a correction
	responseStream   = 5 // Predict's new observations of the response
)

// sampler draws theta = (b_1, ..., b_n, theta_g) from a fit's q with the
// random effects on their own scale: for an RVB fit its reparametrised
// draws are mapped back to b_i. The local blocks may vary in size
// (vi.Result.Sizes, a nested model's).
type sampler struct {
	res          *vi.Result
	rt           *rvb.Target // nil for GVA
	seed, stream uint64
	pcg          *rand.PCG
	rng          *rand.Rand
	z, u         []float64
	ws           any
	bt, bi       []float64
	// The fit's factor, wrapped once (WrapVar takes O(n)): af for GVA,
	// bf for RVB.
	af *arrowhead.Factor
	bf *blockdiag.Factor
}

// newSampler returns a sampler of res (a fit of rt, or with rt nil a GVA
// fit of the model itself) whose draws depend only on seed and stream.
func newSampler(res *vi.Result, rt *rvb.Target, seed, stream uint64) *sampler {
	s := &sampler{res: res, rt: rt, seed: seed, stream: stream}
	var locals, rmax int
	switch {
	case rt == nil && res.Sizes != nil:
		s.af = arrowhead.WrapVar(res.Sizes, res.G, res.Factor)
		locals = s.af.Locals()
	case rt == nil:
		s.af = arrowhead.Wrap(res.N, res.R, res.G, res.Factor)
		locals = s.af.Locals()
	case res.Sizes != nil:
		s.bf = blockdiag.WrapVar(res.Sizes, res.G, res.Factor)
		locals, rmax = s.bf.Locals(), slices.Max(res.Sizes)
	default:
		s.bf = blockdiag.Wrap(res.N, res.R, res.G, res.Factor)
		locals, rmax = s.bf.Locals(), res.R
	}
	s.pcg = rand.NewPCG(0, 0)
	s.rng = rand.New(s.pcg)
	d := locals + res.G
	s.z, s.u = make([]float64, d), make([]float64, d)
	if rt != nil {
		s.ws = rt.NewWorkspace()
		s.bt, s.bi = make([]float64, rmax), make([]float64, rmax)
	}
	return s
}

// seedFor points the sampler's generator at the stream of draw k of block
// b: 0 for theta_g, i+1 for subject i.
func (s *sampler) seedFor(k uint64, b int) {
	s1, s2 := parallel.StreamSeed(s.seed, s.stream<<40|k, uint64(b))
	s.pcg.Seed(s1, s2)
}

// block returns the order of subject i's block and its offset in theta.
func (s *sampler) block(i int) (r, off int) {
	if s.af != nil {
		return s.af.Block(i)
	}
	return s.bf.Block(i)
}

// draw writes draw k of theta_g and of the random effects b_i of the listed
// subjects into theta (length the local blocks' total plus G); the entries
// of the other subjects are left undefined. Every block has its own stream
// for each draw, so a draw of a subject depends on k alone, not on the
// list or on the order in which draws are made.
func (s *sampler) draw(k uint64, theta []float64, subjects []int) error {
	res := s.res
	locals := len(s.z) - res.G
	s.seedFor(k, 0)
	for j := locals; j < len(s.z); j++ {
		s.z[j] = s.rng.NormFloat64()
	}
	for _, i := range subjects {
		s.seedFor(k, i+1)
		r, off := s.block(i)
		for j := off; j < off+r; j++ {
			s.z[j] = s.rng.NormFloat64()
		}
	}
	if s.af != nil {
		s.af.DrawGlobal(theta, s.u, res.Mu, s.z)
		for _, i := range subjects {
			s.af.DrawRange(i, i+1, theta, s.u, res.Mu, s.z)
		}
		return nil
	}
	s.bf.DrawGlobal(theta, res.Mu, s.z)
	thetaG := theta[locals:]
	for _, i := range subjects {
		s.bf.DrawRange(i, i+1, theta, res.Mu, s.z)
		r, off := s.block(i)
		bt, bi := s.bt[:r], s.bi[:r]
		copy(bt, theta[off:off+r])
		// b_i = lambda_i(theta_g) + L_i(theta_g) b~_i
		if err := s.rt.MapLocal(s.ws, i, thetaG, bt, bi); err != nil {
			return err
		}
		copy(theta[off:off+r], bi)
	}
	return nil
}

// meanSD returns the mean and the standard deviation (divisor n-1) of x.
func meanSD(x []float64) (mean, sd float64) {
	if len(x) == 0 {
		return math.NaN(), math.NaN()
	}
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	return mean, math.Sqrt(ss / float64(max(1, len(x)-1)))
}

// quantile returns the p-quantile of the sorted x by linear interpolation
// between order statistics (R's type 7).
func quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := p * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	hi := min(lo+1, len(sorted)-1)
	return sorted[lo] + (h-float64(lo))*(sorted[hi]-sorted[lo])
}
