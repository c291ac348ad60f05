// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/internal/small"
)

// SampleStartSubjects is the number of subjects from which Start runs its
// rounds over a sample of the subjects (of startSampleSize, seeded by
// sampleStartSeed) and finishes over all of them (startFromSample), in
// one process or several (StartShare, StartGroup) alike. Every
// round over all the subjects is a pass or two over the data, the
// Gaussian variational ones with quadrature: at 10^7 Bernoulli subjects
// Start took 219-252 s, more than the fit's iterations. The sample's
// start, finished, is also nearer the rounds' fixed point than Start's
// eight rounds over all the subjects, which leave omega short of it: at
// 10^5 subjects (a sample of 10^4) the GVA fit of a Poisson random slope
// from it ended with a bound 301 nats higher than from the eight rounds
// (max |beta - truth| 0.0016 against 0.0041), and glmmfit's default
// (RVB1 at the start) converged after 100 iterations instead of 900, its
// bound 13 nats higher; a Bernoulli random intercept's GVA bound rose 1.8
// nats (go run ./benchmarks/scaling -n 100000 -methods gva,rvb-start).
const SampleStartSubjects = 100_000

// sampleStartAt is the number of subjects from which Start starts from a
// sample: SampleStartSubjects, lowered by tests of small models.
var sampleStartAt = SampleStartSubjects

// startSampleAt, if not zero, is the size of the sample of Start's rounds
// for tests of small models; else startSampleSize's rule holds.
var startSampleAt int

// startSampleSize returns the size of the sample of Start's rounds over
// n subjects: DefaultSampleSize's 5% up to 10^6 subjects, 50 sqrt(n)
// beyond. The sample's start lies O(1/sqrt(size)) from F's fixed point,
// and the jump's error, of second order, O(1/size): in the whole data's
// posterior sds, O(sqrt(n)/size), which 50 sqrt(n) holds where it was at
// 10^6 (0.015 sds there), for a sample of 1.6·10^5 at 10^7 instead of
// 5·10^5.
func startSampleSize(n int) int {
	if startSampleAt > 0 {
		return startSampleAt
	}
	return min(DefaultSampleSize(n), max(MinSample, int(math.Ceil(50*math.Sqrt(float64(n))))))
}

// sampleStartSeed seeds the sample of Start's rounds for many subjects.
const sampleStartSeed = 16

// startFromSample writes Start's start into theta and prec from Start's
// rounds over a sample of size of all the processes' subjects, drawn
// with seed (Sample) by their indices among them, so that every process
// draws the same sample and computes its start, and the rounds over all
// the subjects carry their sums from process to process in the order of
// one process's: the bits are one process's for any partition.
//
// Start's rounds are a fixed-point iteration in theta_g: given theta_g,
// each subject's Gaussian (its conditional mode moved by Gaussian
// variational steps, as StartAt's), then a joint Newton step in
// (b, beta) and the EM update of omega. Call that map F over all the
// subjects and F_s over the sample. The sample's rounds end at theta_s,
// near F_s's fixed point but several of the whole data's posterior sds
// from F's; and EM crawls there: started at theta_s, the fits of 10^5
// Bernoulli subjects ended where two rounds over all of them left omega,
// 9 sds from the whole start's fit. Near the fixed points both maps are
// linear with the same Jacobian J (the fraction of missing information,
// which does not grow with the subjects), so F's fixed point is
// theta_s + (I - J)^-1 (F(theta_s) - theta_s): one evaluation of F over
// all the subjects and J by forward differences of F_s over the sample.
// Each subject's Gaussian then takes one Gaussian variational step from
// F(theta_s)'s round to that theta_g (refine). Over all the subjects it
// costs four passes of a few evaluations each, against Start's two dozen.
func (st *starter) startFromSample(size int, seed uint64, theta, prec []float64) error {
	mod, pool := st.mod, st.pool
	n, r, g := mod.Dims()
	sub, err := st.sample(size, seed)
	if err != nil {
		return err
	}
	ns, _, _ := sub.Dims()
	ts := make([]float64, ns*r+g)
	sp := make([]float64, arrowhead.Len(ns, r, g))
	if err := sub.startRelay(pool, nil, 0, ns, false, ts, sp); err != nil {
		return err
	}
	thetaS := append([]float64(nil), ts[ns*r:]...)
	// J by forward differences of F_s, column by column.
	subSt := sub.newStarter(pool, ts, sp)
	fs := func(k int, h float64, dst []float64) error {
		copy(ts[ns*r:], thetaS)
		if k >= 0 {
			ts[ns*r+k] += h
		}
		if err := subSt.roundAt(ts[ns*r:]); err != nil {
			return err
		}
		copy(dst, ts[ns*r:])
		return nil
	}
	jac := mat.NewDense(g, g, nil)
	base, up := make([]float64, g), make([]float64, g)
	if err := fs(-1, 0, base); err != nil {
		return err
	}
	for k := range g {
		if k >= mod.p && k < mod.p+NumOmega(r) && !mod.OmegaFree(k-mod.p) {
			continue // held at zero
		}
		h := fixedPointDelta * max(1, math.Abs(thetaS[k]))
		if err := fs(k, h, up); err != nil {
			return err
		}
		for j := range g {
			jac.Set(j, k, (up[j]-base[j])/h)
		}
	}
	sub, subSt, ts, sp = nil, nil, nil, nil
	// F(theta_s) over all the subjects.
	clear(theta)
	st.allocate(theta, prec)
	copy(theta[n*r:], thetaS)
	thetaG := theta[n*r:]
	if err := st.roundAt(thetaG); err != nil {
		return err
	}
	// The step to F's fixed point, or F's own step where I - J is
	// singular.
	step := make([]float64, g)
	for j := range g {
		step[j] = thetaG[j] - thetaS[j]
	}
	var ij mat.Dense
	ij.Sub(eye(g), jac)
	var x mat.VecDense
	if err := x.SolveVec(&ij, mat.NewVecDense(g, step)); err == nil {
		for j := range g {
			if v := x.AtVec(j); !math.IsNaN(v) && !math.IsInf(v, 0) {
				step[j] = v
			}
		}
	}
	for j := range g {
		thetaG[j] = thetaS[j] + step[j]
	}
	// The subjects' Gaussians at that theta_g, from their means at
	// F(theta_s), and the global block.
	p, no := mod.p, NumOmega(r)
	st.setWWT(thetaG[p : p+no])
	if mod.nd == 1 {
		st.psi = thetaG[g-1]
	}
	if err := st.refine(finalGVASteps); err != nil {
		return err
	}
	if mod.nd == 1 {
		// The curvature in psi there, psi kept.
		psi := st.psi
		if err := st.updatePsi(); err != nil {
			return err
		}
		st.psi = psi
	}
	return st.globalEnd(theta)
}

