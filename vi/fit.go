// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/sparsevi/sparsevi/parallel"
)

// family is one approximation family over a target: the layout of lambda,
// stochastic gradient estimates, and the inverse Fisher map.
type family interface {
	// lambda returns the variational parameters: mu, then the factor.
	lambda() []float64
	// kinds labels each entry of lambda (kindMean, kindDiag, kindOff).
	kinds() []uint8
	// stepBlocks cuts lambda into the blocks of the step rules' passes.
	stepBlocks() [][]span
	// precision reports whether the factor is a precision factor.
	precision() bool
	// free returns the number of entries of lambda that may change; the
	// others stay zero.
	free() int
	// estimate draws theta with the streams of iteration iter and writes the
	// natural gradient into nat and the Euclidean gradient into euc (either
	// may be nil). With noEntropy the Euclidean gradient is that of
	// E_q log p alone. It returns h(theta) = log p(theta) - log q(theta).
	estimate(iter uint64, nat, euc []float64, noEntropy bool) (float64, error)
	// fisher maps a Euclidean gradient to the natural one.
	fisher(src, dst []float64) error
	// check reports a non-finite or non-positive diagonal of the factor.
	check() error
	// init sets lambda to the start selected by the settings.
	init(ctx context.Context, how Init) error
	// lastGlobal returns theta_g of the last estimate (shared storage).
	lastGlobal() []float64
	// group returns the chain of a fit over a Group, nil in one process.
	group() *chain
	// summed returns how many of the step blocks count in sums.
	summed(blocks [][]span) int
	// globalLen returns the number of entries of lambda that belong to the
	// global block: its mean and its part of the factor.
	globalLen() int
	// lend gives init a buffer of lambda's length to work in (nil takes it
	// back); its contents are garbage afterwards.
	lend(scratch []float64)
}

