// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"math"
	"strings"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// priorDominated is the ratio of a global parameter's posterior standard
// deviation to its prior's above which the data are said to hardly inform
// it: the posterior is then mostly the prior.
const priorDominated = 0.3

// boundSEWarn is the Monte Carlo standard error of the final lower bound,
// in nats, above which the bound is said to be unreliable.
const boundSEWarn = 1.0

// boundDropWarn is the fall of the lower bound, in nats beyond three Monte
// Carlo standard errors of the final one, from its best window to the end
// of a fit, above which the fit is said to have lost its way: a fit
// that converges ends at its highest bound, less noise.
const boundDropWarn = 10.0

// boundDropPerSubject raises boundDropWarn by this many nats a subject.
// The window averages of h are taken at iterates that jitter about the
// optimum at Snngm's fixed step length, from one draw each, and with many
// subjects both add up: glmmfit's default fit of 10^6 simulated Bernoulli
// subjects (RVB1; the README's -batch comparison) converged with its
// first window 19 nats (1.9e-5 a subject) above its final bound (SE 2.3),
// while the bound at the fixed draws moved less than a nat between
// windows; at 10^7 subjects one of four windows lay 36 nats above. A step
// rule that loses its way costs far more (RVB1 on grouseticks at the
// unshortened step of vi.StepShared ended at a bound of -6.2e6), and no
// fall of some nats could tell a global mean a few posterior sds off
// anyway: that costs about half their square.
const boundDropPerSubject = 5e-5

// bestWindow returns the highest lower bound in the fit's trace.
func bestWindow(res *vi.Result) (float64, bool) {
	best, ok := math.Inf(-1), false
	for _, t := range res.Trace {
		if !math.IsNaN(t.LowerBound) && t.LowerBound > best {
			best, ok = t.LowerBound, true
		}
	}
	return best, ok
}

// diagnose returns warnings about a fit whose estimates may mislead: a
// response that is all 0 (or all successes), parameters the data hardly inform (their
// posterior close to their prior: separation, no variation in a
// predictor, all weights zero), a lower bound whose Monte Carlo error
// is large, and q far from the posterior by the Pareto k of the ratios
// over every variable, of the correction imp, or of the check corr of q's
// marginal (checkMarginal). The fit's results stand; the warnings say how
// they may be wrong. In a -shard fit whole holds the checks of all the
// processes' data (nil otherwise).
func diagnose(m *glmm.Model, res *vi.Result, imp *posterior.GlobalImportance, corr *correctionDoc, whole *wholeData) []string {
	var w []string
	constant, isConstant := constantResponse(m)
	flat := flatRandomEffects(m)
	if whole != nil {
		// A -shard fit: the checks of all the processes' data.
		constant, isConstant, flat = whole.constant, whole.constant != "", whole.flat
	}
	if isConstant {
		w = append(w, fmt.Sprintf("every response is %s: the data cannot place the fixed effects, whose estimates are driven by the prior", constant))
	}
	for _, name := range flat {
		w = append(w, fmt.Sprintf("the random effect %s does not vary within any subject: its variance cannot be told apart from the random intercept's, and its estimate is driven by the prior", name))
	}
	if res.Status != vi.Cancelled {
		cov := res.GlobalCov()
		names := m.GlobalNames()
		sd0 := m.PriorSD()
		p := m.P()
		var fixed, omega []string
		nr := res.N * res.R
		kd, hasDisp := m.Dispersion()
		top := p + glmm.NumOmega(m.R())
		for k, name := range names {
			if hasDisp && k == kd || k >= top || k >= p && !m.OmegaFree(k-p) {
				continue // the dispersion below; crossed factors have their own prior; entries across independent blocks are not parameters
			}
			// Mostly prior: a posterior sd near the prior's; or, for a
			// fixed effect, a mean beyond one prior sd (ten log-odds or
			// log-rate units per sd of the predictor), which only
			// separation and the prior's pull produce.
			if math.Sqrt(cov.At(k, k)) > priorDominated*sd0 || k < p && math.Abs(res.Mu[nr+k]) > sd0 {
				if k < p {
					fixed = append(fixed, name)
				} else {
					omega = append(omega, name)
				}
			}
		}
		if len(fixed) > 0 {
			w = append(w, fmt.Sprintf("the data hardly inform the fixed effects %s (posterior sd above %g of the prior's, or a mean beyond the prior's sd, on the fit's scale): separation, or a predictor without variation, leaves their estimates to the prior", strings.Join(fixed, ", "), priorDominated))
		}
		if len(omega) > 0 {
			w = append(w, fmt.Sprintf("the data hardly inform the random-effect covariance parameters %s: a random effect without variation within subjects, or too few subjects, leaves them to the prior", strings.Join(omega, ", ")))
		}
		if hasDisp && m.Family() == glmm.NegBinomial {
			// A shape phi past the counts' own scale, or poorly
			// determined, is a Poisson in all but name.
			mu, sd := res.Mu[nr+kd], math.Sqrt(cov.At(kd, kd))
			if mu > math.Log(1e3) || sd > priorDominated*sd0 {
				w = append(w, fmt.Sprintf("the negative binomial shape phi is large (posterior median %.3g, log(phi) sd %.2g): the counts show little overdispersion beyond the random effects, and -family poisson fits the same model more simply", math.Exp(mu), sd))
			}
		}
	}
	n := res.N
	if whole != nil {
		n = whole.subjects // res.N is this process's
	}
	w = append(w, boundWarnings(res, n)...)
	switch {
	case trusted(imp) && imp.QK > posterior.ParetoKBad:
		// The correction's own draws say how far q's marginal of theta_g
		// is, and its corrected figures are there to read.
		w = append(w, qMarginalWarning(imp.QK, "", fmt.Sprintf("read the importance-corrected summaries (Pareto k %.2f), not q's", imp.K)))
	case imp == nil && corr != nil && corr.Checked && float64(corr.QK) > posterior.ParetoKBad:
		// Checked, not corrected (checkMarginal).
		w = append(w, qMarginalWarning(float64(corr.QK), fmt.Sprintf(" at %d draws", corr.Draws), "-correct always corrects them"))
	case imp != nil && !trusted(imp):
		w = append(w, fmt.Sprintf("even importance sampling of the fixed effects and variance parameters with a proposal adapted to them has Pareto k %.2f, above %g: neither q's summaries nor corrected ones can be trusted here; check against MCMC", imp.K, float64(posterior.ParetoKBad)))
	case imp == nil:
		if k, _, err := posterior.ParetoK(res.LogWeights); err == nil && k > posterior.ParetoKWarn {
			w = append(w, fmt.Sprintf("the Pareto k of the importance ratios p/q is %.2f, above %g: the Gaussian approximation misses part of the posterior (often the spread of the random-effect sds, which it understates); -correct always corrects the fixed effects and sds, or check against MCMC before relying on intervals", k, float64(posterior.ParetoKWarn)))
		}
	}
	return w
}

