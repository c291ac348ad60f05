// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package posterior owns what comes after a fit: the posterior summaries
// of a generalized linear mixed model in its own parameters (the fixed
// effects, the random-effect standard deviations and correlations, omega
// and every subject's random effects), from a vi.Result and the model it
// was fitted to.
//
// It sits above vi, glmm and rvb: vi keeps what the approximation itself
// knows (its mean, its factor and the covariances they give), and rvb the
// reparametrisation; neither imports the other nor this package.
//
// Summarize summarises a GVA fit of a glmm.Model, whose marginals of
// beta, omega and the b_i are exactly Gaussian; SummarizeRVB a fit of an
// rvb.Target, whose b_i are mapped back from the reparametrised variables.
package posterior
