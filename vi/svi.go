// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"time"

	"gonum.org/v1/gonum/mathext"

	"github.com/sparsevi/sparsevi/parallel"
)

// Stochastic selects stochastic variational inference over subjects
// (Hoffman, Blei, Wang and Paisley, "Stochastic variational inference",
// JMLR 2013) for the block-diagonal family (Method BlockDiag): each
// iteration visits a minibatch of Batch subjects instead of all of them.
// Its zero value, Batch 0, is the full-batch fit.
//
// An iteration does this:
//
//   - Minibatch. Every pass over the data visits each subject once, in an
//     order that is a uniform random permutation drawn afresh for each pass
//     from Seed and the pass number; the minibatches are consecutive runs of
//     Batch subjects of that order (the last of a pass may be shorter).
//   - Draws. One global draw z_g and, for each visited subject, one draw
//     z_i, each evaluated at all four sign pairs (+-z_i, +-z_g): the parts
//     of the gradients linear in the draws, which carry most of their noise,
//     cancel, and the global factor's gradient, the part odd in z_g, is free
//     of the noise of the subjects' draws (with two pairs, (z_i, z_g) and
//     (-z_i, -z_g), that noise, multiplied by n/|B|, made the fits of the
//     glmm model diverge). The squared norms |z_i|^2 of a chunk's subjects
//     are stratified over their chi-squared distribution, which evens out
//     the noise of the gradients even in z_i (the random-effect variance's
//     above all) without changing any draw's distribution. Near the start
//     (below) one subject in sviFourEvery (4) takes the four pairs and
//     the others one global sign each, (+-z_i, z_g) or (+-z_i, -z_g), in
//     equal numbers: the global means' gradient (with the control variate
//     below) is no noisier for it, but the global factor's must come from
//     the four-pair subjects alone (from one sign it keeps the subjects'
//     own noise, 8 to 26 times as wide, and RVB1 at 10^6 Bernoulli
//     subjects then took 4 passes, its sds 2.3% off the full batch, not
//     0.1%). A pass at 10^6 then took a fifth to a third less time
//     (benchmarks/svi, run R).
//   - Local step. Each visited subject's factor takes Algorithm 1S's
//     natural-gradient step of size rho_t from the average of its
//     gradients, shortened if it would shrink a diagonal entry by more
//     than half; then its mean takes the step rho_t C_i C_i' grad with the
//     new factor, which does not overshoot from a start whose covariance is
//     far too wide (the paper's).
//   - Global step. The global block takes the same steps from the prior's
//     gradient plus the subjects' contributions estimated as n/|B| times
//     the minibatch's, with a control variate (SAGA, Defazio, Bach and
//     Lacoste-Julien 2014): each subject's last contribution to the global
//     gradient is kept (G values per subject), their sum S is carried along,
//     and the estimate is S + n/|B| sum_{i in B} (new_i - kept_i), unbiased
//     for the sum over all subjects and, as the fit settles, nearly free of
//     the between-subject sampling noise that n/|B| would otherwise
//     multiply. The first pass fills the kept values and steps the
//     subjects' blocks alone: the global block stays until the sum is
//     known. Near the start (below) the kept values are filled before
//     the first pass instead, each from an antithetic pair of local
//     draws at the global means, at half a pass's cost, and the first
//     pass steps the global block too. A target whose start takes the
//     gradient over all subjects (KeptStarter, RVB's) gives them from
//     there, which saves that pass (0.4 s of the stochastic fit's 4.3 s
//     at 10^6 Bernoulli subjects). The global step per iteration is
//     1 - (1 - rho_t)^(|B|/n), so that a pass compounds to rho_t, as for
//     the subjects: a step of rho_t at every iteration made the global
//     block chase the noise of the estimate.
//   - Schedule. rho_t = Step (1 + p_t/Delay)^-Forget, with p_t = t |B|/n the
//     passes made: with Forget in (0.5, 1], sum rho_t is infinite and sum
//     rho_t^2 finite (Robbins and Monro). Counted in passes, the schedule
//     does not depend on the batch size. On a reparametrised target
//     (Reparametrised, package rvb) of 10^5 subjects or more started at
//     its mode (InitMode) the first step is 0.05 by default, not 0.5, and
//     the window one pass: the start is then within a tenth of a posterior
//     sd of the optimum, and a short step keeps the noise of the subjects'
//     blocks, and the loss in the bound, small. There the control variate
//     is filled before the first pass, whose window is then measured from
//     the start (as the second pass's was from the first's, which held the
//     global block at the start), and the final bound takes 3 antithetic
//     pairs of fresh draws (sviFinalPairs): at 10^6 Bernoulli subjects
//     RVB1 then took 2 passes, not 3, and its final bound 6 draws, not
//     20. RVB1 at 10^5 Bernoulli
//     subjects, started 0.082 sd from the full batch, stopped after 3
//     passes 0.077 sd from it with 0.05, 1.1 nats below its bound; after
//     6 and 8 passes 0.013 and 0.118 sd from it with 0.25 and 0.5, 14 and
//     27 nats below (benchmarks/svi -step).
//
// A visit costs four evaluations of the subject (2.5 on average near the
// start, and for RVB1 1.25 preparations of it, not 2), against one per
// iteration in the full-batch fit; the state adds G values per subject (the kept
// contributions), a copy of the variational parameters (the window's
// average) and one of the factor (its natural gradient).
//
// Convergence. The states after each iteration are averaged over windows
// of Window passes (Polyak and Juditsky's averaging, which takes out the
// jitter that a step of decreasing size still leaves); the fit has
// converged when, over two windows in a row, no global mean of the
// window's average moved from the previous window's by more than Tol of
// its posterior sd, and no global sd by more than Tol of itself. The
// result is the average of the last window. The final lower bound and
// everything after it are computed over all subjects as in the full-batch
// fit.
//
// On a GLMM itself (block-independent variational Bayes) the random-effect
// scale moves slowly, as in EM: each pass moves it about as far as the
// subjects' blocks have moved towards it, and they move by rho_t. On the
// reparametrised targets of package rvb, whose subjects' blocks hardly
// depend on the global block, the stochastic fit settles in a few windows
// (benchmarks/svi).
//
// Fit refuses a Stochastic fit of the arrowhead family (GVA), over a Group,
// with a Rule, a Converger, Antithetic draws, a Checkpoint or a Resume.
// GVA would need more: its factor couples each subject to the global
// block (T_gi), the draw of a subject's block depends on the global draw
// through T_gi, and the natural gradient of every mean needs the global
// solve v_g = T_g^-1 (grad_g h - sum_i T_gi v_i) over all subjects. A
// stochastic GVA would keep each subject's T_gi v_i and its contribution to
// grad_g h (as the control variate here keeps the latter), step the visited
// subjects' T_i and T_gi, and update the sum for T_g and mu_g; the
// natural-gradient step of T_gi also involves T_g z_g, so the cross blocks
// of unvisited subjects go stale as T_g moves.
type Stochastic struct {
	// Batch is the number of subjects per iteration; 0 means the full
	// batch (no stochastic updates). A Batch above the number of subjects
	// means all of them.
	Batch int
	// Step is rho_0, the first step; 0 means 0.05 for a target of at
	// least 10^5 subjects whose locals are reparametrised (Reparametrised)
	// started at its mode (InitMode), 0.5 for others.
	Step float64
	// Delay is the number of passes over which the step halves (with
	// Forget 1); 0 means 1.
	Delay float64
	// Forget is the schedule's exponent, in (0.5, 1]; 0 means 0.6.
	Forget float64
	// Window is the number of passes whose states are averaged; 0 means 1
	// where Step's default is 0.05, 2 elsewhere.
	Window int
	// Tol is the convergence tolerance: the largest change between the
	// averages of two windows, in posterior sds for the means and
	// relative for the sds; 0 means 0.02.
	Tol float64
	// MaxPasses is the largest number of passes over the data; 0 means
	// 100. Settings.MaxIter does not apply.
	MaxPasses int
}

