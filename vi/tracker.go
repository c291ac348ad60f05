// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import "math"

// crnIterBase offsets the stream iterations of the fixed draws from those of
// the fit and of the final estimate.
const crnIterBase = 1 << 41

// A Converger decides when a fit has converged (Settings.Converger). At
// the end of every window but the first, Fit evaluates h = log p - log q
// at ConvergenceDraws fixed draws, the same at every window (common random
// numbers), so that the paired differences between windows move only with
// the parameters, free of fresh Monte Carlo noise.
type Converger interface {
	// Converged is given h at the fixed draws at the end of the previous
	// window and of this one, and reports whether the fit has converged
	// at the current step size (Fit then refines the step, Settings.Refine
	// times, before it stops).
	Converged(prev, cur []float64) bool
	// Restart is called when the step size changes: halved after a
	// failure (refined false) or divided by 10 by a refinement (refined
	// true).
	Restart(refined bool)
}

// NewConverger returns the Converger Fit uses when Settings.Converger is
// nil, with the tolerances of set (zero values meaning their defaults).
//
// The rule: the gain of a window is the mean of the paired differences of
// h at the fixed draws. Near the optimum the iterates jitter, so the gain
// is then as often negative as positive; a window is flat when its gain is
// below the largest of Tol, RelTol times the bound and the jitter (see
// Settings.Jitter), and the fit has converged after Patience flat windows
// in a row whose gains do not add up to a climb.
func NewConverger(set Settings) Converger {
	return newGainConverger(set.withDefaults())
}

// newGainConverger returns NewConverger's rule for settings with their
// defaults applied.
func newGainConverger(set Settings) *gainConverger {
	return &gainConverger{patience: set.Patience, tol: set.Tol, jitterScale: set.Jitter, relTol: set.RelTol}
}

// gainConverger is NewConverger's rule.
type gainConverger struct {
	patience         int
	tol, jitterScale float64
	relTol           float64

	flat int // consecutive flat windows
	// moved is set by the tracker when the global means moved by
	// Settings.moveTol or more in the window: then it is not flat, for at
	// most maxMoveVetoes windows (vetoes counts them).
	moved  bool
	vetoes int
	// The last gains, newest last: only the jitter of the iterates makes
	// the bound fall between windows, so recent falls measure it.
	gains []float64
	// The jitter when the step was last refined.
	floor float64
}

// Restart forgets the flat count, so that convergence is judged afresh
// after a change of step size; after a refinement the gains that the
// smaller step can still make are at most the jitter of the larger one.
func (c *gainConverger) Restart(refined bool) {
	if refined {
		c.floor = max(c.floor, c.jitter())
	}
	c.flat = 0
}

// Converged implements the rule of NewConverger.
func (c *gainConverger) Converged(prev, cur []float64) bool {
	gain, level := crnGain(prev, cur)
	tolAbs := max(c.tol, c.relTol*math.Abs(level))
	if len(c.gains) > c.patience {
		copy(c.gains, c.gains[1:])
		c.gains = c.gains[:c.patience]
	}
	c.gains = append(c.gains, gain)
	noise := max(c.jitter(), c.floor)
	veto := c.moved && c.vetoes < maxMoveVetoes
	if veto {
		c.vetoes++
	}
	if gain < max(tolAbs, noise) && !veto {
		c.flat++
	} else {
		c.flat = 0
	}
	if c.flat < c.patience {
		return false
	}
	// The flat windows must not add up to a climb either: momentum makes
	// the bound oscillate on its way up.
	var net float64
	for _, g := range c.gains[len(c.gains)-c.patience:] {
		net += g
	}
	return net < max(float64(c.patience)*tolAbs, noise)
}

// jitter returns Settings.Jitter times the root mean square of the
// negative parts of the recent gains: at a plateau, where rises and falls
// are equally likely, about 0.7 times the gains' spread; in a climb, where
// falls are rare, far less.
func (c *gainConverger) jitter() float64 {
	if len(c.gains) == 0 {
		return 0
	}
	var ss float64
	for _, g := range c.gains {
		if g < 0 {
			ss += g * g
		}
	}
	return c.jitterScale * math.Sqrt(ss/float64(len(c.gains)))
}