// Fit fits a Gaussian approximation of the given method to the target.
//
// The error is nil when the fit converged or stopped at the iteration or
// time limit (see Result.Status). When the fit diverges it is a
// *DivergedError, and when ctx is cancelled it is ctx's error; in both cases
// the Result holds the last good state (the one at the end of the last
// complete window). Other errors mean the target or settings are unusable.
func Fit(ctx context.Context, target Target, set Settings) (*Result, error) {
	if ctx == nil {
		return nil, errors.New("vi: Fit with a nil context (use context.Background())")
	}
	if target == nil {
		return nil, errors.New("vi: Fit with a nil target")
	}
	// Checked before the defaults, which fill in a Rule.
	if err := checkStochastic(set); err != nil {
		return nil, err
	}
	n, r, g := target.Dims()
	sizes := blockSizes(target)
	if err := checkSizes(target, set, sizes); err != nil {
		return nil, err
	}
	// The block-diagonal factor has no cross blocks to keep zero: it needs
	// only the count.
	sup, partial, err := newCrossSupport(target, set.Method == GVA)
	if err != nil {
		return nil, err
	}
	// In a group, n counts every process's subjects from here on; the
	// target's own are localN.
	localN := n
	var sh *shard
	if set.Group != nil {
		if sh, err = newShard(ctx, set, target, partial); err != nil {
			return nil, err
		}
		n = sh.n
	}
	quad := quadraticStart(target, set)
	// GVA from the target's own start, with many subjects: a shorter
	// window and no refinement (GVAWindowSubjects, GVARefineSubjects).
	ownGVA := set.Method == GVA && set.Init == InitMode && starterOf(target, nil, 0) != nil
	if set.Window == 0 {
		set.Window, set.gainFromStart = ownStartWindow(target, set, n)
		if set.gainFromStart && set.Method == BlockDiag {
			set.moveTol = RVBMoveTol
		}
	}
	if set.ConvergenceDraws == 0 {
		set.ConvergenceDraws = convergenceDraws(n)
	}
	if set.Window == 0 && (n >= LargeSubjects || quad) {
		set.Window = LargeWindow
	}
	// Snngm's default step depends on the method and the target.
	alpha0 := DefaultAlpha0
	if set.Method == BlockDiag {
		alpha0 = DefaultAlpha0BlockDiag
	}
	sn, isSnngm := set.Rule.(Snngm)
	ownAlpha0 := isSnngm && sn.Alpha0 != 0
	if starterOf(target, nil, 0) != nil && !ownAlpha0 && set.Method == BlockDiag && set.Init == InitMode && n > RVBStepSubjects {
		alpha0 = DefaultAlpha0BlockDiag * math.Sqrt(RVBStepSubjects/float64(n))
		if set.Refine == 0 {
			set.Refine = -1
		}
	}
	if ownGVA && set.Refine == 0 && n >= GVARefineSubjects {
		set.Refine = -1
	}
	if !ownAlpha0 && partial > StepShared {
		alpha0 = alpha0 * StepShared / float64(partial)
		if quad {
			alpha0 /= QuadraticStepDivisor
			if set.Refine == 0 {
				set.Refine = -1
			}
		}
	}
	// A fit on one worker by choice (its passes too small to share) may
	// still share the draws of its importance ratios between cores.
	shareDraws := set.Workers == 0 && sh == nil
	if set.Workers == 0 && localN > 0 {
		set.Workers = set.WorkersFor(target)
	}
	set = set.withDefaults()
	nr := n * r
	if sizes != nil {
		nr = 0
		for _, s := range sizes {
			nr += s
		}
		r = 0
	}
	if n < 0 || r < 0 || g < 0 || nr+g == 0 {
		return nil, fmt.Errorf("vi: target has no variables (n=%d, r=%d, G=%d)", n, r, g)
	}
	// The mean and the factor hold about n(r + r(r+1)/2 + Gr) + G(G+3)/2
	// values, several copies of them are kept: refuse what cannot be
	// allocated rather than panic in make.
	if vals := float64(localN)*float64(r+r*(r+1)/2+g*r) + float64(nr-n*r)*float64(1+g) + float64(g)*float64(g+3)/2; vals > maxValues {
		return nil, fmt.Errorf("vi: target of n=%d subjects, r=%d, G=%d needs %.3g variational parameters, more than the %.3g that can be allocated", localN, r, g, vals, float64(maxValues))
	}
	start := time.Now()
	// In a group, the pool finishes every pass it starts, and the
	// processes agree to stop at the next sum (see Group): a process must
	// never leave the others waiting for its share.
	poolCtx := ctx
	if sh != nil {
		poolCtx = context.WithoutCancel(ctx)
	}
	pool := parallel.NewPollingPool(poolCtx, set.Workers)
	defer pool.Close()

	fam, err := newFamily(target, set, pool, sup, sh)
	if err != nil {
		return nil, err
	}
	free := fam.free()
	if sh != nil {
		if free, err = sh.free(fam); err != nil {
			return nil, err
		}
	}
	rule := set.Rule.withDefaults(alpha0, free)
	res := &Result{Method: set.Method, Rule: rule, N: localN, R: r, G: g, Sizes: sizes, Workers: set.Workers, bestBound: math.Inf(-1), cov: new(covCache)}
	if rp, ok := target.(Reparametrised); ok {
		res.Reparametrised = rp.LocalsReparametrised()
	}
	// The last good state's buffer is the start's workspace first.
	good := make([]float64, len(fam.lambda()))
	if set.Resume != nil {
		// A checkpoint holds the state: no start.
		err = set.Resume.checkFits(set, rule, localN, r, g, len(fam.lambda()))
	} else {
		fam.lend(good)
		if _, ks := target.(KeptStarter); ks && set.Stochastic.Batch > 0 {
			if f, ok := fam.(*rvbFamily); ok && nearStart(target, set, f.n) {
				// The start may fill the control variate (fill).
				f.kept = make([]float64, f.n*f.g)
			}
		}
		err = fam.init(ctx, set.Init)
		fam.lend(nil)
	}
	if localN >= collectSubjects {
		// The start's workspaces (the target's Starter holds several
		// arrays of n values while it runs) are garbage now: collected
		// and returned to the operating system here, they do not stay
		// resident beside the rule's state and the best state, allocated
		// next. (Collected alone, their pages stayed idle: at 10^6
		// Bernoulli subjects 161 MiB, of which the iterations' state
		// reused none.)
		debug.FreeOSMemory()
	}
	if sh != nil {
		// The families' starts, and the checks of a checkpoint, can fail
		// in one process alone.
		err = sh.ch.end(sh.ch.begin(0), err)
	}
	if err != nil {
		if ctx.Err() == nil && !stopped(err) {
			return nil, err
		}
		// Cancelled while starting: the state is the paper's start.
		res.Status, res.Err = Cancelled, err
		if ctx.Err() != nil {
			res.Err = ctx.Err()
		}
		d := nr + g
		if sh != nil {
			d = localN*r + g
		}
		lambda := fam.lambda()
		clear(lambda[:d])
		res.Mu, res.Factor = lambda[:d:d], lambda[d:]
		res.LowerBound, res.LowerBoundSE = math.NaN(), math.NaN()
		res.Elapsed = time.Since(start)
		return res, res.Err
	}
	lambda := fam.lambda()
	copy(good, lambda)
	goodIter := 0

	var runErr error
	var fail *DivergedError
	if set.Stochastic.Batch > 0 {
		// checkStochastic admitted BlockDiag alone.
		runErr, fail = runSVI(ctx, fam.(*rvbFamily), set, res, start, good, &goodIter)
	} else {
		it, err := rule.iterator(fam, pool)
		if err != nil {
			return nil, err
		}
		runErr, fail = run(ctx, fam, it, set, res, start, good, &goodIter)
	}

	switch {
	case fail != nil:
		res.Status = Diverged
		res.Err = fail
		copy(lambda, good)
	case runErr != nil:
		if ctx.Err() == nil && !stopped(runErr) {
			return nil, runErr
		}
		res.Status = Cancelled
		res.Err = runErr
		if ctx.Err() != nil {
			res.Err = ctx.Err()
		}
		copy(lambda, good)
	}
	if res.Status == Diverged || res.Status == Cancelled {
		res.Iterations = goodIter
	}
	// The Result takes the state itself: a copy would double the fit's
	// largest arrays at its end. The rule's state and the last good and
	// best states are garbage from here on: nothing the size of lambda is
	// allocated after them.
	d := nr + g
	if sh != nil {
		d = localN*r + g
	}
	res.Mu, res.Factor = lambda[:d:d], lambda[d:]

	if res.Status != Cancelled {
		if set.Progress != nil {
			set.Progress(Progress{Iter: res.Iterations, LowerBound: math.NaN(), Elapsed: time.Since(start), MaxIter: set.MaxIter,
				Patience: set.Patience, Refine: max(set.Refine, 0), Final: true})
		}
		lb, se, med, draws, err := finalBound(fam, finalSettings(target, set, n), n)
		if err == nil {
			res.LowerBound, res.LowerBoundSE, res.LowerBoundDraws = lb, se, draws
			// Heavy tails can hide from the fixed draws of the convergence
			// test; the fresh draws show them.
			// The median of the fresh draws, not their mean: when h has
			// heavy tails (a Poisson rate under a wide q), a few draws far
			// below the rest drag the mean down while the state is sound;
			// LowerBoundSE then says the bound is unreliable. A diverged
			// state has most draws far down.
			if res.Status != Diverged && collapsed(med, res.bestBound) {
				res.Status = Diverged
				res.Err = &DivergedError{Iter: res.Iterations, Reason: fmt.Sprintf("final lower bound %.4g collapsed from %.4g", lb, res.bestBound)}
			}
			if res.Status != Diverged {
				var twin family
				// A second family shares the target, whose warm
				// starts would then follow the goroutines' timing.
				if shareDraws && set.Workers == 1 && runtime.GOMAXPROCS(0) > 1 && !warmStarts(target) {
					var twinPool *parallel.Pool
					if twin, twinPool = twinOf(fam, target, set, sup); twinPool != nil {
						defer twinPool.Close()
					}
				}
				res.LogWeights, res.ImportanceGlobal = logWeights(ctx, fam, twin, set, n, nr+g, g)
			}
		} else {
			res.LowerBound, res.LowerBoundSE = math.NaN(), math.NaN()
			switch {
			case ctx.Err() != nil:
				res.Status, res.Err = Cancelled, ctx.Err()
			case stopped(err):
				res.Status, res.Err = Cancelled, err
			case res.Status != Diverged:
				res.Status = Diverged
				res.Err = &DivergedError{Iter: res.Iterations, Reason: "lower bound at the final state", Err: err}
			}
		}
	} else {
		res.LowerBound, res.LowerBoundSE = math.NaN(), math.NaN()
	}
	res.Elapsed = time.Since(start)
	return res, res.Err
}