// Defaults of Stochastic.
const (
	defaultSVIStep = 0.5
	// RVB's first step from its mode with many subjects (see Stochastic).
	defaultSVIStepRVB = 0.05
	// With fewer subjects the start is further from the optimum, in
	// posterior sds, than the short step can close before its moves look
	// flat: at 5000 Bernoulli subjects RVB1 stopped 0.37 sd from the full
	// batch after 3 passes (TestStochasticRVBAtStart); at 10^5 the start
	// is 0.08 sd from it, at 10^6 0.01 (benchmarks/svi -start).
	sviShortStepSubjects = 100_000
	defaultSVIDelay      = 1
	defaultSVIForget     = 0.6
	defaultSVITol        = 0.02
	defaultSVIWindow     = 2
	defaultSVIPasses     = 100
)

func (s Stochastic) withDefaults() Stochastic {
	s.Step = orDefault(s.Step, defaultSVIStep)
	s.Delay = orDefault(s.Delay, defaultSVIDelay)
	s.Forget = orDefault(s.Forget, defaultSVIForget)
	s.Tol = orDefault(s.Tol, defaultSVITol)
	if s.MaxPasses == 0 {
		s.MaxPasses = defaultSVIPasses
	}
	if s.Window == 0 {
		s.Window = defaultSVIWindow
	}
	return s
}

// ErrStochastic is wrapped by Fit's errors for a Stochastic fit of settings
// it does not support.
var ErrStochastic = errors.New("stochastic updates not supported")

