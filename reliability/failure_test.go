// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// smallModel is a simulated model of the given family with random
// intercepts and slopes, built through the formula package.
func smallModel(t *testing.T, family string, subjects int, seed uint64) *glmm.Model {
	t.Helper()
	fam, err := glmm.ParseFamily(family)
	if err != nil {
		t.Fatal(err)
	}
	fr, tr := simulate(t, datasets.SimSpec{Family: family, Subjects: subjects, Obs: 5,
		Beta: []float64{0.3, -0.4}, RECov: [][]float64{{0.5, 0.1}, {0.1, 0.3}}, Seed: seed})
	return build(t, tr.Formula, fr, fam).Model()
}

// TestHugeStepDiverges: a step size a million times too large ends every
// step rule, on both methods, in status Diverged with a *vi.DivergedError
// naming an iteration after the start, and the returned state (the last
// good one) is finite, with a finite bound evaluated there.
func TestHugeStepDiverges(t *testing.T) {
	m := smallModel(t, "poisson", 80, 41)
	tg := rvbTarget(t, m)
	for _, method := range []vi.Method{vi.GVA, vi.BlockDiag} {
		var target vi.Target = m
		if method == vi.BlockDiag {
			target = tg
		}
		// Snngm's step is Alpha0 sqrt(len(lambda)).
		for _, opt := range []vi.Rule{vi.Snngm{Alpha0: 1e4}, vi.Adam{Alpha: 1e6}, vi.NAdam{Alpha: 1e6}, vi.PGA{Alpha: 1e6}, vi.Nagm{Alpha: 1e6}, vi.VOGN{Alpha: 1e6}} {
			t.Run(method.String()+"/"+opt.String(), func(t *testing.T) {
				set := vi.Settings{Method: method, Rule: opt, Seed: 5, FinalDraws: 100}
				res, err := vi.Fit(context.Background(), target, set)
				var de *vi.DivergedError
				if !errors.As(err, &de) {
					t.Fatalf("error %v (%T), want a *vi.DivergedError", err, err)
				}
				if res == nil || res.Status != vi.Diverged {
					t.Fatalf("result %v, want status diverged", res)
				}
				if de.Iter < 1 || de.Iter > 100 {
					t.Errorf("diverged at iteration %d, want within the first 100", de.Iter)
				}
				if !strings.Contains(err.Error(), fmt.Sprintf("diverged at iteration %d", de.Iter)) {
					t.Errorf("message %q does not name the iteration", err)
				}
				if res.Iterations > de.Iter {
					t.Errorf("last good state at iteration %d, after the divergence at %d", res.Iterations, de.Iter)
				}
				checkResult(t, "diverged fit", res, err, vi.Diverged)
				t.Logf("%v", err)
			})
		}
	}
}

// errInjected is the failure a faulty target reports.
var errInjected = errors.New("injected failure")

// faulty wraps a target and makes subject bad fail in the gradient passes
// from..to (1-based; the gradient pass k is iteration k of the fit while
// no iteration is retried), either with an error naming the subject, as
// the Target contract asks, or (nanOnly) with a NaN log density and no
// error, as a target breaking the contract would.
type faulty struct {
	vi.Target
	bad      int
	label    string
	from, to int64
	nanOnly  bool
	passes   atomic.Int64
}

// Start, NumObs and LocalHessian are forwarded so that the fit starts as
// it would on the wrapped target.
func (f *faulty) Start(pool *parallel.Pool, theta, prec []float64) error {
	return f.Target.(vi.Starter).Start(pool, theta, prec)
}

func (f *faulty) NumObs() int { return f.Target.(vi.NumObser).NumObs() }

func (f *faulty) Local(ws vi.Workspace, lo, hi int, thetaG, local, gradLocal, gradG []float64) (float64, error) {
	v, err := f.Target.Local(ws, lo, hi, thetaG, local, gradLocal, gradG)
	if err != nil || gradLocal == nil || f.bad < lo || f.bad >= hi {
		return v, err
	}
	k := f.passes.Add(1)
	if k < f.from || k > f.to {
		return v, nil
	}
	if f.nanOnly {
		return math.NaN(), nil
	}
	return v, fmt.Errorf("subject %q (index %d): log density is not finite: %w", f.label, f.bad, errInjected)
}

