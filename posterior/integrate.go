// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"

	"gonum.org/v1/gonum/integrate/quad"

	"github.com/sparsevi/sparsevi/internal/small"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/vi"
)

// LocalTarget is a target whose local blocks can be integrated out: a
// vi.Target that gives the Hessian of a subject's log density in its own
// block. glmm.Model is one.
type LocalTarget interface {
	vi.Target
	vi.LocalHessianer
}

// subjectDensity is implemented by targets (glmm.Model) that evaluate one
// subject's log density at many points of its local block, for one
// theta_g, faster than Local: PrepareSubject readies the workspace for
// subject i at thetaG and reports whether it can, and SubjectLogDensity
// then gives Local's value, its gradient and LocalHessian's Hessian.
type subjectDensity interface {
	PrepareSubject(ws any, i int, thetaG []float64) bool
	SubjectLogDensity(ws any, b, grad, hess []float64) (float64, error)
}

// subjectQuadrature is implemented by targets (glmm.Model) that sum a
// one-dimensional quadrature rule over a prepared subject faster than
// point by point: the sums over b_p = b0 + x_p/l of
// v_p = jac_p exp(logw_p + log p_i(b_p) - f), v_p b_p and v_p b_p², or
// false where they cannot.
type subjectQuadrature interface {
	SubjectQuadrature(ws any, b0, l float64, x, logw, jac []float64, f float64) (s0, s1, s2 float64, ok bool)
}

// subjectSkew is implemented by targets (glmm.Model) that give the third
// derivative of a prepared subject's log density in its one local
// variable, by which the quadrature bends its grid.
type subjectSkew interface {
	SubjectThirdDerivative(ws any, b []float64) float64
}

// MaxGridPoints is the most quadrature points per subject an Integrator
// uses: nodes^r may not exceed it, so that beyond r = 6 only the Laplace
// approximation (one node) is left.
const MaxGridPoints = 1024

// Integrator integrates every subject's local block out of a target given
// the global one,
//
//	log p(y | theta_g) = sum_i log ∫ p_i(theta_i | theta_g) dtheta_i,
//
// by adaptive Gauss–Hermite quadrature: Newton's method finds each
// subject's conditional mode, and a product grid of nodes per dimension is
// laid over the Gaussian of the curvature there. One node is the Laplace
// approximation. Adapt chooses each subject's nodes by an error check and
// the modes Newton starts from; every evaluation starts from those, so a
// value depends only on theta_g, whatever the order of the calls and the
// number of workers.
//
// An Integrator is not safe for concurrent use.
type Integrator struct {
	t       LocalTarget
	sd      subjectDensity    // t's, or nil
	sq      subjectQuadrature // t's where sd is not nil, or nil
	sk      subjectSkew       // t's where sd is not nil, or nil
	n, r, g int
	grids   []hermite
	level   []uint8   // each subject's grid
	start   []float64 // n × r: the modes Newton starts from
	// at is the theta_g of start, and slope (n × r × g, or nil) the
	// derivatives of each mode in theta_g there: Newton starts from
	// start + slope (theta_g - at), a step or so nearer the mode.
	at, slope []float64
	pool      *parallel.Pool
	chunks    parallel.Chunking
	parts     []float64
	free      chan *integScratch
	// each is the function eachSubject runs on every subject, and
	// runEach its chunk function, bound once; cur is LogLik's theta_g
	// and atCur its function, bound once: LogLik allocates nothing.
	each    func(sc *integScratch, i int) (float64, error)
	runEach func(int) error
	cur     []float64
	atCur   func(sc *integScratch, i int) (float64, error)
	// Over a vi.Group (setGroup): grp, total the subjects of all the
	// processes, acc carry's buffer; one and sumCur are LogLik's sum and
	// its local part, bound once.
	grp    vi.Group
	total  int
	acc    []float64
	one    []float64
	sumCur func(vals []float64) error
}