// checkStochastic returns an error for a Stochastic field out of its range
// or a combination of settings it does not support; set has not had its
// defaults applied, so that a Rule of the caller's can be told from the
// default.
func checkStochastic(set Settings) error {
	s := set.Stochastic
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("vi: %w: Settings.Stochastic.%s is %v; want %s", ErrSettings, field, v, want)
	}
	switch {
	case s.Batch < 0:
		return bad("Batch", s.Batch, "a positive number, or 0 for the full batch")
	case s.Batch == 0:
		if s != (Stochastic{}) {
			return fmt.Errorf("vi: %w: Settings.Stochastic has settings but no Batch", ErrSettings)
		}
		return nil
	case !(s.Step >= 0) || math.IsInf(s.Step, 0):
		return bad("Step", s.Step, "a positive finite step, or 0 for the default")
	case !(s.Delay >= 0) || math.IsInf(s.Delay, 0):
		return bad("Delay", s.Delay, "a positive finite number of passes, or 0 for the default")
	case s.Forget != 0 && !(s.Forget > 0.5 && s.Forget <= 1):
		return bad("Forget", s.Forget, "an exponent in (0.5, 1], or 0 for the default")
	case !(s.Tol >= 0):
		return bad("Tol", s.Tol, "a positive tolerance, or 0 for the default")
	case s.MaxPasses < 0:
		return bad("MaxPasses", s.MaxPasses, "a positive number, or 0 for the default")
	case s.Window < 0:
		return bad("Window", s.Window, "a positive number of passes, or 0 for the default")
	}
	refuse := func(what string) error {
		return fmt.Errorf("vi: %w %s", ErrStochastic, what)
	}
	switch {
	case set.Method != BlockDiag:
		return refuse(fmt.Sprintf("for method %v (only for BlockDiag, whose subjects' blocks are apart from the global block)", set.Method))
	case set.Group != nil:
		return refuse("over a Group")
	case set.Rule != nil:
		return refuse(fmt.Sprintf("with step rule %v (the stochastic fit has its own schedule, Settings.Stochastic)", set.Rule))
	case set.Converger != nil:
		return refuse("with a Converger (convergence is judged per pass, Settings.Stochastic.Tol)")
	case set.Antithetic:
		return refuse("with Antithetic draws (its draws are already paired)")
	case set.Checkpoint != nil || set.Resume != nil:
		return refuse("with a Checkpoint or Resume")
	}
	return nil
}

// sviIterBase numbers the streams of the stochastic iterations apart from
// the others; sviPermBase those of the passes' permutations.
const (
	sviIterBase = 1 << 39
	sviPermBase = sviIterBase + 1<<38
)

// svi is the state of a stochastic fit of the block-diagonal family.
type svi struct {
	f    *rvbFamily
	set  Stochastic
	seed uint64

	n, r, g, tri int
	perm         []uint32  // this pass's order of the subjects
	bits         []uint64  // a bit a subject, for sortBatch
	kept         []float64 // each subject's last contribution to the global gradient, G each
	keptSum      []float64 // sum over subjects of kept, in subject order at the start, then updated
	dc           []float64 // the factor's natural gradient, compressed
	batch        parallel.Chunking
	first        int // the batch's first position in perm
	iter         uint64
	rho, rhoG    float64 // the schedule's step per pass, and the global block's per iteration
	visited      int     // subjects visited so far, up to n: kept is zero for the others
	fourEvery    int     // 1: every visit at the four sign pairs; k > 1: one in k (the rest at one global sign, nearStart)

	thetaGP, thetaGM []float64 // mu_g +- C_g z_g
	gradG            []float64 // the prior's gradient
	ws               []sviScratch

	permRNG  rand.PCG
	permRand *rand.Rand
	pass     func(int) error
}

// sviScratch is one chunk's scratch space.
type sviScratch struct {
	bp, bm, ent []float64  // r-vectors
	all, odd    []float64  // G-vectors
	pl, pg      []float64  // the local and global gradients at the four points, 4r and 4G
	plp         [4]float64 // the log densities there
	strata      []int32    // a permutation of the chunk's positions
}

func newSVI(f *rvbFamily, set Stochastic, seed uint64) *svi {
	n, r, g := f.n, f.r, f.g
	kept := f.kept
	if kept == nil {
		kept = make([]float64, n*g)
	}
	s := &svi{f: f, set: set, seed: seed, n: n, r: r, g: g, tri: r * (r + 1) / 2,
		perm: make([]uint32, n), kept: kept, keptSum: make([]float64, g),
		dc:      make([]float64, len(f.lam)-f.d),
		thetaGP: make([]float64, g), thetaGM: make([]float64, g), gradG: make([]float64, g),
		ws: make([]sviScratch, f.chunks.Len()), fourEvery: 1,
	}
	for i := range s.perm {
		s.perm[i] = uint32(i)
	}
	for k := range s.ws {
		w := &s.ws[k]
		w.bp, w.bm, w.ent = make([]float64, r), make([]float64, r), make([]float64, r)
		w.all, w.odd = make([]float64, g), make([]float64, g)
		w.pl, w.pg = make([]float64, 4*r), make([]float64, 4*g)
		w.strata = make([]int32, f.chunks.Size)
	}
	s.permRand = rand.New(&s.permRNG)
	s.pass = s.chunk
	return s
}

