// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"gonum.org/v1/gonum/mathext"
)

// Family is a response distribution with its link. Its zero value is not a
// valid family. A Family is a plain value: its methods hold no state and
// are safe for concurrent use.
//
// Gaussian and NegBinomial have a dispersion parameter, which joins the
// global block on the log scale as psi: log sigma (the residual standard
// deviation) and log phi (the negative binomial shape). The methods take
// psi as an argument and ignore it for the other families.
type Family int

const (
	// Poisson counts y = 0, 1, 2, ... with log link: mean exp(eta).
	Poisson Family = iota + 1
	// Bernoulli responses y in {0, 1} with logit link: mean logistic(eta).
	Bernoulli
	// Binomial successes y = 0..m out of m trials with logit link: mean per
	// trial logistic(eta).
	Binomial
	// Gaussian responses with identity link: y ~ N(eta, sigma^2), psi =
	// log sigma.
	Gaussian
	// NegBinomial counts with log link, glmmTMB's nbinom2: mean mu =
	// exp(eta), variance mu + mu^2/phi, psi = log phi.
	NegBinomial
)

// MaxPoissonEta is the largest linear predictor at which the Poisson mean
// exp(eta) is evaluated. Beyond it the mean and its derivatives are those at
// MaxPoissonEta, so that a diverging fit gives a finite, hugely negative log
// likelihood (and a gradient pointing back) rather than an overflow. No data
// set can be fitted near it: exp(700) is about 1e304.
const MaxPoissonEta = 700

// ParseFamily returns the family named by s: "poisson", "bernoulli",
// "binomial", "gaussian" or "negbinomial" (also "nbinom2"), in any case.
func ParseFamily(s string) (Family, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "poisson":
		return Poisson, nil
	case "bernoulli":
		return Bernoulli, nil
	case "binomial":
		return Binomial, nil
	case "gaussian":
		return Gaussian, nil
	case "negbinomial", "nbinom2":
		return NegBinomial, nil
	}
	return 0, fmt.Errorf("glmm: unknown family %q (want poisson, bernoulli, binomial, gaussian or negbinomial)", s)
}

