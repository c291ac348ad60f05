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
// shared, the difference is nearly free of Monte Carlo noise: it moves only
// with the parameters. The fit has converged when the gain has been below
// Tol for Patience windows in a row. Near the optimum the iterates jitter,
// so the gain is then as often negative as positive, and the run of flat
// windows comes soon.
type tracker struct {
	window, patience int
	tol              float64

	n          int
	sum, sumSq float64
	means      []float64

	prev, cur []float64 // h at the fixed draws, previous and current window
	havePrev  bool
	flat      int // consecutive flat windows
	lastGain  float64
}

func newTracker(s Settings) *tracker {
	return &tracker{window: s.Window, patience: s.Patience, tol: s.Tol,
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
	var sum float64
	for k, h := range t.cur {
		sum += h - t.prev[k]
	}
	gain := sum / float64(len(t.cur))
	t.lastGain = gain
	if gain < t.tol {
		t.flat++
	} else {
		t.flat = 0
	}
	return t.flat >= t.patience
}