// hermite is a product grid of Gauss–Hermite points for the standard
// normal: points × r nodes, and for each point the log of its weight plus
// |x|²/2 (the weight of the integrand over the standard normal density,
// up to (2 pi)^(r/2)). For r = 1, bend and slope are sqrt(1+x²) - 1 and
// x/sqrt(1+x²) at each node, which bent grids take (bendGrid).
type hermite struct {
	nodes       int
	x           []float64
	logw        []float64
	bend, slope []float64
}

type integScratch struct {
	ws   vi.Workspace
	fast bool // subjectDensity serves the subject being integrated
	// fresh says that h holds the Hessian at b, which subjectDensity
	// gave with the gradient; hx is that of the last trial point.
	fresh            bool
	hx               []float64
	b, grad, step, x []float64
	gG, gG0          []float64
	h, l             []float64
	m, sec           []float64 // one component's moments in LocalMoments
	bx, jac          []float64 // a bent grid's nodes and Jacobian (r = 1)
}

// NewIntegrator returns an Integrator of t that runs on up to workers
// goroutines (0 for GOMAXPROCS) until ctx ends, with one node (the Laplace
// approximation) for every subject and Newton's method started at zero
// until Adapt or SetNodes says otherwise. Close releases its workers.
func NewIntegrator(ctx context.Context, t LocalTarget, workers int) (*Integrator, error) {
	if t == nil {
		return nil, errors.New("posterior: nil target")
	}
	n, r, g := t.Dims()
	c := parallel.NewChunking(n, integChunk)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(workers, 1)
	in := &Integrator{t: t, n: n, total: n, r: r, g: g, level: make([]uint8, n), start: make([]float64, n*r), one: make([]float64, 1),
		pool: parallel.NewPool(ctx, workers), chunks: c, parts: make([]float64, c.Len()),
		free: make(chan *integScratch, workers)}
	in.sd, _ = t.(subjectDensity)
	if in.sd != nil {
		in.sq, _ = t.(subjectQuadrature)
		in.sk, _ = t.(subjectSkew)
	}
	in.runEach = in.eachChunk
	in.atCur = func(sc *integScratch, i int) (float64, error) { return in.subject(sc, i, in.cur) }
	in.sumCur = in.logLikLocal
	for _, k := range nodeCounts {
		if gridSize(k, r) <= MaxGridPoints {
			in.grids = append(in.grids, hermiteGrid(k, r))
		}
	}
	for range workers {
		in.free <- &integScratch{ws: t.NewWorkspace(), b: make([]float64, r), grad: make([]float64, r),
			step: make([]float64, r), x: make([]float64, r), gG: make([]float64, g), gG0: make([]float64, g),
			h: make([]float64, r*r), hx: make([]float64, r*r), l: make([]float64, r*r), m: make([]float64, r), sec: make([]float64, r*r),
			bx: make([]float64, nodeCounts[len(nodeCounts)-1]), jac: make([]float64, nodeCounts[len(nodeCounts)-1])}
	}
	return in, nil
}

// integChunk is the number of subjects in each of an Integrator's chunks:
// a subject's integral costs tens of the fit's per-subject steps, so
// chunks smaller than the fit's keep every worker busy on a few hundred
// subjects (toenail's 294 made one chunk of 256 and one of 38).
const integChunk = 32

// Close releases the Integrator's workers.
func (in *Integrator) Close() { in.pool.Close() }

// nodeCounts are the numbers of nodes per dimension an Integrator uses,
// each about 1.4 times the last: Gauss–Hermite errors fall fast enough
// with the count that the next count's value serves as the truth in
// Adapt's check, and finer steps than doubling spare most subjects
// nodes they do not need.
var nodeCounts = []int{1, 3, 5, 7, 10, 14, 20, 28, 40, 56, 80}

