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

// MaxGridPoints is the most quadrature points per subject an Integrator
// uses: nodes^r may not exceed it, and beyond r = 9 only the Laplace
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
// approximation. Subjects are integrated in parallel chunks and summed in
// chunk order, so the result does not depend on the number of workers.
// Each subject's Newton iterations start from its last mode, so a sequence
// of calls is deterministic given the sequence of theta_g.
//
// An Integrator is not safe for concurrent use.
type Integrator struct {
	t       LocalTarget
	n, r, g int
	nodes   int
	grid    []float64 // points × r standard normal nodes
	logw    []float64 // log weight of each point plus |x|²/2
	mode    []float64 // n × r: the last modes, warm starts
	pool    *parallel.Pool
	chunks  parallel.Chunking
	parts   []float64
	free    chan *integScratch
}

type integScratch struct {
	ws               vi.Workspace
	b, grad, step, x []float64
	gG               []float64
	h, l             []float64
}

// NewIntegrator returns an Integrator of t with the given number of nodes
// per dimension (1 for the Laplace approximation; see ChooseNodes) that
// runs on up to workers goroutines (0 for GOMAXPROCS) until ctx ends. Its
// warm starts are the target's zero. Close releases its workers.
func NewIntegrator(ctx context.Context, t LocalTarget, nodes, workers int) (*Integrator, error) {
	if t == nil {
		return nil, errors.New("posterior: nil target")
	}
	n, r, g := t.Dims()
	if nodes < 1 || gridSize(nodes, r) > MaxGridPoints {
		return nil, fmt.Errorf("posterior: %d quadrature nodes per dimension in %d dimensions: want 1 to %d points", nodes, r, MaxGridPoints)
	}
	c := parallel.NewChunking(n, 0)
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = max(min(workers, c.Len()), 1)
	in := &Integrator{t: t, n: n, r: r, g: g, nodes: nodes, mode: make([]float64, n*r),
		pool: parallel.NewPool(ctx, workers), chunks: c, parts: make([]float64, c.Len()),
		free: make(chan *integScratch, workers)}
	in.grid, in.logw = hermiteGrid(nodes, r)
	for range workers {
		in.free <- &integScratch{ws: t.NewWorkspace(), b: make([]float64, r), grad: make([]float64, r),
			step: make([]float64, r), x: make([]float64, r), gG: make([]float64, g),
			h: make([]float64, r*r), l: make([]float64, r*r)}
	}
	return in, nil
}

// Nodes returns the number of quadrature nodes per dimension.
func (in *Integrator) Nodes() int { return in.nodes }

// Close releases the Integrator's workers.
func (in *Integrator) Close() { in.pool.Close() }

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
// dimension for the standard normal in r dimensions, and for each point
// the log of its weight plus |x|²/2 (the weight of the integrand divided
// by the standard normal density, up to (2 pi)^(r/2)).
func hermiteGrid(nodes, r int) (grid, logw []float64) {
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
	grid = make([]float64, points*r)
	logw = make([]float64, points)
	for p := range points {
		q := p
		for a := range r {
			k := q % nodes
			q /= nodes
			grid[p*r+a] = x1[k]
			logw[p] += math.Log(w1[k]) + 0.5*x1[k]*x1[k]
		}
	}
	return grid, logw
}

// LogLik returns log p(y | thetaG): the sum over subjects of the log of
// each subject's integral. It returns an error naming the subject if a
// mode cannot be found or a value is not finite, and the context's error
// if it ends.
func (in *Integrator) LogLik(thetaG []float64) (float64, error) {
	if len(thetaG) != in.g {
		panic("posterior: bad length of theta_g in LogLik")
	}
	err := in.pool.Run(in.chunks.Len(), func(k int) error {
		sc := <-in.free
		defer func() { in.free <- sc }()
		lo, hi := in.chunks.Bounds(k)
		var s float64
		for i := lo; i < hi; i++ {
			v, err := in.subject(sc, i, thetaG)
			if err != nil {
				return err
			}
			s += v
		}
		in.parts[k] = s
		return nil
	})
	if err != nil {
		return math.NaN(), err
	}
	var s float64
	for _, v := range in.parts {
		s += v
	}
	return s, nil
}

// Newton's method for a subject's mode.
const (
	modeIter   = 50    // at most this many steps
	modeTol    = 1e-10 // stop when the Newton decrement g'H^-1 g falls below this
	modeHalves = 40    // step halvings before a step is given up
)

