// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package reliability_test

import (
	"context"
	"math"
	"runtime"
	"testing"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// TestDeterminismAcrossGOMAXPROCS: the same fit with GOMAXPROCS 1, 2, 4 and
// 8 (and as many workers) is bit-identical in Mu, Factor, LowerBound and
// Iterations: GVA on the glmm model and RVB on RVB1 and RVB2 targets, for
// every family, with chunks of 8 subjects, so that 15 chunks are spread
// over the workers (the default chunk of 256 subjects would make one).
// RVB2 keeps warm-start modes in its target, so each fit gets a fresh
// target.
func TestDeterminismAcrossGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	type fitter struct {
		name   string
		target func(t *testing.T, m *glmm.Model) vi.Target
		method vi.Method
	}
	fitters := []fitter{
		{"gva", func(_ *testing.T, m *glmm.Model) vi.Target { return m }, vi.GVA},
		{"rvb1", func(t *testing.T, m *glmm.Model) vi.Target { return rvbNew(t, m, rvb.RVB1) }, vi.BlockDiag},
		{"rvb2", func(t *testing.T, m *glmm.Model) vi.Target { return rvbNew(t, m, rvb.RVB2) }, vi.BlockDiag},
	}
	for _, family := range []string{"poisson", "bernoulli", "binomial"} {
		m := smallModel(t, family, 120, 51)
		for _, f := range fitters {
			name := family + "/" + f.name
			t.Run(name, func(t *testing.T) {
				var ref *vi.Result
				for _, procs := range []int{1, 2, 8} {
					runtime.GOMAXPROCS(procs)
					set := vi.Settings{Method: f.method, Seed: 99, MaxIter: 300, ChunkSize: 8, FinalDraws: 200}
					res, err := vi.Fit(context.Background(), f.target(t, m), set)
					checkResult(t, name, res, err, vi.Converged, vi.MaxIterations)
					if ref == nil {
						ref = res
						continue
					}
					if k := firstDiff(res.Mu, ref.Mu); k >= 0 {
						t.Errorf("GOMAXPROCS %d: Mu[%d] = %v, with 1: %v", procs, k, res.Mu[k], ref.Mu[k])
					}
					if k := firstDiff(res.Factor, ref.Factor); k >= 0 {
						t.Errorf("GOMAXPROCS %d: Factor[%d] = %v, with 1: %v", procs, k, res.Factor[k], ref.Factor[k])
					}
					if math.Float64bits(res.LowerBound) != math.Float64bits(ref.LowerBound) || res.Iterations != ref.Iterations || res.Status != ref.Status {
						t.Errorf("GOMAXPROCS %d: bound %v after %d iterations (%v), with 1: %v after %d (%v)",
							procs, res.LowerBound, res.Iterations, res.Status, ref.LowerBound, ref.Iterations, ref.Status)
					}
				}
			})
		}
	}
}

// rvbNew returns the reparametrisation of m by method.
func rvbNew(t *testing.T, m *glmm.Model, method rvb.Method) *rvb.Target {
	t.Helper()
	tg, err := rvb.New(m, method)
	if err != nil {
		t.Fatalf("rvb.New(%v): %v", method, err)
	}
	return tg
}
