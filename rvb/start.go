// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"errors"
	"fmt"
	"math"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/internal/small"
	"github.com/sparsevi/sparsevi/parallel"
)

// Start writes a starting point for vi.Fit's InitMode into theta (length
// n*r + G: the b~_i, then theta_g) and an approximate posterior precision
// into prec, in the compressed arrowhead form of vi.Starter. It implements
// vi.Starter.
//
// It transforms the model's start (glmm.Model.Start): b~_i = L_i^-1 (b_i -
// lambda_i) at the model's theta_g (about 0 for RVB2, whose lambda_i is
// the conditional mode), the local precision blocks are the model's
// transformed to b~, L_i' S_i L_i (about I), and the global block starts
// as the Schur complement of the model's precision, the model's marginal
// of theta_g. Then startGlobal makes theta_g and its block RVB's own (see
// the package documentation, The start). The cross blocks are zero, as in
// RVB's factor. For RVB2 it also seeds the warm-start modes. A Target of
// NewAtStart uses the start it computed, once. Its parallel loops run on
// pool, whose context stops it.
func (t *Target) Start(pool *parallel.Pool, theta, prec []float64) error {
	n, _, _ := t.Dims()
	return t.StartShare(pool, nil, 0, n, theta, prec)
}

// StartKept is Start that also writes into kept (G values a subject, n*G
// in all) each subject's contribution to the gradient in theta_g of the
// log joint at the start's theta_g, as Local adds it, averaged over the
// antithetic pairs of local draws from the start's blocks with which
// startGlobal took its last gradient: the values that a stochastic fit's
// control variate keeps (vi.Stochastic), which it then need not fill by a
// pass over the subjects. The start is Start's up to rounding. StartKept
// reports whether it wrote the values: not when startGlobal kept the
// model's start or took all its Newton steps. When startGlobal stepped
// after its last gradient, the values are those at the point before the
// step, each shifted by the same amount so that their sum is the one the
// Newton step's quadratic model predicts: each subject's value is then
// off by its own curvature's departure from the mean times the step,
// which has mean zero over the subjects. It implements vi.KeptStarter.
func (t *Target) StartKept(pool *parallel.Pool, theta, prec, kept []float64) (bool, error) {
	n, _, g := t.Dims()
	if len(kept) != n*g {
		panic("rvb: bad length in StartKept")
	}
	return t.startOver(pool, nil, 0, n, groupPlace{total: n}, theta, prec, kept)
}

// StartShare is Start computed by several processes, each holding the whole
// Target but computing the subjects [lo, hi), with the sums over the
// subjects carried through the processes by c (a vi.Group; nil for one
// process, which then holds every subject): it sets those subjects'
// entries of theta and prec, laid out for the whole Target, and the global
// ones, bit for bit as Start would. lo and hi are as for
// glmm.Model.StartShare. It makes Target a vi.ShareStarter; every process
// must call it together.
func (t *Target) StartShare(pool *parallel.Pool, c parallel.Carrier, lo, hi int, theta, prec []float64) error {
	n, _, _ := t.Dims()
	_, err := t.startOver(pool, c, lo, hi, groupPlace{total: n}, theta, prec, nil)
	return err
}

// StartGroup is Start computed by the processes of a fit over a vi.Group,
// each holding a Target of its own subjects alone, as
// glmm.Model.StartGroup: theta and prec, laid out for this Target, get
// the bits Start of the whole Target gives these subjects and the global
// block. It makes Target a vi.GroupStarter; every process must call it
// together.
func (t *Target) StartGroup(pool *parallel.Pool, c parallel.Carrier, theta, prec []float64) error {
	n, _, _ := t.Dims()
	place, err := placeIn(c, n)
	if err != nil {
		return err
	}
	_, err = t.startOver(pool, c, 0, n, place, theta, prec, nil)
	return err
}

// groupPlace is where a process's subjects lie among those of all the
// processes of a group: part says that its Target holds them alone, first
// is the number of subjects before them, and total the number of all.
type groupPlace struct {
	part         bool
	first, total int
}

