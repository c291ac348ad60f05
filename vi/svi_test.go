// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
)

// startedGauss is a gaussTarget with a Starter: the exact posterior
// precision, and the exact mean with the global block moved by shift
// posterior sds, so that the fit must find its way back.
type startedGauss struct {
	*gaussTarget
	shift float64
}

func (s startedGauss) Start(_ *parallel.Pool, theta, prec []float64) error {
	mean, p, _ := s.exact()
	n, r, g := s.n, s.r, s.g
	for j := range theta {
		theta[j] = mean.AtVec(j)
	}
	for a := range g {
		theta[n*r+a] += s.shift / math.Sqrt(p.At(n*r+a, n*r+a))
	}
	sym := arrowhead.WrapSym(n, r, g, prec)
	for i := range n {
		for a := range r {
			for b := 0; b <= a; b++ {
				sym.SetLocal(i, a, b, p.At(i*r+a, i*r+b))
			}
			for k := range g {
				sym.SetCross(i, k, a, p.At(n*r+k, i*r+a))
			}
		}
	}
	for a := range g {
		for b := 0; b <= a; b++ {
			sym.SetGlobal(a, b, p.At(n*r+a, n*r+b))
		}
	}
	return nil
}

// TestStochasticGaussianExact: on the conjugate target the best
// block-diagonal approximation is known: the posterior mean, and for each
// block the inverse of the precision's diagonal block. The stochastic fit
// must stay there when started there, and reach it from global means 1 sd
// away, global means within 0.1 sd and sds within 10%, for every batch
// size. From afar it needs a tolerance far below the default: each pass
// closes only a fraction of the distance, less as the step shrinks, and
// the default stops at 0.1 to 0.2 sd from a start 0.5 sd away.
func TestStochasticGaussianExact(t *testing.T) {
	for _, tc := range []struct {
		name           string
		n, r, g, batch int
		shift, tol     float64
	}{
		{"r=1/batch=50", 400, 1, 3, 50, 0, 0},
		{"r=2/batch=40", 300, 2, 2, 40, 0, 0},
		{"r=2/batch=all", 300, 2, 2, 300, 0, 0},
		{"r=3/batch=64", 200, 3, 2, 64, 0, 0},
		{"r=1/batch=50/shift=1", 400, 1, 3, 50, 1, 1e-3},
		{"r=2/batch=40/shift=1", 300, 2, 2, 40, 1, 1e-3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := newGaussTarget(5, tc.n, tc.r, tc.g)
			mean, prec, _ := tg.exact()
			set := Settings{Method: BlockDiag, Seed: 3, Workers: 2, ChunkSize: 16, Stochastic: Stochastic{Batch: tc.batch, Tol: tc.tol, MaxPasses: 300}}
			res, err := Fit(context.Background(), startedGauss{tg, tc.shift}, set)
			if err != nil {
				t.Fatal(err)
			}
			c := blockdiag.Wrap(tc.n, tc.r, tc.g, res.Factor)
			d := tc.n*tc.r + tc.g
			// The global block's covariance: the inverse of its precision block.
			var pg mat.SymDense
			pg.SubsetSym(prec, seq(tc.n*tc.r, d))
			var ch mat.Cholesky
			if !ch.Factorize(&pg) {
				t.Fatal("global precision block not positive definite")
			}
			var cov mat.SymDense
			if err := ch.InverseTo(&cov); err != nil {
				t.Fatal(err)
			}
			cg := c.Global()
			var worstMu, worstSD float64
			for a := range tc.g {
				want := math.Sqrt(cov.At(a, a))
				var ss float64
				for b := 0; b <= a; b++ {
					ss += cg[a*(a+1)/2+b] * cg[a*(a+1)/2+b]
				}
				j := tc.n*tc.r + a
				worstMu = max(worstMu, math.Abs(res.Mu[j]-mean.AtVec(j))/want)
				worstSD = max(worstSD, math.Abs(math.Sqrt(ss)/want-1))
			}
			t.Logf("%s: %v after %d passes (%d iterations): worst global mean %.3f sd off, worst sd %.3f off", tc.name, res.Status, res.Passes, res.Iterations, worstMu, worstSD)
			if worstMu > 0.1 || worstSD > 0.1 {
				t.Errorf("global means up to %.3f sd and sds up to %.1f%% off the optimum; want 0.1 sd and 10%%", worstMu, 100*worstSD)
			}
			if res.Status != Converged {
				t.Errorf("status %v, want converged", res.Status)
			}
		})
	}
}

