// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import "math"

// crnIterBase offsets the stream iterations of the fixed draws from those of
// the fit and of the final estimate.
const crnIterBase = 1 << 41

// tracker averages h(theta) over windows for the trace, and decides
// convergence from the gain of the lower bound between windows measured with
// common random numbers.
//
// The rule: at the end of each window, h is evaluated at ConvergenceDraws fixed
// draws z_1..z_K (the same at every window), and the gain over the previous
// window is the mean of the paired differences. Because the draws are
// shared, the difference is free of fresh Monte Carlo noise: it moves only
// with the parameters. Near the optimum the iterates jitter, so the gain is
// then as often negative as positive; a window is flat when its gain is
// below the largest of Tol, RelTol times the bound and the jitter (see
// Settings.Jitter), and the fit has converged after Patience flat windows
// in a row whose gains do not add up to a climb.
type tracker struct {
	window, patience int
	tol, jitterScale float64
	relTol           float64

	n          int
	sum, sumSq float64
	means      []float64

	prev, cur []float64 // h at the fixed draws, previous and current window
	havePrev  bool
	flat      int // consecutive flat windows
	lastGain  float64

	// The last gains, newest last: only the jitter of the iterates makes
	// the bound fall between windows, so recent falls measure it.
	gains []float64
	// The jitter when the step was last refined.
	floor float64
}

func newTracker(s Settings) *tracker {
	return &tracker{window: s.Window, patience: s.Patience, tol: s.Tol, jitterScale: s.Jitter, relTol: s.RelTol,
		prev: make([]float64, s.ConvergenceDraws), cur: make([]float64, s.ConvergenceDraws)}
}

// add records h for one iteration and reports whether a window closed.
func (t *tracker) add(h float64) bool {
	t.n++
	t.sum += h
	t.sumSq += h * h
	if t.n < t.window {
		return false
	}
	t.means = append(t.means, t.sum/float64(t.n))
	t.n, t.sum, t.sumSq = 0, 0, 0
	return true
}

// restart forgets the progress of the current window and the flat count,
// so that convergence is judged afresh after a change of step size.
func (t *tracker) restart() {
	t.n, t.sum, t.sumSq = 0, 0, 0
	t.flat = 0
}

// refine is restart for a refinement of the step: the gains that the
// smaller step can still make are at most the jitter of the larger one.
func (t *tracker) refine() {
	t.floor = max(t.floor, t.jitter())
	t.restart()
}

// last returns the mean of the last closed window.
func (t *tracker) last() float64 {
	if len(t.means) == 0 {
		return math.NaN()
	}
	return t.means[len(t.means)-1]
}

// crn records h at the fixed draws (in t.cur) for the window just closed
// and reports whether the fit has converged.
func (t *tracker) crn() bool {
	defer func() {
		t.prev, t.cur = t.cur, t.prev
		t.havePrev = true
	}()
	if !t.havePrev {
		return false
	}
	var sum, level float64
	for k, h := range t.cur {
		sum += h - t.prev[k]
		level += h
	}
	gain := sum / float64(len(t.cur))
	t.lastGain = gain
	tolAbs := max(t.tol, t.relTol*math.Abs(level/float64(len(t.cur))))
	if len(t.gains) > t.patience {
		copy(t.gains, t.gains[1:])
		t.gains = t.gains[:t.patience]
	}
	t.gains = append(t.gains, gain)
	noise := max(t.jitter(), t.floor)
	if gain < max(tolAbs, noise) {
		t.flat++
	} else {
		t.flat = 0
	}
	if t.flat < t.patience {
		return false
	}
	// The flat windows must not add up to a climb either: momentum makes
	// the bound oscillate on its way up.
	var net float64
	for _, g := range t.gains[len(t.gains)-t.patience:] {
		net += g
	}
	return net < max(float64(t.patience)*tolAbs, noise)
}

// jitter returns Settings.Jitter times the root mean square of the
// negative parts of the recent gains: at a plateau, where rises and falls
// are equally likely, about 0.7 times the gains' spread; in a climb, where
// falls are rare, far less.
func (t *tracker) jitter() float64 {
	if len(t.gains) == 0 {
		return 0
	}
	var ss float64
	for _, g := range t.gains {
		if g < 0 {
			ss += g * g
		}
	}
	return t.jitterScale * math.Sqrt(ss/float64(len(t.gains)))
}
