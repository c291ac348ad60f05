// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/parallel"
)

// nestedRounds is the number of Laplace rounds of the start: the
// subjects' modes, a Newton step in beta, then the variance components
// from the modes and their curvatures (an EM step).
const nestedRounds = 8

// nestedGaussianRounds is the number of rounds for a Gaussian model, whose
// EM steps, exact, share the variance between the residual and the two
// factors slowly: on 2000 schools of 3 classes of 4 rows the start's
// bound was 3.5 nats below the fit's with 8 rounds (650 iterations to
// converge) and 0.35 with 30 (350 iterations); before sigma took part in
// the EM steps, with the effects' covariance, 262 nats (1300).
const nestedGaussianRounds = 30

// nestedGVARounds bounds the rounds that follow the Laplace ones for the
// other families: each subject's block becomes the Gaussian that is best
// given (beta, sds), expectations over its rows' linear predictors taken
// by Gauss-Hermite quadrature, and the sds take over-relaxed EM steps from
// those Gaussians. Laplace's modes shrink the effects of binary data, and
// its EM stopped at sd(school) 0.76 where the fit ends at 0.98 (10^4
// schools of 3 classes of 4 rows), which the fit then took 1800
// iterations to mend.
const nestedGVARounds = 60

// nestedTol ends the GVA rounds when no log sd moves by more.
const nestedTol = 1e-3

// nestedStart holds the start's state: the mean, the conditional
// variances vu of the effects and the covariances cu of each b level's
// with its a level's, and the quadrature in the GVA rounds.
type nestedStart struct {
	mod      *Nested
	pool     *parallel.Pool
	theta    []float64
	thetaG   []float64
	vu, cu   []float64
	ghx, ghw []float64 // nil in the Laplace rounds
}

// Start writes a starting mean into theta (laid out as package vi's
// variable-size targets: each subject's block, then theta_g) and into prec
// an approximate posterior precision in the storage of
// arrowhead.WrapVar(BlockSizes(), g): each subject's negative (expected)
// Hessian in its block and with beta, the prior's and expected information
// elsewhere. The subjects' passes run on pool when it is not nil, with
// sums taken in subject order, so that the start is the same for any
// number of workers.
func (mod *Nested) Start(pool *parallel.Pool, theta, prec []float64) error {
	p, n := mod.p, mod.n
	g := p + 2 + mod.nd
	nr := mod.boff[n]
	if len(theta) != nr+g {
		panic("glmm: Start: theta of the wrong length")
	}
	thetaG := theta[nr:]
	clear(theta)
	st := &nestedStart{mod: mod, pool: pool, theta: theta, thetaG: thetaG,
		vu: make([]float64, nr), cu: make([]float64, nr)}
	beta := thetaG[:p]
	// A GLM without random effects gives beta (and the Gaussian sd).
	for range 25 {
		if !st.betaStep(beta, false) {
			break
		}
	}
	sd := 0.5
	if mod.nd == 1 {
		var ss, sw float64
		for k := range mod.nobs {
			r := mod.y[k] - mod.eta(k, beta, nil, 0)
			ss += mod.w[k] * r * r
			sw += mod.w[k]
		}
		s := math.Sqrt(ss / math.Max(sw, 1))
		if mod.family == NegBinomial {
			thetaG[p+2] = 0
		} else {
			sd = 0.5 * math.Max(s, 1e-8)
			thetaG[p+2] = math.Log(0.7 * math.Max(s, 1e-8))
		}
	}
	thetaG[p], thetaG[p+1] = -math.Log(sd), -math.Log(sd)
	laplace, gva := nestedRounds, nestedGVARounds
	if mod.family == Gaussian {
		// EM for a Gaussian model is exact and cheap: it converges, and
		// the expectations add nothing to Laplace's.
		laplace, gva = nestedGaussianRounds, 0
	}
	for round := range laplace + gva {
		if round == laplace {
			st.ghx, st.ghw = hermiteNodes()
		}
		// Past the first GVA round, one Newton step a round suffices: it
		// starts near the solution, which moves little from round to round.
		steps := maxNewton
		if round > laplace {
			steps = 1
		}
		if err := st.modes(steps); err != nil {
			return err
		}
		st.betaStep(beta, true)
		if round == laplace+gva-1 {
			break
		}
		// EM: sigma^2 = mean of E[u^2] over the levels, over-relaxed in
		// the GVA rounds (see emRelax) on the log scale.
		var su, sv float64
		for i := range n {
			o := mod.boff[i]
			su += theta[o]*theta[o] + st.vu[o]
			for q := o + 1; q < mod.boff[i+1]; q++ {
				sv += theta[q]*theta[q] + st.vu[q]
			}
		}
		nb := float64(nr - n)
		na := -0.5 * math.Log(math.Max(su/float64(n), 1e-4))
		nbv := -0.5 * math.Log(math.Max(sv/math.Max(nb, 1), 1e-4))
		if st.ghx != nil {
			da, db := na-thetaG[p], nbv-thetaG[p+1]
			na, nbv = thetaG[p]+emRelax*da, thetaG[p+1]+emRelax*db
			if round > laplace && math.Max(math.Abs(da), math.Abs(db)) < nestedTol {
				thetaG[p], thetaG[p+1] = na, nbv
				break
			}
		}
		thetaG[p], thetaG[p+1] = na, nbv
		if mod.family == Gaussian {
			thetaG[p+2] = mod.residualLogSD(theta, beta, st.vu, st.cu)
		}
	}
	// The modes at the final beta and sds.
	if err := st.modes(maxNewton); err != nil {
		return err
	}
	st.startPrec(prec)
	for j, v := range theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("glmm: start: entry %d is %v", j, v)
		}
	}
	return nil
}