// placeIn returns the place of a Target of n subjects of its own among
// the processes that c links (nil for one process).
func placeIn(c parallel.Carrier, n int) (groupPlace, error) {
	if c == nil {
		return groupPlace{total: n}, nil
	}
	acc := make([]float64, 1)
	if err := c.Receive(acc); err != nil {
		return groupPlace{}, err
	}
	first := int(acc[0])
	acc[0] += float64(n)
	if err := c.Pass(acc); err != nil {
		return groupPlace{}, err
	}
	return groupPlace{part: true, first: first, total: int(acc[0])}, nil
}

// startOver computes the start of the subjects [lo, hi) with the sums
// carried by c, the Target's subjects lying at place, and, if kept is not
// nil, the subjects' contributions of StartKept, reporting whether it
// wrote them.
func (t *Target) startOver(pool *parallel.Pool, c parallel.Carrier, lo, hi int, place groupPlace, theta, prec, kept []float64) (bool, error) {
	ctx := pool.Context()
	n, _, g := t.Dims()
	nr, rm := t.at(n), t.rmax
	if len(theta) != nr+g || len(prec) != t.precLen() {
		panic("rvb: bad length in Start")
	}
	if t.nm != nil && c != nil {
		return false, errors.New("rvb: the start of a nested model cannot be computed over a group of processes")
	}
	if st := t.start; st != nil && st.lo == lo && st.hi == hi && (st.c == nil) == (c == nil) && st.part == place.part {
		// NewAtStart's, NewShareAtStart's or NewGroupAtStart's start,
		// computed once.
		copy(theta, st.theta)
		copy(prec, st.prec)
		t.start = nil
	} else if c == nil {
		if err := t.src.(interface {
			Start(*parallel.Pool, []float64, []float64) error
		}).Start(pool, theta, prec); err != nil {
			return false, err
		}
	} else if place.part {
		if err := t.m.StartGroup(pool, c, theta, prec); err != nil {
			return false, err
		}
	} else if err := t.m.StartShare(pool, c, lo, hi, theta, prec); err != nil {
		return false, err
	}
	thetaG := theta[nr:]
	ws := t.NewWorkspace().(*workspace)
	t.setGlobal(ws, thetaG)
	ps := t.precFactor(prec)
	si := make([]float64, rm*rm)
	rf := make([]float64, rm*rm)
	x := make([]float64, g*rm)
	tmp := make([]float64, rm*rm)
	// The global block becomes the Schur complement subject after subject:
	// the running block passes from process to process with a flag of
	// failure (acc[0]), so that all fail together.
	sg := ps.Global()
	acc := make([]float64, 1+len(sg))
	copy(acc[1:], sg)
	if c != nil {
		if err := c.Receive(acc); err != nil {
			return false, err
		}
		copy(sg, acc[1:])
	}
	var failed error
	for i := lo; i < hi && acc[0] == 0; i++ {
		if err := ctx.Err(); err != nil {
			// Passed on below, as a failure, so that the others do not
			// wait for this process's sum.
			failed = err
			break
		}
		r, o, sq := t.blk(i)
		si, rf, x, tmp := si[:r*r], rf[:r*r], x[:g*r], tmp[:r*r]
		small.UnpackSym(r, ps.Local(i), si)
		if !small.Chol(r, si, rf) {
			failed = t.subjectError(i, fmt.Errorf("start: local precision %v is not positive definite", si))
			break
		}
		// Schur complement: S_g -= (R^-1 S_gi')' (R^-1 S_gi').
		sgi := ps.Cross(i)
		for c := range g {
			xc := x[c*r : c*r+r]
			copy(xc, sgi[c*r:c*r+r])
			small.LowerSolve(r, rf, xc)
		}
		for c := range g {
			for e := 0; e <= c; e++ {
				s := 0.0
				for u := range r {
					s += x[c*r+u] * x[e*r+u]
				}
				sg[small.PackedIndex(c, e)] -= s
			}
		}
		bi := theta[o : o+r]
		if t.method == RVB2 {
			// Seed the warm start with the model's mode: a prediction
			// from it at the same theta_g is the mode itself.
			lo, hi := t.src.SubjectRows(i)
			t.forSubject(ws, r)
			copy(t.warm.mode[o:o+r], bi)
			clear(t.warm.lam[sq : sq+r*r])
			copy(t.warm.omega[sq:sq+r*r], ws.omega)
			clear(t.warm.hw[lo:hi])
		}
		if err := t.prepare(ws, i, thetaG, t.warm); err != nil {
			failed = err
			break
		}
		for u := range r {
			bi[u] -= ws.center[u]
		}
		small.LowerSolve(r, ws.l, bi)
		// L' S_i L.
		for u := range r {
			for v := range r {
				s := 0.0
				for k := v; k < r; k++ {
					s += si[u*r+k] * ws.l[k*r+v]
				}
				tmp[u*r+v] = s
			}
		}
		for u := range r {
			for v := 0; v <= u; v++ {
				s := 0.0
				for k := u; k < r; k++ {
					s += ws.l[k*r+u] * tmp[k*r+v]
				}
				ps.Local(i)[small.PackedIndex(u, v)] = s
			}
		}
		clear(sgi)
	}
	if failed != nil && c == nil {
		return false, failed
	}
	if c != nil {
		// acc[0] is 2 if a process stopped, else 1 if one failed.
		if failed != nil {
			flag := 1.0
			if ctx.Err() != nil {
				flag = 2
			}
			acc[0] = max(acc[0], flag)
		}
		copy(acc[1:], sg)
		if err := c.Pass(acc); err != nil {
			return false, err
		}
		copy(sg, acc[1:])
		switch {
		case failed != nil:
			return false, failed
		case acc[0] == 2:
			return false, fmt.Errorf("rvb: start: %w", parallel.ErrProcessStopped)
		case acc[0] != 0:
			return false, errors.New("rvb: start: the start failed in another process")
		}
	}
	return t.startGlobal(pool, c, lo, hi, place, theta, prec, kept)
}