// An iterator takes the iterations of one step rule for run: the
// gradient rules through their gradientStep, VOGN through its family's
// Gauss–Newton step.
type iterator interface {
	// iterate draws at iteration iter, evaluates h there and, where h is
	// finite, steps lambda. It returns h, the norm of the step and the
	// fraction of it that a safeguard let through. An error from the
	// target is returned as evalErr, any other (the context's) as err.
	iterate(iter uint64) (h, stepNorm, frac float64, evalErr, err error)
	// divide divides the step size by f.
	divide(f float64)
	// reset forgets what the rule has accumulated, as after lambda is
	// restored to an earlier state.
	reset()
	// state appends the rule's state to dst for a Checkpoint; setState
	// restores it.
	state(dst []float64) ([]float64, error)
	setState(src []float64) error
}

// run is the loop of every rule: it iterates, tracks the bound by windows,
// keeps the best state, backs off from failures (restoring the best state
// and halving the step, at most maxBackoffs times), refines the step and
// stops at convergence or a limit. It returns an error that stopped it
// (cancellation) or a divergence.
func run(ctx context.Context, fam family, it iterator, set Settings, res *Result, start time.Time, good []float64, goodIter *int) (error, *DivergedError) {
	lambda := fam.lambda()
	conv := set.Converger
	if conv == nil {
		conv = newGainConverger(set)
	}
	tr := newTracker(set, conv)
	res.Status = MaxIterations
	refinements := 0
	// best is the state with the highest bound at the fixed draws.
	best := append([]float64(nil), lambda...)
	bestBound := math.Inf(-1)
	// The bound at the start, at the common draws: the reference for a
	// collapse.
	var firstBound float64
	first := 1
	if ck := set.Resume; ck != nil {
		gc, _ := conv.(*gainConverger)
		if err := resume(ck, it, tr, gc, lambda, good, best); err != nil {
			return err, nil
		}
		d := &ck.d
		first, *goodIter, res.Iterations = d.Iter+1, d.GoodIter, d.Iter
		res.Backoffs, refinements = d.Backoffs, d.Refinements
		bestBound, res.bestBound, firstBound = d.BestSum, d.BestMean, d.FirstBound
		res.Trace = append(res.Trace[:0], d.Trace...)
	} else {
		var err error
		if firstBound, err = startBound(fam, set, tr.prev); err != nil {
			return err, nil
		}
		tr.havePrev = set.gainFromStart
	}
	if rf, ok := fam.(*rvbFamily); ok && set.moveTol > 0 && rf.g > 0 {
		tr.mv = newMover(set.moveTol, rf.g, rf.globalMoments)
		switch {
		case set.Resume != nil:
			resumeMover(set.Resume, tr.mv)
		case set.gainFromStart:
			tr.mv.begin()
		}
	}
	lastCheckpoint := first - 1
	// checkpoint hands Settings.Checkpoint the state after iteration iter,
	// every CheckpointEvery iterations, at the end of a window.
	checkpoint := func(iter int) error {
		if set.Checkpoint == nil || iter-lastCheckpoint < set.CheckpointEvery {
			return nil
		}
		lastCheckpoint = iter
		ck, err := newCheckpoint(set, fam, it, tr, iter, *goodIter, res, refinements, lambda, good, best, bestBound, firstBound)
		if err == nil {
			err = set.Checkpoint(ck)
		}
		if g := fam.group(); g != nil {
			// Every process stops if one could not write its share.
			if failed, gerr := g.agree(err != nil); gerr != nil || failed {
				if err == nil {
					err = gerr
				}
				if err == nil {
					err = errors.New("vi: another process of the group could not write its checkpoint")
				}
			}
		}
		if err != nil {
			return fmt.Errorf("vi: checkpoint after iteration %d: %w", iter, err)
		}
		return nil
	}
	backOff := func(fail *DivergedError) *DivergedError {
		if res.Backoffs >= maxBackoffs {
			return fail
		}
		res.Backoffs++
		copy(lambda, best)
		it.reset()
		it.divide(2)
		tr.restart(false)
		return nil
	}
	grouped := fam.group() != nil
	for iter := first; iter <= set.MaxIter; iter++ {
		// In a group the processes learn of a cancellation together, from
		// the iteration's sums.
		if err := ctx.Err(); err != nil && !grouped {
			return err, nil
		}
		h, stepNorm, frac, evalErr, err := it.iterate(uint64(iter))
		if (evalErr != nil || err != nil) && ctx.Err() != nil && !grouped {
			return ctx.Err(), nil
		}
		if evalErr != nil && fatal(evalErr) {
			return evalErr, nil
		}
		if err != nil {
			return err, nil
		}
		var fail *DivergedError
		switch {
		case evalErr != nil:
			fail = &DivergedError{Iter: iter, Reason: "target evaluation failed", Err: evalErr}
		case math.IsNaN(h) || math.IsInf(h, 0):
			fail = &DivergedError{Iter: iter, Reason: "non-finite lower bound"}
		case math.IsNaN(stepNorm) || math.IsInf(stepNorm, 0):
			fail = &DivergedError{Iter: iter, Reason: "non-finite step"}
		case frac < minStepFraction:
			fail = &DivergedError{Iter: iter, Reason: fmt.Sprintf("the step had to be shortened %.3g-fold to keep the factor's diagonal positive: the step size is too large", 1/frac)}
		}
		if fail != nil {
			if fail = backOff(fail); fail != nil {
				return nil, fail
			}
			continue
		}
		res.Iterations = iter
		if !tr.add(h) {
			continue
		}
		if err := fam.check(); err != nil {
			if fatal(err) {
				return err, nil
			}
			if fail := backOff(&DivergedError{Iter: iter, Reason: "factor", Err: err}); fail != nil {
				return nil, fail
			}
			continue
		}
		copy(good, lambda)
		*goodIter = iter
		for k := range tr.cur {
			h, err := fam.estimate(crnIterBase+uint64(k), nil, nil, false)
			if err != nil && fatal(err) {
				return err, nil
			}
			if err != nil && ctx.Err() != nil {
				return ctx.Err(), nil
			}
			tr.cur[k] = h
		}
		var crnSum float64
		for _, h := range tr.cur {
			crnSum += h
		}
		crnMean := crnSum / float64(len(tr.cur))
		if collapsed(crnMean, firstBound) || math.IsNaN(crnMean) {
			if fail := backOff(&DivergedError{Iter: iter, Reason: fmt.Sprintf("lower bound collapsed to %.4g from %.4g", crnMean, firstBound)}); fail != nil {
				return nil, fail
			}
			continue
		}
		if crnSum > bestBound {
			bestBound = crnSum
			res.bestBound = crnMean
			copy(best, lambda)
		}
		conv := tr.crn()
		elapsed := time.Since(start)
		res.Trace = append(res.Trace, TracePoint{Iter: iter, LowerBound: tr.last(), Gain: tr.lastGain, StepNorm: stepNorm, Elapsed: elapsed})
		if set.Progress != nil {
			set.Progress(Progress{Iter: iter, LowerBound: tr.last(), Elapsed: elapsed, MaxIter: set.MaxIter,
				Flat: tr.flat(set.Patience), Patience: set.Patience, Refined: refinements, Refine: max(set.Refine, 0)})
		}
		if conv {
			if refinements < set.Refine {
				refinements++
				it.divide(10)
				tr.restart(true)
				if err := checkpoint(iter); err != nil {
					return err, nil
				}
				continue
			}
			res.Status = Converged
			return nil, nil
		}
		if set.TimeLimit > 0 {
			over := elapsed >= set.TimeLimit
			if grouped {
				// The clocks differ: any process's limit stops them all.
				var err error
				if over, err = fam.group().agree(over); err != nil {
					return err, nil
				}
			}
			if over {
				res.Status = TimeLimit
				return nil, nil
			}
		}
		if err := checkpoint(iter); err != nil {
			return err, nil
		}
	}
	return nil, nil
}

