// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/sparsevi/sparsevi/internal/longtest"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// TestStochasticAtSampleStart: on RVB's targets expanded at the start of
// a sample of the subjects (rvb.NewAtSampleStart), the stochastic fit with
// its defaults ends where the full batch from the model's full start
// (rvb.NewAtStart) does, means within 0.1 posterior sd and sds within
// 10%, and recovers the truth; the target and the fit are bit-identical
// for one worker and two.
func TestStochasticAtSampleStart(t *testing.T) {
	longtest.Require(t, "fits thousands of subjects")
	m := bernoulliRI(t, 8000, 17)
	beta := []float64{-1, 0.5, 0.5, -0.5, 1}
	for _, tc := range []struct {
		meth      rvb.Method
		size      int
		batch     int
		maxPasses int
	}{
		{rvb.RVB1, 2000, 800, 30},
		{rvb.RVB2, 2000, 800, 30},
	} {
		name := fmt.Sprintf("%v/size=%d", tc.meth, tc.size)
		target := func(workers int, sample bool) vi.Target {
			pool := parallel.NewPollingPool(context.Background(), workers)
			defer pool.Close()
			var tg *rvb.Target
			var err error
			if sample {
				tg, err = rvb.NewAtSampleStart(pool, m, tc.meth, tc.size, 5)
			} else {
				tg, err = rvb.NewAtStart(pool, m, tc.meth)
			}
			if err != nil {
				t.Fatal(err)
			}
			return tg
		}
		ref, err := vi.Fit(context.Background(), target(2, false), vi.Settings{Method: vi.BlockDiag, Seed: 1, Workers: 2})
		if err != nil {
			t.Fatal(err)
		}
		fit := func(workers int) *vi.Result {
			res, err := vi.Fit(context.Background(), target(workers, true), vi.Settings{Method: vi.BlockDiag, Seed: 2, Workers: workers, ChunkSize: 256, Stochastic: vi.Stochastic{Batch: tc.batch}})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		res := fit(2)
		rm, rs := ref.GlobalMoments()
		sm, ss := res.GlobalMoments()
		for j := range rm {
			dm, ds := (sm[j]-rm[j])/rs[j], ss[j]/rs[j]-1
			if math.Abs(dm) > 0.1 || math.Abs(ds) > 0.1 {
				t.Errorf("%s: global %d: mean %.3f sd and sd %.1f%% off the full batch; want 0.1 sd and 10%%", name, j, dm, 100*ds)
			}
		}
		for k, b := range beta {
			if d := math.Abs(sm[k]-b) / ss[k]; d > 4 {
				t.Errorf("%s: beta[%d] = %v, %.1f sd from the truth %v", name, k, sm[k], d, b)
			}
		}
		t.Logf("%s: full batch %d iterations, bound %.2f ± %.2f; stochastic %v after %d passes, bound %.2f ± %.2f", name, ref.Iterations, ref.LowerBound, ref.LowerBoundSE, res.Status, res.Passes, res.LowerBound, res.LowerBoundSE)
		if res.Status != vi.Converged || res.Passes > tc.maxPasses {
			t.Errorf("%s: %v after %d passes; want converged within %d", name, res.Status, res.Passes, tc.maxPasses)
		}
		if one := fit(1); !slices.Equal(one.Mu, res.Mu) || !slices.Equal(one.Factor, res.Factor) || one.LowerBound != res.LowerBound {
			t.Errorf("%s: one worker's fit differs from two workers'", name)
		}
	}
}
