// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package paper provides the GLMMs of the experiments of Tan's paper
// ("Analytic natural gradient updates for Cholesky factor in Gaussian
// variational approximation", section 8.5, Table 11) and two classic extra
// data sets, as ready-built designs.
//
// Each function reads a benchmark file from a data directory (see
// datasets.DataDir) with the loader of package datasets, which derives the
// paper's covariates, and builds the model from its lme4 formula with
// package formula:
//
//	name         family     formula                                                n      rows    p  r
//	epilepsy     poisson    y ~ Base*Trt + Age + Visit + (1 + Visit | subject)     59     236     6  2
//	toenail      bernoulli  y ~ Trt*t + (1 | patientID)                            294    1908    4  1
//	hers         bernoulli  y ~ Age + BMI + HTN + Visit + (1 | pptid)              2031   9172    5  1
//	diabetes     bernoulli  see Diabetes                                           16341  45694  46  1
//	cbpp         binomial   cbind(incidence, size - incidence) ~ period + (1 | herd) 15   56      4  1
//	grouseticks  poisson    TICKS ~ YEAR + cHEIGHT + (1 | BROOD)                   118    403     4  1
//
// The first four are the GLMMs of Table 11. Names, Formula and Load form a
// registry over all six, for programs that loop over them.
package paper