// precLen returns the length of the precision of vi.Starter's Start:
// arrowhead.Len, or arrowhead.LenVar for a nested model's blocks.
func (t *Target) precLen() int {
	if t.sizes != nil {
		return arrowhead.LenVar(t.sizes, t.g)
	}
	return arrowhead.Len(t.n, t.r, t.g)
}

// precFactor lays out a precision of length precLen: its Local, Cross and
// Global give the blocks S_i, S_gi and S_g.
func (t *Target) precFactor(prec []float64) *arrowhead.Factor {
	if t.sizes != nil {
		return arrowhead.WrapVar(t.sizes, t.g, prec)
	}
	return arrowhead.Wrap(t.n, t.r, t.g, prec)
}

// startSampleStride is, from startWideSubjects subjects on, the stride of
// the chunks of subjects from which startGlobal's central differences
// take the curvature in omega: a tenth of the subjects, whose sum scaled
// to all has a relative error of about 1/sqrt(n/10), 0.3% at 10^6. Over
// all the subjects the differences were four passes over them on a
// random intercept (twelve on a random slope of three omegas), which gave
// the gradient too; the gradient now takes one pass over all of them with
// both draws of a pair (gradPair). A sample's gradient, scaled to all,
// would be off by about sqrt(10) posterior sds.
const startSampleStride = 10

// Newton steps on theta_g in startGlobal.
const (
	startNewton = 5    // at most this many steps
	startDecr   = 0.01 // stop when g'H^-1 g falls below this
	// From startWideSubjects a full step from a decrement below
	// startLastDecr is the last: the next decrement, a tenth of it or
	// less (0.034 then 3e-8 on the Bernoulli random intercept of
	// benchmarks/scaling at 10^6 subjects, 0.97, 0.079, 0.007 on its
	// Poisson random slope), would be below startDecr, and finding that
	// out cost two of the gradient's passes over all subjects, a third of
	// the start at 10^7. Fewer subjects keep the check, bit for bit: on
	// epilepsy's random slope (8 pairs of draws) it stepped again, and
	// without it the fit, 0.004 nats lower, had its importance ratios'
	// Pareto k at 0.713, not 0.698: past 0.7, so glmmfit corrected.
	startLastDecr = 0.1
	startMaxDecr  = 4    // longer steps are shortened to this (but see startWideSubjects)
	startDraws    = 2048 // antithetic pairs of local draws: at least this many subject draws
	startMaxPairs = 8
	startSeed     = 0x5eed
)

