// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// Marginal summarises the approximate posterior of one scalar.
type Marginal struct {
	Name            string
	Mean, SD        float64
	Q025, Q50, Q975 float64 // 2.5%, 50% and 97.5% quantiles
}

// SubjectEffects are the approximate posterior means and standard
// deviations of one subject's random effects.
type SubjectEffects struct {
	Level    string
	Mean, SD []float64
}

// Summary holds posterior summaries of a fitted GLMM.
type Summary struct {
	Fixed []Marginal // beta
	Omega []Marginal // omega = vech(W*)
	SD    []Marginal // standard deviations of the random effects
	Corr  []Marginal // their correlations, (k, l) for k > l, column by column
	// Dispersion is the family's dispersion parameter (the residual sd
	// sigma of a gaussian response, the shape phi of a negative binomial
	// one), nil for the families without one. Its marginal, the exp of a
	// Gaussian, is exact.
	Dispersion *Marginal
	// Crossed summarises the factors crossed with the subjects (see
	// glmm.Crossed), in the model's order.
	Crossed []CrossedEffects
	// Subjects holds the random effects b_i. Their marginals are Gaussian
	// for a plain GLMM target (exact); for RVB see SummarizeRVB.
	Subjects []SubjectEffects
}

// CrossedEffects summarises a crossed factor: the standard deviation of
// its random intercepts, exp(-omega_u), whose log-normal marginal is
// exact, and each level's effect u_l = exp(-a_l omega_u) v_l (see
// glmm.Crossed), whose mean and sd are exact and whose quantiles are those
// of the normal with them.
type CrossedEffects struct {
	Name    string
	SD      Marginal
	Effects []Marginal // one per level, named by it
}

// Summarize returns posterior summaries of a fit of the GLMM m as a plain
// target. Fixed effects, omega and the random effects are exact Gaussian
// marginals; SDs and correlations, nonlinear in omega, are from draws
// seeded by seed.
func Summarize(res *vi.Result, m *glmm.Model, draws int, seed uint64) (*Summary, error) {
	switch {
	case res == nil:
		return nil, errors.New("posterior: Summarize of a nil Result")
	case m == nil:
		return nil, errors.New("posterior: Summarize with a nil model")
	case draws < 2:
		return nil, fmt.Errorf("posterior: Summarize with %d draws, want at least 2", draws)
	case res.Reparametrised:
		return nil, errors.New("posterior: the Result is of a reparametrised target, whose local blocks are not the random effects: summarise it with that target's own summary (posterior.SummarizeRVB)")
	}
	n, r, g := m.Dims()
	if res.N != n || res.R != r || res.G != g {
		return nil, fmt.Errorf("posterior: result of dimensions (%d, %d, %d) does not fit the model's (%d, %d, %d)", res.N, res.R, res.G, n, r, g)
	}
	s := &Summary{}
	cov := res.GlobalCov()
	muG := res.Mu[n*r:]
	names := m.GlobalNames()
	p := m.P()
	for k := range p + glmm.NumOmega(r) {
		if k >= p && !m.OmegaFree(k-p) {
			continue // across independent blocks: not a parameter
		}
		mk := GaussianMarginal(names[k], muG[k], math.Sqrt(cov.At(k, k)))
		if k < p {
			s.Fixed = append(s.Fixed, mk)
		} else {
			s.Omega = append(s.Omega, mk)
		}
	}
	if k, ok := m.Dispersion(); ok {
		d := LogNormalMarginal(m.Family().DispersionName(), muG[k], math.Sqrt(cov.At(k, k)))
		s.Dispersion = &d
	}
	for c := range m.NumCrossed() {
		s.Crossed = append(s.Crossed, crossedEffects(m, c, muG, cov))
	}
	sd, corr, err := sampleSDCorr(res, m, cov, draws, seed)
	if err != nil {
		return nil, err
	}
	s.SD, s.Corr = sd, corr
	local := res.LocalCov()
	levels := m.GroupLevels()
	s.Subjects = make([]SubjectEffects, n)
	for i := range n {
		e := SubjectEffects{Level: levels[i], Mean: make([]float64, r), SD: make([]float64, r)}
		for a := range r {
			e.Mean[a] = res.Mu[i*r+a]
			e.SD[a] = math.Sqrt(local[i*r*r+a*r+a])
		}
		s.Subjects[i] = e
	}
	return s, nil
}

// GaussianMarginal returns the summary of N(mean, sd^2).
func GaussianMarginal(name string, mean, sd float64) Marginal {
	q := func(p float64) float64 {
		if sd == 0 {
			return mean
		}
		return distuv.Normal{Mu: mean, Sigma: sd}.Quantile(p)
	}
	return Marginal{Name: name, Mean: mean, SD: sd, Q025: q(0.025), Q50: mean, Q975: q(0.975)}
}