// sortBatch sorts the subjects of a minibatch. A minibatch of at least
// a 256th of the subjects is sorted through a bitmap of all of them, one
// bit a subject: the scan of its n/64 words costs less than sorting, which
// at 10^6 subjects in minibatches of 10^5 took 7 ms each, a twentieth of
// a pass on one core while the others waited.
func (s *svi) sortBatch(b []uint32) {
	if len(b)*256 < s.n {
		slices.Sort(b)
		return
	}
	if s.bits == nil {
		s.bits = make([]uint64, (s.n+63)/64)
	}
	for _, i := range b {
		s.bits[i/64] |= 1 << (i % 64)
	}
	k := 0
	for w, x := range s.bits {
		for x != 0 {
			b[k] = uint32(w*64 + bits.TrailingZeros64(x))
			k++
			x &= x - 1
		}
		s.bits[w] = 0
	}
}

// shuffle draws the order of pass p.
func (s *svi) shuffle(p int) {
	a, b := parallel.StreamSeed(s.seed, sviPermBase+uint64(p), 0)
	s.permRNG.Seed(a, b)
	rng := s.permRand
	for i := len(s.perm) - 1; i > 0; i-- {
		j := rng.IntN(i + 1)
		s.perm[i], s.perm[j] = s.perm[j], s.perm[i]
	}
}

// nearStart reports whether a stochastic fit of n subjects of the target
// starts near the optimum: a reparametrised target (Reparametrised) of at
// least sviShortStepSubjects subjects started at its mode (InitMode), whose
// start is within a tenth of a posterior sd of the full batch's optimum
// (0.08 sd at 10^5 Bernoulli subjects, 0.01 at 10^6). Such a fit steps
// from defaultSVIStepRVB, averages windows of one pass, fills the control
// variate before its first pass (fill) and draws its final bound from
// sviFinalPairs pairs (finalSettings).
func nearStart(t Target, set Settings, n int) bool {
	rp, ok := t.(Reparametrised)
	return ok && rp.LocalsReparametrised() && set.Init == InitMode && n >= sviNearSubjects
}

// sviNearSubjects is sviShortStepSubjects, which the tests lower.
var sviNearSubjects = sviShortStepSubjects

// sviFinalPairs is the number of antithetic pairs of draws of the final
// bound of a stochastic fit that starts near the optimum (nearStart): the
// fewest whose standard error has 2 degrees of freedom, as the full batch
// takes from 10^7 subjects on (finalPairs). Its 20 draws at 10^6
// Bernoulli subjects took 3.5 s of the stochastic fit's 10.1 s, more than
// its passes after the first; 6 draws widen the standard error from about
// 3 nats to about 5 (README, "Stochastic updates over subjects").
const sviFinalPairs = 3

// sviFourEvery is, for a stochastic fit that starts near the optimum
// (nearStart), the share of a minibatch's subjects, one in sviFourEvery,
// that a visit evaluates at the four sign pairs; the others take one
// global sign (two evaluations and, for RVB1, one preparation, against
// four and two). All of them give the global means' gradient, whose
// noise is the same either way; the four-pair ones alone give the global
// factor's, which one global sign for all of them left 8 to 26 times as
// noisy as the four pairs for all (TestStochasticOneSignGradient), as the
// subjects' own noise does not cancel from it: RVB1 at 10^6 Bernoulli
// subjects then took 4 passes, not 2.
var sviFourEvery = 4

// finalSettings returns the settings of the final bound of a fit of n
// subjects: set itself, or for a stochastic fit that starts near the
// optimum (nearStart) set with at most 2*sviFinalPairs FinalDraws.
func finalSettings(t Target, set Settings, n int) Settings {
	if set.Stochastic.Batch > 0 && nearStart(t, set, n) {
		set.FinalDraws = min(set.FinalDraws, 2*sviFinalPairs)
	}
	return set
}

// fill sets each subject's kept contribution to the global gradient to
// the mean of its values at an antithetic pair of local draws, mu_i +-
// C_i z_i, at the global means mu_g (one preparation of the subject and
// two evaluations, against two and four of a visit), and their sum, in
// subject order; it steps nothing. The control variate is then whole
// before the first pass, which can step the global block. Kept values
// whose expectation is the visits' are needed: a pass draws its
// minibatches from the subjects not yet visited in it, so n/|B| times
// their sum of new - kept is unbiased only if new - kept has mean zero
// over them. Kept values at the means themselves (z = 0) differ from the
// visits' by the curvature terms, which have a sign: with them the first
// pass moved RVB1's global means at 10^5 Bernoulli subjects up to 0.45
// posterior sd off, a distance the short steps then kept. Near the start
// (nearStart) this takes the place of a first pass that stepped the
// subjects' blocks alone, one pass in the three that RVB1 took at 10^5
// and 10^6 Bernoulli subjects.
func (s *svi) fill() error {
	f := s.f
	if err := f.pool.Run(f.chunks.Len(), s.fillChunk); err != nil {
		return err
	}
	s.sumKept()
	return nil
}