func seq(lo, hi int) []int {
	s := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

// TestStochasticOrder: the order of the subjects in a pass, and so the
// minibatches, is a permutation that depends on the seed and the pass
// alone.
func TestStochasticOrder(t *testing.T) {
	order := func(seed uint64, pass, chunk int) []uint32 {
		tg := newGaussTarget(1, 1000, 1, 2)
		set := Settings{Method: BlockDiag, Seed: seed, ChunkSize: chunk}.withDefaults()
		s := newSVI(newRVB(tg, set, nil, nil), Stochastic{Batch: 10}.withDefaults(), seed)
		s.shuffle(pass)
		return s.perm
	}
	ref := order(1, 3, 16)
	sorted := slices.Clone(ref)
	slices.Sort(sorted)
	for i, v := range sorted {
		if int(v) != i {
			t.Fatalf("the order is no permutation: %d at %d", v, i)
		}
	}
	for _, tc := range []struct {
		name        string
		seed        uint64
		pass, chunk int
		same        bool
	}{
		{"same seed and pass", 1, 3, 16, true},
		{"another chunk size", 1, 3, 256, true},
		{"another pass", 1, 4, 16, false},
		{"another seed", 2, 3, 16, false},
	} {
		if got := order(tc.seed, tc.pass, tc.chunk); slices.Equal(got, ref) != tc.same {
			t.Errorf("%s: same order %v, want %v", tc.name, !tc.same, tc.same)
		}
	}
}

// TestStochasticFirstPassHoldsGlobals: the first pass fills each subject's
// kept contribution and steps the subjects' blocks alone; the global block
// stays at the start, 1 sd from the optimum here, until the sum over all
// subjects is known. The second pass moves it towards the optimum.
func TestStochasticFirstPassHoldsGlobals(t *testing.T) {
	tg := newGaussTarget(5, 400, 1, 3)
	mean, prec, _ := tg.exact()
	n, r, g := tg.n, tg.r, tg.g
	fit := func(passes int) *Result {
		set := Settings{Method: BlockDiag, Seed: 3, Workers: 2, ChunkSize: 16, Stochastic: Stochastic{Batch: 50, MaxPasses: passes, Window: 1}}
		res, err := Fit(context.Background(), startedGauss{tg, 1}, set)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	one := fit(1)
	for a := range g {
		j := n*r + a
		start := mean.AtVec(j) + 1/math.Sqrt(prec.At(j, j))
		if one.Mu[j] != start {
			t.Errorf("after one pass global mean %d is %v; want the start's %v", a, one.Mu[j], start)
		}
	}
	moved := 0
	for j := range n * r {
		if one.Mu[j] != mean.AtVec(j) {
			moved++
		}
	}
	if moved == 0 {
		t.Error("the first pass left every subject's mean at the start")
	}
	two := fit(2)
	for a := range g {
		j := n*r + a
		start := mean.AtVec(j) + 1/math.Sqrt(prec.At(j, j))
		if math.Abs(two.Mu[j]-mean.AtVec(j)) >= math.Abs(start-mean.AtVec(j)) {
			t.Errorf("after two passes global mean %d is %v, no nearer the optimum %v than the start %v", a, two.Mu[j], mean.AtVec(j), start)
		}
	}
}

// nearGauss is a startedGauss that says its locals are reparametrised,
// as RVB's targets do: with sviNearSubjects lowered, its stochastic fits
// start near the optimum (nearStart).
type nearGauss struct{ startedGauss }

func (nearGauss) LocalsReparametrised() bool { return true }

// lowerNear lowers sviNearSubjects for the test.
func lowerNear(t *testing.T, n int) {
	prev := sviNearSubjects
	sviNearSubjects = n
	t.Cleanup(func() { sviNearSubjects = prev })
}

// TestStochasticFillAtMeans: near the start (nearStart) the control
// variate is filled before the first pass: each subject's kept
// contribution is the mean of its gradients in theta_g at a pair of
// local draws at the global means (on this target, linear in the
// locals, the gradient at the means), their sum is kept in subject order, and the first pass steps the global block
// towards the optimum from a start 1 sd away, where otherwise it holds
// it (TestStochasticFirstPassHoldsGlobals). Started at the optimum, the
// fit stays there and converges after two passes, the first window
// measured from the start, bit for bit for one worker and two, with
// 2*sviFinalPairs draws of the final bound.
func TestStochasticFillAtMeans(t *testing.T) {
	tg := newGaussTarget(5, 400, 1, 3)
	mean, prec, _ := tg.exact()
	n, r, g := tg.n, tg.r, tg.g
	lowerNear(t, n)

	// The fill itself.
	set := Settings{Method: BlockDiag, Seed: 3, Workers: 2, ChunkSize: 16, Init: InitMode}.withDefaults()
	pool := parallel.NewPool(context.Background(), 2)
	defer pool.Close()
	f := newRVB(nearGauss{startedGauss{tg, 1}}, set, pool, nil)
	if err := f.init(context.Background(), InitMode); err != nil {
		t.Fatal(err)
	}
	s := newSVI(f, Stochastic{Batch: 50}.withDefaults(), set.Seed)
	if err := s.fill(); err != nil {
		t.Fatal(err)
	}
	if s.visited != n {
		t.Errorf("after the fill %d subjects count as visited; want %d", s.visited, n)
	}
	ws := tg.NewWorkspace()
	mu := f.lam[:f.d]
	want, sum := make([]float64, g), make([]float64, g)
	gl := make([]float64, r)
	for i := range n {
		clear(want)
		if _, err := tg.Local(ws, i, i+1, mu[n*r:], mu[i*r:(i+1)*r], gl, want); err != nil {
			t.Fatal(err)
		}
		// The gradient is linear in the locals: the pair's mean is the
		// gradient at the means, up to rounding.
		for j, x := range s.kept[i*g : (i+1)*g] {
			if math.Abs(x-want[j]) > 1e-9*(1+math.Abs(want[j])) {
				t.Fatalf("subject %d keeps %v; want its gradient at the means %v", i, s.kept[i*g:(i+1)*g], want)
			}
			sum[j] += x
		}
	}
	if !slices.Equal(s.keptSum, sum) {
		t.Errorf("the kept sum is %v; want %v", s.keptSum, sum)
	}

	fitOn := func(workers int, shift float64, passes int) *Result {
		set := Settings{Method: BlockDiag, Seed: 3, Workers: workers, ChunkSize: 16, Stochastic: Stochastic{Batch: 50, MaxPasses: passes}}
		res, err := Fit(context.Background(), nearGauss{startedGauss{tg, shift}}, set)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	fit := func(shift float64, passes int) *Result { return fitOn(2, shift, passes) }
	one := fit(1, 1)
	for a := range g {
		j := n*r + a
		start := mean.AtVec(j) + 1/math.Sqrt(prec.At(j, j))
		if math.Abs(one.Mu[j]-mean.AtVec(j)) >= math.Abs(start-mean.AtVec(j)) {
			t.Errorf("after one pass global mean %d is %v, no nearer the optimum %v than the start %v", a, one.Mu[j], mean.AtVec(j), start)
		}
	}
	at := fit(0, 0)
	if at.Status != Converged || at.Passes != 2 {
		t.Errorf("from the optimum: %v after %d passes; want converged after 2", at.Status, at.Passes)
	}
	for a := range g {
		j := n*r + a
		sd := 1 / math.Sqrt(prec.At(j, j))
		if d := math.Abs(at.Mu[j]-mean.AtVec(j)) / sd; d > 0.05 {
			t.Errorf("from the optimum: global mean %d ended %.3f sd from it", a, d)
		}
	}
	if w1 := fitOn(1, 0, 0); !slices.Equal(w1.Mu, at.Mu) || !slices.Equal(w1.Factor, at.Factor) || w1.LowerBound != at.LowerBound {
		t.Error("one worker's fit differs from two workers'")
	}
	if at.LowerBoundDraws != 2*sviFinalPairs {
		t.Errorf("the final bound took %d draws; want %d", at.LowerBoundDraws, 2*sviFinalPairs)
	}
}

// bernoulliModel returns a Bernoulli random-intercept model of n
// simulated subjects, p = 5 and 7 observations each (issue 16's).
func bernoulliModel(t *testing.T, n int) *glmm.Model {
	t.Helper()
	fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: "bernoulli", Subjects: n, Obs: 7, Beta: []float64{-1, 0.5, 0.5, -0.5, 1}, RECov: [][]float64{{1}}, Seed: 13})
	if err != nil {
		t.Fatal(err)
	}
	fo, err := formula.Parse(truth.Formula)
	if err != nil {
		t.Fatal(err)
	}
	d, err := formula.Build(fo, fr, formula.Options{Family: glmm.Bernoulli})
	if err != nil {
		t.Fatal(err)
	}
	return d.Model()
}

// rvb1AtStart returns RVB1 of n simulated Bernoulli subjects expanded at
// the model's start, with its family started at its mode and
// sviNearSubjects lowered to n, so that fits of it start near the
// optimum (nearStart); with kept, the start is asked for the control
// variate (KeptStarter).
func rvb1AtStart(t *testing.T, pool *parallel.Pool, n int, kept bool) (*rvbFamily, Settings) {
	t.Helper()
	tg, err := rvb.NewAtStart(pool, bernoulliModel(t, n), rvb.RVB1)
	if err != nil {
		t.Fatal(err)
	}
	lowerNear(t, n)
	set := Settings{Method: BlockDiag, Seed: 3, Workers: 2, Init: InitMode}.withDefaults()
	f := newRVB(tg, set, pool, nil)
	if kept {
		f.kept = make([]float64, n*f.g)
	}
	if err := f.init(context.Background(), InitMode); err != nil {
		t.Fatal(err)
	}
	return f, set
}

// visitOnce runs the first pass of s over its n subjects in minibatches
// of batch with no step taken, so that s.kept holds each subject's value
// at its visit.
func visitOnce(t *testing.T, s *svi, n, batch int) {
	t.Helper()
	s.shuffle(0)
	s.rho, s.rhoG = 0, 0
	for first := 0; first < n; first += batch {
		s.sortBatch(s.perm[first : first+batch])
		if _, err := s.iterate(uint64(first/batch+1), first, batch); err != nil {
			t.Fatal(err)
		}
	}
}

// TestStochasticFillUnbiased: on a target nonlinear in the locals, RVB1
// of Bernoulli data at the model's start, the fill's kept values have the
// expectation of the visits' (a pass's minibatches come from the
// subjects it has not yet visited, and n/|B| times their new - kept is
// unbiased only so), for visits at the four sign pairs and at one global
// sign for all but one in sviFourEvery (fourEvery): over 20,000 subjects the mean of each subject's fill
// value less its first visit's, with no step taken, is within 4 standard
// errors of zero in every coordinate. Values at the means (z = 0) missed
// by 0.025 to 0.053 a subject, 55 to 82 standard errors, in four of the
// six.
func TestStochasticFillUnbiased(t *testing.T) {
	const n, batch = 20_000, 2000
	pool := parallel.NewPollingPool(context.Background(), 2)
	defer pool.Close()
	f, set := rvb1AtStart(t, pool, n, false)
	for _, every := range []int{1, sviFourEvery} {
		s := newSVI(f, Stochastic{Batch: batch}.withDefaults(), set.Seed)
		s.fourEvery = every
		if err := s.fill(); err != nil {
			t.Fatal(err)
		}
		filled := slices.Clone(s.kept)
		visitOnce(t, s, n, batch)
		g := s.g
		for j := range g {
			var sum, sumSq float64
			for i := range n {
				x := filled[i*g+j] - s.kept[i*g+j]
				sum += x
				sumSq += x * x
			}
			se := meanSE(sum, sumSq, n)
			t.Logf("four pairs one in %d: coordinate %d: fill less visit %.4g ± %.2g a subject", every, j, sum/n, se)
			if math.Abs(sum/n) > 4*se {
				t.Errorf("four pairs one in %d: coordinate %d: the fill's kept values differ from the visits' by %.3g a subject, %.1f standard errors", every, j, sum/n, math.Abs(sum/n)/se)
			}
		}
	}
}

// TestStochasticOneSignGradient: visits at one global sign for all but
// one in sviFourEvery subjects (fourEvery) estimate the global block's
// natural gradients, of its means (C C' grad, in posterior sds) and of
// its factor, with the expectation of visits all at the four sign pairs:
// on RVB1 of 20,000 Bernoulli subjects at the start, after the fill, 4
// passes of minibatches of 2000 with no step taken, the means over the
// iterations of each coordinate differ by at most 4 standard errors. The
// factor's, from a quarter of the subjects, may spread up to twice the
// sqrt(sviFourEvery) that the subsample alone makes; with one global
// sign for every subject (its odd part s (new - kept)) it spread 8 to 26
// times as widely.
func TestStochasticOneSignGradient(t *testing.T) {
	const n, batch, passes = 20_000, 2000, 4
	pool := parallel.NewPollingPool(context.Background(), 2)
	defer pool.Close()
	f, set := rvb1AtStart(t, pool, n, false)
	g := f.g
	nr, nt := f.nr, f.n*f.r*(f.r+1)/2
	sd := make([]float64, g)
	f.momentsOf(f.lam, make([]float64, g), sd)
	type moments struct{ sum, sumSq []float64 }
	est := func(every int) moments {
		s := newSVI(f, Stochastic{Batch: batch}.withDefaults(), set.Seed)
		s.fourEvery = every
		if err := s.fill(); err != nil {
			t.Fatal(err)
		}
		s.rho, s.rhoG = 0, 0
		k := g + len(s.dc) - nt
		m := moments{make([]float64, k), make([]float64, k)}
		add := func(j int, x float64) {
			m.sum[j] += x
			m.sumSq[j] += x * x
		}
		it := uint64(0)
		for p := range passes {
			s.shuffle(p)
			for first := 0; first < n; first += batch {
				it++
				slices.Sort(s.perm[first : first+batch])
				if _, err := s.iterate(it, first, batch); err != nil {
					t.Fatal(err)
				}
				for j := range g {
					add(j, f.v[nr+j]/sd[j])
				}
				for j, x := range s.dc[nt:] {
					add(g+j, x)
				}
			}
		}
		return m
	}
	four, one := est(1), est(sviFourEvery)
	iters := passes * n / batch
	worstRatio := 0.0
	for j := range four.sum {
		m4, m1 := four.sum[j]/float64(iters), one.sum[j]/float64(iters)
		se4, se1 := meanSE(four.sum[j], four.sumSq[j], iters), meanSE(one.sum[j], one.sumSq[j], iters)
		se := math.Hypot(se4, se1)
		ratio := se1 / se4
		worstRatio = max(worstRatio, ratio)
		t.Logf("coordinate %d: four pairs %.4g ± %.2g, one sign %.4g ± %.2g (spread %.2f times)", j, m4, se4, m1, se1, ratio)
		if math.Abs(m1-m4) > 4*se {
			t.Errorf("coordinate %d: one sign's mean %.4g differs from four pairs' %.4g by %.1f standard errors", j, m1, m4, math.Abs(m1-m4)/se)
		}
		if ratio > 2*math.Sqrt(float64(sviFourEvery)) {
			t.Errorf("coordinate %d: one sign's spread is %.2f times four pairs'", j, ratio)
		}
	}
}

// TestStochasticFourEveryMatchesFullBatch: near the start (nearStart,
// lowered to the 5000 subjects here) a stochastic fit of RVB1 with the
// first step and windows of fits far from it (0.5, 2 passes) ends where
// the full batch does, global means within 0.1 posterior sd and sds
// within 10%, with every visit at the four sign pairs and with one in
// sviFourEvery so (the others at one global sign), bit for bit for one
// worker and two.
func TestStochasticFourEveryMatchesFullBatch(t *testing.T) {
	const n, batch = 5000, 500
	m := bernoulliModel(t, n)
	fit := func(set Settings) *Result {
		pool := parallel.NewPollingPool(context.Background(), 2)
		tg, err := rvb.NewAtStart(pool, m, rvb.RVB1)
		pool.Close()
		if err != nil {
			t.Fatal(err)
		}
		res, err := Fit(context.Background(), tg, set)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	ref := fit(Settings{Method: BlockDiag, Seed: 1, Workers: 2})
	rm, rs := ref.GlobalMoments()
	lowerNear(t, n)
	prev := sviFourEvery
	t.Cleanup(func() { sviFourEvery = prev })
	for _, every := range []int{1, prev} {
		sviFourEvery = every
		sto := func(workers int) *Result {
			return fit(Settings{Method: BlockDiag, Seed: 2, Workers: workers, ChunkSize: 128, Stochastic: Stochastic{Batch: batch, Step: 0.5, Window: 2}})
		}
		res := sto(2)
		sm, ss := res.GlobalMoments()
		var worstMu, worstSD float64
		for j := range rm {
			worstMu = max(worstMu, math.Abs(sm[j]-rm[j])/rs[j])
			worstSD = max(worstSD, math.Abs(ss[j]/rs[j]-1))
		}
		t.Logf("four pairs one in %d: %v after %d passes, global means up to %.3f sd and sds up to %.2f%% off the full batch", every, res.Status, res.Passes, worstMu, 100*worstSD)
		if worstMu > 0.1 || worstSD > 0.1 || res.Status != Converged {
			t.Errorf("four pairs one in %d: %v, global means up to %.3f sd and sds up to %.1f%% off the full batch; want converged within 0.1 sd and 10%%", every, res.Status, worstMu, 100*worstSD)
		}
		if one := sto(1); !slices.Equal(one.Mu, res.Mu) || !slices.Equal(one.Factor, res.Factor) || one.LowerBound != res.LowerBound {
			t.Errorf("four pairs one in %d: one worker's fit differs from two workers'", every)
		}
	}
}

// TestStochasticStartKept: near the start, RVB's start fills the control
// variate (KeptStarter) in place of the fill's pass, with values as good:
// over 20,000 subjects the mean of each subject's kept value less its
// first visit's is within 4 standard errors of zero in every coordinate,
// and their mean square within 10% of the fill's.
func TestStochasticStartKept(t *testing.T) {
	const n, batch = 20_000, 2000
	pool := parallel.NewPollingPool(context.Background(), 2)
	defer pool.Close()
	f, set := rvb1AtStart(t, pool, n, true)
	if f.kept == nil {
		t.Fatal("the start did not fill the control variate")
	}
	// The differences from the first visits, with no step taken.
	visits := func(s *svi) []float64 {
		kept := slices.Clone(s.kept)
		visitOnce(t, s, n, batch)
		for j, x := range s.kept {
			kept[j] -= x
		}
		return kept
	}
	s := newSVI(f, Stochastic{Batch: batch}.withDefaults(), set.Seed)
	s.sumKept()
	fromStart := visits(s)
	f.kept = nil
	s = newSVI(f, Stochastic{Batch: batch}.withDefaults(), set.Seed)
	if err := s.fill(); err != nil {
		t.Fatal(err)
	}
	fromFill := visits(s)
	g := s.g
	for j := range g {
		var sum, sumSq, fillSq float64
		for i := range n {
			x := fromStart[i*g+j]
			sum += x
			sumSq += x * x
			fillSq += fromFill[i*g+j] * fromFill[i*g+j]
		}
		se := meanSE(sum, sumSq, n)
		t.Logf("coordinate %d: kept less visit %.4g ± %.2g a subject, mean square %.4g (the fill's %.4g)", j, sum/n, se, sumSq/n, fillSq/n)
		if math.Abs(sum/n) > 4*se {
			t.Errorf("coordinate %d: the start's kept values differ from the visits' by %.3g a subject, %.1f standard errors", j, sum/n, math.Abs(sum/n)/se)
		}
		if sumSq > 1.1*fillSq {
			t.Errorf("coordinate %d: the start's kept values differ from the visits' by %.3g in mean square, the fill's by %.3g", j, sumSq/n, fillSq/n)
		}
	}
}

// TestSortBatch: sortBatch sorts minibatches of every size, through the
// bitmap or not, as slices.Sort does, and leaves the bitmap clear.
func TestSortBatch(t *testing.T) {
	const n = 5000
	s := &svi{n: n}
	rng := rand.New(rand.NewPCG(1, 2))
	perm := rng.Perm(n)
	for _, m := range []int{1, 7, n / 256, n/256 + 1, 400, n} {
		b := make([]uint32, m)
		for j := range b {
			b[j] = uint32(perm[(j*7919)%n])
		}
		want := slices.Clone(b)
		slices.Sort(want)
		s.sortBatch(b)
		if !slices.Equal(b, want) {
			t.Errorf("a minibatch of %d: sorted to %v; want %v", m, b, want)
		}
		for w, x := range s.bits {
			if x != 0 {
				t.Fatalf("a minibatch of %d left word %d of the bitmap %x", m, w, x)
			}
		}
	}
	if s.bits == nil {
		t.Error("no minibatch went through the bitmap")
	}
}