// ownStartWindow returns the default window of a fit of n subjects from
// the target's own start, GVAWindow, and whether the first window's gain
// is measured from the start; or 0 and false where it does not apply:
// fewer than GVAWindowSubjects subjects, another start, a target without
// a Starter. RVB's fits take it with the test of RVBMoveTol (Fit): from a
// start whose global block is not yet RVB's own, the bound climbs by less
// than RelTol's tolerance a window while the global means still move.
// (Before package rvb's start took its longer Newton steps at many
// subjects, the Poisson random slope's fit of 10^6 subjects climbed 2-4
// nats a window, and 45 iterations ended 0.63 posterior sds from the 100
// of windows of 25 in omega, the bound 7.4 nats lower.)
func ownStartWindow(target Target, set Settings, n int) (int, bool) {
	if n < GVAWindowSubjects || set.Init != InitMode || starterOf(target, nil, 0) == nil {
		return 0, false
	}
	return GVAWindow, true
}

// startBound returns the bound at the fixed draws of the convergence test
// before any step, and writes h at each into hs.
func startBound(fam family, set Settings, hs []float64) (float64, error) {
	var sum float64
	for k := range set.ConvergenceDraws {
		h, err := fam.estimate(crnIterBase+uint64(k), nil, nil, false)
		if err != nil {
			return 0, err
		}
		hs[k] = h
		sum += h
	}
	return sum / float64(set.ConvergenceDraws), nil
}

