// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"errors"
	"math"
	"slices"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/internal/scratch"
	"github.com/sparsevi/sparsevi/internal/small"
	"github.com/sparsevi/sparsevi/parallel"
)

// startRounds is the number of EM updates of W in Start; each follows
// joint Newton steps in (b, beta).
const startRounds = 8

// Start writes a starting point for variational inference into theta
// (length n*r + G, laid out subject-major, then (beta, omega)) and an
// approximate posterior precision into prec, in the compressed arrowhead
// form of package arrowhead (per subject the packed lower triangle of S_i
// and the G×r block S_gi, then the packed lower triangle of S_g). Its
// passes over the subjects run on pool and stop when pool's context ends.
// It implements vi.Starter.
//
// Given W, it takes damped joint Newton steps in (b, beta) on the
// conditional log density, solving the block-arrowhead Newton system by
// its Schur complement in beta; subject-level covariates are confounded
// with random intercepts, so alternating between b and beta would crawl.
// Then it updates W by the Laplace approximation of the EM step,
// W W' = n S^-1 with S = sum_i (b_i b_i' + H_i^-1), H_i the negative
// Hessian of subject i's conditional log density. (The joint mode of
// (b, beta, omega) does not exist: the density grows without bound as the
// random-effect variance goes to zero; EM avoids it.) The precision is the
// negative Hessian in (b, beta) at the end, a Laplace approximation, with
// 2n (log-diagonal) or n (off-diagonal) for omega, the curvature of the
// complete-data log density of W at the EM update, and no correlation
// between omega and the rest.
//
// With SampleStartSubjects subjects or more (and no crossed factors) the
// rounds run over a sample of the subjects, and one round over all of
// them, with the Jacobian of a round measured on the sample, takes
// theta_g to the rounds' fixed point over all the subjects (see
// SampleStartSubjects); StartShare and StartGroup do the same over
// several processes, with the same sample and the same bits.
func (mod *Model) Start(pool *parallel.Pool, theta, prec []float64) error {
	n, _, _ := mod.Dims()
	return mod.StartShare(pool, nil, 0, n, theta, prec)
}

// StartChunk is the number of subjects in a chunk of Start's loops: a share
// of StartShare begins at a multiple of it.
const StartChunk = parallel.DefaultChunkSize

// StartShare is Start computed by several processes, each holding the whole
// model but computing the subjects [lo, hi) alone, with the sums over the
// subjects carried through the processes by c (a vi.Group; nil for one
// process, which must then hold every subject). It sets those subjects'
// entries of theta and prec, laid out as Start's for the whole model, and
// the global ones, bit for bit as Start would; the other subjects' are
// left zero. lo must be a multiple of StartChunk, and so must hi unless it
// is the number of subjects. Models with crossed factors are not shared.
// Every process must call it together. A process whose start fails (its
// pool's context ended, say) stops the others at their next sum: they
// return a *parallel.ProcessError, or parallel.ErrProcessStopped after a
// cancellation.
func (mod *Model) StartShare(pool *parallel.Pool, c parallel.Carrier, lo, hi int, theta, prec []float64) error {
	n, _, _ := mod.Dims()
	if lo < 0 || lo > hi || hi > n || lo%StartChunk != 0 || (hi%StartChunk != 0 && hi != n) || (c == nil && (lo != 0 || hi != n)) {
		panic("glmm: StartShare of subjects outside whole chunks")
	}
	return mod.startOver(pool, c, lo, hi, false, theta, prec)
}

// StartGroup is Start computed by the processes of a fit over a vi.Group,
// each holding a model of its own subjects alone: the processes'
// subjects, in rank order, are those of one whole model, coded alike (as
// formula.Options.Part builds them). The sums over all the subjects, their
// number and the constant columns the start looks for are carried through
// the processes by c. It sets theta and prec, laid out as Start's for this
// model, to the bits Start of the whole model gives these subjects and the
// global block. Every process but the last must hold a multiple of
// StartChunk subjects. Models with crossed factors are not shared. Every
// process must call it together; one whose start fails stops the others,
// as in StartShare.
func (mod *Model) StartGroup(pool *parallel.Pool, c parallel.Carrier, theta, prec []float64) error {
	n, _, _ := mod.Dims()
	return mod.startOver(pool, c, 0, n, c != nil, theta, prec)
}

// startOver computes the start of the subjects [lo, hi) with the sums
// carried by c; part says that the model holds its own subjects alone,
// so that the number of subjects and the constant columns are carried
// too.
func (mod *Model) startOver(pool *parallel.Pool, c parallel.Carrier, lo, hi int, part bool, theta, prec []float64) error {
	n, r, g := mod.Dims()
	if len(theta) != n*r+g || len(prec) != arrowhead.Len(n, r, g) {
		panic("glmm: bad length in Start")
	}
	if c == nil {
		return mod.startMaySample(pool, nil, lo, hi, part, theta, prec)
	}
	// A process whose start fails (a cancellation, a time limit) tells the
	// others at their next sum, where they stop too, rather than leaving
	// them waiting for it.
	relay := parallel.NewRelay(c)
	return relay.Close(mod.startMaySample(pool, relay, lo, hi, part, theta, prec))
}

// startMaySample is startOver with the sums carried by relay (nil for one
// process): from a sample of the subjects for many of them
// (startFromSample), else by startRelay's rounds over all of them.
func (mod *Model) startMaySample(pool *parallel.Pool, relay *parallel.Relay, lo, hi int, part bool, theta, prec []float64) error {
	st, err := mod.shareStarter(pool, relay, lo, hi, part)
	if err != nil {
		return err
	}
	if mod.cross == nil && st.total >= sampleStartAt {
		return st.startFromSample(startSampleSize(st.total), sampleStartSeed, theta, prec)
	}
	return st.rounds(theta, prec)
}

// startRelay is Start's rounds over all the subjects, with the sums
// carried by relay (nil for one process).
func (mod *Model) startRelay(pool *parallel.Pool, relay *parallel.Relay, lo, hi int, part bool, theta, prec []float64) error {
	st, err := mod.shareStarter(pool, relay, lo, hi, part)
	if err != nil {
		return err
	}
	return st.rounds(theta, prec)
}

// shareStarter returns a starter of the subjects [lo, hi) with the sums
// carried by relay, its workspace not yet allocated; with part, the
// number of all the processes' subjects is carried, and this process's
// first subject among them found.
func (mod *Model) shareStarter(pool *parallel.Pool, relay *parallel.Relay, lo, hi int, part bool) (*starter, error) {
	n := mod.NumSubjects()
	if relay != nil && mod.cross != nil {
		return nil, errors.New("glmm: a start shared among processes of a model with crossed factors")
	}
	st := &starter{mod: mod, pool: pool, chunks: parallel.NewChunking(n, StartChunk), relay: relay,
		lo: lo, hi: hi, k0: lo / StartChunk, k1: (hi + StartChunk - 1) / StartChunk, part: part, total: n}
	if part {
		total, err := st.carry(1, func(acc []float64) {
			st.first = int(acc[0])
			acc[0] += float64(n)
		})
		if err != nil {
			return nil, err
		}
		st.total = int(total[0])
	}
	return st, nil
}

