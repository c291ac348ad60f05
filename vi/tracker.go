package vi

import "math"

// tracker averages h(theta) over windows and decides convergence.
//
// The rule: after each window, compare the mean of h over the last Patience
// windows with its mean over the Patience windows before them. The fit has
// converged when the gain is below Tol plus two Monte Carlo standard errors
// of that difference (estimated from the spread of h within the windows):
// the bound is flat up to noise and tolerance.
type tracker struct {
	window, patience int
	tol              float64

	n           int
	sum, sumSq  float64
	means, vars []float64
}

func newTracker(s Settings) *tracker {
	return &tracker{window: s.Window, patience: s.Patience, tol: s.Tol}
}

// add records h for one iteration and reports whether a window closed.
func (t *tracker) add(h float64) bool {
	t.n++
	t.sum += h
	t.sumSq += h * h
	if t.n < t.window {
		return false
	}
	mean := t.sum / float64(t.n)
	v := max(0, t.sumSq/float64(t.n)-mean*mean)
	t.means = append(t.means, mean)
	t.vars = append(t.vars, v)
	t.n, t.sum, t.sumSq = 0, 0, 0
	return true
}

// restart forgets the closed windows, so that convergence is judged on
// windows after a change of step size only.
func (t *tracker) restart() {
	t.means = t.means[:0]
	t.vars = t.vars[:0]
	t.n, t.sum, t.sumSq = 0, 0, 0
}

// last returns the mean of the last closed window.
func (t *tracker) last() float64 {
	if len(t.means) == 0 {
		return math.NaN()
	}
	return t.means[len(t.means)-1]
}

// converged applies the rule to the closed windows.
func (t *tracker) converged() bool {
	k, p := len(t.means), t.patience
	if k < 2*p {
		return false
	}
	var recent, before, v float64
	for j := k - p; j < k; j++ {
		recent += t.means[j]
		v += t.vars[j]
	}
	for j := k - 2*p; j < k-p; j++ {
		before += t.means[j]
		v += t.vars[j]
	}
	recent /= float64(p)
	before /= float64(p)
	// Each window mean has variance var/window; the difference of two
	// averages of p window means has variance (sum of vars)/(p^2 window).
	se := math.Sqrt(v / (float64(p*p) * float64(t.window)))
	return recent-before < t.tol+2*se
}