// convergenceDraws returns the default of Settings.ConvergenceDraws for
// n subjects: 8, or beyond CRNSubjects as many as cost about 8*CRNSubjects
// subject evaluations, at least 2. The fixed draws of every window cost
// 0.6 of an iteration each (at 10^6 Bernoulli subjects, GVA), a third of
// the iterations' time in windows of 15; with many subjects the tolerance
// (RelTol times the bound) grows as n while the noise of the paired gains
// does not: at 10^7 subjects the gains at 8 draws were within 0.25 nats
// of zero against a tolerance of 38.
func convergenceDraws(n int) int {
	if n <= CRNSubjects {
		return defaultConvergenceDraws
	}
	return max(2, defaultConvergenceDraws*CRNSubjects/n)
}

// defaultConvergenceDraws is Settings.ConvergenceDraws's default below
// CRNSubjects subjects.
const defaultConvergenceDraws = 8

// CRNSubjects is the number of subjects beyond which the default of
// Settings.ConvergenceDraws shrinks (convergenceDraws) and so does the
// least number of draws of the final bound (finalPairs).
const CRNSubjects = 1_000_000

// collapsed reports a lower bound that has fallen so far below the first
// window's that the fit is diverging even though every value is finite (the
// step safeguards keep the factor finite; the mean can still run away).
func collapsed(bound, first float64) bool {
	return bound < first-100*(1+math.Abs(first))
}

