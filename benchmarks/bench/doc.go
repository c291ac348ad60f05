// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package bench holds Go benchmarks of the paths a whole fit goes through
// that the packages' own benchmarks (arrowhead, blockdiag, glmm, rvb,
// datasets) do not cover: simulating and building a model, the start, one
// iteration of vi.Fit by method and number of workers, RVB's cost per
// subject per iteration over GVA's (BenchmarkRVBOverGVA), and the final
// lower-bound estimate, on the simulated models of benchmarks/scaling at
// n = 10^4 subjects with 7 observations each.
//
//	go test ./benchmarks/bench -run '^$' -bench . -benchtime 3x
//
// The package has no code of its own.
package bench