// SetNodes gives every subject the grid of the given number of nodes per
// dimension, one of 1 (the Laplace approximation), 3, 5, 7, 10, 14, 20,
// 28, 40, 56 and 80 with nodes^r at most MaxGridPoints.
func (in *Integrator) SetNodes(nodes int) error {
	for l, h := range in.grids {
		if h.nodes == nodes {
			for i := range in.level {
				in.level[i] = uint8(l)
			}
			return nil
		}
	}
	return fmt.Errorf("posterior: %d quadrature nodes per dimension in %d dimensions: want one of %v with at most %d points", nodes, in.r, nodeCounts, MaxGridPoints)
}

// Nodes returns the fewest and the most nodes per dimension of any
// subject.
func (in *Integrator) Nodes() (fewest, most int) {
	lo, hi := len(in.grids), 0
	for _, l := range in.level {
		lo, hi = min(lo, int(l)), max(hi, int(l))
	}
	return in.grids[lo].nodes, in.grids[hi].nodes
}

// Adapt makes the conditional modes at thetaG the points Newton's method
// starts from and gives each subject the fewest nodes, of 3, 5, 7, 10,
// ... (nodeCounts), whose integral at thetaG changes by at most tol/n at
// the next count, tol in nats (DefaultQuadratureTol if 0). It returns the
// sum of those changes over subjects, the estimated error of
// log p(y | thetaG); where a subject reaches the largest grid allowed
// (MaxGridPoints) without meeting its tolerance, the sum counts its last
// change, and where only three nodes are allowed (r of 5 and 6), it is
// NaN.
func (in *Integrator) Adapt(thetaG []float64, tol float64) (quadErr float64, err error) {
	if tol == 0 {
		tol = DefaultQuadratureTol
	}
	if !(tol > 0) || len(thetaG) != in.g {
		return 0, fmt.Errorf("posterior: quadrature tolerance %v: want a positive number", tol)
	}
	in.setSlopes(thetaG)
	if len(in.grids) == 1 {
		return math.NaN(), in.carry(nil, func([]float64) error {
			return in.eachSubject(func(sc *integScratch, i int) (float64, error) {
				_, err := in.mode(sc, i, thetaG)
				if err == nil {
					copy(in.start[i*in.r:(i+1)*in.r], sc.b)
					in.slopeAt(sc, i, thetaG)
				}
				return 0, err
			})
		})
	}
	// The tolerance per subject is of all the processes' subjects.
	each := tol / float64(max(in.total, 1))
	adapt := func(sc *integScratch, i int) (float64, error) {
		f, err := in.mode(sc, i, thetaG)
		if err != nil {
			return 0, err
		}
		copy(in.start[i*in.r:(i+1)*in.r], sc.b)
		// The Laplace approximation is never chosen where a grid is
		// allowed: it can agree with three nodes by chance.
		prev, err := in.quadrature(sc, i, thetaG, f, 1, nil, nil)
		if err != nil {
			return 0, err
		}
		change := math.NaN() // with only three nodes allowed
		for l := 2; l < len(in.grids); l++ {
			v, err := in.quadrature(sc, i, thetaG, f, l, nil, nil)
			if err != nil {
				return 0, err
			}
			change = math.Abs(v - prev)
			in.level[i] = uint8(l - 1)
			if change <= each {
				return change, nil
			}
			prev = v
		}
		in.level[i] = uint8(len(in.grids) - 1)
		return change, nil
	}
	adaptSlope := func(sc *integScratch, i int) (float64, error) {
		change, err := adapt(sc, i)
		if err == nil {
			// After the grids: Local may replace the theta_g that
			// PrepareSubject left in sc.ws.
			in.slopeAt(sc, i, thetaG)
		}
		return change, err
	}
	sum := []float64{0}
	err = in.carry(sum, func(sum []float64) error { return in.sumEach(adaptSlope, sum) })
	if err != nil {
		return 0, err
	}
	return sum[0], nil
}

// eachSubject runs fn on every subject in parallel chunks, the subjects
// of a chunk in order, and leaves the sums of its values per chunk in
// in.parts.
func (in *Integrator) eachSubject(fn func(sc *integScratch, i int) (float64, error)) error {
	in.each = fn
	defer func() { in.each = nil }()
	return in.pool.Run(in.chunks.Len(), in.runEach)
}

