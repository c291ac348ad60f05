// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Family is an exponential family with its canonical link. Its zero value is
// not a valid family. A Family is a plain value: its methods hold no state
// and are safe for concurrent use.
type Family int

const (
	// Poisson counts y = 0, 1, 2, ... with log link: mean exp(eta).
	Poisson Family = iota + 1
	// Bernoulli responses y in {0, 1} with logit link: mean logistic(eta).
	Bernoulli
	// Binomial successes y = 0..m out of m trials with logit link: mean per
	// trial logistic(eta).
	Binomial
)

// MaxPoissonEta is the largest linear predictor at which the Poisson mean
// exp(eta) is evaluated. Beyond it the mean and its derivatives are those at
// MaxPoissonEta, so that a diverging fit gives a finite, hugely negative log
// likelihood (and a gradient pointing back) rather than an overflow. No data
// set can be fitted near it: exp(700) is about 1e304.
const MaxPoissonEta = 700

// ParseFamily returns the family named by s: "poisson", "bernoulli" or
// "binomial", in any case.
func ParseFamily(s string) (Family, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "poisson":
		return Poisson, nil
	case "bernoulli":
		return Bernoulli, nil
	case "binomial":
		return Binomial, nil
	}
	return 0, fmt.Errorf("glmm: unknown family %q (want poisson, bernoulli or binomial)", s)
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
	}
	return fmt.Sprintf("Family(%d)", int(f))
}

// Valid reports whether f is one of the defined families.
func (f Family) Valid() bool { return f >= Poisson && f <= Binomial }

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

// LogLik returns log p(y | eta) without the data-only constant (see
// Constant): y eta - exp(eta) for Poisson, y eta - m log(1 + exp(eta)) for
// Bernoulli (m = 1) and binomial. The binomial term is computed from eta, not
// from the mean, so it is accurate for |eta| up to the float64 range.
func (f Family) LogLik(y, m, eta float64) float64 {
	switch f {
	case Poisson:
		return y*eta - math.Exp(min(eta, MaxPoissonEta))
	case Bernoulli, Binomial:
		return logisticLogLik(y, m, eta)
	}
	panic("glmm: invalid family")
}

// Derivs returns the first three derivatives of LogLik with respect to eta:
// d1 = y - m mu, d2 = -m dmu/deta and d3 = -m d2mu/deta2, with mu the mean
// per trial.
func (f Family) Derivs(y, m, eta float64) (d1, d2, d3 float64) {
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
	}
	panic("glmm: invalid family")
}

// Constant returns the data-only term of log p(y | eta) that LogLik leaves
// out: -log y! for Poisson, log C(m, y) for binomial and 0 for Bernoulli.
func (f Family) Constant(y, m float64) float64 {
	switch f {
	case Poisson:
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

// Mean returns the mean per trial at eta: exp(eta) for Poisson (with eta
// clamped at MaxPoissonEta), logistic(eta) otherwise.
func (f Family) Mean(eta float64) float64 {
	switch f {
	case Poisson:
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
// trial, a non-integer number of trials, y > m, or m != 1 for Poisson and
// Bernoulli.
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
	case Poisson:
		if m != 1 {
			return fmt.Errorf("%w: %v trials given for a poisson count (want 1)", ErrResponse, m)
		}
		if y < 0 || y != math.Trunc(y) {
			return fmt.Errorf("%w: poisson response %v is not a non-negative integer", ErrResponse, y)
		}
		if y > MaxCount {
			return fmt.Errorf("%w: poisson count %v is above %.4g, the largest a float64 holds exactly (is the column a count?)", ErrResponse, y, float64(MaxCount))
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
