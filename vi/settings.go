// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Method selects the family of Gaussian approximations.
type Method int

const (
	// GVA approximates the joint posterior of all variables by a Gaussian
	// whose precision has a block-arrowhead Cholesky factor (Algorithm 2S).
	GVA Method = iota
	// BlockDiag approximates it by a Gaussian with a block-diagonal
	// covariance Cholesky factor (Algorithm 1S): independent subject
	// blocks and a global block. On a target of package rvb, whose local
	// variables are reparametrised, this is the paper's RVB.
	BlockDiag
)

func (m Method) String() string {
	switch m {
	case GVA:
		return "gva"
	case BlockDiag:
		return "blockdiag"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Init selects how the variational parameters start.
type Init int

const (
	// InitMode starts the mean at an approximate posterior mode found by
	// Newton steps on the local blocks and gradient steps on the global
	// block, and the factor at the curvature there. It is the default.
	InitMode Init = iota
	// InitPaper is the paper's start: mean zero, precision factor sqrt(N) I
	// for GVA, covariance factor with unit local diagonals and 1/sqrt(N)
	// global diagonals for RVB, N the number of observations.
	InitPaper
)

// Settings control a fit. The zero value of every field selects its
// default, so Settings{} is a sensible configuration. A value out of a
// field's range, such as a negative count or step, a NaN, or an unknown
// Method or Init, makes Fit fail with an error naming the field (wrapping
// ErrSettings for all but Method).
type Settings struct {
	Method Method
	// Rule is the step rule; nil means Snngm{}, the rule with its
	// defaults.
	Rule Rule
	Init Init

	// Seed seeds every random draw of the fit.
	Seed uint64
	// Workers is the number of goroutines; 0 means as many as the size of
	// the target warrants, at most GOMAXPROCS (see DefaultWorkers), and
	// where that is one on a machine of more cores, a second goroutine
	// shares the draws of Result.LogWeights. Results do not depend on it.
	Workers int
	// ChunkSize is the number of subjects per chunk; 0 means
	// parallel.DefaultChunkSize. Results depend on it only through the
	// random streams.
	ChunkSize int

	// Group, if not nil, runs the fit over several processes, each with
	// its own subjects (see Group): the Target holds this process's
	// subjects, and so do the Result's N, Mu and Factor, with the global
	// block.
	Group Group

	// MaxIter is the iteration limit; 0 means 20000.
	MaxIter int
	// TimeLimit stops the fit after this wall time; 0 means none.
	TimeLimit time.Duration
	// Window is the number of iterations over which the lower bound is
	// averaged for the trace, and between two convergence tests; 0 means
	// DefaultWindow, or LargeWindow for targets of LargeSubjects subjects
	// or more (GVAWindow for fits of GVAWindowSubjects subjects or more
	// from their own start; RVB's then also wait for the global means to
	// settle, see RVBMoveTol).
	Window int
	// Tol is the convergence tolerance in nats: the fit has converged when
	// the lower bound, evaluated at the same fixed draws at the end of each
	// window, has gained less than Tol in each of Patience windows in a
	// row, and less than Patience*Tol over them. 0 means 0.0125, a gain of
	// 1/4000 nat per iteration at the default Window. Jitter may raise it.
	Tol float64
	// RelTol raises Tol to RelTol times the size of the bound: a gain of
	// 0.0125 nats in a bound of -10^6 is far below anything the posterior
	// summaries show, and waiting for it costs thousands of iterations on
	// very many subjects. 0 means 1e-6, a negative value none. (Stan's
	// ADVI stops at a relative change of 0.01.)
	RelTol float64
	// Jitter scales the part of the tolerance that follows the noise of
	// the iterates: near the optimum the iterates jitter, the bound at the
	// fixed draws falls between windows as often as it rises, and gains
	// below Jitter times the root mean square of the falls among the last
	// Patience+1 windows are noise, not progress. After a refinement of the
	// step the tolerance stays at least the jitter before it: the smaller
	// step can gain at most what the larger one lost to jitter. 0 means 1;
	// a negative value leaves Tol alone.
	Jitter float64
	// ConvergenceDraws is the number of fixed draws at which the bound is
	// evaluated for the convergence test; the estimated gain is unbiased
	// and its noise falls with more draws. 0 means 8, fewer beyond
	// CRNSubjects subjects (as many as cost about 8*CRNSubjects subject
	// evaluations, at least 2).
	ConvergenceDraws int
	// Patience is the number of flat windows in a row that mean
	// convergence; 0 means 3.
	Patience int
	// Converger, if not nil, decides convergence instead of the rule of
	// Tol, RelTol, Jitter and Patience (NewConverger). Progress then
	// reports no flat windows.
	Converger Converger
	// Antithetic pairs the draws of successive iterations, z and -z, which
	// cancels the part of the gradient noise that is linear in z.
	Antithetic bool
	// Refine is the number of times the step size is divided by 10 when the
	// lower bound levels off, before the fit is declared converged: rules
	// with steps of fixed length (Snngm, the Adam family) jitter around the
	// optimum at a distance that scales with the step, and a smaller last
	// step settles them. 0 means 1, or none for GVA fits of many subjects
	// from their own start (see GVARefineSubjects), where the default step
	// of RVB is already shortened for many subjects (see RVBStepSubjects) or
	// Snngm's for a refined start with many crossed levels (see
	// QuadraticStepDivisor); a negative value means none.
	Refine int
	// FinalDraws is the largest number of fresh draws for the final
	// lower-bound estimate, taken in antithetic pairs (z and -z); 0 means
	// 1000. Fits of very many subjects use fewer (as many as cost about
	// 2·10^6 subject evaluations, at least 20, or beyond CRNSubjects
	// subjects at least 2·10^7/n and 6).
	FinalDraws int
	// FinalSE ends the final estimate early, after a multiple of 10 pairs
	// of draws, once its Monte Carlo standard error is below FinalSE nats;
	// 0 means 0.25, a negative value never.
	FinalSE float64
	// ImportanceDraws is the number of independent draws from the fitted
	// q at which the log importance weight log p(theta) - log q(theta) is
	// recorded in Result.LogWeights, for the Pareto diagnostic of package
	// posterior; 0 means 2000. Fits of many subjects use fewer (as many as
	// cost about 2.5·10^5 subject evaluations), none when that is under
	// MinImportanceDraws or the target has more than MaxImportanceDim
	// variables. (With 1000 draws the estimate of k on sleepstudy ranged
	// from 0.50 to 1.07 over seeds 0 to 5, with 2000 from 0.56 to 0.78,
	// with 4000 from 0.48 to 0.73, which made owls' whole run 4.6 times
	// longer.)
	ImportanceDraws int

	// Stochastic, if its Batch is not zero, fits by stochastic updates
	// over minibatches of subjects (see Stochastic); the zero value is the
	// full-batch fit.
	Stochastic Stochastic

	// Progress, if not nil, is called at the end of every window.
	Progress func(Progress)

	// Checkpoint, if not nil, is given the whole state of the fit at the
	// end of a window, once at least CheckpointEvery iterations have
	// passed since the last (0: at every window), so that a fit stopped by
	// a failure can resume (Resume). An error it returns stops the fit.
	// VOGN's fits and fits with a Converger of their own cannot be
	// checkpointed.
	Checkpoint      func(*Checkpoint) error
	CheckpointEvery int
	// Resume, if not nil, resumes the fit from a Checkpoint of the same
	// target and settings, skipping the start: the fit then ends as it
	// would have without the stop.
	Resume *Checkpoint

	// gainFromStart measures the first window's gain from the bound at
	// the start (set by Fit, see GVAWindow).
	gainFromStart bool
	// moveTol, if positive, makes a window flat only if no global mean's
	// average over it moved by moveTol posterior sds or more from the
	// previous window's (set by Fit, see RVBMoveTol).
	moveTol float64
}

// DefaultFinalDraws is Settings.FinalDraws's default.
const DefaultFinalDraws = 1000

// DefaultAlpha0 and DefaultAlpha0BlockDiag are Snngm's default steps per square
// root of the number of variational parameters for GVA and RVB. They were
// chosen by fitting the paper's data sets from the default start over a
// grid of values (0.001 to 0.1, see the package documentation). The
// covariance factor of RVB has entries of the scale of the posterior
// standard deviations, the precision factor of GVA of their inverses, so
// RVB needs the smaller step. For RVB, 0.003 ends within a nat of the best
// bound of the grid on Epilepsy, Toenail, HERS and Diabetes; 0.01 ends 2
// to 4 nats lower on Diabetes, takes 5 to 14 times as many iterations to
// come within 10 nats of the paper's bound there, and knocks a weakly
// identified random slope off its posterior peak onto a plateau where
// Snngm loses its direction (package rvb, TestRVB1WeakRandomSlope).
const (
	DefaultAlpha0          = 0.03
	DefaultAlpha0BlockDiag = 0.003
)

// RVBStepSubjects is the number of subjects beyond which RVB's default step
// shrinks as one over the square root of the number of subjects, when the
// target starts itself (package rvb's Start). Snngm's steps have a fixed
// length, so the iterate wanders about the optimum, and what that costs in
// the bound grows with the number of variational parameters: the
// iterations of a fit of 10^4 subjects ended about as far below their
// start's bound as they climbed. A start that is already RVB's own in the
// global block is within a fraction of a posterior sd of the optimum when
// there are many subjects, so the shorter step costs nothing in climbing:
// on 10^4 and 10^5 simulated Bernoulli subjects the fits converge in 100
// iterations instead of 500 and 475, at a bound as high or higher. The
// short step also does the work of the refinement (Settings.Refine), which
// is skipped: it gained 0.06 nat there and on Diabetes, for 75 iterations.
const RVBStepSubjects = 1000

// GVARefineSubjects is the number of subjects from which a GVA fit of a
// target that starts itself (a Starter, InitMode) skips the refinement
// of the step (Settings.Refine) by default. Its start is a Gaussian
// variational approximation of every subject given theta_g, at the
// fixed point of the start's rounds in theta_g, and with many subjects
// nothing is left to climb that the refined step would find: on
// simulated Bernoulli data (random intercept, p = 5, 7 observations a
// subject) the fit without it converged after 100 iterations instead of
// 175, its beta, omega and their sds within 0.011 posterior sds of the
// refined fit's and its final bound 0.04 nats lower at 10^5 subjects
// (the bound's SE 1.0), within 0.001 sds and 0.03 nats higher at 10^6
// (SE 3.7; glmm's start from a sample, SampleStartSubjects).
const GVARefineSubjects = 100_000

// GVAWindow is the default Window of a GVA fit of GVAWindowSubjects
// subjects or more that starts itself (a Starter, InitMode): from its
// start, at the fixed point of the start's rounds, the fit has only the
// factor to settle, and with RelTol's tolerance every window is flat, so
// the window alone sets the iterations: three windows without
// refinement, as the first window's gain is measured from the start's
// bound at the same fixed draws (four, 60 iterations, before). On the
// simulated data of GVARefineSubjects at 10^6 subjects, against the 175
// iterations of the full schedule (windows of 25, refined), in beta and
// omega: 60 iterations ended within 0.007 posterior sds, their sds
// 0.07-0.24% larger, the final bound 0.04 nats higher (SE 3.8); 45
// within 0.008 sds, sds 0.10-0.31% larger, the bound 0.14 higher; 30
// (windows of 10) within 0.009 sds, sds 0.10-0.36% larger, the bound
// 0.28 higher. At 10^7 subjects an iteration takes over 2 s.
const (
	GVAWindow         = 15
	GVAWindowSubjects = 1_000_000
)

// RVBMoveTol is the tolerance of the test that RVB's fits of
// GVAWindowSubjects subjects or more from their own start add to the
// bound's: a window is flat only if no global mean's average over its
// iterations moved RVBMoveTol posterior sds (at the window's end) or more
// from the previous window's average (the start's means for the first),
// as the stochastic fits' test (Stochastic.Tol). The bound's tolerance
// grows with the number of subjects (RelTol), and a climb of a few nats
// a window passes it while the global means still move: from the
// model's start on the Poisson random slope of 10^6 subjects (scaling
// program, poisson-ris), with package rvb's start taking only short
// Newton steps, they moved 0.15 sd a window of 15 for 300 iterations.
// From its start now they moved 0.004-0.005 sd in the first three
// windows (the Bernoulli random intercept's 0.0015-0.0026), and both
// fits stop after those three: the Bernoulli one within 0.046 sd of 400
// iterations (the 100 of the old schedule within 0.038), its sds within
// 0.2%; the Poisson one 0.155 sd from 300 iterations and 0.44 sd from
// 600 in omega (its third entry), its sds there 3% and 6% smaller, the
// bound 52 nats below the 600's, which still gained about a nat a window
// (the old schedule's 100 iterations from the old start were 12.5 sds
// from the 600 and 66 nats below the 45).
const RVBMoveTol = 0.02

// StepShared is the number of global variables, each on which only some
// subjects depend (GlobalSupporter; in a GLMM, the levels of crossed
// factors), beyond which Snngm's default step shrinks in proportion to
// their number, for both methods. Their part of the factor's global block
// is estimated from few subjects each, so its noise grows with their
// number squared while Snngm's step keeps its length: on simulated
// Bernoulli data (2000 subjects of 15 rows, one crossed factor; go run
// ./benchmarks/crossed) GVA's default step held the start's bound with 30
// levels, lost 30 nats with 100 and over 1000 with 300, while the
// shortened step held it at 100 and 300 levels. The block-diagonal family
// on a reparametrised target needs it as much: on grouseticks with the 63
// locations as subjects and 521 crossed levels, RVB1's bound was
// -6.2e6 ± 6.0e6 at the default step and -948.7 at the shortened one.
const StepShared = 30

// DefaultWindow and DefaultTol are the defaults of Settings.Window and
// Settings.Tol.
const (
	DefaultWindow = 50
	DefaultTol    = 0.0125
)

// LargeWindow is the default Window for targets of LargeSubjects subjects
// or more. With many subjects the start, a Newton solve per subject given
// global variables that the data pin down, is close to the optimum, and an
// iteration is costly; the shorter window halves the iterations needed to
// confirm a plateau. With few subjects the start can be further off and the
// climb slow and noisy (Toenail stops about a nat short with 25).
const (
	LargeWindow   = 25
	LargeSubjects = 5000
)

// Progress reports the state of a running fit.
type Progress struct {
	Iter       int
	LowerBound float64 // windowed average of h(theta)
	Elapsed    time.Duration
	MaxIter    int
	// How near the convergence rule is: Flat of Patience flat windows in
	// a row, after Refined of Refine refinements of the step. The fit
	// converges when Flat reaches Patience with Refined equal to Refine.
	Flat, Patience  int
	Refined, Refine int
	// Final is set once, when the iterations have ended and the final
	// lower bound is being estimated from fresh draws.
	Final bool
}

// withDefaults replaces zero values by the defaults. It leaves values out
// of range as they are, for validate to report.
func (s Settings) withDefaults() Settings {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	deff := func(v *float64, d float64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&s.MaxIter, 20000)
	def(&s.Window, DefaultWindow)
	def(&s.Patience, 3)
	def(&s.ConvergenceDraws, defaultConvergenceDraws)
	def(&s.FinalDraws, DefaultFinalDraws)
	def(&s.ImportanceDraws, 2000)
	if s.FinalSE == 0 {
		s.FinalSE = 0.25
	}
	if s.Refine == 0 {
		s.Refine = 1
	} else if s.Refine < 0 {
		s.Refine = 0
	}
	deff(&s.Tol, DefaultTol)
	if s.RelTol == 0 {
		s.RelTol = 1e-6
	} else if s.RelTol < 0 {
		s.RelTol = 0
	}
	if s.Jitter == 0 {
		s.Jitter = 1
	} else if s.Jitter < 0 {
		s.Jitter = 0
	}
	if s.Rule == nil {
		s.Rule = Snngm{}
	}
	return s
}

// ErrSettings is wrapped by the errors of Fit for a field of Settings out of
// its range.
var ErrSettings = errors.New("invalid settings")

// validate returns an error naming the first field out of its range. Zero
// values are valid: they select defaults. Method is checked where it is
// dispatched on (newFamily).
func (s Settings) validate() error {
	bad := func(field string, v any, want string) error {
		return fmt.Errorf("vi: %w: Settings.%s is %v; want %s", ErrSettings, field, v, want)
	}
	if s.Init != InitMode && s.Init != InitPaper {
		return bad("Init", fmt.Sprintf("Init(%d)", int(s.Init)), "InitMode or InitPaper")
	}
	// Negative counts once meant the default; an error is plainer.
	for _, f := range []struct {
		name string
		v    int
	}{
		{"Workers", s.Workers}, {"ChunkSize", s.ChunkSize}, {"MaxIter", s.MaxIter},
		{"Window", s.Window}, {"ConvergenceDraws", s.ConvergenceDraws}, {"Patience", s.Patience},
		{"FinalDraws", s.FinalDraws}, {"ImportanceDraws", s.ImportanceDraws},
		{"CheckpointEvery", s.CheckpointEvery},
	} {
		if f.v < 0 {
			return bad(f.name, f.v, "a positive number, or 0 for the default")
		}
	}
	if s.TimeLimit < 0 {
		return bad("TimeLimit", s.TimeLimit, "a positive duration, or 0 for none")
	}
	// An infinite Tol (stop at the first flat window) is meaningful.
	if math.IsNaN(s.Tol) || s.Tol < 0 {
		return bad("Tol", s.Tol, "a positive tolerance, or 0 for the default")
	}
	if math.IsNaN(s.RelTol) {
		return bad("RelTol", s.RelTol, "a positive tolerance, 0 for the default or a negative value for none")
	}
	if math.IsNaN(s.Jitter) {
		return bad("Jitter", s.Jitter, "a positive scale, 0 for the default or a negative value for none")
	}
	if s.Rule != nil {
		return s.Rule.check()
	}
	return nil
}