// eachChunk runs in.each on chunk k's subjects (eachSubject's chunk
// function).
func (in *Integrator) eachChunk(k int) error {
	sc := <-in.free
	defer func() { in.free <- sc }()
	lo, hi := in.chunks.Bounds(k)
	var s float64
	for i := lo; i < hi; i++ {
		v, err := in.each(sc, i)
		if err != nil {
			return err
		}
		s += v
	}
	in.parts[k] = s
	return nil
}

// gridSize returns nodes^r, or MaxGridPoints+1 if it is larger.
func gridSize(nodes, r int) int {
	s := 1
	for range r {
		s *= nodes
		if s > MaxGridPoints {
			return MaxGridPoints + 1
		}
	}
	return s
}

// hermiteGrid returns the product grid of nodes Gauss–Hermite points per
// dimension for the standard normal in r dimensions.
func hermiteGrid(nodes, r int) hermite {
	x1, w1 := make([]float64, nodes), make([]float64, nodes)
	if nodes == 1 {
		x1[0], w1[0] = 0, 1
	} else {
		quad.Hermite{}.FixedLocations(x1, w1, math.Inf(-1), math.Inf(1))
		for k := range x1 {
			x1[k] *= math.Sqrt2
			w1[k] /= math.SqrtPi
		}
	}
	points := gridSize(nodes, r)
	h := hermite{nodes: nodes, x: make([]float64, points*r), logw: make([]float64, points)}
	if r == 1 {
		h.bend, h.slope = make([]float64, nodes), make([]float64, nodes)
		for k, x := range x1 {
			s := math.Sqrt(1 + x*x)
			h.bend[k], h.slope[k] = s-1, x/s
		}
	}
	for p := range points {
		q := p
		for a := range r {
			k := q % nodes
			q /= nodes
			h.x[p*r+a] = x1[k]
			h.logw[p] += math.Log(w1[k]) + 0.5*x1[k]*x1[k]
		}
	}
	return h
}

// LogLik returns log p(y | thetaG): the sum over subjects of the log of
// each subject's integral, subjects in parallel chunks summed in order. It
// returns an error naming the subject if a mode cannot be found or a value
// is not finite, and the context's error if it ends.
func (in *Integrator) LogLik(thetaG []float64) (float64, error) {
	if len(thetaG) != in.g {
		panic("posterior: bad length of theta_g in LogLik")
	}
	in.cur = thetaG
	in.one[0] = 0
	err := in.carry(in.one, in.sumCur)
	in.cur = nil
	if err != nil {
		return math.NaN(), err
	}
	return in.one[0], nil
}

// logLikLocal adds this process's subjects' terms of log p(y | in.cur),
// chunk after chunk, to vals[0].
func (in *Integrator) logLikLocal(vals []float64) error {
	return in.sumEach(in.atCur, vals)
}

// sumEach runs fn on every subject (eachSubject) and adds its values,
// chunk after chunk, to vals[0].
func (in *Integrator) sumEach(fn func(sc *integScratch, i int) (float64, error), vals []float64) error {
	if err := in.eachSubject(fn); err != nil {
		return err
	}
	s := vals[0]
	for _, v := range in.parts {
		s += v
	}
	vals[0] = s
	return nil
}

// logLiks writes into dst log p(y | theta) for each of the len(dst) rows
// theta of thetas, the rows in parallel and the subjects of each in
// order; a row whose integral fails gets -Inf. It returns the context's
// error if it ends.
func (in *Integrator) logLiks(ctx context.Context, thetas, dst []float64) error {
	clear(dst)
	return in.carry(dst, func(dst []float64) error {
		return in.logLiksLocal(ctx, thetas, dst)
	})
}

