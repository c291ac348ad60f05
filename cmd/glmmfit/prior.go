// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// toUserScale replaces the fixed effects of s, fitted as the coefficients
// of centred and scaled predictors under -prior auto, by those of the
// predictors as the data give them, and the random slopes' effects and sds
// likewise. The map is linear and the marginal of
// beta under the approximation Gaussian, so the result is exact.
func toUserScale(d *formula.Design, res *vi.Result, s *posterior.Summary) {
	// Random slopes were fitted on columns divided by their sd: their
	// effects and sds on the data's scale are the fitted ones divided by
	// it (a positive scale, so quantiles map too); correlations stay.
	for a, sc := range d.RandomScale() {
		if sc == 0 {
			continue
		}
		s.SD[a] = s.SD[a].Scale(1 / sc)
		for i := range s.Subjects {
			s.Subjects[i].Mean[a] /= sc
			s.Subjects[i].SD[a] /= sc
		}
	}
	// sigma and the crossed effects are on the response's scale; a
	// positive factor maps whole marginals.
	_, sc := d.ResponseScale()
	scale := func(m *posterior.Marginal) { *m = m.Scale(sc) }
	if sc != 1 {
		if s.Dispersion != nil {
			scale(s.Dispersion)
		}
		for c := range s.Crossed {
			scale(&s.Crossed[c].SD)
			for l := range s.Crossed[c].Effects {
				scale(&s.Crossed[c].Effects[l])
			}
		}
	}
	fm := d.FixedMap()
	if fm == nil {
		return
	}
	p := len(fm.Scale)
	nr := len(res.Mu) - res.G
	mean := make([]float64, p)
	fm.Apply(res.Mu[nr:nr+p], mean)
	cov, u := fm.ScaledCov(res.GlobalCov().SliceSym(0, p))
	for j := range p {
		s.Fixed[j] = posterior.GaussianMarginal(s.Fixed[j].Name, mean[j], u[j]*math.Sqrt(cov.At(j, j)))
	}
}

// priorInfo is the prior in force, on the user's scale, for the JSON
// document.
type priorInfo struct {
	// Name is "auto" or "paper".
	Name string `json:"name"`
	// Description says what the prior is in words.
	Description string `json:"description"`
	// SD is the prior standard deviation of the coefficients (of the
	// centred and scaled predictors under auto) and of omega.
	SD float64 `json:"sd"`
	// Fixed gives, for each fixed effect, the standard deviation of its
	// prior marginal on the user's scale.
	Fixed []priorMarginal `json:"fixed"`
	// Dispersion describes the prior of the family's dispersion
	// parameter, if it has one.
	Dispersion string `json:"dispersion,omitempty"`
}

type priorMarginal struct {
	Name string  `json:"name"`
	Mean float64 `json:"mean"`
	SD   float64 `json:"sd"`
}

// newPriorInfo describes the prior of the design built from spec.
func newPriorInfo(d *formula.Design) *priorInfo {
	sd := d.Config().PriorSD
	if sd == 0 {
		sd = glmm.DefaultPriorSD
	}
	names := d.FixedNames()
	info := &priorInfo{Name: formula.PriorPaper.String(), SD: sd}
	if f := d.Family(); f.HasDispersion() {
		name := f.DispersionName()
		info.Dispersion = fmt.Sprintf("log(%s) ~ N(0, %g^2)", name, sd)
		if c, sc := d.ResponseScale(); f == glmm.Gaussian && (c != 0 || sc != 1) {
			info.Dispersion = fmt.Sprintf("log(%s) ~ N(log(%.4g), %g^2), %.4g the sd of the response", name, sc, sd, sc)
		}
	}
	fm := d.FixedMap()
	if fm == nil {
		info.Description = fmt.Sprintf("beta, omega ~ N(0, %g^2): every fixed effect as the data code its predictor (Tan's prior, -prior paper)", sd)
		for _, n := range names {
			info.Fixed = append(info.Fixed, priorMarginal{n, 0, sd})
		}
		return info
	}
	info.Name = formula.PriorAuto.String()
	info.Description = fmt.Sprintf("N(0, %g^2) on the coefficient of each predictor per standard deviation of it, and on the intercept at the predictors' means; omega ~ N(0, %g^2)", sd, sd)
	if c, sc := d.ResponseScale(); c != 0 || sc != 1 {
		info.Description += fmt.Sprintf("; all on the response centred at %.4g and divided by its sd %.4g", c, sc)
	}
	p := len(names)
	prior, u := fm.ScaledCov(scaledIdentity(p, sd*sd))
	mean := make([]float64, p)
	fm.Apply(make([]float64, p), mean)
	for j, n := range names {
		info.Fixed = append(info.Fixed, priorMarginal{n, mean[j], u[j] * math.Sqrt(prior.At(j, j))})
	}
	return info
}

// scaledIdentity returns v times the p×p identity.
func scaledIdentity(p int, v float64) *mat.SymDense {
	s := mat.NewSymDense(p, nil)
	for j := range p {
		s.SetSym(j, j, v)
	}
	return s
}

// fixedCorrelation returns the posterior correlations of the fixed effects
// on the data's scale: exact, from the Gaussian marginal of beta.
func fixedCorrelation(d *formula.Design, res *vi.Result) [][]float64 {
	p := len(d.FixedNames())
	if p < 2 {
		return nil
	}
	var cov mat.Symmetric = res.GlobalCov().SliceSym(0, p)
	if fm := d.FixedMap(); fm != nil {
		cov, _ = fm.ScaledCov(cov) // correlations do not depend on the units
	}
	out := make([][]float64, p)
	for i := range p {
		out[i] = make([]float64, p)
		for j := range p {
			out[i][j] = cov.At(i, j) / math.Sqrt(cov.At(i, i)*cov.At(j, j))
		}
	}
	return out
}
