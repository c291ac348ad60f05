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
	// MCSE holds the Monte Carlo standard errors of the figures above
	// when they come from draws; it is zero for exact marginals.
	MCSE MonteCarloError
}

// Scale returns the marginal of c times the scalar, for c > 0: every
// figure and its Monte Carlo error multiplied by c.
func (m Marginal) Scale(c float64) Marginal {
	if !(c > 0) {
		panic("posterior: Marginal.Scale by a non-positive factor")
	}
	m.Mean, m.SD, m.Q025, m.Q50, m.Q975 = m.Mean*c, m.SD*c, m.Q025*c, m.Q50*c, m.Q975*c
	e := &m.MCSE
	e.Mean, e.SD, e.Q025, e.Q50, e.Q975 = e.Mean*c, e.SD*c, e.Q025*c, e.Q50*c, e.Q975*c
	return m
}

// MonteCarloError holds the Monte Carlo standard errors of a Marginal's
// figures computed from draws.
type MonteCarloError struct {
	Mean, SD        float64
	Q025, Q50, Q975 float64
}

// drawErrors returns the Monte Carlo standard errors of the mean, the sd
// and the quantiles of s effective independent draws with standard
// deviation sd, whose quantile function is q: sd/sqrt(s), sd/sqrt(2(s-1))
// (exact for a normal marginal, near enough otherwise), and for a quantile
// at p the half-width of the order statistics' 68% interval, q(p ± sqrt(p
// (1-p)/s)), which needs no density estimate.
func drawErrors(sd, s float64, q func(p float64) float64) MonteCarloError {
	if !(s > 1) {
		return MonteCarloError{Mean: math.Inf(1), SD: math.Inf(1), Q025: math.Inf(1), Q50: math.Inf(1), Q975: math.Inf(1)}
	}
	qe := func(p float64) float64 {
		d := math.Sqrt(p * (1 - p) / s)
		return (q(min(p+d, 1)) - q(max(p-d, 0))) / 2
	}
	return MonteCarloError{Mean: sd / math.Sqrt(s), SD: sd / math.Sqrt(2*(s-1)), Q025: qe(0.025), Q50: qe(0.5), Q975: qe(0.975)}
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
	// Each subject's figures are views of two arrays: no allocation per
	// subject.
	s.Subjects = make([]SubjectEffects, n)
	means, sds := make([]float64, n*r), make([]float64, n*r)
	for i := range n {
		lo, hi := i*r, (i+1)*r
		e := SubjectEffects{Level: levels[i], Mean: means[lo:hi:hi], SD: sds[lo:hi:hi]}
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
				corr = append(corr, SampleMarginal(CorName(rn[b], rn[a]), corrDraws[k]))
			}
			k++
		}
	}
	return sd, corr, nil
}

// SampleMarginal returns the summary of the draws x, which it sorts:
// their mean and standard deviation and, by R's type 7 rule, quantiles,
// with the Monte Carlo standard errors of all five for independent draws.
func SampleMarginal(name string, x []float64) Marginal {
	slices.Sort(x)
	mean, sd := meanSD(x)
	q := func(p float64) float64 { return quantile(x, p) }
	return Marginal{Name: name, Mean: mean, SD: sd, Q025: q(0.025), Q50: q(0.5), Q975: q(0.975), MCSE: drawErrors(sd, float64(len(x)), q)}
}

// CorName returns the name of the correlation of the random effects a and
// b, a first as in their order in the model: cor(a,b), as brms names it.
func CorName(a, b string) string { return "cor(" + a + "," + b + ")" }