// logLiksLocal adds to each of dst this process's subjects' terms of
// log p(y | theta), in order.
func (in *Integrator) logLiksLocal(ctx context.Context, thetas, dst []float64) error {
	return in.pool.Run(len(dst), func(d int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		sc := <-in.free
		defer func() { in.free <- sc }()
		th := thetas[d*in.g : (d+1)*in.g]
		s := dst[d]
		for i := range in.n {
			v, err := in.subject(sc, i, th)
			if err != nil {
				s = math.Inf(-1)
				break
			}
			s += v
		}
		dst[d] = s
		return nil
	})
}

// Newton's method for a subject's mode takes at most modeIter steps,
// halves a step at most modeHalves times before giving it up, and stops
// when the Newton decrement g'H^-1 g falls below modeTol: the mode is then
// off by 1e-4 of its sd, far below what the grid's error notices (1e-10
// took a tenth more evaluations on toenail).
const (
	modeIter   = 50
	modeTol    = 1e-8
	modeHalves = 40
)

// subject returns log ∫ p_i(theta_i | thetaG) dtheta_i on subject i's
// grid.
func (in *Integrator) subject(sc *integScratch, i int, thetaG []float64) (float64, error) {
	f, err := in.mode(sc, i, thetaG)
	if err != nil {
		return 0, err
	}
	return in.quadrature(sc, i, thetaG, f, int(in.level[i]), nil, nil)
}

// mode leaves subject i's conditional mode at thetaG in sc.b and the
// Cholesky factor of minus the Hessian there in sc.l, and returns the log
// density there.
func (in *Integrator) mode(sc *integScratch, i int, thetaG []float64) (float64, error) {
	r := in.r
	sc.fast = in.sd != nil && in.sd.PrepareSubject(sc.ws, i, thetaG)
	b := sc.b
	copy(b, in.start[i*r:(i+1)*r])
	if in.slope != nil {
		// Predicted to first order in theta_g.
		g := in.g
		for a := range r {
			d := in.slope[(i*r+a)*g : (i*r+a+1)*g]
			for k, v := range thetaG {
				b[a] += d[k] * (v - in.at[k])
			}
		}
	}
	f, err := in.eval(sc, i, thetaG, b, true)
	if err != nil {
		// The start may be far off at this theta_g: try zero.
		clear(b)
		if f, err = in.eval(sc, i, thetaG, b, true); err != nil {
			return 0, err
		}
	}
	sc.keepCurvature()
	for range modeIter {
		if !in.curvature(sc, i, thetaG, b) {
			return 0, in.subjectError(i, "the curvature at the conditional mode is not positive definite")
		}
		copy(sc.step, sc.grad)
		small.SolveChol(r, sc.l, sc.step)
		decr := 0.0
		for a := range r {
			decr += sc.step[a] * sc.grad[a]
		}
		if decr < modeTol {
			return f, nil
		}
		t := 1.0
		accepted := false
		for range modeHalves {
			for a := range r {
				sc.x[a] = b[a] + t*sc.step[a]
			}
			// The gradient comes with the trial point: steps are rarely
			// shortened, and a rejected point's is not used.
			fx, err := in.eval(sc, i, thetaG, sc.x, true)
			if err == nil && fx >= f {
				copy(b, sc.x)
				f = fx
				accepted = true
				sc.keepCurvature()
				break
			}
			t /= 2
		}
		if !accepted {
			// No ascent along the Newton direction: b is the mode to
			// rounding, and sc.l its curvature.
			return f, nil
		}
	}
	return 0, in.subjectError(i, "Newton's method did not find the conditional mode")
}

// maxSlopes bounds n·r·g, the values of the modes' slopes an Integrator
// keeps (64 MB); beyond it, and beyond maxSlopeG global variables (where
// each start would cost more than the step it saves), Newton starts from
// the modes at Adapt's theta_g.
const (
	maxSlopes  = 1 << 23
	maxSlopeG  = 64
	slopeDelta = 1e-4 // of the sd the curvature gives, for the differences
)

