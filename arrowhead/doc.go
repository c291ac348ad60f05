// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package arrowhead provides the block-arrowhead lower-triangular factor of
// a precision matrix, the parametrisation of Gaussian variational
// approximation (GVA) for hierarchical models, with the operations that
// natural-gradient variational inference needs: solves, draws, the
// log-determinant, natural and Euclidean gradients, marginal covariances and
// the Cholesky factorization of an arrowhead matrix.
//
// # Overview
//
// A hierarchical model has n local blocks of r variables each (one per
// subject), independent of each other given one global block of g variables.
// The vector theta of length d = n*r + g is laid out subject-major:
// theta_1, ..., theta_n, then theta_g, so theta_i starts at theta[i*r] and
// theta_g at theta[n*r]. The same layout holds for mu, z, gradients and every
// other vector of length d taken by this package.
//
// The posterior precision of such a model is block arrowhead, and so is its
// lower Cholesky factor T (Tan and Nott 2018):
//
//	T = [ T_1                 ]    T_i : r×r lower triangular
//	    [      ...            ]    T_gi: g×r dense
//	    [           T_n       ]    T_g : g×g lower triangular
//	    [ T_g1 ... T_gn   T_g ]
//
// The variational density is q(theta) = N(mu, (T T')^-1). The package
// implements the sparse natural-gradient updates of Algorithm 2S of Tan,
// "Analytic natural gradient updates for Cholesky factor in Gaussian
// variational approximation" (Theorem 4 and supplement S6).
//
// # Storage
//
// A Factor holds T in one flat []float64, which is the parameter vector
// that step rules act on. Subject by subject it stores the lower triangle of
// T_i packed row-major (element (a, b), a >= b, at a*(a+1)/2 + b) followed by
// T_gi row-major (element (k, b) at k*r + b); after the last subject it
// stores the lower triangle of T_g packed row-major. Subject i starts at
// i*Stride(r, g) and T_g at n*Stride(r, g); the total length is
// Len(n, r, g). Memory is linear in n: nothing in the package forms a dense
// d×d matrix except the exports ToTriDense, meant for tests and small
// problems, and ToCSR.
//
// Local blocks may also vary in size from subject to subject, r_i for
// subject i (a nested model: a school's block holds its own effect and its
// classes'): NewVar and WrapVar lay T out as above with r_i in place of r,
// Block gives each subject's order and offset, and every kernel but SetRows
// accepts such a factor, its vectors holding theta_i at Block's offset.
//
// New allocates a Factor, Wrap lays one over an existing slice (for example
// part of a larger parameter vector), and Data returns the slice itself.
// Local, Cross and Global return views of T_i, T_gi and T_g; Span returns
// the part of Data that belongs to a range of subjects. Directions and
// gradients with respect to T (NatGradRange, EuclidGradRange,
// InvFisherRange) are written in the same compressed storage, so that
// T <- T + rho*N is an axpy on Data (AddScaled). An arrowhead symmetric
// matrix S, the input of the Cholesky factorization, is also given in this
// storage: lower triangles of S_i and S_g, dense S_gi.
//
// # Operations
//
// With T_d = blockdiag(T_1, ..., T_n, T_g), the package computes
//
//	draw            theta = mu + T^-T z,  u = T_d^-T z
//	transposed solve x = T^-T w:  x_g = T_g^-T w_g,  x_i = T_i^-T (w_i - T_gi' x_g)
//	solve           v = T^-1 g:  v_i = T_i^-1 g_i,  v_g = T_g^-1 (g_g - sum_i T_gi v_i)
//	product         y = T x
//	log-determinant log|det T| = sum log|diag T|
//	direction       N_i  = T_i Hbar_i,  N_gi = T_gi Hbar_i - (T_g z_g) v_i',
//	                N_g  = T_g Hbar_g,  Hbar_k = halfdiag(-z_k v_k')
//	Euclidean grad  lower(-(theta_i - mu_i) v_i'),  -u_g v_i',  lower(-u_g v_g')
//	inverse Fisher  G_i = A_i + T_i^-T T_gi' B_gi,  Hbar_i = halfdiag(T_i' lower(G_i)),
//	                N_i = T_i Hbar_i,  N_gi = T_gi Hbar_i + T_g T_g' B_gi,
//	                N_g = T_g halfdiag(T_g' lower(A_g))
//	covariances     Cov(theta_g), Cov(theta_i), Cov(theta_i, theta_g) of (T T')^-1
//	Cholesky        T_i = chol(S_i),  T_gi = S_gi T_i^-T,  T_g = chol(S_g - sum_i T_gi T_gi')
//
// where lower keeps the lower triangle and halfdiag also halves the
// diagonal. One step of Algorithm 2S draws z ~ N(0, I_d), evaluates
// grad h = grad log p(theta) + T z, sets v = T^-1 grad h, moves
// T <- T + rho N and then mu <- mu + rho T^-T v with the new T (Corollary 1).
// Since T^-1 T z = z, v = T^-1 grad log p(theta) + z: the product T z need
// not be formed. NatGradRange writes N to its own storage, where step rules
// (momentum, norms) read it.
//
// The paper writes Hbar_i = halfdiag(T_i' lower(-u_i v_i')) with
// u_i = T_i^-T z_i. Because T_i' is upper triangular, the lower triangle of
// T_i' lower(-u_i v_i') equals that of -(T_i' u_i) v_i' = -z_i v_i', so the
// direction needs only z and v. It is the natural gradient of the sparse
// parametrisation: the Fisher information of (mu, stored elements of T) is
// block diagonal over subjects (supplement S6), and solving with it is what
// InvFisherRange does. It differs from the dense natural gradient of Lemma 1
// restricted to the pattern of T in the blocks T_gi.
//
// The natural gradient of the mean is Sigma grad h = T^-T v (SolveTrans),
// and the mean part of the inverse Fisher map is (T T')^-1 a_mu (a solve
// followed by a transposed solve).
//
// # Range kernels
//
// Every per-subject operation is a range kernel: a method of Factor named
// with the Range suffix that works on the subjects i in [lo, hi) and takes
// vectors of full length d, indexed globally. The global block is handled by
// the matching Global method, before or after the ranges:
//
//   - DrawGlobal and SolveTransGlobal set the global part first; DrawRange and
//     SolveTransRange read it.
//   - SolveRange, MulVecRange and CholRange add their range's contribution to the
//     global block into a partial sum; SolveGlobal, MulVecGlobal and CholGlobal
//     take the total. Partial sums are added, not overwritten: zero them
//     first.
//   - NatGradRange takes tz = T_g z_g for the T_g of the draw, from
//     NatGradGlobal. EuclidGradRange, InvFisherRange and CovRange need
//     nothing from a Global call; LocalCovRange takes CovGlobal's result.
//
// Outside the kernels, LocalCovTo and GlobalCovTo write one block's
// covariance into a mat.SymDense, as package blockdiag's do, and a Factor
// is a mat.Matrix (Dims, At, T); Shape gives n, r and g.
//
// Range kernels allocate nothing and are safe to call concurrently on
// disjoint ranges of the same Factor, each with its own partial sum, as long
// as nothing modifies the global block meanwhile. The package runs nothing
// itself: package vi calls the kernels from its passes over chunks of
// subjects, with the model's own per-subject work in the same pass (the
// package example shows the pattern). SetRows restricts the kernels of a
// draw and a gradient to the nonzero rows of each T_gi.
//
// # Determinism
//
// Per-subject results do not depend on how the subjects are split into
// ranges. Sums over subjects do: a caller that gives each chunk of a
// parallel.Chunking its own partial sum and adds the partials in chunk
// order, as package vi and the package example do, gets results that are
// bit-identical for any number of workers and any GOMAXPROCS.
//
// # Aliasing
//
// Unless a method's documentation allows it, a destination must not share
// storage with an input. The solves (SolveTrans*, Solve*, Mul*) may work in
// place, with the destination equal to the input vector. Destinations in
// compressed storage must not be f.Data() itself; CholRange and CholGlobal
// may factorize in place (s equal to f.Data()).
//
// # Errors and panics
//
// Dimension mismatches, bad ranges and aliasing of a destination with the
// factor are programmer errors and panic, as in gonum. A factor with a zero
// diagonal entry is not detected: solves then give infinities or NaNs. The
// Cholesky factorization reports a block that is not positive definite
// (including a NaN pivot) with a *NotPositiveDefiniteError naming the
// subject, or -1 for the global block.
//
// # References
//
// L. S. L. Tan, Analytic natural gradient updates for Cholesky factor in
// Gaussian variational approximation. Lemma 1, Theorem 4, Corollary 1 and
// supplement S6.
//
// L. S. L. Tan and D. J. Nott, Gaussian variational approximation with
// sparse precision matrices. Statistics and Computing 28, 259–275 (2018).
package arrowhead