// minStepFraction is the smallest fraction of a rule's step the diagonal
// safeguard may let through before the step counts as a failure.
const minStepFraction = 1e-3

// maxBackoffs is the number of times a fit restores its last good state
// and halves the step after a non-finite value before it is declared
// diverged.
const maxBackoffs = 5

// finalIterBase offsets the stream iterations of the final draws from those
// of the fit.
const finalIterBase = 1 << 40

// finalDraws returns the number of fresh draws for the final bound: the
// setting, reduced for very many subjects so that it costs about as much
// as finalEvals subject evaluations, but never below 2*finalPairs(n).
func finalDraws(set Settings, n int) int {
	d := set.FinalDraws
	if n > 0 {
		d = min(d, max(2*finalPairs(n), finalEvals/n))
	}
	return d
}

// finalPairs returns the least number of antithetic pairs of the final
// bound for n subjects, and the batch after which its standard error is
// checked: minFinalPairs, or beyond CRNSubjects as many as cost about
// 2*minFinalPairs*CRNSubjects subject evaluations, at least 3 (an SE
// with 2 degrees of freedom). The bound's Monte Carlo SE grows as the
// square root of n over the draws, so per subject it still falls with n:
// at 10^6 Bernoulli subjects 20 draws gave an SE of 3.8 nats (3.8e-6 a
// subject), at 10^7 6 draws give about 11 (1.1e-6 a subject), where a
// draw took 1.75 s.
func finalPairs(n int) int {
	if n <= CRNSubjects {
		return minFinalPairs
	}
	return max(3, minFinalPairs*CRNSubjects/n)
}

