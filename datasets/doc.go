// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package datasets provides the data side of sparsevi: a column-oriented
// data frame read from CSV, loaders for the benchmark data sets of Tan's
// GLMM experiments, and a simulator of GLMM data with known truth.
//
// # Frames
//
// A Frame is an ordered set of named, equal-length columns; a row is an
// observation. A Column is either Numeric, holding float64 values, or
// Categorical, holding string labels. Both kinds carry a Missing flag per
// row; a missing numeric value is also NaN and a missing label is also "",
// so code that ignores Missing sees values that cannot be mistaken for
// data. Levels returns the distinct labels of a categorical column in byte
// order, the order of R's default factor levels in the C locale; the first
// level is the reference level of a treatment contrast.
//
// Frames share their columns: NewFrame and Add do not copy, and Columns
// and Column return the frame's own columns, which callers must not modify
// while the frame is in use. Rows makes a new frame with new columns.
//
// # Reading CSV
//
// ReadCSV and ReadFile read a CSV file with a header row into a Frame,
// inferring the kind of each column: numeric if every non-missing field is
// a decimal number, categorical otherwise. Empty fields, NA and ? are
// missing by default. NaN and infinite values are not accepted as data. A
// Reader, made by NewReader, changes the missing tokens, trimming, size
// limits and columns forced to be categorical. Problems in the input are
// reported as a *ParseError naming the file, line, column number and
// column name, and wrapping a sentinel error such as ErrFieldCount that
// errors.Is recognises. WriteCSV writes a Frame in a form ReadCSV reads
// back.
//
// For data larger than memory, a Reader can keep only the rows that a
// filter on one column keeps (Keep: the columns' kinds, warnings and
// errors are still those of every row), read only some columns (Columns),
// or give the rows a piece at a time (ReadPieces).
//
// # Benchmark data
//
// Epilepsy, Toenail, HERS, Diabetes, CBPP and Grouseticks read the raw
// benchmark files from a data directory (see DataDir; the files are not
// part of the module) and return frames holding the raw columns plus the
// derived columns of the models in Tan's paper, Section 8.5, with subject
// identifiers as categorical columns. Each function's documentation lists
// its derived columns and coding decisions; where the paper leaves a
// choice open, an options struct exposes it with the paper's reading as
// the zero value.
//
// # Simulation
//
// Simulate draws longitudinal data from a Poisson, Bernoulli or binomial
// GLMM with random intercepts and optionally random slopes, specified by a
// SimSpec, and returns the frame together with the Truth: the fixed
// effects, the random-effects covariance, each subject's random effects
// and the lme4 formula of the model. The draws depend only on the spec and
// its seed.
package datasets