// startWideSubjects is the number of subjects from which startGlobal's
// Newton steps may be longer, their decrement up to startMaxDecr times
// n/startWideScale, and number up to startWideNewton. The model's start
// lies a distance from RVB's own theta_g that the data do not shrink, so
// in posterior sds it grows as the square root of n, and so does the
// region where the quadratic model holds: on the Poisson random slope of
// the scaling program (benchmarks/scaling, poisson-ris) the first
// decrement was 424 at 10^6 subjects, and five steps of decrement 4 left
// 169, which the fit's iterations then closed at 0.15 posterior sd of
// omega a window of 15 (3 sds from the start after 400 iterations, still
// climbing 3-6 nats a window). With steps of decrement 40 the
// decrements fell 424, 211, 80, 15, 0.97, 0.079, 0.007 and the fit's
// global means moved under 0.005 sd a window from there. Fewer subjects
// keep the old steps, bit for bit: at the same growth the first
// decrement is about 42 at 10^5 subjects, and five steps of 2 sds close
// 10 sds, a decrement of 100. From as many subjects the curvature comes
// from a sample of them too (startSampleStride). A variable, which the
// tests lower.
var startWideSubjects = 1_000_000

// The Newton steps from startWideSubjects subjects on.
const (
	startWideScale  = 100_000
	startWideNewton = 12
)

