// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"fmt"
	"math"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/internal/small"
)

// A QuadraticStarter is a Starter of a target whose log density, given
// some of its global variables (the held ones), is quadratic in all the
// others, and whose start's precision is, in those others, the negative
// Hessian there, with no coupling to the held ones: a Gaussian linear mixed
// model given its variance parameters, whose other variables (random and
// fixed effects, the effects of crossed factors) have a Gaussian
// conditional posterior that the start's precision gives exactly.
//
// InitMode then moves the start's mean to the mode of that conditional
// posterior by Newton steps with the start's factor (a start that reaches
// the crossed effects by updating them one factor at a time given the rest
// ends short of their joint mode, and Snngm's short step for many crossed
// levels, StepShared, climbs the rest slowly), takes one Newton step in
// the held variables towards the stationarity of q's mean, with gradients
// averaged over draws from the start's q (stepHeld), and moves the others
// to the mode given those.
type QuadraticStarter interface {
	Starter
	// QuadraticGiven appends to dst the indices in [0, G) of the held
	// global variables and reports whether the target is quadratic given
	// them; when it is not, the start is left as it is.
	QuadraticGiven(dst []int) ([]int, bool)
}

// quadraticStart reports whether Fit's start of t is refined to the
// conditional mode (see QuadraticStarter). The window is then
// LargeWindow's, as for many subjects: the start is as close to the
// optimum, and an iteration over the dense global block of many crossed
// levels as costly.
func quadraticStart(t Target, set Settings) bool {
	qs, ok := t.(QuadraticStarter)
	if !ok || set.Init != InitMode || set.Group != nil {
		return false
	}
	_, ok = qs.QuadraticGiven(nil)
	return ok
}

// QuadraticStepDivisor divides Snngm's default step further, and the
// refinement of the step (Settings.Refine) is skipped, when the start is
// refined (QuadraticStarter) and the step is already shortened for more
// than StepShared partly supported global variables, as RVB's is for many
// subjects (RVBStepSubjects). Such a start leaves the iterations little to
// climb, and each costs a few passes over a dense global block of hundreds
// of rows: on insteval (1142 crossed levels), from the start refined in
// its effects alone, the default step's iterates wandered about it, gains
// of 0.2 nat a window held the convergence test off for 350 iterations,
// and the fit ended at -118901.21; the short step converged in 100, at
// -118901.88 (the start's bound was -118901.93, the old start's fit
// -118901.60 +- 0.24 after 850). With the held variables stepped too
// (stepHeld) the start's bound is -118898.62 and the fit's after 100
// iterations -118898.61. penicillin's 6 crossed levels keep the default
// step: the short one took 425 iterations instead of 300, to a bound 0.12
// nat lower.
const QuadraticStepDivisor = 10

// refineSteps is the largest number of Newton steps of refineStart. With
// the exact Hessian one step reaches the mode; the start's precision may
// lag the variance parameters' last update by a little (on insteval the
// gradient fell from 18.7 to 0.035 in the first step and to 8e-5 in the
// second).
const refineSteps = 2

// refineStart moves the mean b.lam[:d] of a QuadraticStarter's start to
// the mode of the target given its held global variables, by Newton steps
// mu += (T T')^-1 g with g the gradient of log p at mu less its held
// entries; T is the start's factor. A step that does not raise log p is
// taken back and ends the refinement. It runs in one process only (the
// starts shared among processes do not hold crossed factors), and uses
// the family's draw vectors, which the iterations overwrite.
func refineStart(b *base, t *arrowhead.Factor) error {
	qs, ok := b.target.(QuadraticStarter)
	if !ok || b.ch != nil {
		return nil
	}
	held, ok := qs.QuadraticGiven(nil)
	if !ok {
		return nil
	}
	if len(b.theta) < b.d {
		// GVA's chunked family (gvaChunks) holds no draw vectors of d,
		// and makes z and v after the start: the refinement has its
		// own for its time.
		z, v, theta, grad, tmp := b.z, b.v, b.theta, b.grad, b.tmp
		for _, p := range []*[]float64{&b.z, &b.v, &b.theta, &b.grad, &b.tmp} {
			*p = make([]float64, b.d)
		}
		defer func() { b.z, b.v, b.theta, b.grad, b.tmp = z, v, theta, grad, tmp }()
	}
	if err := b.newtonFree(t, held); err != nil {
		return err
	}
	if len(held) == 0 {
		return nil
	}
	if err := b.stepHeld(t, held); err != nil {
		return err
	}
	return b.newtonFree(t, held)
}

// newtonFree takes up to refineSteps Newton steps mu += (T T')^-1 g in
// the variables that are not held, g the gradient of log p at mu less its
// held entries. A step that does not raise log p is taken back and ends
// them.
func (b *base) newtonFree(t *arrowhead.Factor, held []int) error {
	mu, g, v, x := b.lam[:b.d], b.grad, b.v, b.tmp
	lp, err := b.heldGradient(mu, g, held)
	if err != nil {
		return err
	}
	for range refineSteps {
		if err := b.solvePrec(t, x, v, g); err != nil {
			return err
		}
		for j, s := range x {
			mu[j] += s
		}
		next, err := b.heldGradient(mu, g, held)
		if err != nil || !(next > lp) {
			for j, s := range x {
				mu[j] -= s
			}
			if b.pool.Context().Err() != nil {
				return err
			}
			return nil
		}
		lp = next
	}
	return nil
}