// hermiteNodes returns Gauss-Hermite nodes and weights for N(0, 1).
func hermiteNodes() (x, w []float64) {
	x, w = make([]float64, ghNodes), make([]float64, ghNodes)
	quad.Hermite{}.FixedLocations(x, w, math.Inf(-1), math.Inf(1))
	for k := range x {
		x[k] *= math.Sqrt2
		w[k] /= math.SqrtPi
	}
	return x, w
}

// rowDerivs returns the first two derivatives of stored row k's log
// likelihood at eta, or in the GVA rounds their expectations under
// eta + sd N(0, 1).
func (st *nestedStart) rowDerivs(k int, eta, sd, psi float64) (d1, d2 float64) {
	mod := st.mod
	if st.ghx == nil || sd == 0 {
		return mod.derivs(mod.y[k], mod.m[k], eta, psi)
	}
	for j, x := range st.ghx {
		a, b := mod.derivs(mod.y[k], mod.m[k], eta+sd*x, psi)
		d1 += st.ghw[j] * a
		d2 += st.ghw[j] * b
	}
	return d1, d2
}

// rowSD returns the sd of stored row k's linear predictor under subject
// i's current Gaussian, 0 in the Laplace rounds.
func (st *nestedStart) rowSD(i, k int) float64 {
	if st.ghx == nil {
		return 0
	}
	o := st.mod.boff[i]
	q := o + 1 + int(st.mod.inner[k])
	return math.Sqrt(math.Max(st.vu[o]+st.vu[q]+2*st.cu[q], 0))
}

// maxNewton bounds the Newton steps of a subject's mode.
const maxNewton = 50

// modes runs localMode for every subject, on the pool in chunks.
func (st *nestedStart) modes(steps int) error {
	n := st.mod.n
	chunks := parallel.NewChunking(n, StartChunk)
	run := func(k int) error {
		lo, hi := chunks.Bounds(k)
		for i := lo; i < hi; i++ {
			if err := st.localMode(i, steps); err != nil {
				return err
			}
		}
		return nil
	}
	if st.pool == nil {
		for k := range chunks.Len() {
			if err := run(k); err != nil {
				return err
			}
		}
		return nil
	}
	return st.pool.Run(chunks.Len(), run)
}