// startGlobal moves theta_g and its precision block from the model's start
// to RVB's own: the model's start is GVA-like, and the Schur complement of
// its precision gives the random-effect parameters omega a quarter to a
// half of the variance that RVB's reparametrisation finds (the locals no
// longer carry the dependence), a gap the iterations close only slowly.
// With the local blocks as Start has set them, the optimal Gaussian for
// theta_g alone has precision minus the expected Hessian of the log joint
// in theta_g and a mean where the expected gradient vanishes. startGlobal
// estimates the rows and columns of omega by central differences of the
// gradient (0.1 marginal sd apart) at antithetic pairs of local draws,
// keeps the Schur complement's block of beta, whose marginal the
// reparametrisation leaves nearly alone (differencing beta too cost 4 s on
// Diabetes' 46 coefficients), and takes Newton steps with that curvature.
// If an evaluation fails or the curvature is not positive definite, the
// model's start is kept (a failure of the fit itself then says why). A
// non-nil kept (one process alone) takes StartKept's contributions of
// the subjects, from the passes of the last gradient; startGlobal reports
// whether they are there.
func (t *Target) startGlobal(pool *parallel.Pool, c parallel.Carrier, lo, hi int, place groupPlace, theta, prec, kept []float64) (bool, error) {
	ctx := pool.Context()
	n, _, g := t.Dims()
	p := t.p
	thetaG := theta[t.at(n):]
	sg := t.precFactor(prec).Global()
	hess := make([]float64, g*g)
	lf := make([]float64, g*g)
	small.UnpackSym(g, sg, hess)
	if !small.Chol(g, hess, lf) {
		return false, nil
	}
	cov := make([]float64, g*g)
	linv := make([]float64, g*g)
	small.LowerInv(g, lf, linv)
	small.InvFromChol(g, linv, cov)

	all := place.total
	pairs := min(max((startDraws+all-1)/max(all, 1), 1), startMaxPairs)
	ev := newGradEval(pool, c, lo, hi, place.first/parallel.DefaultChunkSize, t, theta, prec)
	ev.kept, ev.total = kept, all
	grad := make([]float64, g)
	gp := make([]float64, g)
	gm := make([]float64, g)
	tg := make([]float64, g)
	w := 1 / float64(2*pairs)
	// From startWideSubjects on, the curvature comes from a sample of the
	// subjects and the gradient from all of them, apart (sampled).
	sampled := all >= startWideSubjects
	keepFD := w / float64(g-p)
	if sampled {
		ev.stride, keepFD = startSampleStride, 0
	}
	// The omega columns of minus the Hessian, and the gradient at thetaG.
	fd := make([]float64, g*g)
	for d := range 2 * pairs {
		for k := p; k < g; k++ {
			delta := 0.1 * math.Sqrt(cov[k*g+k])
			copy(tg, thetaG)
			tg[k] += delta
			// The subjects' contributions from one side alone, which
			// halves the cost of keeping them: shiftKept takes out
			// their mean offset, delta times the mean curvature.
			if err := ev.grad(tg, d, keepFD, gp); err != nil {
				return false, ctx.Err()
			}
			tg[k] -= 2 * delta
			if err := ev.grad(tg, d, 0, gm); err != nil {
				return false, ctx.Err()
			}
			for c := range g {
				fd[c*g+k] -= (gp[c] - gm[c]) / (2 * delta) * w
				grad[c] += (gp[c] + gm[c]) / 2 * w / float64(g-p)
			}
		}
	}
	for k := p; k < g; k++ {
		for c := range g {
			h := fd[c*g+k]
			if c >= p {
				h = 0.5 * (fd[c*g+k] + fd[k*g+c])
			}
			hess[c*g+k], hess[k*g+c] = h, h
		}
	}
	if !small.Chol(g, hess, lf) {
		return false, nil
	}
	saved := append([]float64(nil), thetaG...)
	step := make([]float64, g)
	maxNewton, maxDecr := startNewton, float64(startMaxDecr)
	if all >= startWideSubjects {
		maxNewton, maxDecr = startWideNewton, startMaxDecr*float64(all)/startWideScale
	}
	// Where the last gradient was taken, and whether the loop ended where
	// its quadratic model holds, so that the model's prediction of the
	// gradient at thetaG can be trusted (shiftKept): on a decrement below
	// startDecr (no step after the last gradient) or after a full step
	// from one below startLastDecr, not on running out of steps.
	last := append([]float64(nil), thetaG...)
	trusted := false
	ev.stride = 1
	for it := range maxNewton {
		if it > 0 || sampled {
			clear(grad)
			clear(kept)
			copy(last, thetaG)
			for q := range pairs {
				var err error
				if sampled {
					// Both draws of a pair in one pass.
					err = ev.gradPair(thetaG, q, 2*w, gp)
				} else {
					if err = ev.grad(thetaG, 2*q, w, gp); err == nil {
						for c := range g {
							grad[c] += gp[c] * w
						}
						err = ev.grad(thetaG, 2*q+1, w, gp)
					}
				}
				if err != nil {
					copy(thetaG, saved)
					return false, ctx.Err()
				}
				wq := w
				if sampled {
					wq = 2 * w
				}
				for c := range g {
					grad[c] += gp[c] * wq
				}
			}
		}
		copy(step, grad)
		small.SolveChol(g, lf, step)
		decr := 0.0
		for c := range g {
			decr += step[c] * grad[c]
		}
		if !(decr >= 0) || math.IsInf(decr, 0) {
			copy(thetaG, saved)
			return false, nil
		}
		if decr < startDecr {
			trusted = true
			break
		}
		scale := 1.0
		if decr > maxDecr {
			scale = math.Sqrt(maxDecr / decr)
		}
		for c := range g {
			thetaG[c] += scale * step[c]
		}
		if scale == 1 && decr < startLastDecr && all >= startWideSubjects {
			trusted = true
			break
		}
	}
	for c := range g {
		for e := 0; e <= c; e++ {
			sg[small.PackedIndex(c, e)] = hess[c*g+e]
		}
	}
	if kept == nil || !trusted {
		return false, nil
	}
	t.shiftKept(kept, hess, grad, last, thetaG)
	return true, nil
}

