// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/sparsevi/sparsevi/vi"
)

// stopAfter converges at its windows-th call and records the calls.
type stopAfter struct {
	windows, calls int
	restarts       []bool
	firstPrev      []float64
}

func (s *stopAfter) Converged(prev, cur []float64) bool {
	if s.calls == 0 {
		s.firstPrev = append([]float64(nil), prev...)
	}
	s.calls++
	return s.calls%s.windows == 0
}

func (s *stopAfter) Restart(refined bool) { s.restarts = append(s.restarts, refined) }

// TestConverger: Settings.Converger replaces the convergence rule — a
// converger that says yes at its third call ends the fit after four
// windows (the first has nothing to compare with), and after seven with
// one refinement, which it is told of — and NewConverger is the rule Fit
// uses by default, bit for bit.
func TestConverger(t *testing.T) {
	m := simModel(t, "poisson", 60, [][]float64{{0.5}}, 3)
	for _, c := range []struct {
		refine, iters int
		restarts      []bool
	}{{-1, 4 * 50, nil}, {1, 7 * 50, []bool{true}}} {
		s := &stopAfter{windows: 3}
		res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 1, Window: 50, Refine: c.refine, Converger: s})
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != vi.Converged || res.Iterations != c.iters || !reflect.DeepEqual(s.restarts, c.restarts) {
			t.Errorf("Refine %d: %v after %d iterations, restarts %v; want converged after %d, restarts %v",
				c.refine, res.Status, res.Iterations, s.restarts, c.iters, c.restarts)
		}
		if len(s.firstPrev) != 8 {
			t.Errorf("the converger saw %d fixed draws, want the default 8", len(s.firstPrev))
		}
	}
	set := vi.Settings{Seed: 1}
	def, err := vi.Fit(context.Background(), m, set)
	if err != nil {
		t.Fatal(err)
	}
	set.Converger = vi.NewConverger(set)
	exp, err := vi.Fit(context.Background(), m, set)
	if err != nil {
		t.Fatal(err)
	}
	if def.Iterations != exp.Iterations || !reflect.DeepEqual(def.Mu, exp.Mu) || def.LowerBound != exp.LowerBound {
		t.Errorf("NewConverger's fit: %d iterations, bound %v; the default's: %d, %v", exp.Iterations, exp.LowerBound, def.Iterations, def.LowerBound)
	}
}