// sumKept sets the sum of the kept values, in subject order, and counts
// every subject as visited.
func (s *svi) sumKept() {
	g := s.g
	clear(s.keptSum)
	for i := range s.n {
		for j, x := range s.kept[i*g : (i+1)*g] {
			s.keptSum[j] += x
		}
	}
	s.visited = s.n
}

// fillChunk is fill's work for chunk k of the subjects, with the streams
// of iteration sviIterBase, which no pass uses; the squared norms of the
// chunk's draws are stratified as a minibatch's (chunk).
func (s *svi) fillChunk(k int) error {
	f := s.f
	r, g := s.r, s.g
	lo, hi := f.chunks.Bounds(k)
	w := &s.ws[k]
	rng := f.streams.At(sviIterBase, k)
	strata := shuffledStrata(w.strata[:hi-lo], rng)
	mu := f.lam[:f.d]
	muG := mu[f.n*r:]
	gl := w.pl[:r]
	gp, gm := w.pg[:g], w.pg[g:2*g]
	for i := lo; i < hi; i++ {
		s.draw(f.z[i*r:(i+1)*r], (float64(strata[i-lo])+rng.Float64())/float64(hi-lo), rng)
		f.c.DrawRange(i, i+1, f.theta, mu, f.z)
		mi := mu[i*r : (i+1)*r]
		copy(w.bp, f.theta[i*r:(i+1)*r])
		for j, x := range w.bp {
			w.bm[j] = 2*mi[j] - x
		}
		clear(gp)
		clear(gm)
		if _, err := f.target.Local(f.ws[k], i, i+1, muG, w.bp, gl, gp); err != nil {
			return err
		}
		if _, err := f.target.Local(f.ws[k], i, i+1, muG, w.bm, gl, gm); err != nil {
			return err
		}
		ki := s.kept[i*g : (i+1)*g]
		for j := range ki {
			ki[j] = (gp[j] + gm[j]) / 2
		}
	}
	return nil
}

// shuffledStrata fills strata with 0, 1, ... in an order drawn from rng
// (Fisher-Yates) and returns it.
func shuffledStrata(strata []int32, rng *rand.Rand) []int32 {
	for j := range strata {
		strata[j] = int32(j)
	}
	for j := len(strata) - 1; j > 0; j-- {
		l := rng.IntN(j + 1)
		strata[j], strata[l] = strata[l], strata[j]
	}
	return strata
}

// drawGlobal draws z_g and the global pair mu_g +- C_g z_g, and returns
// z_g'z_g.
func (s *svi) drawGlobal() float64 {
	f := s.f
	nr, d := f.n*f.r, f.d
	rng := f.streams.At(s.iter, f.chunks.Len())
	zzg := 0.0
	for j := nr; j < d; j++ {
		x := rng.NormFloat64()
		f.z[j] = x
		zzg += x * x
	}
	mu := f.lam[:d]
	f.c.DrawGlobal(f.theta, mu, f.z)
	copy(s.thetaGP, f.theta[nr:])
	for j, x := range s.thetaGP {
		s.thetaGM[j] = 2*mu[nr+j] - x
	}
	return zzg
}

// chunk visits the subjects of chunk k of the minibatch: it draws them,
// evaluates the target at the four sign pairs, steps their blocks and adds
// the chunk's partial sums.
func (s *svi) chunk(k int) error {
	f := s.f
	g := s.g
	lo, hi := s.batch.Bounds(k)
	w := &s.ws[k]
	rng := f.streams.At(s.iter, k)
	var lp, zz, ld float64
	pd, po := f.partG[k], f.partS1[k]
	clear(pd)
	clear(po)
	// The chunk's subjects take the strata of |z_i|^2 in random order.
	strata := shuffledStrata(w.strata[:hi-lo], rng)
	// The chunk's subjects per four-pair one (strata 0, k, 2k, ...).
	nf := float64(hi-lo) / float64((hi-lo+s.fourEvery-1)/s.fourEvery)
	for pos := lo; pos < hi; pos++ {
		i := int(s.perm[s.first+pos])
		// With fourEvery k > 1 the subjects of strata 0, k, 2k, ... take
		// the four pairs, the others one global sign, + and - in turn,
		// so that each sign has half of them and an even share of the
		// spread of |z_i|^2.
		q := int(strata[pos-lo])
		four := q%s.fourEvery == 0
		sg := (q - q/s.fourEvery - 1) & 1
		lpi, zzi, ldi, err := s.visit(k, i, (float64(q)+rng.Float64())/float64(hi-lo), four, sg, rng)
		if err != nil {
			return err
		}
		lp, zz, ld = lp+lpi, zz+zzi, ld+ldi
		ki := s.kept[i*g : (i+1)*g]
		for j := range g {
			a := w.all[j]
			pd[j] += a - ki[j]
			ki[j] = a
		}
		if four {
			// The part odd in z_g from the chunk's four-pair subjects
			// alone, each standing for nf of the chunk's: one global
			// sign leaves the subjects' own noise in it, which n/|B|
			// multiplies (TestStochasticOneSignGradient).
			for j := range g {
				po[j] += nf * w.odd[j]
			}
		}
		s.stepLocal(i, s.rho)
	}
	f.partLP[k], f.partZZ[k], f.partLD[k] = lp, zz, ld
	return nil
}