// subject returns log ∫ p_i(theta_i | thetaG) dtheta_i.
func (in *Integrator) subject(sc *integScratch, i int, thetaG []float64) (float64, error) {
	r := in.r
	b := sc.b
	copy(b, in.mode[i*r:(i+1)*r])
	f, err := in.eval(sc, i, thetaG, b, true)
	if err != nil {
		// The last mode may be far off at this theta_g: start at zero.
		clear(b)
		if f, err = in.eval(sc, i, thetaG, b, true); err != nil {
			return 0, err
		}
	}
	converged := false
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
			converged = true
			break
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
				break
			}
			t /= 2
		}
		if !accepted {
			// No ascent along the Newton direction: b is the mode to
			// rounding.
			converged = true
			break
		}
	}
	if !converged {
		return 0, in.subjectError(i, "Newton's method did not find the conditional mode")
	}
	if !in.curvature(sc, i, thetaG, b) {
		return 0, in.subjectError(i, "the curvature at the conditional mode is not positive definite")
	}
	copy(in.mode[i*r:(i+1)*r], b)
	// ∫ exp(f(b)) db = |L|^-1 (2 pi)^(r/2) E[exp(f(b + L^-T z) + z'z/2)]
	// over z ~ N(0, I), with H = L L' the curvature at the mode.
	logNorm := 0.5 * float64(r) * math.Log(2*math.Pi)
	for a := range r {
		logNorm -= math.Log(sc.l[a*r+a])
	}
	if in.nodes == 1 {
		return f + logNorm, nil
	}
	var acc float64
	for p, lw := range in.logw {
		copy(sc.x, in.grid[p*r:(p+1)*r])
		small.LowerTSolve(r, sc.l, sc.x)
		for a := range r {
			sc.x[a] += b[a]
		}
		fx, err := in.eval(sc, i, thetaG, sc.x, false)
		if err != nil {
			fx = math.Inf(-1) // beyond where the density is representable
		}
		acc += math.Exp(lw + fx - f)
	}
	if !(acc > 0) || math.IsInf(acc, 0) {
		return 0, in.subjectError(i, "the quadrature sum is not positive and finite")
	}
	return f + logNorm + math.Log(acc), nil
}

// eval returns subject i's log density at b, and with grad its gradient in
// sc.grad.
func (in *Integrator) eval(sc *integScratch, i int, thetaG, b []float64, grad bool) (float64, error) {
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
	in.t.LocalHessian(sc.ws, i, thetaG, b, sc.h)
	for k := range sc.h {
		sc.h[k] = -sc.h[k]
	}
	return small.Chol(r, sc.h, sc.l)
}

func (in *Integrator) subjectError(i int, msg string) error {
	return fmt.Errorf("posterior: integrating subject %d: %s", i+1, msg)
}

// DefaultQuadratureTol is ChooseNodes' default tolerance, in nats of
// log p(y | theta_g) summed over subjects.
const DefaultQuadratureTol = 0.01

// ChooseNodes returns the fewest Gauss–Hermite nodes per dimension, from
// 1 (the Laplace approximation), 3, 7, 15, 31 (each 2k+1 for the last k),
// whose log p(y | thetaG) differs from the next's by at most tol nats
// (DefaultQuadratureTol if tol is 0), and that difference. Where even the
// largest grid allowed in r dimensions (MaxGridPoints) misses tol, it
// returns that grid and its difference from the one before; where only
// the Laplace approximation is allowed, its error is unknown and returned
// as NaN.
func ChooseNodes(ctx context.Context, t LocalTarget, thetaG []float64, tol float64, workers int) (nodes int, quadErr float64, err error) {
	if tol == 0 {
		tol = DefaultQuadratureTol
	}
	if !(tol > 0) {
		return 0, 0, fmt.Errorf("posterior: quadrature tolerance %v: want a positive number", tol)
	}
	_, r, _ := t.Dims()
	prev, prevLL := 0, 0.0
	for k := 1; gridSize(k, r) <= MaxGridPoints; k = 2*k + 1 {
		in, err := NewIntegrator(ctx, t, k, workers)
		if err != nil {
			return 0, 0, err
		}
		ll, err := in.LogLik(thetaG)
		in.Close()
		if err != nil {
			return 0, 0, err
		}
		if prev > 0 {
			quadErr = math.Abs(ll - prevLL)
			if quadErr <= tol {
				return prev, quadErr, nil
			}
		}
		prev, prevLL = k, ll
	}
	if prev == 1 {
		return 1, math.NaN(), nil
	}
	return prev, quadErr, nil
}
