// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"fmt"
	"math"
)

// maxSubjectEta bounds |x'beta| of the rows of a subject that
// PrepareSubject takes, and |b| of the points SubjectLogDensity evaluates
// through it, so that exp(x'beta) exp(b) neither overflows nor underflows
// where exp(x'beta + b) does not.
const maxSubjectEta = 300

// PrepareSubject readies ws (from NewWorkspace) to evaluate subject i's log
// density as a function of its random effects at thetaG
// (SubjectLogDensity), and reports whether the model has that fast path: a
// random intercept alone (r = 1, every z of the subject 1) with the
// canonical link of the Bernoulli, binomial or Poisson family. The fast
// path takes exp(x'beta) of each row once, so that a point costs one exp
// instead of one per row: posterior's quadrature evaluates each subject at
// tens of points for every draw of theta_g. Where it reports false, Local
// and LocalHessian serve.
func (mod *Model) PrepareSubject(ws any, i int, thetaG []float64) bool {
	_, _, g := mod.Dims()
	if i < 0 || i >= mod.n || len(thetaG) != g {
		panic("glmm: bad index or length in PrepareSubject")
	}
	work := ws.(*workspace)
	work.subject = -1
	if mod.r != 1 || mod.link != CanonicalLink || !(mod.family == Bernoulli || mod.family == Binomial || mod.family == Poisson) {
		return false
	}
	s, e := mod.start[i], mod.start[i+1]
	for _, z := range mod.zRange(s, e) {
		if z != 1 {
			return false
		}
	}
	mod.setGlobal(work, thetaG)
	c := work.c[:e-s]
	mod.fixedEta(work, i, thetaG, c, false)
	for j, v := range c {
		if !(math.Abs(v) <= maxSubjectEta) {
			return false
		}
		// |v| <= maxSubjectEta: the reciprocal is exact to an ulp and
		// costs less than an exp.
		e := math.Exp(v)
		work.ecp[j], work.ecm[j] = e, 1/e
	}
	work.subject = i
	return true
}

// SubjectLogDensity returns the log density of the subject that
// PrepareSubject last prepared in ws, at its random effects b (length r):
// what Local gives for that subject. ws must not serve Local,
// LocalHessian or GlobalEta in between: they may replace the theta_g it
// holds. Unless nil, grad receives its gradient
// in b and hess (r×r) its Hessian, what LocalHessian gives, written even
// when it returns an error, which names the subject, for a value or
// gradient that is not finite.
func (mod *Model) SubjectLogDensity(ws any, b, grad, hess []float64) (float64, error) {
	work := ws.(*workspace)
	i := work.subject
	if i < 0 || len(b) != 1 || grad != nil && len(grad) != 1 || hess != nil && len(hess) != 1 {
		panic("glmm: SubjectLogDensity without PrepareSubject, or bad length")
	}
	s, e := mod.start[i], mod.start[i+1]
	c := work.c[:e-s]
	ecp, ecm := work.ecp[:len(c)], work.ecm[:len(c)]
	ys := mod.yRange(s, e)[:len(c)]
	b0 := b[0]
	direct, ebp, ebm := expPoint(b0)
	var ll, d1, d2 float64
	switch {
	case mod.family == Poisson:
		ws, capped := rowRange(mod.w, mod.ones, s, e), math.Exp(MaxPoissonEta)
		for j, y := range ys {
			eta := c[j] + b0
			var mu float64
			switch {
			case eta > MaxPoissonEta:
				mu = capped
			case direct:
				mu = math.Exp(eta)
			default:
				mu = ecp[j] * ebp
			}
			wt := ws[j]
			ll += wt * (y*eta - mu)
			d1 += wt * (y - mu)
			d2 -= wt * mu
		}
	case mod.unitWM && grad == nil && hess == nil:
		// The value alone, as the quadrature's points need: the log of
		// the product of the 1+exp(-|eta|), as Local takes it.
		prod := 1.0
		for j, y := range ys {
			eta := c[j] + b0
			var ex float64
			switch {
			case direct:
				ex = math.Exp(-math.Abs(eta))
			case eta >= 0:
				ex = ecm[j] * ebm
			default:
				ex = ecp[j] * ebp
			}
			ll += y*eta - max(eta, 0)
			prod *= 1 + ex
			if j&511 == 511 {
				ll -= math.Log(prod)
				prod = 1
			}
		}
		ll -= math.Log(prod)
	case mod.unitWM:
		prod := 1.0
		for j, y := range ys {
			eta := c[j] + b0
			ex, p := expNegAbs(eta, ecp[j], ecm[j], ebp, ebm, direct)
			ll += y*eta - max(eta, 0)
			prod *= 1 + ex
			if j&511 == 511 {
				ll -= math.Log(prod)
				prod = 1
			}
			d1 += y - p
			d2 -= ex / ((1 + ex) * (1 + ex))
		}
		ll -= math.Log(prod)
	default:
		ms, ws := rowRange(mod.m, mod.ones, s, e), rowRange(mod.w, mod.ones, s, e)
		for j, y := range ys {
			eta := c[j] + b0
			ex, p := expNegAbs(eta, ecp[j], ecm[j], ebp, ebm, direct)
			m, wt := ms[j], ws[j]
			ll += wt * (y*eta - m*(max(eta, 0)+math.Log1p(ex)))
			d1 += wt * (y - m*p)
			d2 -= wt * m * ex / ((1 + ex) * (1 + ex))
		}
	}
	// The random intercept's density N(0, 1/w^2), w = exp(omega).
	w := work.w[0]
	ll += mod.subjectConst(i) - 0.5*log2Pi + work.theta[mod.p] - 0.5*(w*b0)*(w*b0)
	d1 -= w * w * b0
	d2 -= w * w
	if grad != nil {
		grad[0] = d1
	}
	if hess != nil {
		hess[0] = d2
	}
	if math.IsNaN(ll+d1) || math.IsInf(ll+d1, 0) {
		return ll, fmt.Errorf("glmm: %s %q: log density %v is not finite (gradient %v)", mod.groupName, mod.groupLevels[i], ll, d1)
	}
	return ll, nil
}

