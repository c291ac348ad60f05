// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"fmt"
	"time"
)

// Status says how a fit ended.
type Status int

const (
	// Converged: the windowed lower bound stopped improving (see Settings.Tol).
	Converged Status = iota
	// MaxIterations: the iteration limit was reached first.
	MaxIterations
	// TimeLimit: the time limit was reached first.
	TimeLimit
	// Diverged: the lower bound or the factor became non-finite, or a
	// target evaluation failed; Result holds the last good state.
	Diverged
	// Cancelled: the context was cancelled; Result holds the last good state.
	Cancelled
)

var statusNames = [...]string{"converged", "max-iterations", "time-limit", "diverged", "cancelled"}

func (s Status) String() string {
	if s >= 0 && int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("Status(%d)", int(s))
}

// DivergedError reports where a fit diverged.
type DivergedError struct {
	Iter   int    // the iteration at which it was detected
	Reason string // what was found, e.g. "non-finite lower bound"
	Err    error  // the target's error, if one caused it
}

func (e *DivergedError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("vi: diverged at iteration %d: %s: %v", e.Iter, e.Reason, e.Err)
	}
	return fmt.Sprintf("vi: diverged at iteration %d: %s", e.Iter, e.Reason)
}

func (e *DivergedError) Unwrap() error { return e.Err }

// TracePoint is the state at the end of one window of iterations.
type TracePoint struct {
	Iter       int           // iterations done
	LowerBound float64       // average of h(theta) over the window
	Gain       float64       // gain of the lower bound over the previous window, at common draws
	StepNorm   float64       // Euclidean norm of the last step of lambda
	Elapsed    time.Duration // wall time since the fit started
}

// Result is a fitted Gaussian approximation.
type Result struct {
	Method Method
	// Rule is the step rule with its defaults filled in.
	Rule   Rule
	Status Status
	// Err is non-nil when Status is Diverged or Cancelled.
	Err error

	Iterations int
	// Passes is the number of passes over the data of a stochastic fit
	// (Settings.Stochastic), 0 for a full-batch fit.
	Passes  int
	Elapsed time.Duration
	// Backoffs counts the restarts from the last good state with a halved
	// step after a non-finite value.
	Backoffs int

	// N, R and G are the target's dimensions.
	N, R, G int
	// Sizes, for a BlockSizer target, gives the size of each subject's
	// local block (R is then 0); nil otherwise.
	Sizes []int
	// Workers is the number of workers the fit ran on.
	Workers int
	// Reparametrised reports a target whose local variables are not the
	// model's random effects (a Reparametrised target, such as
	// rvb.Target): posterior.Summarize refuses such a Result.
	Reparametrised bool
	// Mu is the mean: subject blocks, then the global block.
	Mu []float64
	// Factor is the compressed factor: arrowhead.Factor data for GVA
	// (precision Cholesky factor), blockdiag.Factor data for RVB
	// (covariance Cholesky factor).
	//
	// Mu and Factor are the fit's own state, not copies of it: they share
	// one array (Factor follows Mu in it, and Mu's capacity ends at its
	// length, so that appending to Mu copies it), which belongs to the
	// Result once Fit returns.
	Factor []float64

	// LowerBound is the final estimate of the evidence lower bound, with
	// every constant of the target included, from fresh draws (see
	// Settings.FinalDraws and FinalSE);
	// LowerBoundSE is its Monte Carlo standard error.
	LowerBound, LowerBoundSE float64
	// LowerBoundDraws is the number of fresh draws LowerBound averages:
	// Settings.FinalDraws, fewer for a fit of many subjects (see
	// FinalDraws) or once the standard error is below FinalSE.
	LowerBoundDraws int
	// LogWeights holds log p(theta) - log q(theta), every constant of the
	// target included, at independent fresh draws from q (see
	// Settings.ImportanceDraws): the log importance weights of q as a
	// proposal for the target, whose mean is a lower bound and whose tail
	// says how far q is from the posterior. Nil when the fit did not end
	// with a usable state or the draws were too few.
	LogWeights []float64
	// ImportanceGlobal holds the global block theta_g of each of those
	// draws, one after another (len(LogWeights) × G), for estimates
	// reweighted by the importance ratios (package posterior).
	ImportanceGlobal []float64
	// Trace holds one point per window.
	Trace []TracePoint

	bestBound float64 // the best bound at the convergence test's draws

	// cov keeps GVA's Sigma_gg for the next GlobalCov or LocalCov; copies
	// of the Result share it. nil (a Result not made by Fit) keeps none.
	cov *covCache
}
