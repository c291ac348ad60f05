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
// rvb.Target, whose b_i are mapped back from the reparametrised variables;
// SummarizeFit either, as glmmfit fit reports it. Predict predicts new
// rows, of the model's subjects or new ones, as glmmfit predict does;
// PredictNested the rows of a nested model (glmm.Nested), whose saved fit
// NewSavedNested makes and LoadNested reads back.
//
// # How good the approximation is
//
// ParetoK reads the importance ratios p/q of draws from the fit (vi's
// Result.LogWeights, over every variable); below ParetoKBad, PSIS and
// WeightedMarginal correct summaries by them and LogMarginal estimates
// log p(y). Over every variable those ratios spread as the number of
// subjects grows. ImportanceGlobal instead draws theta_g alone and
// integrates each subject's random effects out of p(y, theta_g) by
// adaptive Gauss–Hermite quadrature (an Integrator), so that its ratios
// measure q's marginal of theta_g, the part the summaries of the fixed
// effects and variance components rest on, and where q's marginal is too
// narrow (toenail's random-intercept sd: 3.5 by q, 4.1 corrected) it
// adapts the proposal until the weights can be trusted.
package posterior