// rounds is Start's rounds over all the starter's subjects.
func (st *starter) rounds(theta, prec []float64) error {
	mod := st.mod
	n, r, _ := mod.Dims()
	p := mod.p
	clear(theta)
	st.allocate(theta, prec)
	no := NumOmega(r)
	omega := theta[n*r+p : n*r+p+no]
	thetaG := theta[n*r:]
	if mod.cross != nil {
		st.cross = make([]float64, mod.nobs)
		st.crossH = make([][]float64, len(mod.cross))
		for c := range mod.cross {
			st.crossH[c] = make([]float64, len(mod.cross[c].levels))
		}
		st.crossedDataStart(thetaG)
	}
	if err := st.dataStart(); err != nil {
		return err
	}
	if mod.nd == 1 {
		if err := st.initPsi(); err != nil {
			return err
		}
	}
	for round := range startRounds {
		if err := st.round(round, omega, thetaG); err != nil {
			return err
		}
	}
	if err := st.globalEnd(theta); err != nil {
		return err
	}
	ps := st.prec
	v2 := mod.priorSD * mod.priorSD
	// The crossed effects, held as u_l in Start, become v_l = u_l/tau^a_l.
	// The curvature in v_l is tau^(2a) times the data's h in u_l plus the
	// prior's tau^(-2(1-a)); that in omega_u is the data's
	// sum_l h (a u_l)^2 (d eta/d omega_u = -a u_l), the priors'
	// sum_l 2 (1-a)^2 u_l^2/tau^2, and its own N(0, sigma0^2)'s.
	for c := range mod.cross {
		f := &mod.cross[c]
		tau := math.Exp(-thetaG[f.omega])
		curvW := 1 / v2
		for l, h := range st.crossH[c] {
			j := f.off + l
			a := f.weight[l]
			u := thetaG[j]
			ta := math.Pow(tau, a)
			thetaG[j] = u / ta
			ps.SetGlobal(j, j, h*ta*ta+math.Pow(tau, -2*(1-a)))
			curvW += h*a*a*u*u + 2*(1-a)*(1-a)*u*u/(tau*tau)
		}
		ps.SetGlobal(f.omega, f.omega, curvW)
	}
	if mod.cross != nil {
		st.crossedCoupling(thetaG)
	}
	return nil
}

// round is Start's round of the given number (of startRounds): joint
// Newton steps in (b, beta) given W, the dispersion's and the crossed
// effects' updates, and the EM update of omega but in the last round.
func (st *starter) round(round int, omega, thetaG []float64) error {
	mod := st.mod
	r := mod.r
	// The first rounds use the Laplace approximation; the last ones
	// take expectations under each subject's current Gaussian, which
	// makes the start a Gaussian variational approximation given
	// (beta, W) and removes the Laplace approximation's bias in W for
	// binary data.
	st.gva = round >= startRounds-gvaRounds
	st.setWWT(omega)
	// Laplace rounds converge the mode; in the dearer GVA rounds one
	// Newton step per EM update suffices, started near the solution.
	steps := 2
	if st.gva && round > startRounds-gvaRounds+1 {
		steps = 1
	}
	for range steps {
		if err := st.newton(); err != nil {
			return err
		}
	}
	if mod.nd == 1 {
		if err := st.updatePsi(); err != nil {
			return err
		}
	}
	if mod.cross != nil {
		if err := st.updateCrossed(thetaG); err != nil {
			return err
		}
	}
	// EM update of W from S = sum_i b_i b_i' + V_i, with V_i the
	// curvature of the last Newton pass: refreshing it at the new b_i
	// would cost a pass over the data for a change of second order.
	if round < startRounds-1 {
		sw, err := st.carry(r*r, func(sw []float64) {
			for i := st.lo; i < st.hi; i++ {
				bi := st.b[i*r : (i+1)*r]
				vi := st.v[i*r*r : (i+1)*r*r]
				for x := range r {
					for y := range r {
						sw[x*r+y] += bi[x]*bi[y] + vi[x*r+y]
					}
				}
			}
		})
		if err != nil {
			return err
		}
		mod.emOmega(st.total, sw, omega, emRelax)
	}
	return nil
}

// crossedCoupling adds to the start's precision the data's joint
// information about each crossed effect v_l and the other variables of
// its rows: the subject's b_i, beta and the effects of the other crossed
// factors, sum over the rows of -d2 times the product of the derivatives
// of eta (tau^a_l in v_l). Without it the levels start independent of
// everything else, and on insteval the start's bound lay 38 nats below the
// optimum, which the iterations, at the short step many levels need
// (vi.StepShared), took 7900 of them to climb.
func (st *starter) crossedCoupling(thetaG []float64) {
	mod := st.mod
	r := mod.r
	scale := make([]float64, mod.nscale)
	mod.crossedScales(thetaG, scale)
	ps := st.prec
	sc := st.newScratch()
	// The diagonal in v_l is taken again from the same rows' curvature, so
	// that the data's part of the precision is one sum of outer products.
	first := mod.cross[0].off
	diag := make([]float64, mod.ncross)
	at := make([]int, len(mod.cross)) // global index of each factor's level in the row
	ta := make([]float64, len(mod.cross))
	for i := range mod.n {
		s, eta := st.subjectEta(sc, i)
		v := st.vOf(i)
		cross := ps.Cross(i)
		for j := s; j < s+len(eta); j++ {
			_, _, d2 := sc.expectAll(mod.family, mod.yAt(j), mod.trials(j), eta[j-s], mod.etaSD(j, v), false)
			w := -mod.weight(j) * d2
			if w == 0 {
				continue
			}
			zj := mod.zRange(j, j+1)
			x := mod.rowX(j, sc.x)
			for c := range mod.cross {
				f := &mod.cross[c]
				l := int(f.idx[j])
				at[c], ta[c] = f.off+l, scale[f.scale+l]
			}
			for c, k := range at {
				wt := w * ta[c]
				diag[k-first] += wt * ta[c]
				for a, za := range zj {
					cross[k*r+a] += wt * za
				}
				for a, xa := range x {
					if xa != 0 {
						ps.AddGlobal(k, a, wt*xa)
					}
				}
				for e := range c {
					ps.AddGlobal(k, at[e], wt*ta[e])
				}
			}
		}
	}
	for c := range mod.cross {
		f := &mod.cross[c]
		tau := math.Exp(-thetaG[f.omega])
		for l, a := range f.weight {
			k := f.off + l
			ps.SetGlobal(k, k, diag[k-first]+math.Pow(tau, -2*(1-a)))
		}
	}
}

