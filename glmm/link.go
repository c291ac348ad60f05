// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"fmt"
	"math"
	"strings"
)

// Link is the link function of a Bernoulli or binomial model: the
// probability of a success is F(eta) for the inverse link F.
type Link int

const (
	// CanonicalLink is each family's own: log for counts, logit for the
	// binomial families, identity for the Gaussian.
	CanonicalLink Link = iota
	// Probit has F the standard normal distribution function.
	Probit
	// Cloglog, the complementary log-log, has F(eta) = 1 - exp(-exp(eta)),
	// the probability of at least one event of a Poisson process of rate
	// exp(eta).
	Cloglog
)

// ParseLink returns the link named by s: "logit" (the binomial families'
// canonical link), "probit" or "cloglog", in any case; "" is
// CanonicalLink.
func ParseLink(s string) (Link, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "logit", "log", "identity", "canonical":
		return CanonicalLink, nil
	case "probit":
		return Probit, nil
	case "cloglog":
		return Cloglog, nil
	}
	return 0, fmt.Errorf("glmm: unknown link %q (want logit, probit or cloglog)", s)
}

// String returns "probit", "cloglog" or "canonical".
func (l Link) String() string {
	switch l {
	case CanonicalLink:
		return "canonical"
	case Probit:
		return "probit"
	case Cloglog:
		return "cloglog"
	}
	return fmt.Sprintf("Link(%d)", int(l))
}

// Name returns the link's name for family f: logit, log or identity for
// CanonicalLink, else the link's own.
func (l Link) Name(f Family) string {
	if l != CanonicalLink {
		return l.String()
	}
	switch f {
	case Poisson, NegBinomial:
		return "log"
	case Gaussian:
		return "identity"
	}
	return "logit"
}

// Link returns the model's link function.
func (mod *Model) Link() Link { return mod.link }

// Mean returns the mean per trial at the linear predictor eta under the
// model's family and link.
func (mod *Model) Mean(eta float64) float64 {
	if mod.link.binary() {
		return LinkMean(mod.link, eta)
	}
	return mod.family.Mean(eta)
}

// derivs returns Derivs of the model's family and link.
func (mod *Model) derivs(y, m, eta, psi float64) (d1, d2, d3 float64) {
	if mod.link.binary() {
		return LinkDerivs(mod.link, y, m, eta)
	}
	return mod.family.Derivs(y, m, eta, psi)
}

// linkInfo returns the Fisher information m F'(eta)^2 / (F (1 - F)) of
// one trial-weighted binomial observation under a non-canonical link.
func linkInfo(l Link, m, eta float64) float64 {
	f := LinkMean(l, eta)
	var df float64
	switch l {
	case Probit:
		df = math.Exp(-0.5*eta*eta) / math.Sqrt(2*math.Pi)
	case Cloglog:
		t := math.Exp(min(eta, MaxPoissonEta))
		df = t * math.Exp(-t)
	}
	if !(f > 0 && f < 1) {
		return 0
	}
	return m * df * df / (f * (1 - f))
}

// binary reports whether l is a non-canonical link of the binomial
// families.
func (l Link) binary() bool { return l == Probit || l == Cloglog }

// LinkLogLik returns y log F(eta) + (m - y) log(1 - F(eta)), the binomial
// log-likelihood without its constant, for a non-canonical link l.
func LinkLogLik(l Link, y, m, eta float64) float64 {
	lp, lq := logF(l, eta)
	var s float64
	if y != 0 {
		s += y * lp
	}
	if m != y {
		s += (m - y) * lq
	}
	return s
}

// LinkDerivs returns the first three derivatives of LinkLogLik in eta.
func LinkDerivs(l Link, y, m, eta float64) (d1, d2, d3 float64) {
	switch l {
	case Probit:
		// d/deta log Phi(eta) = lambda(eta), d/deta log Phi(-eta) =
		// -lambda(-eta), with lambda = phi/Phi the inverse Mills ratio,
		// lambda' = -lambda (x + lambda), lambda'' = -lambda' (x + lambda)
		// - lambda (1 + lambda').
		a1, a2, a3 := millsDerivs(eta)
		b1, b2, b3 := millsDerivs(-eta)
		return y*a1 - (m-y)*b1, y*a2 + (m-y)*b2, y*a3 - (m-y)*b3
	case Cloglog:
		// With t = exp(eta): d log F = g = t/expm1(t), d log(1-F) = -t;
		// dg = h = g (1 - g e^t), dh = h (1 - 2 g e^t) - g^2 t e^t.
		e := min(eta, MaxPoissonEta)
		t := math.Exp(e)
		ge := t / -math.Expm1(-t) // g e^t, without overflow
		g := ge * math.Exp(-t)
		h := g * (1 - ge)
		dh := h*(1-2*ge) - g*ge*t
		return y*g - (m-y)*t, y*h - (m-y)*t, y*dh - (m-y)*t
	}
	panic("glmm: LinkDerivs with " + l.String())
}

// LinkMean returns F(eta), the probability of a success.
func LinkMean(l Link, eta float64) float64 {
	switch l {
	case Probit:
		return 0.5 * math.Erfc(-eta/math.Sqrt2)
	case Cloglog:
		return -math.Expm1(-math.Exp(min(eta, MaxPoissonEta)))
	}
	panic("glmm: LinkMean with " + l.String())
}

// LinkOf returns the linear predictor F^-1(p) at which the probability of
// a success is p, 0 < p < 1: the logit for CanonicalLink.
func LinkOf(l Link, p float64) float64 { return linkOf(l, p) }

// linkOf returns F^-1(p) for 0 < p < 1.
func linkOf(l Link, p float64) float64 {
	switch l {
	case Probit:
		return -math.Sqrt2 * math.Erfcinv(2*p)
	case Cloglog:
		return math.Log(-math.Log1p(-p))
	}
	return math.Log(p / (1 - p))
}

// logF returns log F(eta) and log(1 - F(eta)), each accurate where it is
// tiny.
func logF(l Link, eta float64) (lp, lq float64) {
	switch l {
	case Probit:
		return logPhi(eta), logPhi(-eta)
	case Cloglog:
		t := math.Exp(min(eta, MaxPoissonEta))
		return math.Log(-math.Expm1(-t)), -t
	}
	panic("glmm: logF with " + l.String())
}

// logPhi returns log Phi(x), the log of the standard normal distribution
// function, without underflow far in the lower tail.
func logPhi(x float64) float64 {
	if x > -30 {
		return math.Log(0.5 * math.Erfc(-x/math.Sqrt2))
	}
	// Phi(x) = phi(x)/(-x) (1 - 1/x^2 + 3/x^4 - ...), x << 0.
	x2 := x * x
	return -0.5*x2 - math.Log(-x) - 0.5*math.Log(2*math.Pi) + math.Log1p(-1/x2+3/(x2*x2))
}

// millsDerivs returns lambda(x) = phi(x)/Phi(x) and its first two
// derivatives.
func millsDerivs(x float64) (l, l1, l2 float64) {
	if x > -30 {
		l = math.Exp(-0.5*x*x - 0.5*math.Log(2*math.Pi) - logPhi(x))
	} else {
		// lambda(x) = -x / (1 - 1/x^2 + 3/x^4 - ...), x << 0.
		x2 := x * x
		l = -x / (1 - 1/x2 + 3/(x2*x2))
	}
	l1 = -l * (x + l)
	l2 = -l1*(x+l) - l*(1+l1)
	return l, l1, l2
}