// eta returns the linear predictor of stored row k; b is its subject's
// block, or nil for none.
func (mod *Nested) eta(k int, beta, b []float64, _ int) float64 {
	e := mod.off[k]
	for c, xc := range mod.x[k*mod.p : (k+1)*mod.p] {
		e += xc * beta[c]
	}
	if b != nil {
		e += b[0] + b[1+mod.inner[k]]
	}
	return e
}

// betaStep takes one Newton step in beta with the random effects held
// (without effects, at zero) and reports whether it moved.
func (st *nestedStart) betaStep(beta []float64, effects bool) bool {
	mod, theta := st.mod, st.theta
	p := mod.p
	if p == 0 {
		return false
	}
	psi := mod.psi(theta[mod.boff[mod.n]:])
	h := mat.NewSymDense(p, nil)
	gr := mat.NewVecDense(p, nil)
	v := mod.priorSD * mod.priorSD
	for c := range p {
		h.SetSym(c, c, 1/v)
		gr.SetVec(c, -beta[c]/v)
	}
	for i := range mod.n {
		var b []float64
		if effects {
			b = theta[mod.boff[i]:mod.boff[i+1]]
		}
		for k := mod.start[i]; k < mod.start[i+1]; k++ {
			var sd float64
			if effects {
				sd = st.rowSD(i, k)
			}
			d1, d2 := st.rowDerivs(k, mod.eta(k, beta, b, 0), sd, psi)
			w := mod.w[k]
			xk := mod.x[k*p : (k+1)*p]
			for a, xa := range xk {
				gr.SetVec(a, gr.AtVec(a)+w*d1*xa)
				for c := 0; c <= a; c++ {
					h.SetSym(a, c, h.At(a, c)-w*d2*xa*xk[c])
				}
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(h) {
		return false
	}
	var step mat.VecDense
	if err := ch.SolveVecTo(&step, gr); err != nil {
		return false
	}
	var moved bool
	for c := range p {
		s := step.AtVec(c)
		// A damped step: a GLM's Newton steps from zero can overshoot.
		s = math.Max(-2, math.Min(2, s))
		beta[c] += s
		if math.Abs(s) > 1e-8*(1+math.Abs(beta[c])) {
			moved = true
		}
	}
	return moved
}

// curvature returns the negative (expected) Hessian of subject i's log
// density in its block at b: h0 the (u, u) entry, and for each b level q,
// hq[q] its diagonal entry and h0q[q] that with u; and the gradient in gr.
func (st *nestedStart) curvature(i int, b, thetaG, gr, hq, h0q []float64) (h0 float64) {
	mod := st.mod
	p := mod.p
	psi := mod.psi(thetaG)
	pa, pb := math.Exp(2*thetaG[p]), math.Exp(2*thetaG[p+1])
	clear(gr)
	clear(hq)
	clear(h0q)
	for k := mod.start[i]; k < mod.start[i+1]; k++ {
		d1, d2 := st.rowDerivs(k, mod.eta(k, thetaG[:p], b, 0), st.rowSD(i, k), psi)
		w := mod.w[k]
		q := mod.inner[k]
		gr[0] += w * d1
		gr[1+q] += w * d1
		h0 -= w * d2
		hq[q] -= w * d2
		h0q[q] -= w * d2
	}
	gr[0] -= pa * b[0]
	h0 += pa
	for q := range hq {
		gr[1+q] -= pb * b[1+q]
		hq[q] += pb
	}
	return h0
}

// localMode finds subject i's conditional mode (in the GVA rounds, the
// mean of its best Gaussian given its current covariance) by at most steps
// Newton steps, solving with its arrowhead Hessian in O(k), and writes the effects'
// conditional variances into vu and the covariances of each b level's
// with a's into cu.
func (st *nestedStart) localMode(i, steps int) error {
	mod, thetaG, vu, cu := st.mod, st.thetaG, st.vu, st.cu
	o, e := mod.boff[i], mod.boff[i+1]
	b := st.theta[o:e]
	k := e - o - 1
	gr := make([]float64, k+1)
	hq := make([]float64, k)
	h0q := make([]float64, k)
	var h0, s0 float64
	for it := 0; ; it++ {
		h0 = st.curvature(i, b, thetaG, gr, hq, h0q)
		// Schur complement of the b levels' diagonal.
		s0 = h0
		r0 := gr[0]
		for q := range hq {
			s0 -= h0q[q] * h0q[q] / hq[q]
			r0 -= h0q[q] * gr[1+q] / hq[q]
		}
		d0 := r0 / s0
		var big float64
		b[0] += d0
		big = math.Abs(d0)
		for q := range hq {
			d := (gr[1+q] - h0q[q]*d0) / hq[q]
			b[1+q] += d
			big = math.Max(big, math.Abs(d))
		}
		if !(big < 1e3) || math.IsNaN(big) {
			return fmt.Errorf("glmm: start: the mode of %s %s diverged", mod.outerName, label(mod.outerLevels, i))
		}
		if big < 1e-8 || it == steps-1 {
			break
		}
	}
	v0 := 1 / s0
	vu[o] = v0
	for q := range hq {
		c := h0q[q] / hq[q]
		vu[o+1+q] = 1/hq[q] + c*c*v0
		cu[o+1+q] = -c * v0
	}
	return nil
}

// startPrec writes the start's precision (see Start).
func (st *nestedStart) startPrec(prec []float64) {
	mod, theta := st.mod, st.theta
	p, n := mod.p, mod.n
	g := p + 2 + mod.nd
	nr := mod.boff[n]
	thetaG := theta[nr:]
	psi := mod.psi(thetaG)
	clear(prec)
	s := arrowhead.WrapSymVar(mod.sizes, g, prec)
	for i := range n {
		r := mod.sizes[i]
		b := theta[mod.boff[i]:mod.boff[i+1]]
		gr := make([]float64, r)
		hq := make([]float64, r-1)
		h0q := make([]float64, r-1)
		s.SetLocal(i, 0, 0, st.curvature(i, b, thetaG, gr, hq, h0q))
		for q := range hq {
			s.SetLocal(i, q+1, 0, h0q[q])
			s.SetLocal(i, q+1, q+1, hq[q])
		}
		// Rows of beta: the data's curvature between beta and the effects.
		for k := mod.start[i]; k < mod.start[i+1]; k++ {
			_, d2 := st.rowDerivs(k, mod.eta(k, thetaG[:p], b, 0), st.rowSD(i, k), psi)
			w := -mod.w[k] * d2
			q := 1 + int(mod.inner[k])
			xk := mod.x[k*p : (k+1)*p]
			for c, xc := range xk {
				s.AddCross(i, c, 0, w*xc)
				s.AddCross(i, c, q, w*xc)
				for c2 := 0; c2 <= c; c2++ {
					s.AddGlobal(c, c2, w*xc*xk[c2])
				}
			}
		}
	}
	v := 1 / (mod.priorSD * mod.priorSD)
	for a := range g {
		s.AddGlobal(a, a, v)
	}
	// Expected information of a log sd: 2 per level, or per row.
	s.AddGlobal(p, p, 2*float64(n))
	s.AddGlobal(p+1, p+1, 2*float64(nr-n))
	if mod.nd == 1 {
		s.AddGlobal(p+2, p+2, 2*float64(mod.nobs))
	}
}

// residualLogSD returns the EM update of a Gaussian model's log sigma:
// half the log of the weighted mean of E[(y - eta)^2] at the modes, the
// variance of the two effects (vu, cu) added.
func (mod *Nested) residualLogSD(theta, beta, vu, cu []float64) float64 {
	var ss, sw float64
	for i := range mod.n {
		o := mod.boff[i]
		b := theta[o:mod.boff[i+1]]
		for k := mod.start[i]; k < mod.start[i+1]; k++ {
			r := mod.y[k] - mod.eta(k, beta, b, 0)
			q := o + 1 + int(mod.inner[k])
			ss += mod.w[k] * (r*r + vu[o] + vu[q] + 2*cu[q])
			sw += mod.w[k]
		}
	}
	return 0.5 * math.Log(math.Max(ss/math.Max(sw, 1e-300), 1e-16))
}
