// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/parallel"
)

// DefaultSampleFraction is the share of the subjects that Sample takes
// when its size is not given, and MinSample the fewest subjects it takes
// then.
const (
	DefaultSampleFraction = 0.05
	MinSample             = 10_000
)

// sampleModeSteps is the most Newton steps StartAt takes in each
// subject's b_i at the given theta_g, and sampleModeTol the Newton
// decrement g'H^-1 g below which it stops.
const (
	sampleModeSteps = 20
	sampleModeTol   = 1e-8
)

// StartAt writes into theta and prec a start at the given global block
// thetaG, as Start writes its own: theta_g is thetaG; each subject's b_i
// is its conditional mode there (damped Newton steps from the b_i that
// theta holds, the Laplace approximation) moved by two Gaussian
// variational steps (gvaOf), as Start's last rounds move theirs; and
// prec holds the expected negative Hessian in (b, beta) under each
// subject's Gaussian before its last step, with Start's curvature in
// omega (2n, or n off the diagonal) and, for a family with a dispersion
// parameter, that of the expected log likelihood in psi. It costs one
// pass over the subjects on pool, of a few evaluations of each (two
// passes with psi), against Start's dozen or so: for a start from a
// theta_g found otherwise, as from a sample of the subjects (Sample;
// rvb.NewAtSampleStart). thetaG may be theta's own global block. Models
// with crossed factors are refused. The result does not depend on pool's
// number of workers.
func (mod *Model) StartAt(pool *parallel.Pool, thetaG, theta, prec []float64) error {
	n, r, g := mod.Dims()
	if len(theta) != n*r+g || len(prec) != arrowhead.Len(n, r, g) || len(thetaG) != g {
		panic("glmm: bad length in StartAt")
	}
	if mod.cross != nil {
		return errors.New("glmm: StartAt of a model with crossed factors")
	}
	copy(theta[n*r:], thetaG)
	st := mod.newStarter(pool, theta, prec)
	p, no := mod.p, NumOmega(r)
	if mod.nd == 1 {
		st.psi = theta[n*r+g-1]
	}
	st.setWWT(theta[n*r+p : n*r+p+no])
	if err := st.modes(startAtGVASteps); err != nil {
		return err
	}
	st.globalBlock()
	if mod.nd == 1 {
		psi := st.psi
		if err := st.updatePsi(); err != nil {
			return err
		}
		st.psi = psi
		v2 := mod.priorSD * mod.priorSD
		st.prec.SetGlobal(g-1, g-1, max(st.psiCurv, 1/v2))
	}
	return nil
}

// Sample returns the model of a sample of size of its subjects, drawn
// without replacement (selection sampling, seeded by seed; size 0 means
// DefaultSampleFraction of them, at least MinSample), with their rows in
// subject order and the model's family, link, prior and blocks of random
// effects: a start of many subjects can run Start's passes over a sample
// (rvb.NewAtSampleStart). With size at least the
// number of subjects it returns the model itself. Models with crossed
// factors are not sampled.
func (mod *Model) Sample(size int, seed uint64) (*Model, error) {
	n := mod.n
	switch {
	case size < 0:
		return nil, errors.New("glmm: negative sample size")
	case mod.cross != nil:
		return nil, errors.New("glmm: a sample of a model with crossed factors")
	case size == 0:
		size = DefaultSampleSize(n)
	}
	if size >= n {
		return mod, nil
	}
	return mod.sample(sampleSubjects(n, size, seed))
}

// DefaultSampleSize returns the number of subjects that Sample takes of
// n when its size is not given: DefaultSampleFraction of them, at least
// MinSample (n or more means all of them).
func DefaultSampleSize(n int) int {
	return max(MinSample, int(math.Ceil(DefaultSampleFraction*float64(n))))
}

// startAtGVASteps is the number of StartAt's Gaussian variational steps
// (gvaOf) from each subject's Laplace approximation: with one, RVB1's
// start from a sample of 10^5 Bernoulli subjects (rvb.NewAtSampleStart
// as run K of benchmarks/svi/results.md built it) ended 0.2 sd off the
// full batch's omega for two seeds of the sample alike; with two, 0.03
// sd; with three or four, no closer at 10^6.
const startAtGVASteps = 2

