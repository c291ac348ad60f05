// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"context"
	"errors"
	"fmt"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// SummarizeFit returns the posterior summaries of a fit of the GLMM m by
// any method, t being what was fitted (m itself, or an rvb.Target of it,
// as Fit and NewTarget return): glmmfit fit's summaries. For GVA they are
// Summarize's. For RVB theta_g (beta, omega and any crossed factors'
// effects and omega_u), which RVB leaves alone, has its exact Gaussian
// marginals, the random-effect sds and correlations
// come from draws of omega, and the random effects are SummarizeRVB's
// (draws of q mapped back to b_i), with at most draws draws each.
func SummarizeFit(ctx context.Context, res *vi.Result, t vi.Target, m *glmm.Model, draws int, seed uint64) (*Summary, error) {
	return SummarizeFitGroup(ctx, nil, res, t, m, draws, seed)
}

// SummarizeFitGroup is SummarizeFit in one process of a fit over a
// vi.Group, each process holding a target of its own subjects alone (a
// model built with formula.Options.Part, or rvb.NewGroupAtStart's Target
// of it) and its own Result: the summaries of theta_g and of the
// random-effect sds and correlations are those of the whole fit, and
// Subjects holds this process's subjects, each as SummarizeFit gives it
// for the whole fit. For RVB the processes agree through c on the number
// of draws (rvb.Target.SummarizeGroup), and every process must call it
// together; c nil is SummarizeFit.
func SummarizeFitGroup(ctx context.Context, c parallel.Carrier, res *vi.Result, t vi.Target, m *glmm.Model, draws int, seed uint64) (*Summary, error) {
	if res == nil || t == nil || m == nil {
		return nil, errors.New("posterior: nil result, target or model")
	}
	rt, isRVB := t.(*rvb.Target)
	switch {
	case !isRVB && t != vi.Target(m):
		return nil, fmt.Errorf("posterior: SummarizeFit of a %T, not m or an rvb.Target of it", t)
	case isRVB && rt.Model() != m:
		return nil, errors.New("posterior: SummarizeFit: the rvb.Target is of another model")
	case !isRVB:
		return Summarize(res, m, draws, seed)
	}
	n, r, g := m.Dims()
	p := m.P()
	rs, err := summarizeRVB(ctx, c, res, rt, draws, seed)
	if err != nil {
		return nil, err
	}
	s := &Summary{}
	names := m.GlobalNames()
	for k := range p + glmm.NumOmega(r) {
		mk := GaussianMarginal(names[k], rs.GlobalMean[k], rs.GlobalSD[k])
		if k < p {
			s.Fixed = append(s.Fixed, mk)
		} else {
			s.Omega = append(s.Omega, mk)
		}
	}
	if m.NumCrossed() > 0 {
		cov := res.GlobalCov()
		for c := range m.NumCrossed() {
			s.Crossed = append(s.Crossed, crossedEffects(m, c, rs.GlobalMean, cov))
		}
	}
	theta := make([]float64, n*r+g)
	smp := newSampler(res, rt, seed, summaryStream)
	k := uint64(0)
	s.SD, s.Corr, err = SDCorrMarginals(m, draws, func(omega []float64) error {
		if err := smp.draw(k, theta, nil); err != nil {
			return err
		}
		k++
		copy(omega, theta[n*r+p:])
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Each subject's figures are views of the summary's arrays: no
	// allocation per subject.
	levels := m.GroupLevels()
	s.Subjects = make([]SubjectEffects, n)
	for i := range n {
		lo, hi := i*r, (i+1)*r
		s.Subjects[i] = SubjectEffects{Level: levels[i], Mean: rs.LocalMean[lo:hi:hi], SD: rs.LocalSD[lo:hi:hi]}
	}
	return s, nil
}
