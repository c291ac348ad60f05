// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"math"
	"slices"

	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// summarize returns the posterior summaries of a fit. For GVA they are
// posterior.Summarize's, so that glmmfit reports exactly what the library does.
// For RVB the local blocks of the fit are the reparametrised b~_i, which
// posterior.Summarize would read as b_i; the random effects are posterior.SummarizeRVB's
// instead (draws of q mapped back to b_i), theta_g = (beta, omega), which
// RVB leaves alone, has its exact Gaussian marginals, and the random-effect
// SDs and correlations come from draws of omega, as in posterior.Summarize.
func summarize(ctx context.Context, a *approx, res *vi.Result, draws int, seed uint64) (*posterior.Summary, error) {
	if a.rt == nil {
		return posterior.Summarize(res, a.model, draws, seed)
	}
	m := a.model
	n, r, g := a.n, a.r, a.g
	p := m.P()
	rs, err := posterior.SummarizeRVB(ctx, res, a.rt, draws, seed)
	if err != nil {
		return nil, err
	}
	s := &posterior.Summary{}
	names := m.GlobalNames()
	for k := range g {
		mk := posterior.GaussianMarginal(names[k], rs.GlobalMean[k], rs.GlobalSD[k])
		if k < p {
			s.Fixed = append(s.Fixed, mk)
		} else {
			s.Omega = append(s.Omega, mk)
		}
	}
	s.SD, s.Corr, err = sdCorr(a, draws, seed)
	if err != nil {
		return nil, err
	}
	levels := m.GroupLevels()
	for i := range n {
		s.Subjects = append(s.Subjects, posterior.SubjectEffects{
			Level: levels[i],
			Mean:  slices.Clone(rs.LocalMean[i*r : (i+1)*r]),
			SD:    slices.Clone(rs.LocalSD[i*r : (i+1)*r]),
		})
	}
	return s, nil
}

// summaryStream is the stream index of the draws of sdCorr, apart from
// those of predict.
const summaryStream = 1

// sdCorr summarises the standard deviations and correlations of the random
// effects, nonlinear in omega, from draws of q.
func sdCorr(a *approx, draws int, seed uint64) (sd, corr []posterior.Marginal, err error) {
	n, r, g := a.n, a.r, a.g
	p := a.model.P()
	theta := make([]float64, n*r+g)
	smp := a.newSampler(seed, summaryStream)
	k := uint64(0)
	return posterior.SDCorrMarginals(a.model, draws, func(omega []float64) error {
		if err := smp.draw(k, theta, nil); err != nil {
			return err
		}
		k++
		copy(omega, theta[n*r+p:])
		return nil
	})
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