// boundWarnings returns the warnings of a fit of n subjects about its
// lower bound: one that fell during the fit, and one whose Monte Carlo
// error is large.
func boundWarnings(res *vi.Result, n int) []string {
	var w []string
	if best, ok := bestWindow(res); ok && res.Status != vi.Cancelled {
		if drop := best - res.LowerBound; drop > boundDropWarn+3*res.LowerBoundSE+boundDropPerSubject*float64(n) {
			w = append(w, fmt.Sprintf("the lower bound fell during the fit, from %.1f at its best window to %.1f at the end: the step rule lost its way, and the estimates may be far from the optimum", best, res.LowerBound))
		}
	}
	// Draws cut for the size of the fit explain a large standard error:
	// the bound line says so (drawsCut), and a warning on every large fit
	// would teach users to skip warnings.
	if se := res.LowerBoundSE; se > boundSEWarn && res.LowerBoundDraws >= vi.DefaultFinalDraws {
		w = append(w, fmt.Sprintf("the lower bound's Monte Carlo standard error is %.3g nats: the approximation has heavy tails here, so the bound, and comparisons of models by it, are unreliable", se))
	}
	return w
}

// drawsCut says why a fit of n subjects estimated its final bound from
// fewer than vi.DefaultFinalDraws draws, if its standard error is above
// boundSEWarn, or is empty. The spread of h, a sum of a term per subject,
// grows as the square root of their number, so the standard error then
// says nothing about heavy tails. (A bound that stopped early, its
// standard error below vi's FinalSE, needs no reason.)
func drawsCut(res *vi.Result, n int) string {
	switch {
	case res.LowerBoundDraws >= vi.DefaultFinalDraws || res.LowerBoundDraws == 0 || res.LowerBoundSE <= boundSEWarn:
		return ""
	case res.Passes > 0:
		// A stochastic fit from near the optimum takes as few draws as
		// give a standard error (vi's Stochastic).
		return "as few as give a s.e. in a stochastic fit (-batch)"
	default:
		return fmt.Sprintf("fewer for %d subjects so that the bound costs about as much as the fit", n)
	}
}

// qMarginalWarning says that q's marginal of theta_g has Pareto k above
// posterior.ParetoKBad (from draws draws, if not empty), and what to do.
func qMarginalWarning(k float64, draws, advice string) string {
	return fmt.Sprintf("the Pareto k of q's marginal of the fixed effects and variance parameters is %.2f%s (the random effects integrated out), above %g: the Gaussian approximation misses part of their posterior (often the spread of the random-effect sds, which it understates); %s", k, draws, float64(posterior.ParetoKBad), advice)
}

// flatRandomEffects returns the random effects other than the intercept
// whose column of Z is constant within every subject.
func flatRandomEffects(m *glmm.Model) []string {
	r := m.R()
	names := m.RandomNames()
	var out []string
	for a := range r {
		if names[a] == "(Intercept)" {
			continue
		}
		flat := true
		for i := 0; i < m.NumSubjects() && flat; i++ {
			z := m.ZRows(i)
			for j := r; j < len(z); j += r {
				if z[j+a] != z[a] {
					flat = false
					break
				}
			}
		}
		if flat {
			out = append(out, names[a])
		}
	}
	return out
}

// constantResponse reports whether every response is 0, or (Bernoulli and
// binomial) every trial a success, and which.
func constantResponse(m *glmm.Model) (string, bool) {
	switch allZero, allFull := responseIs(m); {
	case allZero:
		return "0", true
	case allFull:
		return "a success", true
	}
	return "", false
}

// responseIs reports whether every response of m is 0, and whether
// (Bernoulli and binomial) every trial is a success; both false for a
// gaussian response.
func responseIs(m *glmm.Model) (allZero, allFull bool) {
	if m.Family() == glmm.Gaussian {
		return false, false
	}
	allZero, allFull = true, true
	counts := m.Family() == glmm.Poisson || m.Family() == glmm.NegBinomial
	for i := range m.NumSubjects() {
		y, trials, _ := m.Response(i)
		for j, v := range y {
			allZero = allZero && v == 0
			allFull = allFull && !counts && v == trials[j]
		}
	}
	return allZero, allFull
}
