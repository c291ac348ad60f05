// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package formula turns lme4-style model formulas into glmm models.
//
// A formula such as
//
//	y ~ lbase*trt + lage + V4 + (1 + Visit | subject)
//
// is read by Parse into a *Formula, which Build combines with a data frame
// (package datasets) into a *Design: the fixed-effect design X, the
// random-effect design Z, the subject of each row and the *glmm.Model fitted
// by package vi. NewData codes new data the same way, for prediction.
//
// # Syntax
//
// The response is a column, or for a binomial model cbind(s, f) (successes
// and failures: s + f trials) or cbind(s, n - s) (n trials). A categorical
// response with two levels is a Bernoulli response whose second level (in
// sorted order) is 1, as in R; FALSE/TRUE gives TRUE = 1.
//
// The right-hand side follows R's formula algebra:
//
//	a + b       both terms
//	a:b         the interaction
//	a*b         a + b + a:b
//	(a + b):c   a:c + b:c (parentheses group)
//	(a + b)^2   a + b + a:b
//	a/b         a + a:b
//	a - b       remove term b;  - 1, 0 +, + 0: no intercept
//	offset(x)   add column x (or log(x), ...) to the linear predictor
//	factor(x)   treat a numeric column as categorical (also as.factor)
//	log(x), sqrt(x), exp(x)  transformed numeric columns
//	I(x^2), log(x + 1)       arithmetic of one column: numbers, + - * / ^,
//	            log, sqrt and exp, evaluated row by row (named as R
//	            deparses them: "I(x^2)", "log(x + 1)")
//	scale(x)    x less its mean, over its standard deviation (n - 1), both
//	            over the rows the model uses (R's scale; R takes them before
//	            leaving out rows with a missing value elsewhere); new data
//	            are scaled by the same two numbers. Not with Scan.
//	(1 | g), (1 + x | g), (x | g), (0 + x | g)  random effects for groups g
//
// Names are R's syntactic names (letters, digits, '.' and '_') or
// `quoted names`. Arithmetic of several columns (I(x*z); write x:z), %in%,
// '.', string literals and other functions are rejected with a
// *SyntaxError naming the token and its column (1-based byte position).
//
// # Terms and columns, as in R
//
// Terms are ordered as R's terms.formula orders them: by the number of
// variables they involve (main effects, then two-way interactions, ...),
// in formula order within each degree; a term's label lists its variables
// in order of their first appearance in the formula ("lbase:trt").
// Columns follow R's model.matrix with treatment contrasts: the intercept
// "(Intercept)", then each term; a numeric variable contributes its value,
// a categorical one the indicators of its levels, named by the variable
// label and the level ("trtprogabide", "factor(period)2"), the first
// variable of an interaction varying fastest. A categorical variable in a
// term is coded by contrasts (every level but the reference) when the term
// without it is the intercept or is contained in an earlier term, and by
// indicators of all its levels otherwise; without an intercept the first
// categorical variable of the first term holding one gets all its levels.
// So y ~ x + x:f has columns x and x:fb while y ~ x:f has x:fa and x:fb.
//
// Levels are those present in the rows used. They are sorted numerically
// when all of them are numbers (as R's levels of a factor made from numbers)
// and byte-wise otherwise (R's C locale); the first is the reference level
// unless Options.Reference names another.
//
// # Random effects
//
// The model of package glmm has one grouping factor whose levels are the
// subjects, with random effects of any structure, and may have factors
// crossed with it, each with a random intercept (glmm.Crossed). Hence:
//
//   - A second grouping factor, as in (1 | a) + (1 | b), is a crossed
//     factor (see Options.LocalFactor for which is which); random slopes
//     on it are errors wrapping ErrUnsupported.
//   - An interaction of grouping factors (1 | a:b) groups by the
//     combinations of their levels, and a nesting (1 | a/b) is
//     (1 | a) + (1 | a:b), as in lme4: the subjects are then the a:b
//     combinations (the factor with the most levels) and a is crossed
//     with them.
//   - (1 + x || g), which lme4 fits with uncorrelated effects, and several
//     terms for the same factor, (1 | g) + (0 + x | g), which lme4 fits as
//     independent blocks, are rejected by default, and fitted as lme4
//     does with Options.DoubleBar = IndependentDoubleBar (glmm's
//     REBlocks), or as one correlated block, as (1 + x | g), with
//     CorrelatedDoubleBar.
//   - A grouping factor must have at least two levels in the data used.
//
// # Parts of a design
//
// A fit over several processes gives each process the subjects [lo, hi)
// of a design: Options.Part makes that part from the whole data, coded as
// the whole design is (the levels of factors, the auto prior's scaling,
// the rank check). Data too large for each process to hold are read by
// Scan a piece at a time (Pieces) for what the part needs of all the rows;
// Build with Options.Whole then makes the same part, bit for bit, from a
// frame that holds the rows of the part's subjects alone (Whole.Keep is
// the filter of datasets.Reader.Keep that reads them).
//
// # Errors
//
// Parse returns a *SyntaxError. Build and NewData return a *DataError
// naming the formula token and its position, the data column and the data
// row (0-based in the field, shown 1-based) as they apply: an unknown
// column, a categorical column where a number is needed (in cbind, offset,
// log), a missing value (unless Options.Missing is DropMissing), a
// categorical predictor or grouping factor with a single level, a level
// unseen in training (NewData). Errors of glmm.New, such as a response the
// family cannot produce or a rank-deficient design, are wrapped in a
// *DataError naming the row. Nothing a user writes makes the package panic.
package formula