// setSlopes readies the slopes of the modes at thetaG, or leaves them nil
// where they would cost too much.
func (in *Integrator) setSlopes(thetaG []float64) {
	in.slope, in.at = nil, nil
	if in.g == 0 || in.g > maxSlopeG || in.n*in.r*in.g > maxSlopes {
		return
	}
	in.at = append([]float64(nil), thetaG...)
	in.slope = make([]float64, in.n*in.r*in.g)
}

// slopeAt sets subject i's slopes, the derivatives of its mode in theta_g
// at thetaG, from the mode and curvature that mode left in sc: minus the
// inverse Hessian in b times the cross derivatives, which differences of
// the gradient in theta_g give, one per local variable. A gradient that
// is not finite leaves the slopes zero.
func (in *Integrator) slopeAt(sc *integScratch, i int, thetaG []float64) {
	if in.slope == nil {
		return
	}
	r, g := in.r, in.g
	s := in.slope[i*r*g : (i+1)*r*g]
	clear(s)
	clear(sc.gG0)
	if _, err := in.t.Local(sc.ws, i, i+1, thetaG, sc.b, sc.grad, sc.gG0); err != nil {
		return
	}
	// sc.x is b moved along one axis; s holds the cross derivatives,
	// row a the gradient in theta_g's change along b_a.
	copy(sc.x, sc.b)
	for a := range r {
		d := slopeDelta / sc.l[a*r+a]
		sc.x[a] = sc.b[a] + d
		clear(sc.gG)
		_, err := in.t.Local(sc.ws, i, i+1, thetaG, sc.x, sc.grad, sc.gG)
		sc.x[a] = sc.b[a]
		if err != nil {
			clear(s)
			return
		}
		for k := range g {
			s[a*g+k] = (sc.gG[k] - sc.gG0[k]) / d
		}
	}
	// Solve (L L') slope = cross, column by column.
	col := sc.step
	for k := range g {
		for a := range r {
			col[a] = s[a*g+k]
		}
		small.SolveChol(r, sc.l, col)
		for a := range r {
			s[a*g+k] = col[a]
		}
	}
	for _, v := range s {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			clear(s)
			return
		}
	}
}

// keepCurvature makes the Hessian that subjectDensity gave with the
// gradient at the point just kept the curvature there, for the next
// Newton step; other targets compute it afresh.
func (sc *integScratch) keepCurvature() {
	sc.fresh = sc.fast
	if sc.fast {
		copy(sc.h, sc.hx)
	}
}

