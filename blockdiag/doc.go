// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package blockdiag provides the block-diagonal lower-triangular Cholesky
// factor of a covariance matrix used by reparametrised variational Bayes
// (RVB), together with the natural-gradient updates of Algorithm 1S of Tan,
// "Analytic natural gradient updates for Cholesky factor in Gaussian
// variational approximation" (section 7.1).
//
// # Overview
//
// The variational density is q(theta) = N(mu, C C') over d = n*r + G
// variables: n subjects with r local variables each, then G global
// variables. The factor is
//
//	C = blockdiag(C_1, ..., C_n, C_g),
//
// with C_i r×r and C_g G×G lower triangular, so the subject blocks of theta
// are independent of each other and of the global block under q. A Factor
// holds C; vectors of length d (mu, theta, z, gradients) are ordered
// subject-major, theta_1, ..., theta_n, then theta_g, and subject i occupies
// the entries [i*r, (i+1)*r).
//
// # Storage
//
// The compressed storage of a Factor is the parameter vector of C that a
// step rule acts on. It is one flat []float64 of length Len(n, r, g) holding,
// for each subject in turn, the lower triangle of C_i packed by rows, and
// then the lower triangle of C_g packed by rows: the entry (a, b), a >= b, of
// a block of order m is at offset a*(a+1)/2 + b from the start of the block.
// Subject block i starts at i*r*(r+1)/2 and the global block at
// n*r*(r+1)/2. Data returns this slice itself, so updates made through it are
// seen by the Factor and vice versa; Wrap makes a Factor over a slice the
// caller owns, for example part of a larger parameter vector.
//
// A Factor of NewVar or WrapVar has subject blocks of variable order r_i
// (a nested model's, glmm.Nested's): they follow each other in the same
// way, subject i's C_i after those of the subjects before it and theta_i
// at Block's offset, and the kernels apply the general block code to each
// (the unrolled code of orders 1 and 2 serves fixed-size factors only).
//
// The same layout stores every other quantity with the pattern of C: the
// Euclidean and natural gradients with respect to C, and symmetric
// block-diagonal matrices such as the covariance blocks C_k C_k' or a
// precision to be factorised, of which only the lower triangles are kept.
// No d×d matrix is formed anywhere except by the export methods ToTriDense
// and ToCSR.
//
// # Range kernels
//
// Every operation is provided as a range kernel over the subjects [lo, hi),
// named with the suffix Range, and a kernel for the global block, named with
// the suffix Global. Both take full-length vectors and full-length
// compressed slices and touch only the entries of their own blocks, so
// kernels over disjoint subject ranges, and the global kernel, may run
// concurrently on the same Factor and the same vectors. Kernels allocate
// nothing and need no workspace. The package runs nothing itself: package
// vi calls the kernels from its passes over chunks of subjects, with the
// model's own per-subject work in the same pass. Every block is computed
// by the same code whichever goroutine runs it, and a caller that adds
// per-chunk partial sums (such as the log-determinant's) in chunk order
// gets results that are bit-identical for any number of workers.
//
// # Aliasing
//
// Destinations are the first arguments. A kernel that writes a vector may be
// given the same slice as the vector it reads where its documentation says
// so (MulVec, MulTransVec, Solve, SolveTrans and CovMulVec are all safe in
// place); compressed destinations must never alias the Factor's own
// storage.
//
// # Natural gradients
//
// With theta = mu + C z and grad h the gradient of
// h(theta) = log p(theta) - log q(theta), an unbiased estimate of the
// Euclidean gradient of the lower bound is grad h for mu and, for each block
// k, lower(grad_k h z_k') for C_k (EuclidGradRange). The Fisher information
// of (mu, vech(C_1), ..., vech(C_n), vech(C_g)) is
// blockdiag(Sigma^-1, I(C_1), ..., I(C_n), I(C_g)) with I(C) of Lemma 1 of
// the paper, and its inverse maps a Euclidean gradient with blocks a_mu and
// A_k to
//
//	Sigma a_mu,   C_k halfdiag(C_k' lower(A_k)),
//
// where halfdiag keeps the lower triangle and halves the diagonal
// (InvFisherRange). For the one-draw estimate above this reduces to
// C_k halfdiag(y_k z_k') with y_k = C_k' grad_k h, which NatGradRange
// computes in O(r^2) per subject rather than O(r^3). Algorithm 1S then
// updates C <- C + rho N and mu <- mu + rho C C' grad h, the mean with the
// factor before the update.
//
// # Errors
//
// Kernels panic on dimension mismatches, which are programmer errors. The
// Cholesky factorisation of a block-diagonal matrix reports a block that is
// not positive definite, or that contains NaN or infinite values, by a
// *NotPositiveDefiniteError naming the subject (or -1 for the global block).
package blockdiag
