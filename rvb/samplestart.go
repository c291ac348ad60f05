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
// sample of the subjects (glmm.Model.StartSample with the given size and
// seed; size 0 means its default): Start's rounds run on the sample, and
// the whole data take one pass of each subject's conditional mode and one
// joint Newton step in (b, beta). The Target is expanded about the linear
// predictor at that start, and its Start transforms that start, once, as
// NewAtStart's does. For a stochastic fit of many subjects
// (vi.Settings.Stochastic), whose passes cost a few full-batch iterations,
// the model's full start would take longer than the fit itself; the
// sample's error in theta_g, which falls as 1/sqrt(size), is left to the
// Target's Start (Newton steps in theta_g over all the subjects) and to
// the fit. The Target depends on seed, not on pool's number of workers.
func NewAtSampleStart(pool *parallel.Pool, m *glmm.Model, method Method, size int, seed uint64, opts ...Option) (*Target, error) {
	n, r, g := m.Dims()
	st := &modelStart{theta: make([]float64, n*r+g), prec: make([]float64, arrowhead.Len(n, r, g)), hi: n}
	if err := m.StartSample(pool, size, seed, st.theta, st.prec); err != nil {
		return nil, err
	}
	return newStarted(m, method, st, opts)
}