// crnGain returns the mean paired difference of cur over prev, the gain
// of a window, and the mean of cur.
func crnGain(prev, cur []float64) (gain, level float64) {
	var sum float64
	for k, h := range cur {
		sum += h - prev[k]
		level += h
	}
	return sum / float64(len(cur)), level / float64(len(cur))
}

// maxMoveVetoes is the most windows that the test of Settings.moveTol
// keeps from being flat: Snngm's steps have a fixed length, and if the
// jitter of the window's averages of the global means exceeded the
// tolerance the test alone would never let the fit stop. (At 10^6
// subjects they jittered by 0.002-0.005 sd a window of 15, Bernoulli and
// Poisson, against the tolerance of 0.02.)
const maxMoveVetoes = 20

// tracker averages h(theta) over windows for the trace, keeps h at the
// fixed draws of the last two windows, and asks a Converger.
type tracker struct {
	window int
	conv   Converger

	n          int
	sum, sumSq float64
	means      []float64

	prev, cur []float64 // h at the fixed draws, previous and current window
	havePrev  bool
	lastGain  float64

	// mv, if not nil, tracks how far the global means move between
	// windows (Settings.moveTol).
	mv *mover
}

func newTracker(s Settings, conv Converger) *tracker {
	return &tracker{window: s.Window, conv: conv,
		prev: make([]float64, s.ConvergenceDraws), cur: make([]float64, s.ConvergenceDraws)}
}

// A mover averages the global means over the iterations of each window
// and measures, when a window closes, the largest move of that average
// from the previous window's (or from the start, for the first window),
// in posterior sds: the test of Settings.moveTol. A checkpoint holds the
// last window's average (resumeMover).
type mover struct {
	tol      float64
	moments  func(mean, sd []float64) // the current global means and sds
	sum      []float64                // the window's sum of the means
	n        int
	avg      []float64 // the last closed window's average (or the start)
	mean, sd []float64
	haveAvg  bool
}

func newMover(tol float64, g int, moments func(mean, sd []float64)) *mover {
	return &mover{tol: tol, moments: moments, sum: make([]float64, g), avg: make([]float64, g),
		mean: make([]float64, g), sd: make([]float64, g)}
}

// begin takes the start's means as the first window's reference.
func (m *mover) begin() {
	m.moments(m.avg, m.sd)
	m.haveAvg = true
}

// add records the means after one iteration.
func (m *mover) add() {
	m.moments(m.mean, m.sd)
	for j, x := range m.mean {
		m.sum[j] += x
	}
	m.n++
}

// restart forgets the current window's means.
func (m *mover) restart() {
	clear(m.sum)
	m.n = 0
}

// close ends a window: it returns the largest move of a global mean's
// average from the previous window's in sds (at the window's end), NaN
// without a previous average.
func (m *mover) close() float64 {
	m.moments(m.mean, m.sd)
	move := math.NaN()
	if m.n > 0 {
		if m.haveAvg {
			move = 0
			for j, s := range m.sum {
				move = max(move, math.Abs(s/float64(m.n)-m.avg[j])/m.sd[j])
			}
		}
		for j, s := range m.sum {
			m.avg[j] = s / float64(m.n)
		}
		m.haveAvg = true
	}
	m.restart()
	return move
}

// add records h for one iteration and reports whether a window closed.
func (t *tracker) add(h float64) bool {
	if t.mv != nil {
		t.mv.add()
	}
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

// restart forgets the progress of the current window and restarts the
// Converger after a change of step size (refined: a refinement).
func (t *tracker) restart(refined bool) {
	t.n, t.sum, t.sumSq = 0, 0, 0
	if t.mv != nil {
		t.mv.restart()
	}
	t.conv.Restart(refined)
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
	moved := false
	if t.mv != nil {
		move := t.mv.close()
		// Without a reference the window has not shown it stays put.
		moved = !(move < t.mv.tol)
	}
	if !t.havePrev {
		return false
	}
	t.lastGain, _ = crnGain(t.prev, t.cur)
	if c, ok := t.conv.(*gainConverger); ok {
		c.moved = moved
	}
	return t.conv.Converged(t.prev, t.cur)
}

// flat returns how many flat windows in a row the default Converger has
// seen, at most patience, or 0 for another Converger.
func (t *tracker) flat(patience int) int {
	if c, ok := t.conv.(*gainConverger); ok {
		return min(c.flat, patience)
	}
	return 0
}