// visit draws subject i with the chi-squared quantile u (see draw) and
// evaluates it at the four sign pairs (+-z_i, +-z_g) if four, else at
// the two (+-z_i, z_g) for sg 0 or (+-z_i, -z_g) for sg 1: it leaves the
// mean part of the local gradient in grad and the part odd in z_i in
// theta (as scratch of subject i), the mean of the global gradients in
// the chunk's all and, with four pairs, the mean of their parts odd in
// z_g in odd, and returns the mean log density, z_i'z_i and log|C_i|.
func (s *svi) visit(k, i int, u float64, four bool, sg int, rng *rand.Rand) (lp, zz, ld float64, err error) {
	f := s.f
	r := s.r
	w := &s.ws[k]
	mu := f.lam[:f.d]
	zi := f.z[i*r : (i+1)*r]
	zz = s.draw(zi, u, rng)
	f.c.DrawRange(i, i+1, f.theta, mu, f.z)
	f.c.SolveTransRange(i, i+1, f.tmp, f.z)
	mi := mu[i*r : (i+1)*r]
	copy(w.bp, f.theta[i*r:(i+1)*r])
	copy(w.ent, f.tmp[i*r:(i+1)*r])
	for j, x := range w.bp {
		w.bm[j] = 2*mi[j] - x
	}
	ld = f.c.LogDetRange(i, i+1)
	gm := f.grad[i*r : (i+1)*r]
	gOdd := f.theta[i*r : (i+1)*r]
	clear(gm)
	clear(gOdd)
	clear(w.all)
	clear(w.odd)
	// The points, both local signs at each global one in turn (a target
	// may then reuse what depends on theta_g alone, as rvb's RVB1 does),
	// their results summed in the order of (local sign, global sign).
	sg0, sg1 := 0, 2
	if !four {
		sg0, sg1 = sg, sg+1
	}
	for sg := sg0; sg < sg1; sg++ {
		tg := s.thetaGP
		if sg == 1 {
			tg = s.thetaGM
		}
		for sb := range 2 {
			b := w.bp
			if sb == 1 {
				b = w.bm
			}
			q := 2*sb + sg
			gl, gg := w.pl[q*r:(q+1)*r], w.pg[q*s.g:(q+1)*s.g]
			clear(gg)
			l, err := f.target.Local(f.ws[k], i, i+1, tg, b, gl, gg)
			if err != nil {
				return 0, 0, 0, err
			}
			w.plp[q] = l
		}
	}
	for sb := range 2 {
		sgnB := float64(1 - 2*sb)
		for sg := sg0; sg < sg1; sg++ {
			sgnG := float64(1 - 2*sg)
			q := 2*sb + sg
			lp += w.plp[q]
			for j, x := range w.pl[q*r : (q+1)*r] {
				gm[j] += x
				gOdd[j] += sgnB * x
			}
			for j, x := range w.pg[q*s.g : (q+1)*s.g] {
				w.all[j] += x
				w.odd[j] += sgnG * x
			}
		}
	}
	// The entropy's gradient C_i^-T z_i is odd: it cancels from the mean
	// and is whole in the odd part.
	np := float64(2 * (sg1 - sg0))
	for j := range gm {
		gm[j] /= np
		gOdd[j] = gOdd[j]/np + w.ent[j]
	}
	for j := range w.all {
		w.all[j] /= np
		w.odd[j] /= np
	}
	return lp / np, zz, ld, nil
}

// stepLocal takes subject i's natural-gradient step of size rho from the
// gradients visit left: the factor's from the odd part (tmp takes the
// unused mean), then the mean's from the mean part with the new factor:
// from a start whose covariance is far too wide, the mean's step C C' grad
// with the old factor would overshoot.
func (s *svi) stepLocal(i int, rho float64) {
	f := s.f
	r, tri := s.r, s.tri
	f.c.NatGradRange(i, i+1, f.tmp, s.dc, f.z, f.theta)
	s.stepFactor(f.lam[f.d+i*tri:f.d+(i+1)*tri], s.dc[i*tri:(i+1)*tri], f.kind[f.d+i*tri:f.d+(i+1)*tri], rho)
	f.c.CovMulVecRange(i, i+1, f.v, f.grad)
	mi := f.lam[i*r : (i+1)*r]
	for j := range r {
		mi[j] += rho * f.v[i*r+j]
	}
}

