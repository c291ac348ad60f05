// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/simshare"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// newChanGroups returns a group of size goroutines linked by channels.
func newChanGroups(size int) []vi.Group {
	gs := make([]vi.Group, size)
	for r, g := range simshare.NewGroups(size) {
		gs[r] = g
	}
	return gs
}

// model returns the model of the subjects [lo, hi) of d.
func model(t *testing.T, d *simshare.Data, lo, hi int) *glmm.Model {
	t.Helper()
	m, err := d.Model(lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// fitGroup fits the subjects split at bounds (process k holding
// [bounds[k], bounds[k+1])) over a group of goroutines with the settings.
func fitGroup(t *testing.T, d *simshare.Data, bounds []int, set vi.Settings) ([]*vi.Result, []error) {
	t.Helper()
	return fitShares(t, context.Background(), d, bounds, func(int) vi.Settings { return set })
}

// fitShares fits the subjects split at bounds over a group of goroutines,
// process k with the settings setFor(k), or alone when bounds has one
// share.
func fitShares(t *testing.T, ctx context.Context, d *simshare.Data, bounds []int, setFor func(k int) vi.Settings) ([]*vi.Result, []error) {
	t.Helper()
	size := len(bounds) - 1
	groups := newChanGroups(size)
	res := make([]*vi.Result, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for k := range size {
		m := model(t, d, bounds[k], bounds[k+1])
		s := setFor(k)
		if size > 1 {
			s.Group = groups[k]
		}
		wg.Go(func() {
			res[k], errs[k] = vi.Fit(ctx, m, s)
		})
	}
	wg.Wait()
	return res, errs
}

// sameBits reports the first index at which a and b differ in their bits.
func sameBits(a, b []float64) (int, bool) { return simshare.SameBits(a, b) }

// TestGroupBitIdentical fits the same subjects in one process and split
// over 1, 2 and 3 processes of a Group (with 2, 1 and 2 workers), for
// both families and four rules, and asks for the same bits: every
// process's subjects' means and factor blocks, the global block, the
// bound, the trace and the importance weights.
func TestGroupBitIdentical(t *testing.T) {
	const chunk = 32
	cases := []struct {
		family glmm.Family
		method vi.Method
		rule   vi.Rule
		n      int
	}{
		{glmm.Bernoulli, vi.GVA, vi.Snngm{}, 300},
		{glmm.Bernoulli, vi.BlockDiag, vi.Snngm{}, 300},
		{glmm.Poisson, vi.GVA, vi.Snngm{}, 200},
		{glmm.Poisson, vi.BlockDiag, vi.Snngm{}, 200},
		{glmm.Poisson, vi.GVA, vi.Adam{}, 200},
		{glmm.Poisson, vi.GVA, vi.Nagm{}, 200},
		{glmm.Bernoulli, vi.BlockDiag, vi.PGA{}, 300},
	}
	// Each partition with a worker count of its own: one, two and three
	// processes, one and two workers each.
	boundsOf := func(n int) [][]int { return [][]int{{0, n}, {0, 3 * chunk, n}, {0, chunk, 5 * chunk, n}} }
	workers := []int{2, 1, 2}
	if testing.Short() {
		// The race detector's run (CI): both families, three processes.
		cases = cases[:2]
		boundsOf = func(n int) [][]int { return [][]int{{0, chunk, 5 * chunk, n}} }
		workers = workers[2:]
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v/%v/%s", c.family, c.method, c.rule), func(t *testing.T) {
			d := simshare.New(c.family, c.n, 7)
			set := vi.Settings{Method: c.method, Rule: c.rule, Init: vi.InitPaper, Seed: 3,
				ChunkSize: chunk, MaxIter: 300, Workers: 2}
			one, err := vi.Fit(context.Background(), model(t, d, 0, d.N), set)
			if err != nil {
				t.Fatal(err)
			}
			for k, bounds := range boundsOf(d.N) {
				set := set
				set.Workers = workers[k]
				res, errs := fitGroup(t, d, bounds, set)
				for k, e := range errs {
					if e != nil {
						t.Fatalf("bounds %v: process %d: %v", bounds, k, e)
					}
				}
				where := fmt.Sprintf("bounds %v, %d workers", bounds, set.Workers)
				sameShares(t, where, one, res, bounds)
			}
			if one.Rule.String() == "" || len(one.LogWeights) == 0 {
				t.Fatalf("the one-process fit has rule %q and %d log weights", one.Rule, len(one.LogWeights))
			}
		})
	}
}

// sameShares checks that each process's result res[k], for the subjects
// [bounds[k], bounds[k+1]), has the bits of the one-process result one:
// its subjects' means and factor blocks, the global block, the bound, the
// trace and the importance weights.
func sameShares(t *testing.T, where string, one *vi.Result, res []*vi.Result, bounds []int) {
	t.Helper()
	n, r := one.N, one.R
	// The global factor block is the tail the one-process factor shares
	// with every process's.
	localFactor := (len(one.Factor) - globalFactorLen(one)) / n
	for k, rk := range res {
		lo, hi := bounds[k], bounds[k+1]
		where := fmt.Sprintf("%s, process %d", where, k)
		if rk.Iterations != one.Iterations || rk.Status != one.Status {
			t.Fatalf("%s: %d iterations (%v), want %d (%v)", where, rk.Iterations, rk.Status, one.Iterations, one.Status)
		}
		checks := []struct {
			name      string
			got, want []float64
		}{
			{"local means", rk.Mu[:(hi-lo)*r], one.Mu[lo*r : hi*r]},
			{"global means", rk.Mu[(hi-lo)*r:], one.Mu[n*r:]},
			{"local factor", rk.Factor[:(hi-lo)*localFactor], one.Factor[lo*localFactor : hi*localFactor]},
			{"global factor", rk.Factor[(hi-lo)*localFactor:], one.Factor[n*localFactor:]},
			{"bound", []float64{rk.LowerBound, rk.LowerBoundSE}, []float64{one.LowerBound, one.LowerBoundSE}},
			{"trace", traceBounds(rk), traceBounds(one)},
			{"log weights", rk.LogWeights, one.LogWeights},
			{"importance draws", rk.ImportanceGlobal, one.ImportanceGlobal},
		}
		for _, ck := range checks {
			if i, ok := sameBits(ck.got, ck.want); !ok {
				t.Fatalf("%s: %s differ at %d (lengths %d, %d)", where, ck.name, i, len(ck.got), len(ck.want))
			}
		}
	}
}

// TestGroupShares fits Shares of whole targets over a group, started at
// the whole target's start (InitMode), and asks for the bits of the whole
// target's fit in one process: glmm's model by GVA and the block-diagonal
// family, and its RVB1 and RVB2 reparametrisations.
func TestGroupShares(t *testing.T) {
	const chunk = 32
	pool := parallel.NewPool(context.Background(), 1)
	defer pool.Close()
	for _, c := range []struct {
		name   string
		family glmm.Family
		method vi.Method
		rvb    rvb.Method // 0: the model itself
		n      int
	}{
		{"bernoulli/gva", glmm.Bernoulli, vi.GVA, 0, 200},
		{"poisson/blockdiag", glmm.Poisson, vi.BlockDiag, 0, 200},
		{"bernoulli/rvb1", glmm.Bernoulli, vi.BlockDiag, rvb.RVB1, 200},
		{"bernoulli/rvb2", glmm.Bernoulli, vi.BlockDiag, rvb.RVB2, 200},
		{"poisson/rvb1", glmm.Poisson, vi.BlockDiag, rvb.RVB1, 200},
		// Past RVBStepSubjects RVB's step depends on the number of
		// subjects, which in a group is every process's.
		{"bernoulli/rvb1/many", glmm.Bernoulli, vi.BlockDiag, rvb.RVB1, vi.RVBStepSubjects + 100},
		// In chunks of the default size the processes compute the
		// model's start together (glmm.Model.StartShare).
		{"bernoulli/gva/shared start", glmm.Bernoulli, vi.GVA, 0, 1100},
		{"gaussian/blockdiag/shared start", glmm.Gaussian, vi.BlockDiag, 0, 1100},
		{"bernoulli/rvb1/shared start", glmm.Bernoulli, vi.BlockDiag, rvb.RVB1, 1100},
		{"poisson/rvb2/shared start", glmm.Poisson, vi.BlockDiag, rvb.RVB2, 1100},
	} {
		if testing.Short() && c.name != "bernoulli/gva/shared start" && c.name != "bernoulli/rvb2" {
			continue // the race detector's run (CI)
		}
		t.Run(c.name, func(t *testing.T) {
			d := simshare.New(c.family, c.n, 9)
			// A fresh whole target for every fit: RVB's keeps its
			// start until used, RVB2's each subject's last solve.
			newWhole := func() vi.Target {
				m := model(t, d, 0, d.N)
				if c.rvb == 0 {
					return m
				}
				rt, err := rvb.NewAtStart(pool, m, c.rvb)
				if err != nil {
					t.Fatal(err)
				}
				return rt
			}
			chunk := chunk
			if strings.HasSuffix(c.name, "shared start") {
				chunk = parallel.DefaultChunkSize
			}
			set := vi.Settings{Method: c.method, Seed: 2, ChunkSize: chunk, MaxIter: 300, Workers: 1}
			one, err := vi.Fit(context.Background(), newWhole(), set)
			if err != nil {
				t.Fatal(err)
			}
			for _, bounds := range [][]int{{0, 2 * chunk, d.N}, {0, chunk, 4 * chunk, d.N}} {
				groups := newChanGroups(len(bounds) - 1)
				res := make([]*vi.Result, len(groups))
				errs := make([]error, len(groups))
				var wg sync.WaitGroup
				for k := range groups {
					// Each process its own whole target, as in a job.
					sh, err := vi.NewShare(newWhole(), bounds[k], bounds[k+1])
					if err != nil {
						t.Fatal(err)
					}
					s := set
					s.Group = groups[k]
					wg.Go(func() { res[k], errs[k] = vi.Fit(context.Background(), sh, s) })
				}
				wg.Wait()
				for k, e := range errs {
					if e != nil {
						t.Fatalf("bounds %v: process %d: %v", bounds, k, e)
					}
				}
				sameShares(t, fmt.Sprintf("bounds %v", bounds), one, res, bounds)
			}
		})
	}
}

// globalFactorLen returns the number of factor entries of the global block
// (T_g or C_g, packed).
func globalFactorLen(res *vi.Result) int {
	return res.G * (res.G + 1) / 2
}

func traceBounds(res *vi.Result) []float64 {
	var b []float64
	for _, tp := range res.Trace {
		b = append(b, tp.LowerBound, tp.StepNorm)
	}
	return b
}

// failingTarget is a model whose subject bad fails to evaluate once Local
// has been called after times.
type failingTarget struct {
	*glmm.Model
	bad, after int
	calls      atomic.Int64
}

func (f *failingTarget) Local(ws vi.Workspace, lo, hi int, thetaG, local, gradLocal, gradG []float64) (float64, error) {
	if f.calls.Add(1) > int64(f.after) && lo <= f.bad && f.bad < hi {
		return 0, fmt.Errorf("subject %d: made to fail", f.bad)
	}
	return f.Model.Local(ws, lo, hi, thetaG, local, gradLocal, gradG)
}

// TestGroupAgrees checks that the processes of a group take decisions
// together: a process whose context is cancelled stops all of them, and a
// setup one process cannot run is refused by all of them, naming it.
func TestGroupAgrees(t *testing.T) {
	d := simshare.New(glmm.Bernoulli, 200, 3)
	set := vi.Settings{Init: vi.InitPaper, Seed: 1, ChunkSize: 32, MaxIter: 100000, Workers: 1}

	t.Run("cancel", func(t *testing.T) {
		bounds := []int{0, 64, 128, 200}
		groups := newChanGroups(3)
		res := make([]*vi.Result, 3)
		errs := make([]error, 3)
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for k := range 3 {
			m := model(t, d, bounds[k], bounds[k+1])
			s := set
			s.Group = groups[k]
			s.Tol = math.SmallestNonzeroFloat64 // never converge
			s.RelTol = -1
			c := context.Background()
			if k == 1 {
				c = ctx
				s.Progress = func(p vi.Progress) {
					if p.Iter >= 200 {
						cancel()
					}
				}
			}
			wg.Go(func() { res[k], errs[k] = vi.Fit(c, m, s) })
		}
		wg.Wait()
		cancel()
		for k := range 3 {
			want := vi.ErrGroupStopped
			if k == 1 {
				want = context.Canceled
			}
			if !errors.Is(errs[k], want) || res[k] == nil || res[k].Status != vi.Cancelled {
				t.Fatalf("process %d: error %v, want %v with status Cancelled", k, errs[k], want)
			}
			if res[k].Iterations != res[0].Iterations || res[k].Iterations < 200 {
				t.Fatalf("process %d stopped after %d iterations, process 0 after %d", k, res[k].Iterations, res[0].Iterations)
			}
		}
	})

	t.Run("target fails", func(t *testing.T) {
		bounds := []int{0, 64, 128, 200}
		groups := newChanGroups(3)
		res := make([]*vi.Result, 3)
		errs := make([]error, 3)
		var wg sync.WaitGroup
		for k := range 3 {
			var target vi.Target = model(t, d, bounds[k], bounds[k+1])
			if k == 2 {
				target = &failingTarget{Model: target.(*glmm.Model), bad: 70, after: 300}
			}
			s := set
			s.Group = groups[k]
			wg.Go(func() { res[k], errs[k] = vi.Fit(context.Background(), target, s) })
		}
		wg.Wait()
		for k := range 3 {
			var div *vi.DivergedError
			if !errors.As(errs[k], &div) || res[k].Status != vi.Diverged {
				t.Fatalf("process %d: error %v, want a divergence", k, errs[k])
			}
			want := "subject 70: made to fail"
			if k != 2 {
				want = "the target of process 2 failed"
			}
			if !strings.Contains(errs[k].Error(), want) {
				t.Fatalf("process %d: error %q, want it to say %q", k, errs[k], want)
			}
			if res[k].Iterations != res[2].Iterations || res[k].Backoffs != res[2].Backoffs {
				t.Fatalf("process %d: %d iterations and %d back-offs, process 2: %d and %d", k, res[k].Iterations, res[k].Backoffs, res[2].Iterations, res[2].Backoffs)
			}
		}
	})

	t.Run("whole chunks", func(t *testing.T) {
		_, errs := fitGroup(t, d, []int{0, 50, 200}, set)
		for k, e := range errs {
			if e == nil || !strings.Contains(e.Error(), "process 0") || !strings.Contains(e.Error(), "chunk size 32") {
				t.Fatalf("process %d: error %v, want one naming process 0 and the chunk size", k, e)
			}
		}
	})

	t.Run("start", func(t *testing.T) {
		// A Starter that is no GroupStarter would start from its own
		// subjects alone.
		s := set
		s.Init = vi.InitMode
		bounds := []int{0, 64, 200}
		groups := newChanGroups(2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for k := range 2 {
			m := ownStarter{model(t, d, bounds[k], bounds[k+1])}
			s := s
			s.Group = groups[k]
			wg.Go(func() { _, errs[k] = vi.Fit(context.Background(), m, s) })
		}
		wg.Wait()
		for k, e := range errs {
			if !errors.Is(e, vi.ErrSettings) || !strings.Contains(e.Error(), "InitPaper") {
				t.Fatalf("process %d: error %v, want ErrSettings naming InitPaper", k, e)
			}
		}
	})

	t.Run("start chunks", func(t *testing.T) {
		// A GroupStarter's start is in chunks of the default size.
		s := set
		s.Init = vi.InitMode
		_, errs := fitGroup(t, d, []int{0, 64, 200}, s)
		for k, e := range errs {
			if !errors.Is(e, vi.ErrSettings) || !strings.Contains(e.Error(), "Settings.ChunkSize 32") {
				t.Fatalf("process %d: error %v, want ErrSettings naming Settings.ChunkSize", k, e)
			}
		}
	})
}

// ownStarter is a target whose start is its own subjects' alone: a
// Starter that is no GroupStarter.
type ownStarter struct{ m *glmm.Model }

func (o ownStarter) Dims() (n, r, g int)                   { return o.m.Dims() }
func (o ownStarter) NewWorkspace() vi.Workspace            { return o.m.NewWorkspace() }
func (o ownStarter) Global(thetaG, grad []float64) float64 { return o.m.Global(thetaG, grad) }
func (o ownStarter) Start(p *parallel.Pool, theta, prec []float64) error {
	return o.m.Start(p, theta, prec)
}
func (o ownStarter) Local(ws vi.Workspace, lo, hi int, thetaG, local, gradLocal, gradG []float64) (float64, error) {
	return o.m.Local(ws, lo, hi, thetaG, local, gradLocal, gradG)
}

// TestGroupParts fits over a group processes that each hold a model of
// their own subjects alone, started together at InitMode (StartGroup),
// and asks for the bits of the whole target's fit in one process: glmm's
// model by GVA and the block-diagonal family, and its RVB1 and RVB2
// reparametrisations made by rvb.NewGroupAtStart.
func TestGroupParts(t *testing.T) {
	const chunk = parallel.DefaultChunkSize
	for _, c := range []struct {
		name   string
		family glmm.Family
		method vi.Method
		rvb    rvb.Method // 0: the model itself
	}{
		{"bernoulli/gva", glmm.Bernoulli, vi.GVA, 0},
		{"gaussian/blockdiag", glmm.Gaussian, vi.BlockDiag, 0},
		{"bernoulli/rvb1", glmm.Bernoulli, vi.BlockDiag, rvb.RVB1},
		{"poisson/rvb2", glmm.Poisson, vi.BlockDiag, rvb.RVB2},
	} {
		if testing.Short() && c.name != "bernoulli/rvb1" {
			continue // the race detector's run (CI)
		}
		t.Run(c.name, func(t *testing.T) {
			d := simshare.New(c.family, 4*chunk+76, 9)
			// target returns the target of the subjects [lo, hi), started
			// with the processes that grp links (nil alone).
			target := func(pool *parallel.Pool, grp vi.Group, lo, hi int) (vi.Target, error) {
				m := model(t, d, lo, hi)
				if c.rvb == 0 {
					return m, nil
				}
				if grp == nil {
					return rvb.NewAtStart(pool, m, c.rvb)
				}
				return rvb.NewGroupAtStart(pool, grp, m, c.rvb)
			}
			set := vi.Settings{Method: c.method, Seed: 2, MaxIter: 300, Workers: 1}
			pool := parallel.NewPool(context.Background(), 1)
			whole, err := target(pool, nil, 0, d.N)
			pool.Close()
			if err != nil {
				t.Fatal(err)
			}
			one, err := vi.Fit(context.Background(), whole, set)
			if err != nil {
				t.Fatal(err)
			}
			for _, bounds := range [][]int{{0, 2 * chunk, d.N}, {0, chunk, 3 * chunk, d.N}} {
				groups := newChanGroups(len(bounds) - 1)
				res := make([]*vi.Result, len(groups))
				errs := make([]error, len(groups))
				var wg sync.WaitGroup
				for k := range groups {
					s := set
					s.Group = groups[k]
					wg.Go(func() {
						pool := parallel.NewPool(context.Background(), 1)
						defer pool.Close()
						tk, err := target(pool, groups[k], bounds[k], bounds[k+1])
						if err != nil {
							errs[k] = err
							return
						}
						res[k], errs[k] = vi.Fit(context.Background(), tk, s)
					})
				}
				wg.Wait()
				for k, e := range errs {
					if e != nil {
						t.Fatalf("bounds %v: process %d: %v", bounds, k, e)
					}
				}
				sameShares(t, fmt.Sprintf("bounds %v", bounds), one, res, bounds)
			}
		})
	}
}
