// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/parallel"
)

// TestFinalBoundAntithetic: the final estimate from antithetic pairs must
// agree with a long run of independent draws within their standard errors,
// and its standard error must be an honest one (the spread of repeated
// estimates from other streams).
func TestFinalBoundAntithetic(t *testing.T) {
	for _, m := range []Method{GVA, BlockDiag} {
		t.Run(m.String(), func(t *testing.T) {
			ctx := context.Background()
			target := newGaussTarget(5, 30, 2, 3)
			set := Settings{Method: m, Seed: 3, Init: InitPaper, FinalSE: -1, FinalDraws: 400}.withDefaults()
			pool := parallel.NewPool(ctx, 1)
			defer pool.Close()
			fam, err := newFamily(target, set, pool, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The paper's start is far from the optimum, so h varies.
			if err := fam.init(ctx, InitPaper); err != nil {
				t.Fatal(err)
			}
			mean, se, _, _, err := finalBound(fam, set, 30)
			if err != nil {
				t.Fatal(err)
			}
			const ref = 20000
			var sum, sumSq float64
			var h0 float64
			for k := range ref {
				h, err := fam.estimate(uint64(k+1), nil, nil, false)
				if err != nil {
					t.Fatal(err)
				}
				if k == 0 {
					h0 = h
				}
				sum += h - h0
				sumSq += (h - h0) * (h - h0)
			}
			refMean, refSE := h0+sum/ref, meanSE(sum, sumSq, ref)
			if d := math.Abs(mean - refMean); d > 4*math.Hypot(se, refSE) {
				t.Errorf("final bound %v ± %v, independent draws %v ± %v", mean, se, refMean, refSE)
			}
			// Antithetic pairs must not be worse than as many independent
			// draws: the pairs' standard error is at most that of 400
			// independent draws, with room for the estimates' noise.
			indepSE := refSE * math.Sqrt(ref/400.0)
			if se > 1.3*indepSE {
				t.Errorf("antithetic standard error %v, independent draws' %v", se, indepSE)
			}
			t.Logf("antithetic se %.4g, independent %.4g", se, indepSE)
		})
	}
}
