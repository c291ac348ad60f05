// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
)

// NewAtSampleStart is NewAtStart with the model's start computed from a
// sample of the subjects, for fits of many subjects, whose stochastic
// passes (vi.Settings.Stochastic) cost less than the model's full start
// (glmm.Model.Start, eight rounds of passes over all the subjects).
//
// It takes the model's start from a sample of size subjects drawn with
// seed (glmm.Model.StartSample; size 0 means its default), whose global
// block theta_g carries the sample's error, and RVB's start from it
// (Target.Start: theta_g moved by Newton steps over all the subjects to
// RVB's optimum given the subjects' blocks). Those blocks were set at the
// sample's theta_g, and the optimum of theta_g given them depends on it:
// so the subjects' conditional modes are taken again at the theta_g RVB's
// start found (glmm.Model.StartAt), and the Target returned is expanded
// about the linear predictor there; its Start transforms that start, once,
// as NewAtStart's does. It costs the sample's start, two passes of the
// subjects' modes and one RVB start over all the subjects. The Target
// depends on seed, not on pool's number of workers.
func NewAtSampleStart(pool *parallel.Pool, m *glmm.Model, method Method, size int, seed uint64, opts ...Option) (*Target, error) {
	n, r, g := m.Dims()
	st := &modelStart{theta: make([]float64, n*r+g), prec: make([]float64, arrowhead.Len(n, r, g)), hi: n}
	if err := m.StartSample(pool, size, seed, st.theta, st.prec); err != nil {
		return nil, err
	}
	t, err := newStarted(m, method, st, opts)
	if err != nil {
		return nil, err
	}

	theta := make([]float64, n*r+g)
	prec := make([]float64, arrowhead.Len(n, r, g))
	if err := t.Start(pool, theta, prec); err != nil {
		return nil, err
	}
	// The modes again, from the sample's, at RVB's theta_g.
	if err := m.StartAt(pool, theta[n*r:], st.theta, st.prec); err != nil {
		return nil, err
	}
	return newStarted(m, method, st, opts)
}
