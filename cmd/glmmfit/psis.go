// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"math"

	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/posterior"
)

// corrected holds the global parameters' summaries reweighted by Pareto
// smoothed importance sampling, on the data's scale.
type corrected struct {
	K              jfloat     `json:"k"`
	EffectiveDraws jfloat     `json:"effective_draws"`
	Draws          int        `json:"draws"`
	Fixed          []marginal `json:"fixed"`
	RESD           []marginal `json:"re_sd"`
	RECor          []marginal `json:"re_cor,omitempty"`
	Dispersion     *marginal  `json:"dispersion,omitempty"`
	CrossedSD      []marginal `json:"crossed_sd,omitempty"`
	// RandomEffects are each subject's random effects corrected (the
	// correction of theta_g only: -correct), with LocalDraws the draws of
	// theta_g, resampled by the weights, they average over.
	RandomEffects []subjectEffects `json:"random_effects,omitempty"`
	LocalDraws    int              `json:"local_draws,omitempty"`
}

// psisCorrect reweights importance draws of theta_g (rows of draws, with
// log ratios logw) towards the posterior when the Pareto k says the
// weights can be trusted (below posterior.ParetoKBad), and returns nil
// otherwise.
//
// With imp, the correction whose draws these are, it also gives each
// subject's random effects corrected.
func psisCorrect(d *formula.Design, logw, draws []float64, imp *posterior.GlobalImportance) *corrected {
	w, k, err := posterior.PSIS(logw)
	if err != nil || !(k < posterior.ParetoKBad) {
		return nil
	}
	m := d.Model()
	s := len(w)
	g := len(draws) / s
	p, r := m.P(), m.R()
	no := glmm.NumOmega(r)
	fm := d.FixedMap()
	rs := d.RandomScale()
	_, ysc := d.ResponseScale()
	fixed := make([][]float64, p)
	sds := make([][]float64, r)
	// The correlations of the pairs b < a that the model leaves free, in
	// the order of q's summary.
	type pair struct{ a, b int }
	var pairs []pair
	for b := range r {
		for a := b + 1; a < r; a++ {
			if m.OmegaFree(glmm.OmegaIndex(a, b, r)) {
				pairs = append(pairs, pair{a, b})
			}
		}
	}
	cors := make([][]float64, len(pairs))
	var disp []float64
	crossed := make([][]float64, m.NumCrossed())
	beta := make([]float64, p)
	omega := make([]float64, no)
	for i := range s {
		th := draws[i*g : (i+1)*g]
		if fm != nil {
			fm.Apply(th[:p], beta)
		} else {
			copy(beta, th[:p])
		}
		for j, v := range beta {
			fixed[j] = append(fixed[j], v)
		}
		copy(omega, th[p:p+no])
		m.MaskOmega(omega)
		sd, cor := glmm.RESDCorr(omega, r)
		for k, pr := range pairs {
			cors[k] = append(cors[k], cor.At(pr.a, pr.b))
		}
		for a, v := range sd {
			if rs != nil {
				v /= rs[a]
			}
			sds[a] = append(sds[a], v)
		}
		if kd, ok := m.Dispersion(); ok {
			v := math.Exp(th[kd])
			if m.Family() == glmm.Gaussian {
				v *= ysc
			}
			disp = append(disp, v)
		}
		for c := range crossed {
			_, _, _, om := m.CrossedFactor(c)
			crossed[c] = append(crossed[c], math.Exp(-th[om])*ysc)
		}
	}
	out := &corrected{K: jfloat(k), EffectiveDraws: jfloat(posterior.EffectiveDraws(w)), Draws: s}
	var ms []posterior.Marginal
	for j, name := range m.FixedNames() {
		ms = append(ms, posterior.WeightedMarginal(name, fixed[j], w))
	}
	out.Fixed = marginals(ms)
	ms = ms[:0]
	rn := m.RandomNames()
	for a, name := range rn {
		ms = append(ms, posterior.WeightedMarginal("sd("+name+")", sds[a], w))
	}
	out.RESD = marginals(ms)
	if len(pairs) > 0 {
		ms = ms[:0]
		for k, pr := range pairs {
			ms = append(ms, posterior.WeightedMarginal(posterior.CorName(rn[pr.b], rn[pr.a]), cors[k], w))
		}
		out.RECor = marginals(ms)
	}
	if disp != nil {
		d := marginals([]posterior.Marginal{posterior.WeightedMarginal(m.Family().DispersionName(), disp, w)})[0]
		out.Dispersion = &d
	}
	ms = ms[:0]
	for c := range crossed {
		name, _, _, _ := m.CrossedFactor(c)
		ms = append(ms, posterior.WeightedMarginal("sd("+name+")", crossed[c], w))
	}
	if len(ms) > 0 {
		out.CrossedSD = marginals(ms)
	}
	if imp != nil && imp.LocalMean != nil {
		levels := m.GroupLevels()
		if all, _, _ := d.PartOf(); all != nil {
			// With -shard the design is this process's subjects', the
			// moments every process's (gathered by the correction).
			levels = all
		}
		out.LocalDraws = imp.LocalDraws
		out.RandomEffects = make([]subjectEffects, len(levels))
		for i, lev := range levels {
			se := subjectEffects{Level: lev, Mean: make([]jfloat, r), SD: make([]jfloat, r)}
			for a := range r {
				mean, sd := imp.LocalMean[i*r+a], math.Sqrt(imp.LocalCov[(i*r+a)*r+a])
				if rs != nil && rs[a] != 0 {
					mean, sd = mean/rs[a], sd/rs[a]
				}
				se.Mean[a], se.SD[a] = jfloat(mean), jfloat(sd)
			}
			out.RandomEffects[i] = se
		}
	}
	return out
}