// sampleSubjects returns size of the n subjects, in increasing order,
// drawn without replacement by selection sampling (Knuth's Algorithm S)
// from seed.
func sampleSubjects(n, size int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, 0x5a3b1e))
	out := make([]int, 0, size)
	for i := 0; i < n && len(out) < size; i++ {
		if float64(n-i)*rng.Float64() < float64(size-len(out)) {
			out = append(out, i)
		}
	}
	return out
}

// sample returns the model of the given subjects' rows alone, in their
// order, with the model's family, link, prior and blocks.
func (mod *Model) sample(subjects []int) (*Model, error) {
	r, p := mod.r, mod.p
	nobs := 0
	for _, i := range subjects {
		nobs += mod.start[i+1] - mod.start[i]
	}
	y := make([]float64, nobs)
	var tr, w, off []float64
	if mod.m != nil {
		tr = make([]float64, nobs)
	}
	if mod.w != nil {
		w = make([]float64, nobs)
	}
	if mod.off != nil {
		off = make([]float64, nobs)
	}
	x := make([]float64, nobs*p)
	z := make([]float64, nobs*r)
	group := make([]int, nobs)
	k := 0
	for s, i := range subjects {
		for j := mod.start[i]; j < mod.start[i+1]; j++ {
			y[k] = mod.yAt(j)
			if tr != nil {
				tr[k] = mod.trials(j)
			}
			if w != nil {
				w[k] = mod.weight(j)
			}
			if off != nil {
				off[k] = mod.offset(j)
			}
			copy(x[k*p:(k+1)*p], mod.xRow(j, x[k*p:(k+1)*p]))
			copy(z[k*r:(k+1)*r], mod.zRange(j, j+1))
			group[k] = s
			k++
		}
	}
	return mod.sampleModel(y, tr, w, off, x, z, group, len(subjects))
}

// sampleModel returns the model of a sample's rows (x and z row-major),
// with the model's family, link, prior and blocks.
func (mod *Model) sampleModel(y, tr, w, off, x, z []float64, group []int, ns int) (*Model, error) {
	nobs := len(y)
	cfg := Config{Family: mod.family, Link: mod.link, Y: y, Trials: tr, Weights: w, Offset: off,
		Z: mat.NewDense(nobs, mod.r, z), Group: group, NumGroups: ns,
		FixedNames: mod.fixedNames, RandomNames: mod.randomNames, GroupName: mod.groupName,
		PriorSD: mod.priorSD, REBlocks: mod.blocks(),
		// The whole design's rank was checked; the prior makes the
		// posterior proper where a sample misses a level of a factor.
		Share: true}
	if mod.p > 0 {
		cfg.X = mat.NewDense(nobs, mod.p, x)
	}
	return New(cfg)
}