// draw sets z to a standard normal draw whose squared norm is the
// quantile u of its chi-squared distribution and returns the squared norm:
// u uniform on [0, 1) makes z standard normal; u spread over the strata of
// a chunk, one draw in each, makes the sum of the squared norms, on which
// the noise of the gradients even in z depends (that of the random-effect
// variance most of all), nearly constant. Antithetic pairs take out the
// odd part.
func (s *svi) draw(z []float64, u float64, rng *rand.Rand) float64 {
	var r2 float64
	switch len(z) {
	case 1:
		x := mathext.NormalQuantile(0.5 + u/2)
		z[0] = x
		return x * x
	case 2:
		r2 = -2 * math.Log1p(-u)
	default:
		r2 = 2 * mathext.GammaIncRegInv(float64(len(z))/2, u)
	}
	// A uniform direction.
	var nrm float64
	for nrm == 0 {
		nrm = 0
		for j := range z {
			x := rng.NormFloat64()
			z[j] = x
			nrm += x * x
		}
	}
	c := math.Sqrt(r2 / nrm)
	for j := range z {
		z[j] *= c
	}
	return r2
}

// stepFactor adds rho times the natural gradient nat to the factor block c,
// shortened so that no diagonal entry shrinks by more than half.
func (s *svi) stepFactor(c, nat []float64, kinds []uint8, rho float64) {
	frac := 1.0
	for j, d := range nat {
		if kinds[j] == kindDiag && rho*d < 0 && c[j]+rho*d < c[j]/2 {
			frac = min(frac, -c[j]/(2*rho*d))
		}
	}
	for j, d := range nat {
		c[j] += frac * rho * d
	}
}

// iterate runs iteration t on the minibatch of positions [first, first+m)
// of the pass's order and returns the estimate of h for the trace: the
// log density and entropy of the minibatch scaled by n/m, plus the global
// ones.
func (s *svi) iterate(t uint64, first, m int) (float64, error) {
	f := s.f
	nr, d, g := f.n*f.r, f.d, s.g
	s.iter, s.first = sviIterBase+t, first
	s.batch = parallel.NewChunking(m, f.chunks.Size)
	zzg := s.drawGlobal()
	mu := f.lam[:d]
	if err := f.pool.Run(s.batch.Len(), s.pass); err != nil {
		return 0, err
	}
	var lp, zz, ld float64
	diff, odd := f.sumG, f.sumS1
	clear(diff)
	clear(odd)
	for k := range s.batch.Len() {
		lp += f.partLP[k]
		zz += f.partZZ[k]
		ld += f.partLD[k]
		for j := range g {
			diff[j] += f.partG[k][j]
			odd[j] += f.partS1[k][j]
		}
	}
	scale := float64(f.n) / float64(m)
	// The global gradients: the mean part into grad, the odd part into
	// theta, of the global block.
	gm, gOdd := f.grad[nr:d], f.theta[nr:d]
	clear(s.gradG)
	lpg := f.target.Global(s.thetaGP, s.gradG)
	copy(gOdd, s.gradG)
	copy(gm, s.gradG)
	clear(s.gradG)
	lpg = (lpg + f.target.Global(s.thetaGM, s.gradG)) / 2
	// Until every subject has been visited once (the kept values of the
	// others are zero) the global block stays: the sum over the subjects
	// is not known, and n/|B| times the minibatch's, which varies from
	// subject to subject even at the optimum, would move it away. The
	// first pass steps the subjects' blocks alone.
	if s.visited < f.n {
		s.visited += m
		for j := range g {
			s.keptSum[j] += diff[j]
		}
		return s.traceH(lpg, lp, zz, ld, zzg, m), nil
	}
	for j := range g {
		gm[j] = (gm[j]+s.gradG[j])/2 + s.keptSum[j] + scale*diff[j]
		gOdd[j] = (gOdd[j]-s.gradG[j])/2 + scale*odd[j]
		s.keptSum[j] += diff[j]
	}
	f.c.SolveTransGlobal(f.tmp, f.z)
	for j := nr; j < d; j++ {
		f.theta[j] += f.tmp[j]
	}
	nt := f.n * s.tri
	f.c.NatGradGlobal(f.tmp, s.dc, f.z, f.theta)
	s.stepFactor(f.lam[d+nt:], s.dc[nt:], f.kind[d+nt:], s.rhoG)
	f.c.CovMulVecGlobal(f.v, f.grad)
	for j := nr; j < d; j++ {
		mu[j] += s.rhoG * f.v[j]
	}
	return s.traceH(lpg, lp, zz, ld, zzg, m), nil
}

// traceH returns iterate's estimate of h from the global log density lpg,
// the minibatch's sums of m subjects' log densities, squared draws and
// log determinants, and the global draw's z_g'z_g.
func (s *svi) traceH(lpg, lp, zz, ld, zzg float64, m int) float64 {
	f := s.f
	logNorm := 0.5 * math.Log(2*math.Pi)
	scale := float64(f.n) / float64(m)
	return lpg + scale*(lp+ld+0.5*zz+float64(m*f.r)*logNorm) + f.c.LogDetGlobal() + 0.5*zzg + float64(s.g)*logNorm
}

// sviPatience is the number of flat windows in a row that end a
// stochastic fit.
const sviPatience = 2