// TestTargetFailureNamesSubject: a target that fails for one subject from
// some iteration on makes the fit back off five times (restoring the best
// state with half the step) and then end as Diverged, with the iteration
// and the target's error, which names the subject; a failure at a single
// iteration costs one back-off and the fit carries on. A target that
// returns NaN without an error is caught as a non-finite bound, but
// cannot be named. VOGN, whose steps fuse evaluation and update, backs
// off as the gradient rules do.
func TestTargetFailureNamesSubject(t *testing.T) {
	const from = 137 // in the third window of 50 (the sixth of 25)
	m := smallModel(t, "bernoulli", 60, 42)
	tg := rvbTarget(t, m)
	for _, c := range []struct {
		method vi.Method
		opt    vi.Rule
	}{{vi.GVA, vi.Snngm{}}, {vi.BlockDiag, vi.Snngm{}}, {vi.GVA, vi.VOGN{}}, {vi.BlockDiag, vi.VOGN{}}} {
		method := c.method
		var inner vi.Target = m
		if method == vi.BlockDiag {
			inner = tg
		}
		name := method.String() + "/" + c.opt.String()
		t.Run(name+"/persistent", func(t *testing.T) {
			f := &faulty{Target: inner, bad: 17, label: m.GroupLevels()[17], from: from, to: math.MaxInt64}
			res, err := vi.Fit(context.Background(), f, vi.Settings{Method: method, Rule: c.opt, Seed: 6, MaxIter: 400, FinalDraws: 100})
			var de *vi.DivergedError
			if !errors.As(err, &de) || res == nil || res.Status != vi.Diverged {
				t.Fatalf("error %v, want a divergence", err)
			}
			if !errors.Is(err, errInjected) {
				t.Errorf("error %v does not wrap the target's", err)
			}
			if de.Iter != from+5 || res.Backoffs != 5 {
				t.Errorf("diverged at iteration %d after %d back-offs, want %d after 5", de.Iter, res.Backoffs, from+5)
			}
			if de.Reason != "target evaluation failed" {
				t.Errorf("reason %q", de.Reason)
			}
			for _, s := range []string{fmt.Sprintf("iteration %d", from+5), `subject "` + f.label + `"`} {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("message %q does not contain %q", err, s)
				}
			}
			// The last complete window before the failure.
			if w := res.Trace[0].Iter; res.Iterations != from/w*w {
				t.Errorf("last good state at iteration %d, want %d (the last complete window of %d)", res.Iterations, from/w*w, w)
			}
			checkResult(t, "persistent failure", res, err, vi.Diverged)
		})
		t.Run(name+"/transient", func(t *testing.T) {
			f := &faulty{Target: inner, bad: 17, label: m.GroupLevels()[17], from: from, to: from}
			res, err := vi.Fit(context.Background(), f, vi.Settings{Method: method, Rule: c.opt, Seed: 6, MaxIter: 400, FinalDraws: 100})
			checkResult(t, "transient failure", res, err, vi.Converged, vi.MaxIterations)
			if res.Backoffs != 1 {
				t.Errorf("%d back-offs, want 1", res.Backoffs)
			}
		})
		t.Run(name+"/NaN without error", func(t *testing.T) {
			f := &faulty{Target: inner, bad: 17, from: from, to: math.MaxInt64, nanOnly: true}
			res, err := vi.Fit(context.Background(), f, vi.Settings{Method: method, Rule: c.opt, Seed: 6, MaxIter: 400, FinalDraws: 100})
			var de *vi.DivergedError
			if !errors.As(err, &de) || res == nil || res.Status != vi.Diverged {
				t.Fatalf("error %v, want a divergence", err)
			}
			if de.Iter != from+5 || de.Reason != "non-finite lower bound" {
				t.Errorf("diverged at iteration %d (%q), want %d (non-finite lower bound)", de.Iter, de.Reason, from+5)
			}
			checkResult(t, "NaN", res, err, vi.Diverged)
		})
	}
}

// TestGLMMNamesSubject: glmm's own check of a non-finite log density names
// the subject by its label. Weights that would make it infinite at any
// parameter value are refused when the model is built, naming the row; a
// random effect of 1e200 makes subject "Dora"'s prior density -Inf.
func TestGLMMNamesSubject(t *testing.T) {
	m := smallModel(t, "poisson", 10, 43)
	cfg := glmmConfig(m)
	cfg.Weights = make([]float64, len(cfg.Y))
	for k := range cfg.Weights {
		cfg.Weights[k] = 1
	}
	// Rows are stored subject-major with 5 per subject: subject 3 is rows
	// 15..19 (16..20 counting from 1).
	cfg.Weights[15] = 1e308
	cfg.GroupLevels = []string{"a", "b", "c", "Dora", "e", "f", "g", "h", "i", "j"}
	if _, err := glmm.New(cfg); err == nil || !strings.Contains(err.Error(), "row 16") {
		t.Errorf("New with a weight of 1e308: error %v, want one naming row 16", err)
	}
	cfg.Weights[15] = 1
	model, err := glmm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	n, r, g := model.Dims()
	b := make([]float64, n*r)
	b[3*r] = 1e200
	_, err = model.Local(model.NewWorkspace(), 0, n, make([]float64, g), b, nil, nil)
	if err == nil || !strings.Contains(err.Error(), `"Dora"`) {
		t.Fatalf("Local: error %v, want one naming subject \"Dora\"", err)
	}
}

