// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"math"
	"math/rand/v2"

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
)

// sampler draws theta = (b_1, ..., b_n, theta_g) from a fit's q with the
// random effects on their own scale: for an RVB fit its reparametrised
// draws are mapped back to b_i.
type sampler struct {
	res          *vi.Result
	rt           *rvb.Target // nil for GVA
	seed, stream uint64
	pcg          *rand.PCG
	rng          *rand.Rand
	z, u         []float64
	ws           any
	bt, bi       []float64
	// vf is the factor of a GVA fit whose local blocks vary in size
	// (vi.Result.Sizes), laid once: WrapVar takes O(n).
	vf *arrowhead.Factor
}

// newSampler returns a sampler of res (a fit of rt, or with rt nil a GVA
// fit of the model itself, whose local blocks may vary in size) whose
// draws depend only on seed and stream.
func newSampler(res *vi.Result, rt *rvb.Target, seed, stream uint64) *sampler {
	d := res.N*res.R + res.G
	var vf *arrowhead.Factor
	if res.Sizes != nil && rt == nil {
		vf = arrowhead.WrapVar(res.Sizes, res.G, res.Factor)
		d = vf.Locals() + res.G
	}
	pcg := rand.NewPCG(0, 0)
	s := &sampler{res: res, rt: rt, seed: seed, stream: stream, pcg: pcg, rng: rand.New(pcg), z: make([]float64, d), u: make([]float64, d), vf: vf}
	if rt != nil {
		s.ws = rt.NewWorkspace()
		s.bt = make([]float64, res.R)
		s.bi = make([]float64, res.R)
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
// subjects into theta (length n*r + G, or the local blocks' total plus G);
// the entries of the other subjects are left undefined. Every block has
// its own stream for each draw, so a draw of a subject depends on k alone,
// not on the list or on the order in which draws are made.
func (s *sampler) draw(k uint64, theta []float64, subjects []int) error {
	res := s.res
	if s.vf != nil {
		s.drawVar(k, theta, subjects)
		return nil
	}
	n, r, g := res.N, res.R, res.G
	nr := n * r
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
	if s.rt == nil {
		f := arrowhead.Wrap(n, r, g, res.Factor)
		f.DrawGlobal(theta, s.u, res.Mu, s.z)
		for _, i := range subjects {
			f.DrawRange(i, i+1, theta, s.u, res.Mu, s.z)
		}
		return nil
	}
	f := blockdiag.Wrap(n, r, g, res.Factor)
	f.DrawGlobal(theta, res.Mu, s.z)
	thetaG := theta[nr:]
	for _, i := range subjects {
		f.DrawRange(i, i+1, theta, res.Mu, s.z)
		copy(s.bt, theta[i*r:(i+1)*r])
		// b_i = lambda_i(theta_g) + L_i(theta_g) b~_i
		if err := s.rt.MapLocal(s.ws, i, thetaG, s.bt, s.bi); err != nil {
			return err
		}
		copy(theta[i*r:(i+1)*r], s.bi)
	}
	return nil
}

// drawVar is draw for a GVA fit of local blocks of variable size.
func (s *sampler) drawVar(k uint64, theta []float64, subjects []int) {
	f := s.vf
	s.seedFor(k, 0)
	for j := f.Locals(); j < len(s.z); j++ {
		s.z[j] = s.rng.NormFloat64()
	}
	for _, i := range subjects {
		s.seedFor(k, i+1)
		r, off := f.Block(i)
		for j := off; j < off+r; j++ {
			s.z[j] = s.rng.NormFloat64()
		}
	}
	f.DrawGlobal(theta, s.u, s.res.Mu, s.z)
	for _, i := range subjects {
		f.DrawRange(i, i+1, theta, s.u, s.res.Mu, s.z)
	}
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