// expPoint returns exp(b) and exp(-b) for the products with
// PrepareSubject's exp(x'beta), which give exp(eta) unless b is extreme:
// then direct, and the rows take exp(eta) themselves.
func expPoint(b float64) (direct bool, ebp, ebm float64) {
	if !(math.Abs(b) <= maxSubjectEta) {
		return true, 0, 0
	}
	ebp = math.Exp(b)
	return false, ebp, 1 / ebp
}

// expNegAbs returns exp(-|eta|) and the logistic mean 1/(1+exp(-eta)) of
// eta = c + b, from ecp = exp(c), ecm = exp(-c), ebp = exp(b) and ebm =
// exp(-b) unless direct.
func expNegAbs(eta, ecp, ecm, ebp, ebm float64, direct bool) (ex, p float64) {
	switch {
	case direct:
		ex = math.Exp(-math.Abs(eta))
	case eta >= 0:
		ex = ecm * ebm
	default:
		ex = ecp * ebp
	}
	q := 1 / (1 + ex)
	if eta >= 0 {
		return ex, q
	}
	return ex, ex * q
}

// SubjectQuadrature returns, for the subject that PrepareSubject last
// prepared in ws, the sums over the points b_p = b0 + x[p]/l of
//
//	v_p = jac[p] exp(logw[p] + log p(b_p) - f),
//
// of v_p b_p and of v_p b_p², log p the log density SubjectLogDensity
// gives: a one-dimensional quadrature rule's sum and first two moments,
// scaled by exp(-f), jac nil meaning 1 at every point. It reports false, and nothing else, where it has no
// such path (a family other than Bernoulli, or binomial with one trial and
// unit weights on every row, or a point beyond maxSubjectEta): then
// SubjectLogDensity serves point by point. A Bernoulli row's likelihood
// is a ratio of exp(eta) and 1 + exp(eta), which PrepareSubject's
// exp(x'beta) give with one exp per point: a point costs two exps and no
// log, where SubjectLogDensity's value and its weight take two exps and a
// log.
func (mod *Model) SubjectQuadrature(ws any, b0, l float64, x, logw, jac []float64, f float64) (s0, s1, s2 float64, ok bool) {
	work := ws.(*workspace)
	i := work.subject
	if i < 0 || len(x) != len(logw) || jac != nil && len(jac) != len(x) {
		panic("glmm: SubjectQuadrature without PrepareSubject, or bad length")
	}
	if !mod.unitWM {
		return 0, 0, 0, false
	}
	s, e := mod.start[i], mod.start[i+1]
	c := work.c[:e-s]
	ecp := work.ecp[:len(c)]
	ys := mod.yRange(s, e)[:len(c)]
	// The likelihood is exp(sum y eta) / prod (1 + exp(eta)): the
	// numerator joins the exp of the prior's density, and the denominator
	// is a product without branches, in two halves that the processor
	// overlaps. A point whose product or exp would leave the range of a
	// float64 takes the sign-split form (quadraturePoint).
	var sy, ny float64
	for j, y := range ys {
		sy += y * c[j]
		ny += y
	}
	// The random intercept's density N(0, 1/w^2), w = exp(omega), less f.
	w := work.w[0]
	k := mod.subjectConst(i) - 0.5*log2Pi + work.theta[mod.p] - f + sy
	half := len(ecp) / 2
	lo, hi := ecp[:half], ecp[half:]
	for p, xp := range x {
		b := xp/l + b0
		if !(math.Abs(b) <= maxSubjectEta) {
			return 0, 0, 0, false
		}
		ebp := math.Exp(b)
		d0, d1 := 1.0, 1.0
		for j, ej := range lo {
			d0 *= 1 + ej*ebp
			d1 *= 1 + hi[j]*ebp
		}
		if len(hi) > half {
			d1 *= 1 + hi[half]*ebp
		}
		den := d0 * d1
		arg := logw[p] + k - 0.5*(w*b)*(w*b) + ny*b
		var v float64
		if den <= 1e300 && arg < 700 {
			v = math.Exp(arg) / den
		} else {
			v = mod.quadraturePoint(work, b, ebp, logw[p]+k-sy)
		}
		if jac != nil {
			v *= jac[p]
		}
		s0 += v
		s1 += v * b
		s2 += v * b * b
	}
	return s0, s1, s2, true
}