// quadrature returns log ∫ p_i on grid level about the mode that mode left
// in sc, where the log density is f. Unless mean is nil, it also writes
// the mean of theta_i under p_i normalised into mean and its second
// moment E[theta_i theta_i'] (r×r) into second (for one node, the mode
// and the inverse curvature).
func (in *Integrator) quadrature(sc *integScratch, i int, thetaG []float64, f float64, level int, mean, second []float64) (float64, error) {
	r := in.r
	// ∫ exp(f(b)) db = |L|^-1 (2 pi)^(r/2) E[exp(f(b + L^-T z) + z'z/2)]
	// over z ~ N(0, I), with H = L L' the curvature at the mode.
	logNorm := 0.5 * float64(r) * math.Log(2*math.Pi)
	for a := range r {
		logNorm -= math.Log(sc.l[a*r+a])
	}
	h := in.grids[level]
	if r == 1 && h.nodes > 1 && sc.fast {
		// One dimension: the loop below without its copies and calls,
		// and where the target has it, without a log per point.
		l0, b0 := sc.l[0], sc.b[0]
		nodes, jac := h.x, []float64(nil)
		if in.sk != nil {
			nodes, jac = in.bendGrid(sc, h, in.sk.SubjectThirdDerivative(sc.ws, sc.b)/(l0*l0*l0))
		}
		var acc, m, s float64
		ok := false
		if in.sq != nil {
			acc, m, s, ok = in.sq.SubjectQuadrature(sc.ws, b0, l0, nodes, h.logw, jac, f)
		}
		x := sc.x[:1]
		for p := 0; !ok && p < len(h.logw); p++ {
			x[0] = nodes[p]/l0 + b0
			fx, err := in.sd.SubjectLogDensity(sc.ws, x, nil, nil)
			if err != nil {
				fx = math.Inf(-1)
			}
			w := math.Exp(h.logw[p] + fx - f)
			if jac != nil {
				w *= jac[p]
			}
			acc += w
			if w > 0 {
				m += w * x[0]
				s += w * x[0] * x[0]
			}
		}
		if !(acc > 0) || math.IsInf(acc, 0) {
			return 0, in.subjectError(i, "the quadrature sum is not positive and finite")
		}
		if mean != nil {
			mean[0], second[0] = m/acc, s/acc
		}
		return f + logNorm + math.Log(acc), nil
	}
	if h.nodes == 1 {
		if mean != nil {
			copy(mean, sc.b)
			linv := sc.h // the Hessian is no longer needed
			small.LowerInv(r, sc.l, linv)
			small.InvFromChol(r, linv, second)
			for a := range r {
				for c := range r {
					second[a*r+c] += sc.b[a] * sc.b[c]
				}
			}
		}
		return f + logNorm, nil
	}
	if mean != nil {
		clear(mean)
		clear(second)
	}
	var acc float64
	for p, lw := range h.logw {
		copy(sc.x, h.x[p*r:(p+1)*r])
		small.LowerTSolve(r, sc.l, sc.x)
		for a := range r {
			sc.x[a] += sc.b[a]
		}
		fx, err := in.eval(sc, i, thetaG, sc.x, false)
		if err != nil {
			fx = math.Inf(-1) // beyond where the density is representable
		}
		w := math.Exp(lw + fx - f)
		acc += w
		if mean != nil && w > 0 {
			for a := range r {
				mean[a] += w * sc.x[a]
				for c := range r {
					second[a*r+c] += w * sc.x[a] * sc.x[c]
				}
			}
		}
	}
	if !(acc > 0) || math.IsInf(acc, 0) {
		return 0, in.subjectError(i, "the quadrature sum is not positive and finite")
	}
	if mean != nil {
		for a := range mean {
			mean[a] /= acc
		}
		for k := range second {
			second[k] /= acc
		}
	}
	return f + logNorm + math.Log(acc), nil
}

// A skewed subject's density has one tail heavier than the Gaussian of
// its curvature: Gauss–Hermite's nodes then need many more points (a
// Bernoulli subject with every response 0, under a random-intercept sd of
// 4, took 28 to 40 nodes to 3e-5 nats). A bent grid takes the nodes
// through the smooth, increasing map x -> x + a (sqrt(1+x²) - 1), whose
// slope runs from 1 - a on the left to 1 + a on the right, with a a
// quarter of the skewness f”'/f”^(3/2) at the mode (at most maxBend in
// size), and weighs each by the map's slope: the same subjects took 14 to
// 20 nodes.
const (
	bendShare = 0.25
	maxBend   = 0.6
)

// bendGrid returns the one-dimensional grid h's nodes bent by the
// skewness kappa, and the map's slope at each, in sc's storage; for a
// skewness of zero, h's own nodes and nil.
func (in *Integrator) bendGrid(sc *integScratch, h hermite, kappa float64) (x, jac []float64) {
	a := max(-maxBend, min(maxBend, bendShare*kappa))
	if a == 0 || math.IsNaN(a) {
		return h.x, nil
	}
	x, jac = sc.bx[:h.nodes], sc.jac[:h.nodes]
	for p, xp := range h.x {
		x[p] = xp + a*h.bend[p]
		jac[p] = 1 + a*h.slope[p]
	}
	return x, jac
}