// heldPairs is the number of antithetic pairs of draws from the start's
// q at which stepHeld averages the gradient.
const heldPairs = 8

// maxHeldStep bounds the change of a held variable in stepHeld.
const maxHeldStep = 1.0

// startIterBase numbers the streams of stepHeld's draws apart from those
// of the iterations, of the stochastic fit and of the final bound.
const startIterBase = 1 << 38

// stepHeld moves each held variable's mean by one Newton step towards
// E_q[d log p / d theta_h] = 0, where the mean of a Gaussian q is
// stationary: the gradient averaged over heldPairs antithetic pairs of
// draws from q = N(mu, (T T')^-1), the curvature the start's precision
// S_hh = T_hh^2 (a held variable is coupled with nothing in the start's
// precision), the step at most maxHeldStep. The held ones (a Gaussian
// model's variance parameters) then move to where q's uncertainty in the
// others puts them, which the start's own estimates miss and the short
// step (QuadraticStepDivisor) hardly corrects: on insteval sigma went from
// 1.1697 to 1.1773 (lmer 1.1775) and the start's bound from -118901.93 to
// -118898.62; on simulated data log sigma from 0.49 to 0.01 posterior sd
// of where longer fits at the default step end (TestQuadraticFitRecovers).
func (b *base) stepHeld(t *arrowhead.Factor, held []int) error {
	nr := b.nr
	mu := b.lam[:b.d]
	acc := make([]float64, len(held))
	defer func() { b.iter = 0 }()
	for p := range heldPairs {
		b.iter = startIterBase + uint64(p)
		b.drawGlobal()
		t.DrawGlobal(b.theta, b.tmp, mu, b.z)
		err := b.pool.Run(b.chunks.Len(), func(k int) error {
			lo, hi := b.chunks.Bounds(k)
			b.drawChunk(k, lo, hi)
			t.DrawRange(lo, hi, b.theta, b.tmp, mu, b.z)
			return nil
		})
		if err != nil {
			return err
		}
		for side := range 2 {
			if side == 1 {
				for j, m := range mu {
					b.theta[j] = 2*m - b.theta[j]
				}
			}
			if _, err := b.heldGradient(b.theta, b.grad, nil); err != nil {
				return err
			}
			for x, h := range held {
				acc[x] += b.grad[nr+h]
			}
		}
	}
	tg := t.Global()
	for x, h := range held {
		d := tg[small.PackedIndex(h, h)]
		step := acc[x] / (2 * heldPairs) / (d * d)
		mu[nr+h] += max(-maxHeldStep, min(maxHeldStep, step))
	}
	return nil
}

// heldGradient writes into g the gradient of log p at theta with the held
// global entries zeroed, and returns log p. The chunks' shares of the
// global gradient are added in chunk order.
func (b *base) heldGradient(theta, g []float64, held []int) (float64, error) {
	nr := b.nr
	thetaG := theta[nr:]
	err := b.pool.Run(b.chunks.Len(), func(k int) error {
		lo, hi := b.chunks.Bounds(k)
		clear(b.partG[k])
		lp, err := b.target.Local(b.ws[k], lo, hi, thetaG, theta[b.at(lo):b.at(hi)], g[b.at(lo):b.at(hi)], b.partG[k])
		b.partLP[k] = lp
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("vi: refining the start: %w", err)
	}
	gradG := g[nr:]
	clear(gradG)
	var lp float64
	for k := range b.chunks.Len() {
		lp += b.partLP[k]
		for j, y := range b.partG[k] {
			gradG[j] += y
		}
	}
	lp += b.target.Global(thetaG, gradG)
	for _, j := range held {
		gradG[j] = 0
	}
	if math.IsNaN(lp) || math.IsInf(lp, 0) {
		return lp, fmt.Errorf("vi: refining the start: log density %v", lp)
	}
	return lp, nil
}

// solvePrec sets x = (T T')^-1 g, with v = T^-1 g as its workspace: the
// subjects' solves run on the pool, their shares of the global sum added
// in chunk order. Its error is the pool's context's.
func (b *base) solvePrec(t *arrowhead.Factor, x, v, g []float64) error {
	err := b.pool.Run(b.chunks.Len(), func(k int) error {
		lo, hi := b.chunks.Bounds(k)
		clear(b.partG[k])
		t.SolveRange(lo, hi, v, g, b.partG[k])
		return nil
	})
	if err != nil {
		return err
	}
	clear(b.sumG)
	b.addG()
	t.SolveGlobal(v, g, b.sumG)
	t.SolveTransGlobal(x, v)
	return b.pool.Run(b.chunks.Len(), func(k int) error {
		lo, hi := b.chunks.Bounds(k)
		t.SolveTransRange(lo, hi, x, v)
		return nil
	})
}