// glmmConfig returns a Config reproducing m, rows in stored order.
func glmmConfig(m *glmm.Model) glmm.Config {
	n, _, _ := m.Dims()
	cfg := glmm.Config{Family: m.Family(), X: m.FixedDesign(), Z: m.RandomDesign(), NumGroups: n,
		Y: make([]float64, 0, m.NumObs()), Trials: make([]float64, 0, m.NumObs())}
	for i := range n {
		y, tr, _ := m.Response(i)
		lo, hi := m.SubjectRows(i)
		cfg.Y = append(cfg.Y, y...)
		cfg.Trials = append(cfg.Trials, tr...)
		for range hi - lo {
			cfg.Group = append(cfg.Group, i)
		}
	}
	return cfg
}

// TestRVB2ModeFailure (issue 8, once a failure): RVB2's Newton solve for
// the conditional mode of a Bernoulli subject whose five responses are all
// 1, when the random-effect precision is tiny (log W = -12.7 here, a draw a
// fit of these data made), hit its iteration limit: the mode is far out
// (b about 23), in the likelihood's exponential tail. The solve must now
// converge there, and the default RVB fit of the model (RVB2) must end
// with a finite state and bound, not in a mode failure.
func TestRVB2ModeFailure(t *testing.T) {
	fr, _ := simulate(t, datasets.SimSpec{Family: "bernoulli", Subjects: 150, Obs: 5,
		Beta: []float64{0.5, 0.3, 0.4}, RECov: [][]float64{{0.5}}, Seed: 21})
	m := build(t, "y ~ t + x1 + (1 | id)", fr, glmm.Bernoulli).Model()
	tg, err := rvb.NewRVB2(m)
	if err != nil {
		t.Fatal(err)
	}
	y, _, _ := m.Response(45)
	if y[0]+y[1]+y[2]+y[3]+y[4] != 5 {
		t.Fatalf("subject 45 responses %v, want all 1", y)
	}
	thetaG := []float64{0.7268445282677173, -0.5986376292442553, 0.3258085400620902, -12.723067711462072}
	grad := make([]float64, len(thetaG))
	gl := make([]float64, 1)
	v, err := tg.Local(tg.NewWorkspace(), 45, 46, thetaG, []float64{0}, gl, grad)
	if err != nil {
		t.Fatalf("Local at subject 45: %v", err)
	}
	if k := firstNonFinite(append([]float64{v, gl[0]}, grad...)); k >= 0 {
		t.Errorf("Local at subject 45: log density %v, gradients %v %v", v, gl, grad)
	}

	res, err := vi.Fit(context.Background(), tg, vi.Settings{Method: vi.BlockDiag, Seed: 2})
	checkResult(t, "RVB2 fit", res, err, vi.Converged, vi.MaxIterations)
	var me *rvb.ModeError
	if errors.As(err, &me) {
		t.Errorf("RVB2 fit: mode failure %v", err)
	}
	t.Logf("fit: %v after %d iterations, bound %v, error %v", res.Status, res.Iterations, res.LowerBound, err)
}

