// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"math"
	"runtime"
	"slices"
	"testing"

	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// TestLogWeights: Fit records log p - log q at independent fresh draws:
// as many as the budget allows (250,000 subject evaluations), their mean
// agrees with the final lower bound (both estimate it) within four joint
// standard errors, the same bit for bit for one worker, two, and the
// default (one here, whose draws a second goroutine shares), for GVA and
// the block-diagonal family, the latter also on RVB2's target, whose warm
// starts a second goroutine would make depend on its timing, and none for
// a target of more than vi.MaxImportanceDim variables or when asked for
// fewer than vi.MinImportanceDraws.
func TestLogWeights(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	m := simModel(t, "poisson", 400, [][]float64{{0.5}}, 3)
	rvb2, err := rvb.New(m, rvb.RVB2)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		target vi.Target
		method vi.Method
	}{{m, vi.GVA}, {m, vi.BlockDiag}, {rvb2, vi.BlockDiag}} {
		method := c.method
		var first, firstGlobal []float64
		for _, workers := range []int{1, 2, 0} {
			res, err := vi.Fit(context.Background(), c.target, vi.Settings{Seed: 2, Workers: workers, Method: method})
			if err != nil {
				t.Fatal(err)
			}
			if want := min(1000, 250_000/400); len(res.LogWeights) != want || len(res.ImportanceGlobal) != want*res.G {
				t.Fatalf("%v: %d log weights and %d values of theta_g, want %d draws", method, len(res.LogWeights), len(res.ImportanceGlobal), want)
			}
			var s, ss float64
			for _, w := range res.LogWeights {
				s += w
				ss += w * w
			}
			k := float64(len(res.LogWeights))
			mean := s / k
			se := math.Sqrt((ss/k - mean*mean) / k)
			if d := math.Abs(mean - res.LowerBound); d > 4*math.Hypot(se, res.LowerBoundSE) {
				t.Errorf("%v: mean log weight %.3f ± %.3f, lower bound %.3f ± %.3f", method, mean, se, res.LowerBound, res.LowerBoundSE)
			}
			if first == nil {
				first, firstGlobal = res.LogWeights, res.ImportanceGlobal
				continue
			}
			if !slices.Equal(first, res.LogWeights) || !slices.Equal(firstGlobal, res.ImportanceGlobal) {
				t.Fatalf("%v on %T: the log weights or their draws differ between one worker and %d (0: the default)", method, c.target, workers)
			}
		}
	}
	big := simModel(t, "poisson", vi.MaxImportanceDim, [][]float64{{0.5}}, 4)
	res, err := vi.Fit(context.Background(), big, vi.Settings{Seed: 2, MaxIter: 200})
	if err != nil && res == nil {
		t.Fatal(err)
	}
	if res.LogWeights != nil {
		t.Errorf("%d log weights for %d subjects", len(res.LogWeights), vi.MaxImportanceDim)
	}
	res, err = vi.Fit(context.Background(), m, vi.Settings{Seed: 2, ImportanceDraws: vi.MinImportanceDraws - 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.LogWeights != nil {
		t.Errorf("%d log weights when %d were asked for", len(res.LogWeights), vi.MinImportanceDraws-1)
	}
}