// finalBound estimates the lower bound by the mean of h over fresh draws,
// stopping early once the standard error is below set.FinalSE.
func finalBound(fam family, set Settings, n int) (mean, se, median float64, draws int, err error) {
	draws = finalDraws(set, n)
	batch := finalPairs(n)
	// Antithetic pairs, z and -z, cancel the odd part of h about the mean;
	// the pairs' averages are independent. Sums of h - h_0: the bound can
	// be large next to its spread.
	var h0, sum, sumSq, first float64
	pairs := 0
	hs := make([]float64, 0, draws)
	for k := 0; 2*pairs < draws; k++ {
		h, err := fam.estimate(finalIterBase+uint64(k), nil, nil, false)
		if err != nil {
			return 0, 0, 0, 0, err
		}
		if math.IsNaN(h) || math.IsInf(h, 0) {
			return 0, 0, 0, 0, errors.New("non-finite h at a fresh draw")
		}
		hs = append(hs, h)
		if k == 0 {
			h0 = h
		}
		if k%2 == 0 {
			first = h
			continue
		}
		x := 0.5*(first+h) - h0
		sum += x
		sumSq += x * x
		pairs++
		if pairs >= batch && pairs%batch == 0 && meanSE(sum, sumSq, pairs) <= set.FinalSE {
			break
		}
	}
	slices.Sort(hs)
	median = hs[len(hs)/2]
	if len(hs)%2 == 0 {
		median = (hs[len(hs)/2-1] + median) / 2
	}
	return h0 + sum/float64(pairs), meanSE(sum, sumSq, pairs), median, len(hs), nil
}

// MinImportanceDraws is the fewest draws for which Fit records
// Result.LogWeights: fewer say too little about the tail.
const MinImportanceDraws = 100

// MaxImportanceDim is the most variables for which Fit records
// Result.LogWeights. The log ratio log p - log q sums small errors over
// every variable, so its spread, and the Pareto shape of the ratios,
// grow with the dimension even for a close approximation: on simulated
// Bernoulli data the shape was 0.5-0.6 with 1005 variables and above 2
// with 10005, where the fixed effects were as accurate.
const MaxImportanceDim = 2000

// importanceIterBase numbers the draws of logWeights apart from those of
// the final bound and of the convergence test, past crnIterBase so that
// they are independent, not antithetic pairs.
const importanceIterBase = crnIterBase + 1<<32