// shiftKept shifts every subject's contribution in kept, taken at or
// near last, where the gradient of the log joint was grad, by the same
// amount, so that their sum is the one the quadratic model of minus
// Hessian hess predicts at thetaG: grad - hess (thetaG - last), less the
// global log density's gradient there.
func (t *Target) shiftKept(kept, hess, grad, last, thetaG []float64) {
	g := len(thetaG)
	n := len(kept) / g
	have := make([]float64, g)
	for i := range n {
		for c, x := range kept[i*g : (i+1)*g] {
			have[c] += x
		}
	}
	want := make([]float64, g)
	t.Global(thetaG, want)
	for c := range g {
		s := grad[c] - want[c]
		for e := range g {
			s -= hess[c*g+e] * (thetaG[e] - last[e])
		}
		want[c] = (s - have[c]) / float64(n)
	}
	for i := range n {
		for c, x := range want {
			kept[i*g+c] += x
		}
	}
}

// gradEval evaluates the gradient in theta_g of the log joint summed over
// all subjects, the locals drawn from the start's blocks, chunk by chunk
// in parallel and reduced in chunk order.
type gradEval struct {
	t *Target
	// This process's chunks [k0, k1), the index among all the
	// processes' chunks of its Target's first, and the carrier of the
	// sums (nil for one process).
	k0, k1  int
	first   int
	c       parallel.Carrier
	acc     []float64
	theta   []float64         // the start: b~ means
	prec    *arrowhead.Factor // the start: local precision blocks
	pool    *parallel.Pool
	chunks  parallel.Chunking
	streams *parallel.Streams
	parts   [][]float64
	free    chan *evalScratch
	// kept, if not nil, takes each subject's contribution times the
	// weight grad is given (StartKept).
	kept []float64
	// grad sums the chunks whose index among all the processes' is a
	// multiple of stride (1: every chunk), scaled to all the subjects.
	stride int
	total  int // the subjects of all the processes
}

type evalScratch struct {
	ws     any
	bt, gl []float64
	si, rf []float64
	gi, gs []float64 // a subject's contribution at a draw, and their sum
	x      []float64 // a subject's draw
}

// newGradEval returns a gradEval that runs on pool.
func newGradEval(pool *parallel.Pool, carrier parallel.Carrier, lo, hi, first int, t *Target, theta, prec []float64) *gradEval {
	n, _, g := t.Dims()
	r := t.rmax
	size := parallel.DefaultChunkSize
	c := parallel.NewChunking(n, size)
	workers := pool.Workers()
	e := &gradEval{t: t, theta: theta, prec: t.precFactor(prec), pool: pool, chunks: c,
		k0: lo / size, k1: (hi + size - 1) / size, first: first, c: carrier, acc: make([]float64, 1+g), stride: 1,
		streams: parallel.NewStreams(startSeed, c.Len()), parts: make([][]float64, c.Len()), free: make(chan *evalScratch, workers)}
	for range workers {
		e.free <- &evalScratch{ws: t.NewWorkspace(), bt: make([]float64, size*r), gl: make([]float64, size*r),
			si: make([]float64, r*r), rf: make([]float64, r*r), gi: make([]float64, g), gs: make([]float64, g), x: make([]float64, r)}
	}
	for k := range e.parts {
		e.parts[k] = make([]float64, g)
	}
	return e
}

// grad writes into dst the gradient at thetaG with the locals of draw d:
// pair d/2, sign by d%2, and adds keep times each subject's contribution
// to kept, if there is one and keep is not 0.
func (e *gradEval) grad(thetaG []float64, d int, keep float64, dst []float64) error {
	return e.eval(thetaG, d, false, keep, dst)
}

// gradPair is grad at both draws of pair q, subject by subject, so that a
// cached Target (RVB1) prepares each subject once for the two: dst gets
// the mean of the two gradients, kept keep times each subject's mean.
func (e *gradEval) gradPair(thetaG []float64, q int, keep float64, dst []float64) error {
	return e.eval(thetaG, 2*q, true, keep, dst)
}

