// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"errors"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/paper"
	"github.com/sparsevi/sparsevi/vi"
)

// TestDeterministic: the same fit gives bit-identical results for any
// number of workers and any GOMAXPROCS, for both methods and every family.
func TestDeterministic(t *testing.T) {
	for _, family := range []string{"poisson", "bernoulli", "binomial"} {
		m := simModel(t, family, 150, [][]float64{{0.6, 0.1}, {0.1, 0.3}}, 5)
		for _, method := range []vi.Method{vi.GVA, vi.BlockDiag} {
			var ref *vi.Result
			for _, c := range []struct{ procs, workers int }{{1, 1}, {2, 2}, {4, 3}, {8, 8}} {
				prev := runtime.GOMAXPROCS(c.procs)
				res, err := vi.Fit(context.Background(), m, vi.Settings{Method: method, Seed: 9, MaxIter: 1200, Workers: c.workers, ChunkSize: 16})
				runtime.GOMAXPROCS(prev)
				if err != nil {
					t.Fatal(err)
				}
				if ref == nil {
					ref = res
					continue
				}
				if !slices.Equal(res.Mu, ref.Mu) || !slices.Equal(res.Factor, ref.Factor) || res.LowerBound != ref.LowerBound || res.Iterations != ref.Iterations {
					t.Errorf("%s/%v: GOMAXPROCS %d, %d workers differ from 1 worker", family, method, c.procs, c.workers)
				}
			}
		}
	}
}

// TestCancel: cancelling the context stops the fit with status cancelled,
// the context's error, and a finite last good state.
func TestCancel(t *testing.T) {
	m := simModel(t, "bernoulli", 200, [][]float64{{1}}, 2)
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	res, err := vi.Fit(ctx, m, vi.Settings{Tol: 1e-12, MaxIter: 1 << 30, Window: 50, Progress: func(vi.Progress) {
		calls++
		if calls == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if res == nil || res.Status != vi.Cancelled {
		t.Fatalf("status %v, want cancelled", res.Status)
	}
	if res.Iterations < 150 || res.Iterations > 200 {
		t.Errorf("last good state at iteration %d, want the end of the third window (150)", res.Iterations)
	}
	for _, x := range append(res.Mu, res.Factor...) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatal("non-finite value in the returned state")
		}
	}
}

// TestDiverges: a deliberately huge step ends in status diverged with the
// iteration, and the returned state holds no NaN.
func TestDiverges(t *testing.T) {
	m := simModel(t, "poisson", 100, [][]float64{{0.5}}, 3)
	for _, method := range []vi.Method{vi.GVA, vi.BlockDiag} {
		res, err := vi.Fit(context.Background(), m, vi.Settings{Method: method, Rule: vi.Adam{Alpha: 1e6}})
		var de *vi.DivergedError
		if !errors.As(err, &de) {
			t.Fatalf("%v: error %v, want *vi.DivergedError", method, err)
		}
		if res.Status != vi.Diverged || de.Iter < 1 {
			t.Errorf("%v: status %v at iteration %d", method, res.Status, de.Iter)
		}
		for _, x := range append(res.Mu, res.Factor...) {
			if math.IsNaN(x) {
				t.Fatalf("%v: NaN in the returned state", method)
			}
		}
	}
}

// TestBoundBelowEvidence: no lower bound may exceed log p(y), computed
// independently by quadrature and importance sampling (ALGORITHMS.md §1),
// and the fit comes within a few nats of it.
func TestBoundBelowEvidence(t *testing.T) {
	dir := datasets.DataDir("")
	for _, tc := range []struct {
		name   string
		logML  float64
		method vi.Method
	}{
		{"epilepsy", -692.02, vi.GVA},
		{"toenail", -647.22, vi.GVA},
		{"cbpp", -109.54, vi.GVA},
		{"epilepsy", -692.02, vi.BlockDiag},
		{"cbpp", -109.54, vi.BlockDiag},
	} {
		d, err := paper.Load(tc.name, dir)
		if err != nil {
			t.Skipf("data directory %s: %v", dir, err)
		}
		res, err := vi.Fit(context.Background(), d.Model(), vi.Settings{Method: tc.method, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s/%v: bound %.2f ± %.2f, log p(y) %.2f", tc.name, tc.method, res.LowerBound, res.LowerBoundSE, tc.logML)
		if res.LowerBound > tc.logML+3*res.LowerBoundSE {
			t.Errorf("%s/%v: bound %.3f above log p(y) = %.2f", tc.name, tc.method, res.LowerBound, tc.logML)
		}
		if tc.method == vi.GVA && res.LowerBound < tc.logML-15 {
			t.Errorf("%s/%v: bound %.3f far below log p(y) = %.2f", tc.name, tc.method, res.LowerBound, tc.logML)
		}
	}
}