// sample returns the model of Sample(size, seed) of all the processes'
// subjects, in every process: drawn by the subjects' indices among all of
// them, and with part (each process holding its own subjects alone) their
// rows gathered from the processes that hold them, in order.
func (st *starter) sample(size int, seed uint64) (*Model, error) {
	mod := st.mod
	if !st.part {
		return mod.Sample(size, seed)
	}
	if mod.cross != nil {
		return nil, errors.New("glmm: a sample of a model with crossed factors")
	}
	// This process's subjects of the sample, and the sample's index of
	// the first of them.
	n, r, p := mod.n, mod.r, mod.p
	all := sampleSubjects(st.total, min(size, st.total), seed)
	a, _ := slices.BinarySearch(all, st.first)
	b, _ := slices.BinarySearch(all, st.first+n)
	own := all[a:b]
	// A row: the subject's index in the sample, y, trials, weight,
	// offset, x and z. Trials, weights and offsets are sent whatever
	// they are: New stores them as it would the one process's.
	width := 5 + p + r
	var rows []float64
	for s, i := range own {
		i -= st.first
		for j := mod.start[i]; j < mod.start[i+1]; j++ {
			k := len(rows)
			rows = append(rows, float64(a+s), mod.yAt(j), mod.trials(j), mod.weight(j), mod.offset(j))
			rows = slices.Grow(rows, p+r)[:k+width]
			copy(rows[k+5:k+5+p], mod.xRow(j, rows[k+5:k+5+p]))
			copy(rows[k+5+p:], mod.zRange(j, j+1))
		}
	}
	var at int
	cnt, err := st.carry(1, func(acc []float64) {
		at = int(acc[0])
		acc[0] += float64(len(rows))
	})
	if err != nil {
		return nil, err
	}
	// Each process writes its rows in its place: copies keep the bits
	// (even of -0, which a sum with 0 would not).
	flat, err := st.carry(int(cnt[0]), func(acc []float64) { copy(acc[at:], rows) })
	if err != nil {
		return nil, err
	}
	rows = nil
	nobs := len(flat) / width
	y, tr, w, off := make([]float64, nobs), make([]float64, nobs), make([]float64, nobs), make([]float64, nobs)
	x, z := make([]float64, nobs*p), make([]float64, nobs*r)
	group := make([]int, nobs)
	for k := range nobs {
		row := flat[k*width : (k+1)*width]
		group[k] = int(row[0])
		y[k], tr[k], w[k], off[k] = row[1], row[2], row[3], row[4]
		copy(x[k*p:(k+1)*p], row[5:5+p])
		copy(z[k*r:(k+1)*r], row[5+p:])
	}
	return mod.sampleModel(y, tr, w, off, x, z, group, len(all))
}

// blocks returns Config.REBlocks of the model: nil for one block, else
// each random effect's block, the first effect of its block.
func (mod *Model) blocks() []int {
	if mod.omegaFree == nil {
		return nil
	}
	r := mod.r
	b := make([]int, r)
	for k := range r {
		b[k] = k
		for l := range k {
			if mod.omegaFree[OmegaIndex(k, l, r)] {
				b[k] = b[l]
				break
			}
		}
	}
	return b
}

// newStarter returns a starter of one process over all the subjects,
// writing theta and prec.
func (mod *Model) newStarter(pool *parallel.Pool, theta, prec []float64) *starter {
	n := mod.NumSubjects()
	st := &starter{mod: mod, pool: pool, chunks: parallel.NewChunking(n, StartChunk), lo: 0, hi: n, total: n}
	st.k1 = st.chunks.Len()
	st.allocate(theta, prec)
	return st
}

// setWWT sets the starter's W W' from omega.
func (st *starter) setWWT(omega []float64) {
	r := st.mod.r
	w := make([]float64, r*r)
	OmegaToW(omega, r, w)
	st.mod.maskW(w)
	for a := range r {
		for c := range r {
			var s float64
			for l := 0; l <= min(a, c); l++ {
				s += w[a*r+l] * w[c*r+l]
			}
			st.wwt[a*r+c] = s
		}
	}
}

// modes sets each subject's b_i to its conditional mode at the starter's
// beta and W W' (modeOf, from b_i as it is), the inverse of its negative
// Hessian there, the Laplace approximation's covariance, in st.v, the
// local and cross blocks of the precision to the negative Hessian in
// (b_i, beta) there, and each chunk's information in beta in partR.
func (st *starter) modes(gvaSteps int) error {
	mod := st.mod
	r := mod.r
	return st.each(func(k, lo, hi int) error {
		sc := st.chunkScratch(k)
		ms := st.newModeScratch()
		pr := st.partR[k]
		clear(pr)
		for i := lo; i < hi; i++ {
			bi, vi := st.b[i*r:(i+1)*r], st.v[i*r*r:(i+1)*r*r]
			st.modeOf(sc, ms, i, st.wwt, bi, vi)
			if gvaSteps == 0 {
				mod.newtonDerivs(sc, i, st.beta, st.wwt, bi, nil, ms.junkG, pr)
			}
			st.gvaSteps(sc, ms, i, bi, vi, gvaSteps, pr)
			st.setSubjectPrec(i, sc)
		}
		return nil
	})
}

