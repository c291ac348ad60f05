// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package reliability holds end-to-end tests of how sparsevi behaves on
// input it should reject, on valid data that is numerically hard, and when
// a fit is pushed to fail or is interrupted. It has no exported API: the
// tests (package reliability_test) drive the public API of datasets,
// formula, glmm, rvb and vi as a user would, from CSV text to a fitted
// approximation, and the built glmmfit command.
//
// The tests are grouped by concern:
//
//   - glmmfit_test.go: the cases of issue 12 run through the built
//     glmmfit as a user meets them (outputs that are inputs, misspelt
//     column flags, degenerate data with their warnings, spreadsheet
//     dialects, impossible values, memory limits): the exit code, the
//     words of the message, no panic, no lost file.
//   - catalogue_test.go: a table of bad inputs, each taken from CSV text
//     through datasets.ReadCSV, glmm.ParseFamily, formula.Parse and
//     formula.Build to vi.Fit, with the stage that must reject it, the
//     error type or sentinel, the row, column or token the error must
//     name, and words of its message; and a table of out-of-range
//     vi.Settings. Nothing may panic.
//   - valid_test.go: valid but unusual files (byte order mark, CRLF,
//     quoted commas and line ends, blank lines, missing values with
//     DropMissing, gzip) must read and fit, bit-identically to the plain
//     file where the data are the same.
//   - limits_test.go: memory and time stay bounded by the input: an
//     endless record, endless columns, deeply nested or exploding
//     formulas are errors, not allocation storms or stack exhaustion;
//     large formulas and wide designs are handled within seconds.
//   - hard_test.go: valid data that strains the numerics (single
//     observations, separable Bernoulli subjects, counts up to 1e6,
//     covariates of magnitude 1e6, a near-zero random-effect variance, one
//     subject, more random effects than observations, 10^5 subjects) must
//     fit with GVA and RVB to finite results with a sensible status.
//   - flatvar_test.go: on data that barely identify a random-effect
//     variance, RVB1 and RVB2 must end within 2 nats of GVA's bound (or
//     above it) and not lose the bound when run longer.
//   - failure_test.go: divergence and target failures are reported with
//     the iteration and the subject; cancelling a fit returns the last
//     good state within about one window of iterations.
//   - determinism_test.go: fits are bit-identical for GOMAXPROCS 1, 2, 4
//     and 8, for GVA on glmm models and RVB on RVB1 and RVB2 targets, for
//     every family.
//
// Tests of a possible hang or crash (runChild in limits_test.go) run their
// work in a child process of the test binary that is killed at a
// deadline, so that a regression costs the deadline, not the whole run.
//
// Run them with go test ./reliability/; they take well under a minute.
package reliability