// LocalMoments returns each subject's posterior mean (n×r) and
// covariance (n×r×r, row-major blocks) of its local block under the
// mixture sum_s w_s p(theta_i | theta_s, y) over the rows theta_s of
// thetas (the weights sum to 1), each component's moments by the
// subject's quadrature: the subjects in parallel chunks, the draws of
// each in order, so the result does not depend on the number of workers.
func (in *Integrator) LocalMoments(thetas, w []float64) (mean, cov []float64, err error) {
	n, r, g := in.n, in.r, in.g
	if len(thetas) != len(w)*g {
		panic("posterior: bad length of thetas in LocalMoments")
	}
	mean = make([]float64, n*r)
	cov = make([]float64, n*r*r)
	moments := func(sc *integScratch, i int) (float64, error) {
		mi, ci := mean[i*r:(i+1)*r], cov[i*r*r:(i+1)*r*r]
		for s, ws := range w {
			if ws == 0 {
				continue
			}
			th := thetas[s*g : (s+1)*g]
			if err := in.moments(sc, i, th); err != nil {
				return 0, err
			}
			for a := range r {
				mi[a] += ws * sc.m[a]
			}
			for c := range ci {
				ci[c] += ws * sc.sec[c]
			}
		}
		for a := range r {
			for c := range r {
				ci[a*r+c] -= mi[a] * mi[c]
			}
		}
		return 0, nil
	}
	// No sums, but every process fails together.
	err = in.carry(nil, func([]float64) error { return in.eachSubject(moments) })
	if err != nil {
		return nil, nil, err
	}
	return mean, cov, nil
}

// moments leaves in sc.m and sc.sec the mean and second moment of subject
// i's local block under p_i(theta_i | thetaG), normalised, by the
// subject's quadrature.
func (in *Integrator) moments(sc *integScratch, i int, thetaG []float64) error {
	f, err := in.mode(sc, i, thetaG)
	if err != nil {
		return err
	}
	_, err = in.quadrature(sc, i, thetaG, f, int(in.level[i]), sc.m, sc.sec)
	return err
}

// eval returns subject i's log density at b, and with grad its gradient in
// sc.grad.
func (in *Integrator) eval(sc *integScratch, i int, thetaG, b []float64, grad bool) (float64, error) {
	if sc.fast {
		if !grad {
			return in.sd.SubjectLogDensity(sc.ws, b, nil, nil)
		}
		// The Hessian comes with the gradient, for the curvature at b
		// should the point be kept.
		return in.sd.SubjectLogDensity(sc.ws, b, sc.grad, sc.hx)
	}
	if !grad {
		return in.t.Local(sc.ws, i, i+1, thetaG, b, nil, nil)
	}
	clear(sc.gG)
	return in.t.Local(sc.ws, i, i+1, thetaG, b, sc.grad, sc.gG)
}

// curvature sets sc.l to the Cholesky factor of minus the Hessian at b and
// reports whether it is positive definite.
func (in *Integrator) curvature(sc *integScratch, i int, thetaG, b []float64) bool {
	r := in.r
	switch {
	case sc.fresh:
		sc.fresh = false // the Newton step moves b
	case sc.fast:
		// A value that is not finite leaves the Hessian to the check.
		_, _ = in.sd.SubjectLogDensity(sc.ws, b, nil, sc.h)
	default:
		in.t.LocalHessian(sc.ws, i, thetaG, b, sc.h)
	}
	for k := range sc.h {
		sc.h[k] = -sc.h[k]
	}
	return small.Chol(r, sc.h, sc.l)
}

// subjectError returns an error naming subject i: by the grouping
// factor's name and level where the target has them (glmm.Model does),
// else by its number from 1.
func (in *Integrator) subjectError(i int, msg string) error {
	if l, ok := in.t.(interface {
		GroupName() string
		GroupLevels() []string
	}); ok && i < len(l.GroupLevels()) {
		return fmt.Errorf("posterior: integrating the random effects of %s %q: %s", l.GroupName(), l.GroupLevels()[i], msg)
	}
	return fmt.Errorf("posterior: integrating subject %d: %s", i+1, msg)
}

// DefaultQuadratureTol is Adapt's default tolerance, in nats of
// log p(y | theta_g) summed over subjects.
const DefaultQuadratureTol = 0.01
