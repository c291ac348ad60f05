// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package vi fits Gaussian variational approximations to hierarchical
// models by stochastic natural-gradient ascent on sparse Cholesky factors,
// following Tan, "Analytic natural gradient updates for Cholesky factor in
// Gaussian variational approximation".
//
// # Targets
//
// A Target is a log density over n local blocks of r variables and one
// global block of G variables, the local blocks independent given the
// global one. glmm.Model and the rvb targets are Targets; so is any
// hierarchical model a user writes (see the example). Fit never sees a
// family or a formula. A BlockSizer target (glmm.Nested) has local blocks
// of different sizes, which GVA fits on arrowhead.WrapVar and BlockDiag on
// blockdiag.WrapVar.
//
// # Approximations
//
// GVA is q = N(mu, (T T')^-1) with T the block-arrowhead Cholesky factor of
// the precision (package arrowhead, Algorithm 2S); it contains every
// dependence between a subject's block and the global block. RVB is
// q = N(mu, C C') with C block-diagonal (package blockdiag, Algorithm 1S):
// subjects independent of each other and of the global block. On a plain
// GLMM that is block-independent variational Bayes; on the reparametrised
// targets of package rvb, where the local variables are nearly independent
// of the global ones, it is RVB proper.
//
// # Start
//
// The default start (InitMode) asks the target for an approximate posterior
// mode and its curvature (the Starter interface; glmm.Model implements it
// with joint Newton steps in (b, beta) and a Laplace EM for the random-effect
// covariance). GVA factorises that precision, an arrowhead matrix, as its
// starting T: a Laplace approximation, typically within a few nats of the
// optimum. RVB starts each block at the inverse of the matching diagonal
// block of the precision, the optimum of a block-independent approximation
// to a Gaussian. InitPaper is the paper's start (mean zero, T = sqrt(N) I).
// With Snngm, the default start is already past the paper's best GVA bound
// minus one nat at the first window on Epilepsy and HERS and after 200
// iterations on Toenail; from the paper's start Snngm needs 4800 and 11550
// iterations, and on HERS it stalls near -5762, as the paper's own Adam run
// did (go run ./benchmarks/paper -init mode|paper).
//
// # Step rules
//
// Settings.Rule is a value of one of the Rule types, carrying the rule's
// own parameters, whose zero fields mean the defaults; Result.Rule is the
// rule with its defaults filled in. One driver runs every rule: the
// windows, convergence, backing off from failures and the trace.
//
// Snngm (default) normalises the natural gradient and adds momentum; its
// step is alpha = Alpha0 sqrt(len(lambda)). For GVA it divides each
// gradient by its own norm, as the paper does; for RVB by the root mean
// square of the recent norms (decay rate Beta2), because dividing by each
// norm makes the momentum follow the median draw rather than the mean: on
// a variance component the data barely identify, RVB's q widened over a
// cliff of the bound that only rare draws reach and the bound drifted far
// below GVA's (reliability TestRVBFlatVariance). DefaultAlpha0 (GVA, 0.03) and
// DefaultAlpha0BlockDiag (0.003) were chosen by fitting Epilepsy, Toenail and HERS
// from the default start with Alpha0 in {0.001, 0.003, 0.01, 0.03, 0.1}:
// for GVA 0.03 reached the best bounds in the fewest iterations on all three
// (0.1 was no better, 0.001 and 0.003 were up to 10 times slower); for the
// block-diagonal covariance factor, whose entries are on the scale of
// posterior standard deviations, 0.03 collapsed on HERS, and 0.01, stable
// on the paper's data, was slow on Diabetes and lost a weakly identified
// random slope; 0.003 was within a nat of the best on all four data sets.
// For RVB targets of more than RVBStepSubjects subjects that start
// themselves, the default step shrinks as sqrt(RVBStepSubjects/n) and is
// not refined: their start is near the optimum, and a fixed-length step
// otherwise costs more in jitter than the fit gains. GVA fits of
// GVARefineSubjects subjects or more that start themselves skip the
// refinement too: their start leaves nothing for the refined step to find.
// From GVAWindowSubjects subjects, fits of either method that start
// themselves take windows of GVAWindow, the first window's gain measured
// from the start; RVB's windows are flat then only if no global mean's
// window average moved RVBMoveTol posterior sds since the last window.
// Adam, NAdam, PGA, Nagm and VOGN follow the paper's
// supplement with its defaults. Every rule is followed by a safeguard: a
// step that would shrink a diagonal entry of the factor by more than half is
// shortened.
//
// # Convergence
//
// Every Window iterations (50, or 25 for targets of 5000 subjects or more,
// 15 for fits of 10^6 or more from their own start)
// the bound is evaluated at ConvergenceDraws fixed draws (8, fewer beyond
// CRNSubjects subjects), the same each time,
// so that the gain between windows is measured with common random numbers,
// free of fresh Monte Carlo noise. What remains is the jitter of the
// iterates: near the optimum the bound at the fixed draws falls between
// windows as often as it rises. A window is flat when its gain is below
// the largest of Tol, RelTol times the size of the bound, and Jitter times
// the root mean square of the recent falls. After Patience flat windows whose gains do not add up to a climb,
// the step is divided by 10 (Refine times) and, at the next such plateau,
// the fit has converged; the smaller step can only win back what the
// larger one lost to jitter, so that jitter stays the tolerance.
// Fixed-length steps (Snngm, the Adam family) jitter around the optimum at
// a distance proportional to the step, so the last, smaller step settles
// them. Long, slow climbs can look like jitter; Jitter: -1 keeps to Tol.
// The rule is NewConverger's; Settings.Converger replaces it with any
// Converger, which gets the bound at the fixed draws of each window.
//
// # Failures
//
// A non-finite bound, gradient or step, a factor with a non-positive
// diagonal, or a bound fallen far below its starting value restores the
// best state seen and halves the step, up to five times, for every rule
// alike (one loop drives them all: VOGN's steps, which draw, evaluate and
// update at once, are backed off as the others); then the fit ends
// with status Diverged and a *DivergedError naming the iteration. A
// cancelled context ends it with status Cancelled and the last good state.
// Settings.Checkpoint hands over the whole state at the end of a window,
// from which Settings.Resume ends a stopped fit as if it had not stopped.
//
// # Lower bound
//
// Result.LowerBound is the mean of h(theta) = log p(y, theta) - log q(theta)
// over fresh draws (up to FinalDraws, fewer once the standard error is below
// FinalSE), with every constant of the target included, and LowerBoundSE its
// Monte Carlo standard error. For GLMMs,
// glmm.Model.PaperELBO converts it to the convention of the paper's
// Table 11, which omits the data-only constants and the prior's
// normalising constant.
//
// # Determinism
//
// The subjects are cut into chunks fixed by ChunkSize; each chunk draws
// from its own stream seeded by (Seed, iteration, chunk) and partial sums
// are reduced in chunk order, so a fit is bit-identical for any Workers and
// any GOMAXPROCS.
//
// # Stochastic updates
//
// With Settings.Stochastic (Batch above zero) and Method BlockDiag, each
// iteration visits a minibatch of subjects drawn from the seed instead of
// all of them: their blocks take natural-gradient steps, and the global
// block one from the minibatch's contribution scaled up to all subjects,
// with a control variate and a Robbins–Monro schedule counted in passes
// over the data; convergence is judged between windows of passes, and the
// final bound over all subjects (see Stochastic). It is bit-identical for
// any Workers, as the full-batch fit.
//
// # Several processes
//
// With Settings.Group, processes that each hold whole chunks of the
// subjects (a Target of their own, or a Share of a whole one) fit them
// together: the sums over the chunks pass from process to process in rank
// order, so the fit is bit-identical to one process's for any number of
// processes. Package mpi provides a Group over MPI.
package vi