// runSVI is run's counterpart for a stochastic fit: passes of minibatch
// iterations, averaged over windows of passes, convergence judged between
// windows. It returns an error that stopped it (cancellation) or a
// divergence; good holds the average of the last complete window (the
// start before the first), which it leaves in lambda when it ends
// otherwise.
func runSVI(ctx context.Context, f *rvbFamily, set Settings, res *Result, start time.Time, good []float64, goodIter *int) (error, *DivergedError) {
	if f.n == 0 || f.n > math.MaxUint32 {
		return fmt.Errorf("vi: %w for a target of %d subjects", ErrStochastic, f.n), nil
	}
	st := set.Stochastic
	near := nearStart(f.target, set, f.n)
	if near {
		// Short steps leave little noise to average out.
		st.Step = orDefault(st.Step, defaultSVIStepRVB)
		if st.Window == 0 {
			st.Window = 1
		}
	}
	st = st.withDefaults()
	s := newSVI(f, st, set.Seed)
	if near {
		s.fourEvery = sviFourEvery
	}
	m := min(st.Batch, f.n)
	lambda := f.lambda()
	avg := make([]float64, len(lambda))
	g := f.g
	prevMean, prevSD := make([]float64, g), make([]float64, g)
	mean, sd := make([]float64, g), make([]float64, g)
	havePrev := false
	res.Status = MaxIterations
	defer copy(lambda, good)
	if near {
		// The kept contributions at the means, before the first pass,
		// which then steps the global block too; its window is measured
		// from the start.
		if f.kept != nil {
			// The start's (KeptStarter).
			s.sumKept()
		} else if err := s.fill(); err != nil {
			if fatal(err) || ctx.Err() != nil {
				return err, nil
			}
			return nil, &DivergedError{Iter: 0, Reason: "target evaluation failed", Err: err}
		}
		s.f.momentsOf(lambda, prevMean, prevSD)
		havePrev = true
	}
	flat, inWindow, avgN := 0, 0, 0
	prevBound := math.NaN()
	var t uint64
	for p := range st.MaxPasses {
		s.shuffle(p)
		var hSum float64
		iters := 0
		for first := 0; first < f.n; first += m {
			if err := ctx.Err(); err != nil {
				return err, nil
			}
			t++
			passes := float64(t-1) * float64(m) / float64(f.n)
			s.rho = st.Step * math.Pow(1+passes/st.Delay, -st.Forget)
			s.rhoG = -math.Expm1(float64(m) / float64(f.n) * math.Log1p(-s.rho))
			// The minibatch in subject order: its subjects' data and
			// parameters are then read in the order they are stored.
			s.sortBatch(s.perm[first:min(first+m, f.n)])
			h, err := s.iterate(t, first, min(m, f.n-first))
			if err != nil {
				if fatal(err) || ctx.Err() != nil {
					return err, nil
				}
				return nil, &DivergedError{Iter: int(t), Reason: "target evaluation failed", Err: err}
			}
			if math.IsNaN(h) || math.IsInf(h, 0) {
				return nil, &DivergedError{Iter: int(t), Reason: "non-finite lower bound"}
			}
			hSum += h
			iters++
			// The window's running mean of the states after each of its
			// iterations (Polyak and Juditsky): the global block's noise
			// averages out within a pass, not only between passes.
			avgN++
			if avgN == 1 {
				copy(avg, lambda)
			} else {
				w := 1 / float64(avgN)
				for j, x := range lambda {
					avg[j] += (x - avg[j]) * w
				}
			}
		}
		res.Iterations = int(t)
		res.Passes = p + 1
		if err := f.check(); err != nil {
			if fatal(err) {
				return err, nil
			}
			return nil, &DivergedError{Iter: int(t), Reason: "factor", Err: err}
		}
		inWindow++
		bound := hSum / float64(iters)
		res.bestBound = max(res.bestBound, bound)
		elapsed := time.Since(start)
		move := math.NaN()
		if inWindow == st.Window {
			inWindow, avgN = 0, 0
			copy(good, avg)
			*goodIter = int(t)
			s.f.momentsOf(avg, mean, sd)
			if havePrev {
				move = 0
				for j := range g {
					move = max(move, math.Abs(mean[j]-prevMean[j])/sd[j], math.Abs(sd[j]-prevSD[j])/sd[j])
				}
				if move < st.Tol {
					flat++
				} else {
					flat = 0
				}
			}
			copy(prevMean, mean)
			copy(prevSD, sd)
			havePrev = true
		}
		res.Trace = append(res.Trace, TracePoint{Iter: int(t), LowerBound: bound, Gain: bound - prevBound, StepNorm: move, Elapsed: elapsed})
		prevBound = bound
		if set.Progress != nil {
			set.Progress(Progress{Iter: int(t), LowerBound: bound, Elapsed: elapsed, MaxIter: st.MaxPasses * ((f.n + m - 1) / m),
				Flat: flat, Patience: sviPatience})
		}
		if flat >= sviPatience {
			res.Status = Converged
			return nil, nil
		}
		if set.TimeLimit > 0 && elapsed >= set.TimeLimit {
			res.Status = TimeLimit
			return nil, nil
		}
	}
	return nil, nil
}