// gvaSteps takes steps steps of gvaOf from subject i's Gaussian, adding
// the last one's information in beta into info.
func (st *starter) gvaSteps(sc *startScratch, ms *modeScratch, i int, bi, vi []float64, steps int, info []float64) {
	for s := range steps {
		dst := ms.junkI
		if s == steps-1 {
			dst = info
		}
		st.gvaOf(sc, ms, i, bi, vi, dst)
	}
}

// gvaOf takes subject i's Gaussian N(bi, vi) from its Laplace
// approximation towards the Gaussian variational one at the starter's
// theta_g, as Start's last rounds do for all the subjects at once: a
// Newton step in bi on the expected conditional log density under
// N(bi, vi), after which vi is the inverse of its expected negative
// Hessian. For binary data the Laplace approximation's b_i are too far
// from 0 and its V_i too small, and RVB's optimum in theta_g given the
// subjects' blocks follows them. It leaves the pieces of newtonPieces
// before the step in sc, their information in beta added to info, as
// Start's precision is that of its last pass before its last step.
func (st *starter) gvaOf(sc *startScratch, ms *modeScratch, i int, bi, vi, info []float64) {
	mod := st.mod
	r := mod.r
	mod.newtonDerivs(sc, i, st.beta, st.wwt, bi, vi, ms.junkG, info)
	if !cholInverse(r, sc.hess, ms.chol, ms.vn) {
		return
	}
	for x := range r {
		var s float64
		for y := range r {
			s += ms.vn[x*r+y] * sc.grad[y]
		}
		bi[x] += s
	}
	copy(vi, ms.vn)
}

// modeScratch is modeOf's scratch space.
type modeScratch struct {
	junkG, junkI, step, b0, vn, chol []float64
}

func (st *starter) newModeScratch() *modeScratch {
	r, p := st.mod.r, st.mod.p
	return &modeScratch{junkG: make([]float64, p), junkI: make([]float64, p*p), step: make([]float64, r), b0: make([]float64, r), vn: make([]float64, r*r), chol: make([]float64, r*r)}
}

// modeOf moves bi to subject i's conditional mode at the starter's beta
// and the given W W' by damped Newton steps from bi, each halved until
// the subject's conditional log density does not decrease, and sets vi to
// the inverse of the negative Hessian there.
func (st *starter) modeOf(sc *startScratch, ms *modeScratch, i int, wwt, bi, vi []float64) {
	mod := st.mod
	r := mod.r
	step, b0 := ms.step, ms.b0
	// newtonPieces adds the sums in beta, which are not wanted here.
	f := mod.newtonPieces(sc, i, st.beta, wwt, bi, nil, ms.junkG, ms.junkI)
	for range sampleModeSteps {
		if !cholInverse(r, sc.hess, sc.chol, vi) {
			return
		}
		var decr float64
		for x := range r {
			var s float64
			for y := range r {
				s += vi[x*r+y] * sc.grad[y]
			}
			step[x] = s
			decr += s * sc.grad[x]
		}
		if !(decr > sampleModeTol) {
			return
		}
		// The pieces at the new point check the step and serve the
		// next.
		copy(b0, bi)
		f0 := f
		for t := 1.0; ; t /= 2 {
			for x := range r {
				bi[x] = b0[x] + t*step[x]
			}
			f = mod.newtonPieces(sc, i, st.beta, wwt, bi, nil, ms.junkG, ms.junkI)
			if f >= f0 || t < 0x1p-30 {
				break
			}
		}
		if !(f >= f0) {
			copy(bi, b0)
			mod.newtonPieces(sc, i, st.beta, wwt, bi, nil, ms.junkG, ms.junkI)
			cholInverse(r, sc.hess, sc.chol, vi)
			return
		}
	}
}

// globalBlock sets the global block of the starter's precision as Start
// does at its end: the information in beta (partR) with the prior, and
// the curvature in omega.
func (st *starter) globalBlock() {
	p := st.mod.p
	for k := st.k0; k < st.k1; k++ {
		for a := range p {
			for c := 0; c <= a; c++ {
				st.prec.AddGlobal(a, c, st.partR[k][a*p+c])
			}
		}
	}
	st.priorAndOmega()
}