// TestCancel: cancelling the context stops a fit with status Cancelled,
// the context's error and the last good state: the end of the last
// complete window, which is at most one window behind the iteration at
// which the fit noticed. The fit returns promptly.
func TestCancel(t *testing.T) {
	m := smallModel(t, "poisson", 400, 44)
	tg := rvbTarget(t, m)
	type run struct {
		method vi.Method
		opt    vi.Rule
	}
	for _, c := range []run{{vi.GVA, vi.Snngm{}}, {vi.BlockDiag, vi.Snngm{}}, {vi.GVA, vi.Adam{}}, {vi.GVA, vi.VOGN{}}, {vi.BlockDiag, vi.VOGN{}}} {
		var target vi.Target = m
		if c.method == vi.BlockDiag {
			target = tg
		}
		t.Run(c.method.String()+"/"+c.opt.String()+"/timer", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			// The timer starts at the first window, so that the
			// cancellation comes while the fit iterates, whatever the time
			// the start takes.
			var lastWindow, cancelledAt atomic.Int64 // cancelledAt in UnixNano
			var timer *time.Timer
			set := vi.Settings{Method: c.method, Rule: c.opt, Seed: 7, Patience: 1 << 30, MaxIter: 1 << 30,
				Progress: func(p vi.Progress) {
					if lastWindow.Swap(int64(p.Iter)) == 0 {
						timer = time.AfterFunc(200*time.Millisecond, func() {
							cancelledAt.Store(time.Now().UnixNano())
							cancel()
						})
					}
				}}
			defer func() {
				if timer != nil {
					timer.Stop()
				}
			}()
			res, err := vi.Fit(ctx, target, set)
			returned := time.Now()
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("error %v, want context.Canceled", err)
			}
			checkResult(t, "cancelled", res, err, vi.Cancelled)
			if !math.IsNaN(res.LowerBound) {
				t.Errorf("lower bound %v of a cancelled fit, want NaN (not estimated)", res.LowerBound)
			}
			// The state is that of the last reported window, or of the next
			// one if the cancellation came while its bound was evaluated.
			w := int64(res.Trace[0].Iter)
			if got, last := int64(res.Iterations), lastWindow.Load(); got%w != 0 || got == 0 || got != last && got != last+w {
				t.Errorf("last good state at iteration %d, want the last reported window %d", got, last)
			}
			// One window of iterations: Trace has the windows' timings.
			window := res.Trace[len(res.Trace)-1].Elapsed / time.Duration(len(res.Trace))
			lag := returned.Sub(time.Unix(0, cancelledAt.Load()))
			if lag > window+100*time.Millisecond {
				t.Errorf("returned %v after the cancellation; a window takes %v", lag, window)
			}
			t.Logf("cancelled with %d windows done; returned %v after cancel()", len(res.Trace), lag.Round(time.Microsecond))
		})
	}

	// Cancelled in the middle of a run of windows, from the progress
	// callback: the state is exactly that of the window.
	t.Run("at a window", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		set := vi.Settings{Seed: 7, Tol: 1e-12, MaxIter: 1 << 30, Progress: func(p vi.Progress) {
			if p.Iter == 250 {
				cancel()
			}
		}}
		res, err := vi.Fit(ctx, m, set)
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		checkResult(t, "cancelled", res, err, vi.Cancelled)
		if res.Iterations != 250 {
			t.Errorf("last good state at iteration %d, want 250", res.Iterations)
		}
		// The same fit stopped by the iteration limit at 250 has the same
		// state.
		ref, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 7, Tol: 1e-12, MaxIter: 250, FinalDraws: 100})
		checkResult(t, "reference", ref, err, vi.MaxIterations)
		if firstDiff(res.Mu, ref.Mu) >= 0 || firstDiff(res.Factor, ref.Factor) >= 0 {
			t.Errorf("cancelled state differs from the state after 250 iterations")
		}
	})

	// Cancelled before the fit starts: no state to return.
	t.Run("before the start", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		res, err := vi.Fit(ctx, m, vi.Settings{})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		if res != nil {
			checkResult(t, "cancelled at the start", res, err, vi.Cancelled)
		}
		t.Logf("result %v, error %v", res != nil, err)
	})

	// Cancelled at the window that ends the fit, while the final bound is
	// estimated: the error still wraps context.Canceled and the state is
	// finite. (The status is then Diverged, not Cancelled; see the report.)
	t.Run("during the final bound", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res, err := vi.Fit(ctx, m, vi.Settings{Seed: 7, MaxIter: 100, Progress: func(p vi.Progress) {
			if p.Iter == 100 {
				cancel()
			}
		}})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("error %v, want context.Canceled", err)
		}
		if res == nil || firstNonFinite(res.Mu) >= 0 || firstNonFinite(res.Factor) >= 0 {
			t.Fatalf("no finite state returned")
		}
		t.Logf("status %v, bound %v, error %v", res.Status, res.LowerBound, err)
	})
}

// firstDiff returns the first index at which a and b differ (bitwise), or
// -1; a length difference counts at the shorter length.
func firstDiff(a, b []float64) int {
	for k := range min(len(a), len(b)) {
		if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
			return k
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b))
	}
	return -1
}