// crossedEffects returns the summary of crossed factor c of m from the
// mean and covariance of theta_g.
func crossedEffects(m *glmm.Model, c int, muG []float64, cov mat.Symmetric) CrossedEffects {
	name, levels, first, omega := m.CrossedFactor(c)
	// sd = exp(-omega): the log-normal of -omega.
	sw := math.Sqrt(cov.At(omega, omega))
	ce := CrossedEffects{Name: name, SD: LogNormalMarginal("sd("+name+")", -muG[omega], sw)}
	weights := m.CrossedWeights(c)
	for l, lv := range levels {
		k := first + l
		// For (v, w) jointly normal, E[v^j exp(t w)] follows from the
		// normal's moment generating function: with t = -a_l, c the
		// covariance of v and w,
		//	E[u]   = exp(t mu_w + t^2 s_w^2/2) (mu_v + t c),
		//	E[u^2] = exp(2 t mu_w + 2 t^2 s_w^2) ((mu_v + 2 t c)^2 + s_v^2).
		t := -weights[l]
		mv, cv, vv := muG[k], cov.At(k, omega), cov.At(k, k)
		mean := math.Exp(t*muG[omega]+t*t*sw*sw/2) * (mv + t*cv)
		m2 := math.Exp(2*t*muG[omega]+2*t*t*sw*sw) * ((mv+2*t*cv)*(mv+2*t*cv) + vv)
		ce.Effects = append(ce.Effects, GaussianMarginal(lv, mean, math.Sqrt(max(m2-mean*mean, 0))))
	}
	return ce
}

// LogNormalMarginal returns the summary of exp(x) for x ~ N(mu, sd^2).
func LogNormalMarginal(name string, mu, sd float64) Marginal {
	g := GaussianMarginal(name, mu, sd)
	v := sd * sd
	mean := math.Exp(mu + v/2)
	return Marginal{Name: name, Mean: mean, SD: mean * math.Sqrt(math.Expm1(v)),
		Q025: math.Exp(g.Q025), Q50: math.Exp(mu), Q975: math.Exp(g.Q975)}
}

// sampleSDCorr summarises the random-effect SDs and correlations from draws
// of omega from its Gaussian marginal.
func sampleSDCorr(res *vi.Result, m *glmm.Model, cov *mat.SymDense, draws int, seed uint64) (sd, corr []Marginal, err error) {
	n, r, _ := m.Dims()
	p := m.P()
	q := glmm.NumOmega(r)
	var ch mat.Cholesky
	sub := mat.NewSymDense(q, nil)
	for a := range q {
		for b := a; b < q; b++ {
			sub.SetSym(a, b, cov.At(p+a, p+b))
		}
	}
	if !ch.Factorize(sub) {
		return nil, nil, fmt.Errorf("posterior: covariance of omega is not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	muO := res.Mu[n*r+p : n*r+p+q]
	z := make([]float64, q)
	return SDCorrMarginals(m, draws, func(omega []float64) error {
		for a := range z {
			z[a] = rng.NormFloat64()
		}
		for a := range q {
			v := muO[a]
			for b := 0; b <= a; b++ {
				v += l.At(a, b) * z[b]
			}
			omega[a] = v
		}
		return nil
	})
}

// SDCorrMarginals summarises the standard deviations and correlations of
// the random effects of m, nonlinear in omega, from draws of omega: each
// call of next writes one draw into its argument.
func SDCorrMarginals(m *glmm.Model, draws int, next func(omega []float64) error) (sd, corr []Marginal, err error) {
	r := m.R()
	omega := make([]float64, glmm.NumOmega(r))
	sdDraws := make([][]float64, r)
	corrDraws := make([][]float64, r*(r-1)/2)
	for range draws {
		if err := next(omega); err != nil {
			return nil, nil, err
		}
		m.MaskOmega(omega)
		s, c := glmm.RESDCorr(omega, r)
		for a := range r {
			sdDraws[a] = append(sdDraws[a], s[a])
		}
		k := 0
		for b := range r {
			for a := b + 1; a < r; a++ {
				corrDraws[k] = append(corrDraws[k], c.At(a, b))
				k++
			}
		}
	}
	rn := m.RandomNames()
	for a := range r {
		sd = append(sd, SampleMarginal("sd("+rn[a]+")", sdDraws[a]))
	}
	k := 0
	for b := range r {
		for a := b + 1; a < r; a++ {
			// Effects of independent blocks are uncorrelated by the model.
			if m.OmegaFree(glmm.OmegaIndex(a, b, r)) {
				corr = append(corr, SampleMarginal("cor("+rn[a]+","+rn[b]+")", corrDraws[k]))
			}
			k++
		}
	}
	return sd, corr, nil
}

// SampleMarginal returns the summary of the draws x, which it sorts:
// their mean and standard deviation and, by R's type 7 rule, quantiles.
func SampleMarginal(name string, x []float64) Marginal {
	slices.Sort(x)
	var mean, ss float64
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		ss += (v - mean) * (v - mean)
	}
	q := func(p float64) float64 {
		// Linear interpolation between order statistics (R's type 7).
		h := p * float64(len(x)-1)
		lo := int(math.Floor(h))
		hi := min(lo+1, len(x)-1)
		return x[lo] + (h-float64(lo))*(x[hi]-x[lo])
	}
	return Marginal{Name: name, Mean: mean, SD: math.Sqrt(ss / float64(max(1, len(x)-1))), Q025: q(0.025), Q50: q(0.5), Q975: q(0.975)}
}