// String returns the lower-case name of the family.
func (f Family) String() string {
	switch f {
	case Poisson:
		return "poisson"
	case Bernoulli:
		return "bernoulli"
	case Binomial:
		return "binomial"
	case Gaussian:
		return "gaussian"
	case NegBinomial:
		return "negbinomial"
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// Valid reports whether f is one of the defined families.
func (f Family) Valid() bool { return f >= Poisson && f <= NegBinomial }

// HasDispersion reports whether the family has a dispersion parameter
// (Gaussian and NegBinomial), whose log psi is the last entry of the
// global block.
func (f Family) HasDispersion() bool { return f == Gaussian || f == NegBinomial }

// DispersionName returns the name of the dispersion parameter, "sigma"
// for Gaussian and "phi" for NegBinomial, and "" for the other families.
func (f Family) DispersionName() string {
	switch f {
	case Gaussian:
		return "sigma"
	case NegBinomial:
		return "phi"
	}
	return ""
}

// logisticLogLik returns y eta - m log(1 + exp(eta)) in the form
//
//	-(y softplus(-eta) + (m-y) softplus(eta)),
//
// with softplus(x) = log(1 + exp(x)): a sum of terms of one sign, so it keeps relative accuracy even where
// y eta and m softplus(eta) nearly cancel (y = m and eta large). Both
// softplus terms share log1p(exp(-|eta|)).
func logisticLogLik(y, m, eta float64) float64 {
	l := math.Log1p(math.Exp(-math.Abs(eta)))
	return -(m*l + y*max(-eta, 0) + (m-y)*max(eta, 0))
}

// logistic returns 1/(1+exp(-x)) without overflow.
func logistic(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// LogLik returns log p(y | eta, psi) without the data-only constant (see
// Constant): y eta - exp(eta) for Poisson, y eta - m log(1 + exp(eta)) for
// Bernoulli (m = 1) and binomial, -(y - eta)^2 / (2 sigma^2) - log sigma for
// Gaussian, and
//
//	log Gamma(y + phi) - log Gamma(phi) + phi log phi + y eta - (y + phi) log(phi + exp(eta))
//
// for NegBinomial. The binomial term is computed from eta, not from the
// mean, so it is accurate for |eta| up to the float64 range.
func (f Family) LogLik(y, m, eta, psi float64) float64 {
	switch f {
	case Poisson:
		return y*eta - math.Exp(min(eta, MaxPoissonEta))
	case Bernoulli, Binomial:
		return logisticLogLik(y, m, eta)
	case Gaussian:
		r := (y - eta) * math.Exp(-psi)
		return -0.5*r*r - psi
	case NegBinomial:
		// phi psi - (y + phi) log(phi + mu) rearranged as
		// -phi log(1 + mu/phi) - y log(phi + mu), whose terms stay small
		// as phi grows towards the Poisson limit.
		e := min(eta, MaxPoissonEta)
		x := e - psi
		soft := max(x, 0) + math.Log1p(math.Exp(-math.Abs(x)))
		return lgammaDiff(y, math.Exp(psi)) + y*(e-logAddExp(psi, e)) - math.Exp(psi)*soft
	}
	panic("glmm: invalid family")
}

// lgammaDiff returns log Gamma(y + phi) - log Gamma(phi) for a count
// y >= 0: a sum of logs for small counts, where the difference of two
// large log-gammas would cancel.
func lgammaDiff(y, phi float64) float64 {
	if y <= 64 {
		var s float64
		for k := 0.0; k < y; k++ {
			s += math.Log(phi + k)
		}
		return s
	}
	a, _ := math.Lgamma(y + phi)
	b, _ := math.Lgamma(phi)
	return a - b
}

// logAddExp returns log(exp(a) + exp(b)) without overflow.
func logAddExp(a, b float64) float64 {
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// nbTerms returns, for the negative binomial at (y, eta, psi), the
// derivatives of LogLik in eta, with the mean clamped as Poisson's:
// d1 = phi (y - mu)/(phi + mu), d2 = -phi mu (y + phi)/(phi + mu)^2 and
// d3 = d2 (phi - mu)/(phi + mu).
func nbTerms(y, eta, psi float64) (d1, d2, d3 float64) {
	// With t = mu/(phi + mu) = logistic(eta - psi) and 1 - t, computed
	// without overflow for any eta - psi.
	t := logistic(min(eta, MaxPoissonEta) - psi)
	u := logistic(psi - min(eta, MaxPoissonEta))
	d1 = y*u - math.Exp(psi)*t
	d2 = -(y + math.Exp(psi)) * t * u
	return d1, d2, d2 * (u - t)
}

// Derivs returns the first three derivatives of LogLik with respect to eta:
// for the exponential families with canonical link d1 = y - m mu,
// d2 = -m dmu/deta and d3 = -m d2mu/deta2, with mu the mean per trial.
func (f Family) Derivs(y, m, eta, psi float64) (d1, d2, d3 float64) {
	switch f {
	case Poisson:
		mu := math.Exp(min(eta, MaxPoissonEta))
		return y - mu, -mu, -mu
	case Bernoulli, Binomial:
		// With e = exp(-|eta|) the mean p and 1-p are 1/(1+e) and e/(1+e)
		// in some order, p(1-p) = e/(1+e)^2 and 1-2p = -tanh(eta/2). Taking
		// d1 = y(1-p) - (m-y)p keeps relative accuracy when y = m or y = 0
		// and the mean is near y.
		e := math.Exp(-math.Abs(eta))
		q := 1 / (1 + e)
		p, p1 := q, e*q
		if eta < 0 {
			p, p1 = p1, p
		}
		v := e * q * q
		return y*p1 - (m-y)*p, -m * v, m * v * math.Tanh(eta/2)
	case Gaussian:
		prec := math.Exp(-2 * psi)
		return (y - eta) * prec, -prec, 0
	case NegBinomial:
		return nbTerms(y, eta, psi)
	}
	panic("glmm: invalid family")
}

// PsiDeriv returns the derivative of LogLik with respect to psi, the log
// of the dispersion parameter: (y - eta)^2/sigma^2 - 1 for Gaussian,
//
//	phi (digamma(y + phi) - digamma(phi) + psi + 1 - log(phi + mu) - (y + phi)/(phi + mu))
//
// for NegBinomial, and 0 for the families without one.
func (f Family) PsiDeriv(y, m, eta, psi float64) float64 {
	switch f {
	case Gaussian:
		r := (y - eta) * math.Exp(-psi)
		return r*r - 1
	case NegBinomial:
		phi := math.Exp(psi)
		e := min(eta, MaxPoissonEta)
		// (y + phi)/(phi + mu) = y/(phi+mu) + phi/(phi+mu), both bounded.
		u := logistic(psi - e) // phi/(phi+mu)
		v := y * math.Exp(-logAddExp(psi, e))
		return phi * (digammaDiff(y, phi) + psi + 1 - logAddExp(psi, e) - u - v)
	}
	return 0
}

// digammaDiff returns digamma(y + phi) - digamma(phi) for a count y >= 0:
// a finite sum of 1/(phi + k) for small counts, where the difference of
// two large digammas would cancel.
func digammaDiff(y, phi float64) float64 {
	if y <= 64 {
		var s float64
		for k := 0.0; k < y; k++ {
			s += 1 / (phi + k)
		}
		return s
	}
	return mathext.Digamma(y+phi) - mathext.Digamma(phi)
}

// Constant returns the data-only term of log p(y | eta) that LogLik leaves
// out: -log y! for Poisson and NegBinomial, log C(m, y) for binomial,
// -log(2 pi)/2 for Gaussian and 0 for Bernoulli.
func (f Family) Constant(y, m float64) float64 {
	switch f {
	case Gaussian:
		return -0.5 * log2Pi
	case Poisson, NegBinomial:
		lg, _ := math.Lgamma(y + 1)
		return -lg
	case Bernoulli:
		return 0
	case Binomial:
		a, _ := math.Lgamma(m + 1)
		b, _ := math.Lgamma(y + 1)
		c, _ := math.Lgamma(m - y + 1)
		return a - b - c
	}
	panic("glmm: invalid family")
}

// Mean returns the mean per trial at eta: exp(eta) for Poisson and
// NegBinomial (with eta clamped at MaxPoissonEta), eta for Gaussian,
// logistic(eta) otherwise.
func (f Family) Mean(eta float64) float64 {
	switch f {
	case Gaussian:
		return eta
	case Poisson, NegBinomial:
		return math.Exp(min(eta, MaxPoissonEta))
	case Bernoulli, Binomial:
		return logistic(eta)
	}
	panic("glmm: invalid family")
}

// MaxCount is the largest Poisson count or binomial number of trials the
// families accept, 2^53: every integer up to it is exact in a float64, and
// larger counts are a sign of a column that is not a count.
const MaxCount = 1 << 53

// ErrResponse is wrapped by the errors of CheckResponse and of New for
// response values the family cannot produce.
var ErrResponse = errors.New("impossible response")

// CheckResponse reports an error wrapping ErrResponse if the family cannot
// produce y successes (or counts) out of m trials: a non-finite value, a
// negative or non-integer count, a Bernoulli y not in {0, 1}, fewer than one
// trial, a non-integer number of trials, y > m, or m != 1 for a family
// without trials. A Gaussian response may be any finite number.
func (f Family) CheckResponse(y, m float64) error {
	if !f.Valid() {
		return fmt.Errorf("invalid family %v", f)
	}
	if math.IsNaN(y) || math.IsInf(y, 0) {
		return fmt.Errorf("%w: response %v is not finite", ErrResponse, y)
	}
	if math.IsNaN(m) || math.IsInf(m, 0) {
		return fmt.Errorf("%w: number of trials %v is not finite", ErrResponse, m)
	}
	switch f {
	case Poisson, NegBinomial:
		if m != 1 {
			return fmt.Errorf("%w: %v trials given for a %v count (want 1)", ErrResponse, m, f)
		}
		if y < 0 || y != math.Trunc(y) {
			return fmt.Errorf("%w: %v response %v is not a non-negative integer", ErrResponse, f, y)
		}
		if y > MaxCount {
			return fmt.Errorf("%w: %v count %v is above %.4g, the largest a float64 holds exactly (is the column a count?)", ErrResponse, f, y, float64(MaxCount))
		}
	case Gaussian:
		if m != 1 {
			return fmt.Errorf("%w: %v trials given for a gaussian response (want 1)", ErrResponse, m)
		}
	case Bernoulli:
		if m != 1 {
			return fmt.Errorf("%w: %v trials given for a bernoulli response (want 1; use binomial)", ErrResponse, m)
		}
		if y != 0 && y != 1 {
			return fmt.Errorf("%w: bernoulli response %v is not 0 or 1", ErrResponse, y)
		}
	case Binomial:
		if m < 1 || m != math.Trunc(m) {
			return fmt.Errorf("%w: number of trials %v is not a positive integer", ErrResponse, m)
		}
		if m > MaxCount {
			return fmt.Errorf("%w: number of trials %v is above %.4g, the largest a float64 holds exactly", ErrResponse, m, float64(MaxCount))
		}
		if y < 0 || y != math.Trunc(y) {
			return fmt.Errorf("%w: binomial successes %v is not a non-negative integer", ErrResponse, y)
		}
		if y > m {
			return fmt.Errorf("%w: %v successes exceed %v trials", ErrResponse, y, m)
		}
	}
	return nil
}
