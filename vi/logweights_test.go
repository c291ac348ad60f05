// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/vi"
)

// TestLogWeights: Fit records log p - log q at independent fresh draws:
// as many as the budget allows (250,000 subject evaluations), their mean
// agrees with the final lower bound (both estimate it) within four joint
// standard errors, the same for one worker and two, and none for a target
// of more than vi.MaxImportanceDim variables or when asked for fewer than
// vi.MinImportanceDraws.
func TestLogWeights(t *testing.T) {
	m := simModel(t, "poisson", 400, [][]float64{{0.5}}, 3)
	var first []float64
	for _, workers := range []int{1, 2} {
		res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 2, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		if want := min(1000, 250_000/400); len(res.LogWeights) != want {
			t.Fatalf("%d log weights, want %d", len(res.LogWeights), want)
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
			t.Errorf("mean log weight %.3f ± %.3f, lower bound %.3f ± %.3f", mean, se, res.LowerBound, res.LowerBoundSE)
		}
		if first == nil {
			first = res.LogWeights
		} else {
			for i := range first {
				if first[i] != res.LogWeights[i] {
					t.Fatalf("log weight %d: %v with one worker, %v with two", i, first[i], res.LogWeights[i])
				}
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
