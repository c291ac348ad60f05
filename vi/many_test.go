// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"testing"

	"github.com/sparsevi/sparsevi/parallel"
)

// TestDrawsOfManySubjects: the fixed draws of the convergence test and the
// least draws of the final bound stay 8 and 20 up to CRNSubjects subjects
// and shrink beyond, to 2 and 6 at 10^7.
func TestDrawsOfManySubjects(t *testing.T) {
	for _, tc := range []struct {
		n, crn, final int
	}{
		{1000, 8, 1000},
		{100_000, 8, 20},
		{CRNSubjects, 8, 20},
		{2 * CRNSubjects, 4, 10},
		{4 * CRNSubjects, 2, 6},
		{10 * CRNSubjects, 2, 6},
		{100 * CRNSubjects, 2, 6},
	} {
		if got := convergenceDraws(tc.n); got != tc.crn {
			t.Errorf("n=%d: %d convergence draws, want %d", tc.n, got, tc.crn)
		}
		set := Settings{}.withDefaults()
		if got := finalDraws(set, tc.n); got != tc.final {
			t.Errorf("n=%d: %d final draws, want %d", tc.n, got, tc.final)
		}
	}
	// An explicit setting is kept.
	set := Settings{FinalDraws: 4}.withDefaults()
	if got := finalDraws(set, 10*CRNSubjects); got != 4 {
		t.Errorf("FinalDraws 4 at 10^7 subjects: %d draws", got)
	}
}

// TestFinalBoundOfManySubjects: the final bound of a fit of very many
// subjects takes its fewer draws in antithetic pairs and still reports a
// finite standard error.
func TestFinalBoundOfManySubjects(t *testing.T) {
	target := newGaussTarget(3, 40, 1, 2)
	res, err := Fit(context.Background(), target, Settings{Seed: 1, MaxIter: 10, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	set := Settings{Seed: 1, Workers: 1}.withDefaults()
	pool := parallel.NewPool(context.Background(), 1)
	defer pool.Close()
	fam, err := newFamily(target, set, pool, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	copy(fam.lambda(), append(append([]float64(nil), res.Mu...), res.Factor...))
	_, se, _, draws, err := finalBound(fam, set, 10*CRNSubjects)
	if err != nil {
		t.Fatal(err)
	}
	if draws != 6 || !(se > 0) {
		t.Errorf("%d draws, SE %v; want 6 and a positive SE", draws, se)
	}
}

// TestGainFromStart: with the first window's gain measured from the
// start (as Fit does for GVA fits of GVAWindowSubjects subjects from
// their own start), a fit whose windows are all flat converges after
// Patience windows instead of Patience+1, at the same state up to there.
func TestGainFromStart(t *testing.T) {
	target := newGaussTarget(5, 30, 1, 2)
	const window = 5
	iters := map[bool]int{}
	for _, from := range []bool{false, true} {
		set := Settings{Seed: 1, Workers: 1, Window: window, Refine: -1, RelTol: 0.01, gainFromStart: from}
		res, err := Fit(context.Background(), target, set)
		if err != nil {
			t.Fatal(err)
		}
		if res.Status != Converged {
			t.Fatalf("gainFromStart %v: status %v", from, res.Status)
		}
		iters[from] = res.Iterations
	}
	patience := Settings{}.withDefaults().Patience
	if iters[false] != (patience+1)*window || iters[true] != patience*window {
		t.Errorf("converged after %d iterations (%d from the start); want %d and %d", iters[false], iters[true], (patience+1)*window, patience*window)
	}
}

// manyStarter is a Target of many subjects with a Starter, for the
// schedule's rules alone: it is never fitted.
type manyStarter struct{ n int }

func (m manyStarter) Dims() (int, int, int)   { return m.n, 1, 6 }
func (m manyStarter) NewWorkspace() Workspace { return nil }
func (m manyStarter) Global(thetaG, grad []float64) float64 {
	panic("manyStarter is not fitted")
}
func (m manyStarter) Local(Workspace, int, int, []float64, []float64, []float64, []float64) (float64, error) {
	panic("manyStarter is not fitted")
}
func (m manyStarter) Start(*parallel.Pool, []float64, []float64) error {
	panic("manyStarter is not fitted")
}

// TestOwnStartWindow: GVA fits of GVAWindowSubjects subjects or more
// from the target's own start take GVAWindow with the first window's gain
// measured from the start; fewer subjects, another start, a target
// without a Starter and RVB keep the old schedule.
func TestOwnStartWindow(t *testing.T) {
	many, few := manyStarter{GVAWindowSubjects}, manyStarter{GVAWindowSubjects - 1}
	plain := newGaussTarget(1, 3, 1, 2)
	for _, tc := range []struct {
		name   string
		target Target
		set    Settings
		window int
	}{
		{"gva", many, Settings{Method: GVA}, GVAWindow},
		{"gva-few", few, Settings{Method: GVA}, 0},
		{"gva-paper", many, Settings{Method: GVA, Init: InitPaper}, 0},
		{"gva-no-starter", plain, Settings{Method: GVA}, 0},
		{"rvb", many, Settings{Method: BlockDiag}, 0},
		{"rvb-snngm", many, Settings{Method: BlockDiag, Rule: Snngm{}}, 0},
	} {
		n, _, _ := tc.target.Dims()
		w, from := ownStartWindow(tc.target, tc.set, n)
		if w != tc.window || from != (tc.window != 0) {
			t.Errorf("%s: window %d, gain from the start %v; want %d and %v", tc.name, w, from, tc.window, tc.window != 0)
		}
	}
}