// subjectEta returns the first stored row of subject i and the linear
// predictors of its rows at the starter's beta, crossed effects and b_i,
// in sc.eta.
func (st *starter) subjectEta(sc *startScratch, i int) (int, []float64) {
	mod := st.mod
	r := mod.r
	s, e := mod.start[i], mod.start[i+1]
	eta := sc.eta[:e-s]
	mod.FixedEta(i, st.beta, eta)
	sc.addCross(s, eta)
	for j := s; j < e; j++ {
		for a, z := range mod.zRange(j, j+1) {
			eta[j-s] += z * st.b[i*r+a]
		}
	}
	return s, eta
}

// crossStep is the largest change of a crossed effect in one Newton step
// of updateCrossed.
const crossStep = 2.0

// updateCrossed takes, factor by factor, one Newton step in each crossed
// effect given everything else (the levels are independent then), and
// updates its precision by EM, exp(-2 omega_u) = mean of u_l^2 + 1/H_l.
func (st *starter) updateCrossed(thetaG []float64) error {
	mod := st.mod
	for c := range mod.cross {
		f := &mod.cross[c]
		nl := len(f.levels)
		part := scratch.Partials(st.chunks.Len(), 2*nl)
		err := st.each(func(k, lo, hi int) error {
			sc := st.chunkScratch(k)
			g, h := part[k][:nl], part[k][nl:]
			for i := lo; i < hi; i++ {
				s, eta := st.subjectEta(sc, i)
				v := st.vOf(i)
				for j := s; j < s+len(eta); j++ {
					_, d1, d2 := sc.expectAll(mod.family, mod.yAt(j), mod.trials(j), eta[j-s], mod.etaSD(j, v), false)
					l := f.idx[j]
					g[l] += mod.weight(j) * d1
					h[l] -= mod.weight(j) * d2
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		u := thetaG[f.off:f.omega]
		prec := math.Exp(2 * thetaG[f.omega])
		du := make([]float64, nl)
		var ss float64
		for l := range u {
			var gl, hl float64
			for k := range part {
				gl += part[k][l]
				hl += part[k][nl+l]
			}
			st.crossH[c][l] = hl // the data's curvature alone
			gl -= prec * u[l]
			hl += prec
			du[l] = max(-crossStep, min(crossStep, gl/hl))
			u[l] += du[l]
			ss += u[l]*u[l] + 1/hl
		}
		for j, l := range f.idx {
			st.cross[j] += du[l]
		}
		if v := ss / float64(nl); v > 0 && !math.IsInf(v, 0) {
			thetaG[f.omega] = -0.5 * math.Log(v)
		}
	}
	return nil
}

// psiStep is the largest change of psi in one Newton step of updatePsi
// (a factor e in the dispersion), and psiDelta the step of the finite
// difference that gives its curvature.
const (
	psiStep  = 1.0
	psiDelta = 1e-4
)

// initPsi sets psi at the data start: the log of the root mean square
// residual for the Gaussian, and then (for every family) a few Newton
// steps of updatePsi.
func (st *starter) initPsi() error {
	mod := st.mod
	if mod.family == Gaussian {
		eta := make([]float64, mod.maxNi)
		sums, err := st.carry(2, func(sums []float64) {
			ss, sw := sums[0], sums[1]
			for i := st.lo; i < st.hi; i++ {
				lo, hi := mod.start[i], mod.start[i+1]
				e := eta[:hi-lo]
				mod.FixedEta(i, st.beta, e)
				for j := lo; j < hi; j++ {
					v := e[j-lo]
					for a, z := range mod.zRange(j, j+1) {
						v += z * st.b[i*mod.r+a]
					}
					d := mod.yAt(j) - v
					ss += mod.weight(j) * d * d
					sw += mod.weight(j)
				}
			}
			sums[0], sums[1] = ss, sw
		})
		if err != nil {
			return err
		}
		ss, sw := sums[0], sums[1]
		if ss > 0 && sw > 0 {
			st.psi = 0.5 * math.Log(ss/sw)
		}
	}
	for range 3 {
		if err := st.updatePsi(); err != nil {
			return err
		}
	}
	return nil
}

// updatePsi takes one damped Newton step in psi on the expected log
// likelihood (with its prior) at the current (b, beta) and Gaussians,
// with the curvature from a finite difference of the derivative.
func (st *starter) updatePsi() error {
	mod := st.mod
	err := st.each(func(k, lo, hi int) error {
		sc := st.chunkScratch(k)
		var d0, d1 float64
		for i := lo; i < hi; i++ {
			s, eta := st.subjectEta(sc, i)
			v := st.vOf(i)
			for j := s; j < s+len(eta); j++ {
				et := eta[j-s]
				sd := mod.etaSD(j, v)
				d0 += mod.weight(j) * sc.expectPsi(mod.family, mod.yAt(j), mod.trials(j), et, sd, st.psi)
				d1 += mod.weight(j) * sc.expectPsi(mod.family, mod.yAt(j), mod.trials(j), et, sd, st.psi+psiDelta)
			}
		}
		st.partP[k][0], st.partP[k][1] = d0, d1
		return nil
	})
	if err != nil {
		return err
	}
	d, err := st.carry(2, func(d []float64) {
		for _, pp := range st.partP[st.k0:st.k1] {
			d[0] += pp[0]
			d[1] += pp[1]
		}
	})
	if err != nil {
		return err
	}
	d0, d1 := d[0], d[1]
	v2 := mod.priorSD * mod.priorSD
	g := d0 - st.psi/v2
	h := (d1-d0)/psiDelta - 1/v2
	st.psiCurv = -h
	step := math.Copysign(psiStep, g)
	if h < 0 && math.Abs(g/h) < psiStep {
		step = -g / h
	}
	if !math.IsNaN(step) {
		st.psi += step
	}
	return nil
}

// each runs fn on every chunk of subjects on the starter's pool.
func (st *starter) each(fn func(chunk, lo, hi int) error) error {
	return st.pool.Run(st.k1-st.k0, func(j int) error {
		k := st.k0 + j
		lo, hi := st.chunks.Bounds(k)
		return fn(k, lo, hi)
	})
}

// carry returns a sum of width values over the subjects: local adds this
// process's subjects' terms, in order, to the sums of the processes before
// it, which the relay passes on; every process gets the total.
func (st *starter) carry(width int, local func(acc []float64)) ([]float64, error) {
	acc := make([]float64, width)
	if st.relay == nil {
		local(acc)
		return acc, nil
	}
	if err := st.relay.Carry(acc, local); err != nil {
		return nil, err
	}
	return acc, nil
}

// starter holds Start's state.
type starter struct {
	mod    *Model
	pool   *parallel.Pool
	chunks parallel.Chunking
	// This process's subjects [lo, hi) and chunks [k0, k1); the relay
	// passes sums between the processes (nil for one).
	lo, hi, k0, k1 int
	relay          *parallel.Relay
	// part says that the model holds this process's subjects alone (see
	// StartGroup); total is the number of subjects of all the processes,
	// and first, with part, the index of this process's first among them.
	part  bool
	total int
	first int
	b     []float64 // n*r
	beta  []float64
	// psi is the log dispersion of a family with one, held fixed during
	// the Newton steps and updated with W; psiCurv is the negative second
	// derivative of the objective in it at the last update.
	psi, psiCurv float64
	partP        [][]float64 // per chunk: the derivatives in psi
	// cross is, per stored row, the sum of its crossed effects; crossH the
	// data's curvature in each crossed effect at the last update.
	cross  []float64
	crossH [][]float64
	wwt    []float64 // W W'
	// Per subject: a_i = H_i^-1 g_i and A_i = H_i^-1 H_ib (r×p), the
	// Newton step of b, and the covariance V_i of the Gaussian
	// approximation of b_i (zero for the Laplace approximation).
	a, ab, db, b0, v, vnew []float64
	// gva switches from the Laplace approximation to the Gaussian
	// variational one: expectations under N(b_i, V_i).
	gva bool
	// prec receives H_i and H_ib at every pass, in arrowhead form.
	prec arrowhead.Sym
	// fi is each subject's objective at the last pass, for the
	// per-subject fallback of newton.
	fi []float64
	// Per chunk: S, the Schur right-hand side, the Schur matrix, the
	// objective.
	partG, partI [][]float64
	partR        [][]float64 // the information in beta, before the Schur complement
	partF        []float64
	// partD is, per chunk, sum_i g_i' H_i^-1 g_i at the last pass (NaN
	// where a subject's curvature failed), for certified.
	partD []float64

	scratches chunkScratches // per chunk (chunkScratch)
}

// pass computes, per subject at the current (b, beta), the Newton pieces and
// the chunk partials of the Schur system in beta; with objective only, it
// just sums the conditional log density into partF.
func (st *starter) pass(objective bool) error {
	mod := st.mod
	r, p := mod.r, mod.p
	return st.each(func(k, lo, hi int) error {
		sc := st.chunkScratch(k)
		pg, pi, pr := st.partG[k], st.partI[k], st.partR[k]
		if !objective {
			// The objective pass must leave the Newton pieces alone.
			clear(pg)
			clear(pi)
			clear(pr)
		}
		var f, dec float64
		for i := lo; i < hi; i++ {
			bi := st.b[i*r : (i+1)*r]
			if objective {
				f += mod.condLogDens(sc, i, st.beta, st.wwt, bi, st.vOf(i))
				continue
			}
			vi := st.v[i*r*r : (i+1)*r*r]
			fi := mod.newtonPieces(sc, i, st.beta, st.wwt, bi, st.vOf(i), pg, pr)
			st.fi[i] = fi
			f += fi
			vn := st.vnew[i*r*r : (i+1)*r*r]
			st.setSubjectPrec(i, sc)
			// In place, without gonum's allocations: this runs for
			// every subject in every pass.
			if !cholInverse(r, sc.hess, sc.chol, vn) {
				// A subject whose curvature fails keeps b_i and V_i.
				clear(st.a[i*r : (i+1)*r])
				clear(st.ab[i*r*p : (i+1)*r*p])
				copy(vn, vi)
				dec = math.NaN()
				continue
			}
			ai := st.a[i*r : (i+1)*r]
			abi := st.ab[i*r*p : (i+1)*r*p]
			for x := range r {
				inv := vn[x*r : x*r+r]
				var s float64
				for y := range r {
					s += inv[y] * sc.grad[y]
				}
				ai[x] = s
				dec += s * sc.grad[x]
				for c := range p {
					var t float64
					for y := range r {
						t += inv[y] * sc.hib[y*p+c]
					}
					abi[x*p+c] = t
				}
			}
			// Schur complement: info -= H_bi A_i, rhs -= H_bi a_i.
			for c := range p {
				for y := range r {
					hb := sc.hib[y*p+c]
					if hb == 0 {
						continue
					}
					pg[c] -= hb * ai[y]
					for e := range p {
						pi[c*p+e] -= hb * abi[y*p+e]
					}
				}
			}
		}
		if !objective {
			for j, x := range pr {
				pi[j] += x
			}
			st.partD[k] = dec
		}
		st.partF[k] = f
		return nil
	})
}

// reduce returns the Schur matrix (with the prior) and right-hand side in
// beta, summed in chunk order.
func (st *starter) reduce() (info, rhs []float64, err error) {
	p := st.mod.p
	sums, err := st.carry(p*p+p, func(sums []float64) {
		info, rhs := sums[:p*p], sums[p*p:]
		for k := st.k0; k < st.k1; k++ {
			for j, x := range st.partI[k] {
				info[j] += x
			}
			for j, x := range st.partG[k] {
				rhs[j] += x
			}
		}
	})
	if err != nil {
		return nil, nil, err
	}
	info, rhs = sums[:p*p:p*p], sums[p*p:]
	v2 := st.mod.priorSD * st.mod.priorSD
	for a := range p {
		rhs[a] -= st.beta[a] / v2
		info[a*p+a] += 1 / v2
	}
	return info, rhs, nil
}

func (st *starter) objective() (float64, error) {
	if err := st.pass(true); err != nil {
		return 0, err
	}
	return st.sumF()
}

// vOf returns the covariance of subject i's Gaussian for the
// expectations, or nil in the Laplace rounds (values at the point).
func (st *starter) vOf(i int) []float64 {
	if !st.gva {
		return nil
	}
	r := st.mod.r
	return st.v[i*r*r : (i+1)*r*r]
}

// sumF returns the objective from the chunks' partial sums, with the prior
// on beta.
func (st *starter) sumF() (float64, error) {
	sum, err := st.carry(1, func(sum []float64) {
		for _, x := range st.partF[st.k0:st.k1] {
			sum[0] += x
		}
	})
	if err != nil {
		return 0, err
	}
	f := sum[0]
	v2 := st.mod.priorSD * st.mod.priorSD
	for _, b := range st.beta {
		f -= 0.5 * b * b / v2
	}
	return f, nil
}

// newton takes one damped joint Newton step in (b, beta), with the
// Gaussians' covariances V held fixed during the step and updated to the
// new curvature after it.
func (st *starter) newton() error {
	mod := st.mod
	r, p := mod.r, mod.p
	if err := st.pass(false); err != nil {
		return err
	}
	defer func() { st.v, st.vnew = st.vnew, st.v }()
	f0, err := st.sumF()
	if err != nil {
		return err
	}
	info, rhs, err := st.reduce()
	if err != nil {
		return err
	}
	dbeta := make([]float64, p)
	solved := p == 0 // the Newton step in beta, for certified
	if p > 0 {
		var ch mat.Cholesky
		if ch.Factorize(mat.NewSymDense(p, info)) {
			v := mat.NewVecDense(p, dbeta)
			if err := ch.SolveVecTo(v, mat.NewVecDense(p, rhs)); err != nil {
				clear(dbeta)
			} else {
				solved = true
			}
		}
	}
	for i := st.lo; i < st.hi; i++ {
		for x := range r {
			s := st.a[i*r+x]
			for c := range p {
				s -= st.ab[(i*r+x)*p+c] * dbeta[c]
			}
			st.db[i*r+x] = s
		}
	}
	copy(st.b0, st.b)
	beta0 := append([]float64(nil), st.beta...)
	if ok, err := st.certified(f0, rhs, dbeta, solved); err != nil {
		return err
	} else if ok {
		for j := range st.b {
			st.b[j] = st.b0[j] + st.db[j]
		}
		for c := range p {
			st.beta[c] = beta0[c] + dbeta[c]
		}
		return nil
	}
	for t := 1.0; t > 1e-4; t /= 2 {
		for j := range st.b {
			st.b[j] = st.b0[j] + t*st.db[j]
		}
		for c := range p {
			st.beta[c] = beta0[c] + t*dbeta[c]
		}
		f, err := st.objective()
		if err != nil {
			return err
		}
		if f >= f0 {
			return nil
		}
	}
	// One subject far from its mode can make every joint step fail; the
	// subjects' own damped Newton steps in b at fixed beta always make
	// progress.
	copy(st.b, st.b0)
	copy(st.beta, beta0)
	return st.subjectSteps()
}

// certifySteps lets newton skip the line search's pass where certified
// says it would take the full step; tests compare with the line search.
var certifySteps = true

// certified reports whether the full Newton step (st.db, dbeta) from
// the last pass is sure to pass newton's line search at t = 1, so that
// the pass over the data that evaluates it can be skipped: for the logit
// link, whose log likelihood's third derivative in eta is at most
// m/(6 sqrt 3) in size (and so its expectation at the quadrature's
// nodes), a Newton step of decrement lambda^2 = sum_i g_i' H_i^-1 g_i +
// rhs' dbeta raises the objective by at least lambda^2/2 - sum_j w_j
// m_j |d eta_j|^3/(36 sqrt 3). It asks for that with a margin of 10^-9
// of the objective for rounding, so that it takes t = 1 exactly where
// the line search would. A subject whose curvature failed, or a step in
// beta that was not solved, makes it false.
func (st *starter) certified(f0 float64, rhs, dbeta []float64, solved bool) (bool, error) {
	mod := st.mod
	if !certifySteps || !solved || mod.link.binary() || mod.family.HasDispersion() || mod.family == Poisson {
		return false, nil
	}
	r := mod.r
	part := st.partF // free: the line search would overwrite it
	err := st.each(func(k, lo, hi int) error {
		x := st.chunkScratch(k).x
		var s float64
		for i := lo; i < hi; i++ {
			for j := mod.start[i]; j < mod.start[i+1]; j++ {
				var de float64
				for c, xc := range mod.rowX(j, x) {
					de += xc * dbeta[c]
				}
				for a, z := range mod.zRange(j, j+1) {
					de += z * st.db[i*r+a]
				}
				de = math.Abs(de)
				s += mod.weight(j) * mod.trials(j) * de * de * de
			}
		}
		part[k] = s
		return nil
	})
	if err != nil {
		return false, err
	}
	sums, err := st.carry(2, func(acc []float64) {
		for k := st.k0; k < st.k1; k++ {
			acc[0] += st.partD[k]
			acc[1] += part[k]
		}
	})
	if err != nil {
		return false, err
	}
	var lam2 float64
	for c := range dbeta {
		lam2 += rhs[c] * dbeta[c]
	}
	lam2 += sums[0]
	return lam2/2-sums[1]/(36*math.Sqrt(3)) > 1e-9*math.Abs(f0), nil
}

// subjectSteps takes, per subject, a Newton step in b_i at fixed beta
// (st.a, from the last pass at st.b0), halved until the subject's
// objective does not decrease; a subject with no such step keeps b_i.
func (st *starter) subjectSteps() error {
	mod := st.mod
	r := mod.r
	return st.each(func(k, lo, hi int) error {
		sc := st.chunkScratch(k)
		for i := lo; i < hi; i++ {
			bi, b0 := st.b[i*r:(i+1)*r], st.b0[i*r:(i+1)*r]
			ai := st.a[i*r : (i+1)*r]
			if allZero(ai) {
				continue // its curvature failed
			}
			for t := 1.0; t > 0x1p-30; t /= 2 {
				for x := range r {
					bi[x] = b0[x] + t*ai[x]
				}
				if mod.condLogDens(sc, i, st.beta, st.wwt, bi, st.vOf(i)) >= st.fi[i] {
					break
				}
				copy(bi, b0)
			}
		}
		return nil
	})
}

func allZero(x []float64) bool {
	for _, v := range x {
		if v != 0 {
			return false
		}
	}
	return true
}

// dataStart sets the intercepts from the data, as GLM fitting does
// (log of the count plus 1/2 over the exposure, or the empirical logit),
// so that Newton starts near every subject's level: from beta = b = 0 a
// Poisson subject with counts of 10^6 takes steps no line search accepts.
// A constant column of X gets the mean of the subjects' levels, a
// constant column of Z each subject's deviation from it; without such
// columns beta and b stay 0.
func (st *starter) dataStart() error {
	mod := st.mod
	r := mod.r
	xbuf := make([]float64, mod.p)
	kx, cx, err := st.constColumn(mod.p, func(j int) []float64 { return mod.rowX(j, xbuf) })
	if err != nil {
		return err
	}
	kz, cz, err := st.constColumn(r, func(j int) []float64 { return mod.zRange(j, j+1) })
	if err != nil {
		return err
	}
	if kx < 0 && kz < 0 {
		return nil
	}
	// Each subject's level at beta = 0, NaN without information
	// (zero weights), in st.fi, free until the first pass.
	level := st.fi
	err = st.each(func(k, lo, hi int) error {
		sc := st.chunkScratch(k)
		zero := make([]float64, mod.p)
		for i := lo; i < hi; i++ {
			lo, hi := mod.start[i], mod.start[i+1]
			eta := sc.eta[:hi-lo]
			mod.FixedEta(i, zero, eta)
			sc.addCross(lo, eta)
			level[i] = mod.rowsLevel(lo, hi, nil, eta)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sums, err := st.carry(2, func(sums []float64) {
		mean, cnt := sums[0], sums[1]
		for _, l := range level[st.lo:st.hi] {
			if !math.IsNaN(l) {
				mean += l
				cnt++
			}
		}
		sums[0], sums[1] = mean, cnt
	})
	if err != nil {
		return err
	}
	mean, cnt := sums[0], sums[1]
	if cnt == 0 {
		return nil
	}
	mean /= cnt
	if kx >= 0 {
		st.beta[kx] = mean / cx
	} else {
		mean = 0
	}
	if kz >= 0 {
		for i := st.lo; i < st.hi; i++ {
			if l := level[i]; !math.IsNaN(l) {
				st.b[i*r+kz] = (l - mean) / cz
			}
		}
	}
	return nil
}

// rowsLevel returns the constant to add to the linear predictors eta of
// a set of stored rows that fits their data: for Poisson and the negative
// binomial log((sum w y + 1/2) / sum w exp(eta_j)), for the binomial the
// empirical logit less the weighted mean of eta, for the Gaussian the
// weighted mean of y - eta. The rows are lo..hi-1, or those listed in rows
// when it is not nil (eta then follows the list). It returns NaN for rows
// of zero total weight.
func (mod *Model) rowsLevel(lo, hi int, rows []int, eta []float64) float64 {
	at := func(k int) int {
		if rows != nil {
			return rows[k]
		}
		return lo + k
	}
	var sw, sy, sf float64
	emax := math.Inf(-1)
	for k, e := range eta {
		if mod.weight(at(k)) > 0 {
			emax = max(emax, e)
		}
	}
	for k, e := range eta {
		j := at(k)
		w := mod.weight(j)
		if w == 0 {
			continue
		}
		y := mod.yAt(j)
		sw += w
		sy += w * y
		switch mod.family {
		case Poisson, NegBinomial:
			sf += w * math.Exp(e-emax)
		case Gaussian:
			sf += w * (y - e)
		default:
			sf += w * (mod.trials(j) - y)
		}
	}
	if !(sw > 0) {
		return math.NaN()
	}
	switch mod.family {
	case Poisson, NegBinomial:
		return math.Log(sy+0.5) - math.Log(sf) - emax
	case Gaussian:
		return sf / sw
	}
	var se float64
	for k, e := range eta {
		se += mod.weight(at(k)) * e
	}
	if mod.link.binary() {
		return linkOf(mod.link, (sy+0.5)/(sy+sf+1)) - se/sw
	}
	return math.Log((sy+0.5)/(sf+0.5)) - se/sw
}

// crossedDataStart sets each crossed factor's effects, factor by factor,
// to its levels' data levels (rowsLevel) less their mean, given the
// factors before it, and its omega_u to their spread; the subjects' levels
// are then taken given them. Taking the crossed factors first keeps the
// subjects' effects, which Start's Newton steps move first, from
// absorbing variation that belongs to a factor they are nested in.
func (st *starter) crossedDataStart(thetaG []float64) {
	mod := st.mod
	// Coarse factors first: a factor that others are nested in takes the
	// variation at its own level before they do.
	order := make([]int, len(mod.cross))
	for c := range order {
		order[c] = c
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(mod.cross[a].levels) - len(mod.cross[b].levels) })
	for _, c := range order {
		f := &mod.cross[c]
		nl := len(f.levels)
		byLevel := make([][]int, nl)
		for j, l := range f.idx {
			byLevel[l] = append(byLevel[l], j)
		}
		u := thetaG[f.off:f.omega]
		var mean float64
		cnt := 0
		for l, rows := range byLevel {
			eta := make([]float64, len(rows))
			for k, j := range rows {
				eta[k] = mod.offset(j) + st.cross[j]
			}
			u[l] = mod.rowsLevel(0, 0, rows, eta)
			if !math.IsNaN(u[l]) {
				mean += u[l]
				cnt++
			}
		}
		if cnt == 0 {
			clear(u)
			continue
		}
		mean /= float64(cnt)
		var ss float64
		for l := range u {
			if math.IsNaN(u[l]) {
				u[l] = 0
			} else {
				u[l] -= mean
			}
			ss += u[l] * u[l]
		}
		for j, l := range f.idx {
			st.cross[j] += u[l]
		}
		if v := ss / float64(nl); v > 0 && !math.IsInf(v, 0) {
			thetaG[f.omega] = -0.5 * math.Log(v)
		}
	}
}

// constColumn returns the first of the k columns of a design, whose
// stored row j is row(j), that is constant and not zero over the rows of
// every process, and its value; -1 if there is none.
func (st *starter) constColumn(k int, row func(j int) []float64) (int, float64, error) {
	if k == 0 {
		return -1, 0, nil
	}
	cand := st.mod.constColumns(k, row)
	if st.part {
		// acc[0] counts the processes with rows so far; a column stays a
		// candidate where their values agree.
		acc, err := st.carry(1+k, func(acc []float64) {
			switch {
			case cand == nil:
			case acc[0] == 0:
				copy(acc[1:], cand)
				acc[0] = 1
			default:
				for c, v := range cand {
					if acc[1+c] != v {
						acc[1+c] = 0
					}
				}
				acc[0]++
			}
		})
		if err != nil {
			return -1, 0, err
		}
		cand = nil
		if acc[0] > 0 {
			cand = acc[1:]
		}
	}
	for c, v := range cand {
		if v != 0 {
			return c, v, nil
		}
	}
	return -1, 0, nil
}

// constColumns returns, for each of the k columns of a design whose
// stored row j is row(j), its value where it is constant over the model's
// rows and 0 where not; nil without rows.
func (mod *Model) constColumns(k int, row func(j int) []float64) []float64 {
	if mod.nobs == 0 {
		return nil
	}
	cand := append([]float64(nil), row(0)...)
	for j := 1; j < mod.nobs; j++ {
		left := false
		for c, v := range row(j) {
			if v != cand[c] {
				cand[c] = 0
			}
			left = left || cand[c] != 0
		}
		if !left {
			break
		}
	}
	return cand
}

// cholInverse factorises the symmetric r×r matrix h (row-major, lower
// triangle read) as L L' into l and writes h^-1 into inv; it returns false
// if h is not numerically positive definite.
func cholInverse(r int, h, l, inv []float64) bool {
	if !small.Chol(r, h, l) {
		return false
	}
	for c := range r {
		x := inv[c*r : c*r+r] // column c, as h^-1 is symmetric
		clear(x)
		x[c] = 1
		small.SolveChol(r, l, x)
	}
	return true
}

// startScratch is Start's per-chunk scratch space.
type startScratch struct {
	eta, d1, d2 []float64
	x           []float64
	grad, hess  []float64
	chol        []float64 // r×r Cholesky factor of hess
	hib         []float64
	ghx, ghw    []float64 // Gauss-Hermite nodes and weights for N(0, 1)
	psi         float64   // log dispersion, for the families with one
	link        Link
	cross       []float64 // per stored row, the crossed effects' sum; nil without
}

// emRelax over-relaxes the EM update of omega: EM for variance components
// converges linearly, slowly when the random effects are poorly determined,
// and a step beyond the EM point along its direction speeds it up. Below 2
// the relaxed iteration still converges where EM does; 1.8 makes up for
// the curvature V_i lagging one Newton step behind b_i.
const emRelax = 1.8

// gvaRounds is the number of final rounds of Start that use the Gaussian
// variational approximation; the earlier, cheaper, rounds use Laplace's.
const gvaRounds = 7

// ghNodes is the number of Gauss-Hermite nodes of the expectations over a
// linear predictor.
const ghNodes = 6

// llDerivs returns the log likelihood (with withLL, else 0) and its first
// two derivatives in eta, sharing one exp. The derivatives' bits do not
// depend on withLL; without it the logit's log1p, a third of Start's
// time, is skipped.
func llDerivs(f Family, link Link, y, m, eta, psi float64, withLL bool) (ll, d1, d2 float64) {
	if link.binary() {
		d1, d2, _ = LinkDerivs(link, y, m, eta)
		if withLL {
			ll = LinkLogLik(link, y, m, eta)
		}
		return ll, d1, d2
	}
	if f.HasDispersion() {
		d1, d2, _ = f.Derivs(y, m, eta, psi)
		if withLL {
			ll = f.LogLik(y, m, eta, psi)
		}
		return ll, d1, d2
	}
	if f == Poisson {
		mu := math.Exp(min(eta, MaxPoissonEta))
		if withLL {
			ll = y*eta - mu
		}
		return ll, y - mu, -mu
	}
	e := math.Exp(-math.Abs(eta))
	q := 1 / (1 + e)
	p, p1 := q, e*q
	if eta < 0 {
		p, p1 = p1, p
	}
	if withLL {
		ll = -(m*math.Log1p(e) + y*max(-eta, 0) + (m-y)*max(eta, 0))
	}
	return ll, y*p1 - (m-y)*p, -m * e * q * q
}

// expectAll returns the expectations of the log likelihood (with withLL,
// else 0) and of its first two derivatives under eta ~ N(mean, sd^2);
// with sd = 0 their values at mean.
func (sc *startScratch) expectAll(f Family, y, m, mean, sd float64, withLL bool) (ll, d1, d2 float64) {
	if sd == 0 {
		return llDerivs(f, sc.link, y, m, mean, sc.psi, withLL)
	}
	for k, x := range sc.ghx {
		a, b, c := llDerivs(f, sc.link, y, m, mean+sd*x, sc.psi, withLL)
		w := sc.ghw[k]
		ll += w * a
		d1 += w * b
		d2 += w * c
	}
	return ll, d1, d2
}

// expectLL returns the expectation of the log likelihood under
// eta ~ N(mean, sd^2), by Gauss-Hermite quadrature; with sd = 0 its value
// at mean.
func (sc *startScratch) expectLL(f Family, y, m, mean, sd float64) float64 {
	if sd == 0 {
		ll, _, _ := llDerivs(f, sc.link, y, m, mean, sc.psi, true)
		return ll
	}
	var ll float64
	for k, x := range sc.ghx {
		v, _, _ := llDerivs(f, sc.link, y, m, mean+sd*x, sc.psi, true)
		ll += sc.ghw[k] * v
	}
	return ll
}

// expectPsi returns the expectation of the derivative of the log
// likelihood in psi under eta ~ N(mean, sd^2).
func (sc *startScratch) expectPsi(f Family, y, m, mean, sd, psi float64) float64 {
	if sd == 0 {
		return f.PsiDeriv(y, m, mean, psi)
	}
	var d float64
	for k, x := range sc.ghx {
		d += sc.ghw[k] * f.PsiDeriv(y, m, mean+sd*x, psi)
	}
	return d
}

// addCross adds the crossed effects of stored rows s, s+1, ... to eta.
func (sc *startScratch) addCross(s int, eta []float64) {
	if sc.cross == nil {
		return
	}
	for j, c := range sc.cross[s : s+len(eta)] {
		eta[j] += c
	}
}

// etaSD returns the standard deviation sqrt(z_j' V z_j) of stored row j's
// linear predictor under b ~ N(m, V); 0 for v nil.
func (mod *Model) etaSD(j int, v []float64) float64 {
	if v == nil {
		return 0
	}
	r := mod.r
	z := mod.zRange(j, j+1)
	var s float64
	for a := range r {
		for c := range r {
			s += z[a] * v[a*r+c] * z[c]
		}
	}
	return math.Sqrt(max(s, 0))
}

// newScratch returns scratch space with the starter's psi and crossed
// effects.
func (st *starter) newScratch() *startScratch {
	sc := newStartScratch(st.mod, st.psi)
	sc.cross = st.cross
	return sc
}

func newStartScratch(mod *Model, psi float64) *startScratch {
	r, ni, p := mod.r, mod.maxNi, mod.p
	c := scratch.NewCarver(3*ni + p + r + 3*r*r + r*p + 2*ghNodes)
	sc := &startScratch{
		eta: c.Take(ni), d1: c.Take(ni), d2: c.Take(ni),
		x:    c.Take(p),
		grad: c.Take(r), hess: c.Take(r * r), chol: c.Take(r * r),
		hib: c.Take(r * p),
		ghx: c.Take(ghNodes), ghw: c.Take(ghNodes),
		psi: psi, link: mod.link,
	}
	// Nodes for the weight exp(-x^2), rescaled to the standard normal.
	quad.Hermite{}.FixedLocations(sc.ghx, sc.ghw, math.Inf(-1), math.Inf(1))
	for k := range sc.ghx {
		sc.ghx[k] *= math.Sqrt2
		sc.ghw[k] /= math.SqrtPi
	}
	return sc
}

// condLogDens returns subject i's expected log likelihood plus
// -E[b'WW'b]/2 under b ~ N(m, V) (with V = v; nil means V = 0, the log
// density at b = m) and fills eta with the mean of the linear predictor.
func (mod *Model) condLogDens(sc *startScratch, i int, beta, wwt, b, v []float64) float64 {
	lo, hi := mod.start[i], mod.start[i+1]
	r := mod.r
	eta := sc.eta[:hi-lo]
	mod.FixedEta(i, beta, eta)
	sc.addCross(lo, eta)
	var ll float64
	for j := lo; j < hi; j++ {
		e := eta[j-lo]
		for a, z := range mod.zRange(j, j+1) {
			e += z * b[a]
		}
		eta[j-lo] = e
		ll += mod.weight(j) * sc.expectLL(mod.family, mod.yAt(j), mod.trials(j), e, mod.etaSD(j, v))
	}
	if v != nil {
		for a := range r {
			for c := range r {
				ll -= 0.5 * wwt[a*r+c] * v[c*r+a]
			}
		}
	}
	for a := range r {
		for c := range r {
			ll -= 0.5 * b[a] * wwt[a*r+c] * b[c]
		}
	}
	return ll
}

// newtonPieces sets, for subject i at (b, beta) with b ~ N(b, V), the
// gradient g_i of its expected conditional log density in b (sc.grad), the
// negative Hessian H_i (sc.hess), the cross block H_ib = Z_i' D X_i (sc.hib,
// r×p), adds its gradient and information in beta into grad and info, and
// returns the expected conditional log density itself.
func (mod *Model) newtonPieces(sc *startScratch, i int, beta, wwt, b, v, grad, info []float64) float64 {
	return mod.pieces(sc, i, beta, wwt, b, v, grad, info, true)
}

// newtonDerivs is newtonPieces without the log density, which costs as
// much again as the derivatives.
func (mod *Model) newtonDerivs(sc *startScratch, i int, beta, wwt, b, v, grad, info []float64) {
	mod.pieces(sc, i, beta, wwt, b, v, grad, info, false)
}

// pieces is newtonPieces, which returns 0 without withF.
func (mod *Model) pieces(sc *startScratch, i int, beta, wwt, b, v, grad, info []float64, withF bool) float64 {
	lo, hi := mod.start[i], mod.start[i+1]
	r, p := mod.r, mod.p
	eta := sc.eta[:hi-lo]
	mod.FixedEta(i, beta, eta)
	sc.addCross(lo, eta)
	copy(sc.hess, wwt)
	clear(sc.hib)
	var f float64
	for a := range r {
		var s float64
		for c := range r {
			s -= wwt[a*r+c] * b[c]
			f -= 0.5 * b[a] * wwt[a*r+c] * b[c]
			if v != nil {
				f -= 0.5 * wwt[a*r+c] * v[c*r+a]
			}
		}
		sc.grad[a] = s
	}
	for j := lo; j < hi; j++ {
		zj := mod.zRange(j, j+1)
		e := eta[j-lo]
		for a := range r {
			e += zj[a] * b[a]
		}
		ll, d1, d2 := sc.expectAll(mod.family, mod.yAt(j), mod.trials(j), e, mod.etaSD(j, v), withF)
		f += mod.weight(j) * ll
		d1 *= mod.weight(j)
		d2 *= -mod.weight(j)
		x := mod.rowX(j, sc.x)
		for a := range r {
			sc.grad[a] += zj[a] * d1
			for c := range r {
				sc.hess[a*r+c] += zj[a] * d2 * zj[c]
			}
			for c := range p {
				sc.hib[a*p+c] += zj[a] * d2 * x[c]
			}
		}
		for a := range p {
			if x[a] == 0 {
				continue
			}
			grad[a] += x[a] * d1
			for c := range p {
				info[a*p+c] += x[a] * d2 * x[c]
			}
		}
	}
	return f
}

// rowX returns stored row j of the fixed design, densely, in dst.
func (mod *Model) rowX(j int, dst []float64) []float64 { return mod.xRow(j, dst) }

// emOmega sets omega to the EM update W W' = n S^-1 over n subjects,
// keeping omega when S is not positive definite.
func (mod *Model) emOmega(n int, s, omega []float64, relax float64) {
	r := mod.r
	// Independent blocks: the EM update of a block-diagonal covariance is
	// block by block, S with its cross-block entries removed.
	for l := range r {
		for k := l + 1; k < r; k++ {
			if !mod.OmegaFree(OmegaIndex(k, l, r)) {
				s[k*r+l], s[l*r+k] = 0, 0
			}
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(mat.NewSymDense(r, s)) {
		return
	}
	var inv mat.SymDense
	if err := ch.InverseTo(&inv); err != nil {
		return
	}
	inv.ScaleSym(float64(n), &inv)
	var cw mat.Cholesky
	if !cw.Factorize(&inv) {
		return
	}
	var l mat.TriDense
	cw.LTo(&l)
	for c := range r {
		for k := c; k < r; k++ {
			v := l.At(k, c)
			if k == c {
				v = math.Log(v)
			}
			j := OmegaIndex(k, c, r)
			omega[j] += relax * (v - omega[j])
		}
	}
}

// priorAndOmega adds the prior's information about beta to the global
// block of the start's precision and sets that of omega: 2n on the
// log-diagonal of W, n on a free entry below it, the prior's alone on
// one held at zero.
func (st *starter) priorAndOmega() {
	mod := st.mod
	r, p := mod.r, mod.p
	ps := st.prec
	v2 := mod.priorSD * mod.priorSD
	for a := range p {
		ps.AddGlobal(a, a, 1/v2)
	}
	for l := range r {
		for k := l; k < r; k++ {
			j := p + OmegaIndex(k, l, r)
			switch {
			case k == l:
				ps.SetGlobal(j, j, 2*float64(st.total))
			case mod.OmegaFree(j - p):
				ps.SetGlobal(j, j, float64(st.total))
			default:
				ps.SetGlobal(j, j, 1/v2) // read as zero: the prior alone
			}
		}
	}
}

// allocate lays the starter's state over theta and prec (cleared) and
// makes its work space: the partial sums of every chunk (those of other
// processes' chunks stay zero) and the subjects' vectors and matrices.
func (st *starter) allocate(theta, prec []float64) {
	mod := st.mod
	n, r, g := mod.Dims()
	p := mod.p
	st.b = theta[:n*r]
	st.beta = theta[n*r : n*r+p]
	nc := st.chunks.Len() // the partials of other processes' chunks stay zero
	st.partG = scratch.Partials(nc, p)
	st.partI = scratch.Partials(nc, p*p)
	st.partF = make([]float64, nc)
	st.partD = make([]float64, nc)
	st.partR = scratch.Partials(nc, p*p)
	if mod.nd == 1 {
		st.partP = scratch.Partials(nc, 2)
	}
	st.a = make([]float64, n*r)
	st.ab = make([]float64, n*r*p)
	clear(prec)
	st.prec = arrowhead.WrapSym(n, r, g, prec)
	st.db = make([]float64, n*r)
	st.b0 = make([]float64, n*r)
	st.v = make([]float64, n*r*r)
	st.vnew = make([]float64, n*r*r)
	st.wwt = make([]float64, r*r)
	st.fi = make([]float64, n)
}

// setSubjectPrec writes subject i's negative Hessian in (b_i, beta), held
// in sc by the last Newton or Gaussian step, into the start's precision.
func (st *starter) setSubjectPrec(i int, sc *startScratch) {
	r, p := st.mod.r, st.mod.p
	h := sc.hess
	for a := range r {
		for c := 0; c <= a; c++ {
			st.prec.SetLocal(i, a, c, h[a*r+c])
		}
		for c := range p {
			st.prec.SetCross(i, c, a, sc.hib[a*p+c])
		}
	}
}