// logWeights returns log p - log q at independent fresh draws (h of the
// estimate without gradients) and the draws' global blocks (draws × g,
// row-major), or nils if they would be fewer than
// MinImportanceDraws, the context ends, or a draw is not finite (the
// bound's estimate has said what it had to say about that).
//
// Unless twin is nil, it is a family of the same lambda on a goroutine of
// its own (twinOf), which takes every other draw: a draw depends only on
// its index and lambda, so the values are those of fam alone.
func logWeights(ctx context.Context, fam, twin family, set Settings, n, dimAll, g int) (logw, global []float64) {
	draws := set.ImportanceDraws
	if n > 0 {
		draws = min(draws, 250_000/n)
	}
	if draws < MinImportanceDraws || dimAll > MaxImportanceDim {
		return nil, nil
	}
	logw = make([]float64, draws)
	global = make([]float64, draws*g)
	// each takes draws from, from+step, ... on f and reports whether all
	// were finite.
	each := func(f family, from, step int) bool {
		for k := from; k < draws; k += step {
			// In a group the estimate says whether any process was
			// stopped.
			if ctx.Err() != nil && f.group() == nil {
				return false
			}
			h, err := f.estimate(importanceIterBase+uint64(k), nil, nil, false)
			if err != nil || math.IsNaN(h) || math.IsInf(h, 0) {
				return false
			}
			logw[k] = h
			copy(global[k*g:(k+1)*g], f.lastGlobal())
		}
		return true
	}
	if twin == nil {
		if !each(fam, 0, 1) {
			return nil, nil
		}
		return logw, global
	}
	var ok [2]bool
	var wg sync.WaitGroup
	wg.Go(func() { ok[1] = each(twin, 1, 2) })
	ok[0] = each(fam, 0, 2)
	wg.Wait()
	if !ok[0] || !ok[1] {
		return nil, nil
	}
	return logw, global
}

// twinOf returns a family of fam's method and lambda on a pool of one
// worker of its own, which the caller closes, or nils if it cannot be
// made.
func twinOf(fam family, target Target, set Settings, sup *crossSupport) (family, *parallel.Pool) {
	pool := parallel.NewPollingPool(context.Background(), 1)
	twin, err := newFamily(target, set, pool, sup, nil)
	if err != nil {
		pool.Close()
		return nil, nil
	}
	copy(twin.lambda(), fam.lambda())
	return twin, pool
}

// collectSubjects is the number of subjects from which Fit collects the
// garbage of its start, and returns it to the operating system, before it
// allocates the iterations' state: at 10^6 Bernoulli subjects GVA's start
// left about 150 bytes a subject.
const collectSubjects = 100_000

// maxValues bounds the number of variational parameters Fit accepts: 2^34
// float64s, 128 GiB, before the copies a fit keeps.
const maxValues = 1 << 34

// finalEvals bounds the subject evaluations of the final bound: with many
// subjects its Monte Carlo error grows as the square root of their number,
// and an error below FinalSE would cost more than the iterations (100
// draws, 1.5 s, at 10^5 Bernoulli subjects, where the fit's 100 iterations
// took 1.4 s); the bound is reported with its error.
const finalEvals = 2_000_000

// minFinalPairs is the least number of antithetic pairs of draws for the
// final bound, and the batch after which its standard error is checked.
const minFinalPairs = 10

// meanSE returns the standard error of the mean of k values with the given
// sum and sum of squares.
func meanSE(sum, sumSq float64, k int) float64 {
	m := sum / float64(k)
	v := max(0, sumSq/float64(k)-m*m) * float64(k) / float64(max(1, k-1))
	return math.Sqrt(v / float64(k))
}

// checkSizes refuses what a target of variable-size local blocks cannot
// have: another method than GVA, a group of processes, stochastic steps.
func checkSizes(t Target, set Settings, sizes []int) error {
	if sizes == nil {
		return nil
	}
	n, r, _ := t.Dims()
	switch {
	case r != 0 || len(sizes) != n:
		return fmt.Errorf("vi: target of %d subjects gives r = %d and %d block sizes", n, r, len(sizes))
	case set.Group != nil:
		return errors.New("vi: local blocks of variable size (nested grouping factors) cannot be fitted over a group of processes")
	case set.Stochastic.Batch > 0:
		return errors.New("vi: local blocks of variable size (nested grouping factors) cannot be fitted with stochastic steps")
	}
	if _, ok := set.Rule.(VOGN); ok {
		return errors.New("vi: local blocks of variable size (nested grouping factors) cannot be fitted with the rule VOGN")
	}
	return nil
}
