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

// TestOwnStartWindow: fits of GVAWindowSubjects subjects or more from
// the target's own start, GVA's and RVB's, take GVAWindow with the first
// window's gain measured from the start; fewer subjects, another start
// and a target without a Starter keep the old schedule.
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
		{"rvb", many, Settings{Method: BlockDiag}, GVAWindow},
		{"rvb-few", few, Settings{Method: BlockDiag}, 0},
		{"rvb-paper", many, Settings{Method: BlockDiag, Init: InitPaper}, 0},
	} {
		n, _, _ := tc.target.Dims()
		w, from := ownStartWindow(tc.target, tc.set, n)
		if w != tc.window || from != (tc.window != 0) {
			t.Errorf("%s: window %d, gain from the start %v; want %d and %v", tc.name, w, from, tc.window, tc.window != 0)
		}
	}
}

// TestMoveKeepsClimbing: windows whose gains are all flat by the bound
// converge after Patience windows without the test of moveTol; with it,
// not while a global mean moves moveTol posterior sds or more a window
// (a steady drift of 0.05 sd), and after Patience windows once it stops;
// and a test that vetoes every window (moveTol below any jitter) holds
// the fit back maxMoveVetoes windows and no more.
func TestMoveKeepsClimbing(t *testing.T) {
	const sd = 0.5
	// converged returns the window at which the rule converges when the
	// first global mean moves by drift sds a window for the first moving
	// windows and then stops.
	converged := func(tol, drift float64, moving int) int {
		set := Settings{Window: 2, ConvergenceDraws: 1, gainFromStart: true, moveTol: tol}.withDefaults()
		tr := newTracker(set, newGainConverger(set))
		tr.havePrev = true
		x := 1.0
		if tol > 0 {
			tr.mv = newMover(tol, 2, func(mean, sds []float64) {
				mean[0], mean[1] = x, -3
				sds[0], sds[1] = sd, sd
			})
			tr.mv.begin()
		}
		for w := 1; w <= 100; w++ {
			for range set.Window {
				if w <= moving {
					x += drift * sd / float64(set.Window)
				}
				tr.add(-10)
			}
			tr.cur[0] = tr.prev[0] + 1e-3 // flat: far below Tol
			if tr.crn() {
				return w
			}
		}
		return -1
	}
	patience := Settings{}.withDefaults().Patience
	for _, tc := range []struct {
		name         string
		tol, drift   float64
		moving, want int
	}{
		{"without", 0, 0.05, 10, patience},
		{"drifting", RVBMoveTol, 0.05, 10, 10 + patience},
		{"settled", RVBMoveTol, 0.01, 10, patience},
		{"always", 1e-300, 0.05, 1000, maxMoveVetoes + patience},
	} {
		if got := converged(tc.tol, tc.drift, tc.moving); got != tc.want {
			t.Errorf("%s: converged at window %d, want %d", tc.name, got, tc.want)
		}
	}
}
