// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package glmm defines Bayesian generalized linear mixed models as target
// densities for variational inference.
//
// # The model
//
// Subject i = 0..n-1 has observations j = 1..n_i with linear predictor
//
//	eta_ij = x_ij' beta + z_ij' b_i + offset_ij,
//
// a response from a Family with canonical link (Poisson with log link,
// Bernoulli and binomial with logit link), random effects
// b_i ~ N(0, (W W')^-1) with W lower triangular with positive diagonal, and
// the prior theta_g = (beta, omega) ~ N(0, sigma0^2 I_G), sigma0 = 10 unless
// given, G = p + r(r+1)/2. Here omega = vech(W*) taken column-major and W* is
// W with the log of its diagonal on the diagonal (see OmegaToW,
// OmegaIndex). W factors the precision, not the covariance: RECov and
// RESDCorr give the covariance of b_i.
//
// # Targets
//
// A *Model is a target for package vi: the variables are b_1, ..., b_n (the
// local blocks, r each) and theta_g (the global block). Global gives the log
// prior of theta_g and Local the sum over a range of subjects of
// log p(y_i | b_i, beta) + log p(b_i | omega), with gradients. Local is meant
// to be called concurrently on disjoint subject ranges, each caller with its
// own workspace from NewWorkspace, and allocates nothing. Every constant is
// included, so Global plus Local over all subjects is the log joint density
// log p(y, theta); DataConstant, PriorConstant and PaperELBO convert to the
// convention of Tan's paper, which omits the data-only and prior constants.
//
// # Nested grouping factors
//
// A *Nested (NewNested) is the model of random intercepts on a factor a
// and on a factor b nested in it, lme4's (1 | a/b): the levels of a are
// the subjects, and each one's local block holds its own effect and those
// of its levels of b, so that blocks differ in size (vi.BlockSizer).
//
// # Storage
//
// New validates its Config and copies the data subject-major: stored row k
// is data row Perm()[k]. The fixed design is kept as a flat row-major slice,
// or in compressed sparse row form when it has more than 10 columns and
// fewer than a quarter of its entries are non-zero (as with many dummy
// columns). Per-subject accessors (SubjectRows, FixedEta, AddFixedTVec,
// ZRows, Response) give allocation-free views for reparametrisations of the
// model.
//
// # Errors
//
// Anything a user can get wrong in the data is an error from New naming the
// data row (Config.Rows when given, else the 1-based position) or the
// column, of type *DataError and wrapping a sentinel such as ErrResponse,
// ErrNonFinite or ErrRankDeficient. A non-finite log density in Local, the
// sign of a diverging fit, is an error naming the subject. Dimension
// mismatches in method arguments are programmer errors and panic.
//
// # Numerics
//
// The Bernoulli and binomial log-likelihoods are computed from eta as
// y eta - m (max(eta, 0) + log1p(exp(-|eta|))), never from the mean. The
// Poisson mean exp(eta) is evaluated at min(eta, MaxPoissonEta) so that a
// diverging fit yields a finite, hugely negative value instead of an
// overflow.
package glmm