// quadraturePoint returns SubjectQuadrature's v at b, ebp = exp(b), with
// lk its log weight and constants: each row's likelihood as
// exp(y eta - max(eta, 0)) / (1 + exp(-|eta|)), the products moved into
// logs before they leave the range of a float64.
func (mod *Model) quadraturePoint(work *workspace, b, ebp, lk float64) float64 {
	i := work.subject
	s, e := mod.start[i], mod.start[i+1]
	c := work.c[:e-s]
	ecp, ecm := work.ecp[:len(c)], work.ecm[:len(c)]
	ys := mod.yRange(s, e)[:len(c)]
	ebm := 1 / ebp
	num, den, logs := 1.0, 1.0, 0.0
	for j, y := range ys {
		eta := c[j] + b
		if eta >= 0 {
			ex := ecm[j] * ebm
			den *= 1 + ex
			if y == 0 {
				num *= ex
			}
		} else {
			ex := ecp[j] * ebp
			den *= 1 + ex
			if y != 0 {
				num *= ex
			}
		}
		if num < 1e-250 || den > 1e250 {
			logs += math.Log(num) - math.Log(den)
			num, den = 1, 1
		}
	}
	w := work.w[0]
	arg := lk - 0.5*(w*b)*(w*b) + logs
	if arg < 700 {
		return math.Exp(arg) * num / den
	}
	return math.Exp(arg + math.Log(num) - math.Log(den))
}

// SubjectThirdDerivative returns the third derivative in b of the log
// density of the subject that PrepareSubject last prepared in ws, at its
// random effect b (length 1): posterior's quadrature bends its grid by it
// toward the heavier tail of a skewed subject. It is 0 where Local's
// curvature does not change (a Poisson row beyond MaxPoissonEta).
func (mod *Model) SubjectThirdDerivative(ws any, b []float64) float64 {
	work := ws.(*workspace)
	i := work.subject
	if i < 0 || len(b) != 1 {
		panic("glmm: SubjectThirdDerivative without PrepareSubject, or bad length")
	}
	s, e := mod.start[i], mod.start[i+1]
	c := work.c[:e-s]
	ecp, ecm := work.ecp[:len(c)], work.ecm[:len(c)]
	b0 := b[0]
	direct, ebp, ebm := expPoint(b0)
	wts, ms := rowRange(mod.w, mod.ones, s, e), rowRange(mod.m, mod.ones, s, e)
	var d3 float64
	for j := range c {
		eta := c[j] + b0
		if mod.family == Poisson {
			switch {
			case eta > MaxPoissonEta:
			case direct:
				d3 -= wts[j] * math.Exp(eta)
			default:
				d3 -= wts[j] * ecp[j] * ebp
			}
			continue
		}
		// p(1-p)(1-2p) of the logistic mean p, by exp(-|eta|) = ex:
		// p(1-p) = ex/(1+ex)^2, and 1-2p = (1-ex)/(1+ex), negated for
		// eta >= 0.
		ex, _ := expNegAbs(eta, ecp[j], ecm[j], ebp, ebm, direct)
		q := 1 / (1 + ex)
		v := ex * q * q * (1 - ex) * q
		if eta >= 0 {
			v = -v
		}
		d3 -= wts[j] * ms[j] * v
	}
	return d3
}