// finalGVASteps is the number of Gaussian variational steps (gvaOf) that
// take each subject's Gaussian from F(theta_s)'s round to the fixed
// point's theta_g: a few posterior sds of the whole data away, so one
// Newton step from there is near the optimum, where StartAt's search
// from the Laplace mode and two steps cost a pass of several times as
// many evaluations.
const finalGVASteps = 1

// refine moves each subject's Gaussian N(b_i, V_i), as it is, towards
// the Gaussian variational one at the starter's theta_g by steps of
// gvaOf, and sets the local and cross blocks of the precision and each
// chunk's information in beta in partR as modes does.
func (st *starter) refine(steps int) error {
	r := st.mod.r
	return st.each(func(k, lo, hi int) error {
		sc := st.chunkScratch(k)
		ms := st.newModeScratch()
		pr := st.partR[k]
		clear(pr)
		for i := lo; i < hi; i++ {
			bi, vi := st.b[i*r:(i+1)*r], st.v[i*r*r:(i+1)*r*r]
			st.gvaSteps(sc, ms, i, bi, vi, steps, pr)
			st.setSubjectPrec(i, sc)
		}
		return nil
	})
}

// fixedPointDelta is the relative step of the forward differences of
// startFromSample's Jacobian.
const fixedPointDelta = 1e-4

// eye returns the n×n identity.
func eye(n int) *mat.Dense {
	m := mat.NewDense(n, n, nil)
	for i := range n {
		m.Set(i, i, 1)
	}
	return m
}

// roundAt sets the starter's global block to thetaG (which must be the
// global block of the theta it was made over), each subject's Gaussian
// there (modes, from the subject's mean as it is) and then takes one of
// Start's Gaussian variational rounds with the EM update of omega,
// leaving its result in thetaG.
func (st *starter) roundAt(thetaG []float64) error {
	mod := st.mod
	p, no := mod.p, NumOmega(mod.r)
	_, _, g := mod.Dims()
	omega := thetaG[p : p+no]
	st.setWWT(omega)
	if mod.nd == 1 {
		st.psi = thetaG[g-1]
	}
	if err := st.modes(startAtGVASteps); err != nil {
		return err
	}
	if err := st.round(startRounds-2, omega, thetaG); err != nil {
		return err
	}
	if mod.nd == 1 {
		thetaG[g-1] = st.psi
	}
	return nil
}

// globalEnd sets the global block of the start's precision at the end of
// Start: the information in beta with the prior, the curvature in omega,
// and the dispersion's.
func (st *starter) globalEnd(theta []float64) error {
	mod := st.mod
	n, r, _ := mod.Dims()
	p, no := mod.p, NumOmega(r)
	ps := st.prec
	v2 := mod.priorSD * mod.priorSD
	// The global block's entries are added chunk after chunk, as sums
	// over the processes.
	info, err := st.carry(p*(p+1)/2, func(info []float64) {
		for k := st.k0; k < st.k1; k++ {
			for a := range p {
				for c := 0; c <= a; c++ {
					info[small.PackedIndex(a, c)] += st.partR[k][a*p+c]
				}
			}
		}
	})
	if err != nil {
		return err
	}
	for a := range p {
		for c := 0; c <= a; c++ {
			ps.AddGlobal(a, c, info[small.PackedIndex(a, c)])
		}
	}
	st.priorAndOmega()
	if mod.nd == 1 {
		j := p + no
		theta[n*r+j] = st.psi
		ps.SetGlobal(j, j, max(st.psiCurv, 1/v2))
	}
	return nil
}