// eval is grad, or with both gradPair of pair d/2.
func (e *gradEval) eval(thetaG []float64, d int, both bool, keep float64, dst []float64) error {
	t := e.t
	sign := 1.0
	if d%2 == 1 {
		sign = -1
	}
	err := e.pool.Run(e.k1-e.k0, func(j int) error {
		k := e.k0 + j
		part := e.parts[k]
		clear(part)
		if (e.first+k)%e.stride != 0 {
			return nil
		}
		sc := <-e.free
		defer func() { e.free <- sc }()
		lo, hi := e.chunks.Bounds(k)
		rng := e.streams.AtIndex(uint64(d/2), k, uint64(e.first+k))
		base := t.at(lo)
		// The draws' offsets from the means, C_i z.
		for i := lo; i < hi; i++ {
			r, o, _ := t.blk(i)
			si, rf := sc.si[:r*r], sc.rf[:r*r]
			small.UnpackSym(r, e.prec.Local(i), si)
			if !small.Chol(r, si, rf) {
				return t.subjectError(i, fmt.Errorf("start: local precision is not positive definite"))
			}
			x := sc.bt[o-base : o-base+r]
			for u := range r {
				x[u] = sign * rng.NormFloat64()
			}
			small.LowerTSolve(r, rf, x)
		}
		if !both && (e.kept == nil || keep == 0) {
			for i := lo; i < hi; i++ {
				r, o, _ := t.blk(i)
				for u, m := range e.theta[o : o+r] {
					sc.bt[o-base+u] += m
				}
			}
			m := t.at(hi) - base
			_, err := t.Local(sc.ws, lo, hi, thetaG, sc.bt[:m], sc.gl[:m], part)
			return err
		}
		// Subject by subject, to keep each one's contribution or to
		// prepare it once for both draws.
		g := len(part)
		signs := 1
		if both {
			signs = 2
		}
		for i := lo; i < hi; i++ {
			r, o, _ := t.blk(i)
			y := sc.bt[o-base : o-base+r]
			clear(sc.gs)
			for sg := range signs {
				x := sc.x[:r]
				for u, m := range e.theta[o : o+r] {
					x[u] = m + float64(1-2*sg)*y[u]
				}
				gi := sc.gi
				clear(gi)
				if _, err := t.Local(sc.ws, i, i+1, thetaG, x, sc.gl[:r], gi); err != nil {
					return err
				}
				for c, v := range gi {
					part[c] += v
					sc.gs[c] += v
				}
			}
			if e.kept != nil && keep != 0 {
				for c, v := range sc.gs {
					e.kept[i*g+c] += keep * v / float64(signs)
				}
			}
		}
		return nil
	})
	if e.c == nil && err != nil {
		return err
	}
	// The parts in chunk order, passed through the processes with a flag
	// of failure (acc[0]) so that all fail together.
	acc := e.acc
	clear(acc)
	if e.c != nil {
		if err := e.c.Receive(acc); err != nil {
			return err
		}
	}
	sum := acc[1:]
	for _, p := range e.parts[e.k0:e.k1] {
		for c, v := range p {
			sum[c] += v
		}
	}
	if e.c != nil {
		if err != nil {
			acc[0] = 1
		}
		if err := e.c.Pass(acc); err != nil {
			return err
		}
		if acc[0] != 0 {
			if err == nil {
				err = errors.New("rvb: start: a subject's gradient failed in another process")
			}
			return err
		}
	}
	copy(dst, sum)
	scale := 1.0
	if both {
		scale = 0.5
	}
	if e.stride > 1 {
		// The sampled chunks' subjects among all.
		size := parallel.DefaultChunkSize
		m := 0
		for k := 0; k*size < e.total; k += e.stride {
			m += min(size, e.total-k*size)
		}
		scale *= float64(e.total) / float64(m)
	}
	if scale != 1 {
		for c := range dst {
			dst[c] *= scale
		}
	}
	t.Global(thetaG, dst)
	return nil
}
