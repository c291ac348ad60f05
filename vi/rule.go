// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"fmt"
	"math"
	"strings"

	"github.com/sparsevi/sparsevi/parallel"
)

// A Rule is a step rule: how a fit moves the variational parameters from
// one iteration's estimate of the gradient of the lower bound. The rules
// are the types Snngm (the default), Adam, NAdam, PGA, Nagm and VOGN, each
// a value carrying its own parameters, whose zero fields select the
// rule's defaults. Fit's driver owns everything around the step for every
// rule alike: the windows, convergence (Converger), backing off from a
// failure (restoring the best state and halving the rule's step) and the
// trace.
type Rule interface {
	// String returns the rule's name, as ParseRule reads it.
	String() string

	// check returns an error naming the first field out of its range.
	check() error
	// withDefaults returns the rule with its zero fields set: alpha0 is
	// the fit's default for Snngm's Alpha0, and free the number of
	// entries of lambda that may change.
	withDefaults(alpha0 float64, free int) Rule
	// iterator returns the rule's iterator over fam, whose passes run on
	// pool; the rule has its defaults.
	iterator(fam family, pool *parallel.Pool) (iterator, error)
}

// Snngm is stochastic normalised natural gradient ascent with momentum, the
// paper's proposal and the default rule (see the package documentation).
type Snngm struct {
	// Alpha is the step size; 0 means Alpha0 times the square root of
	// the number of variational parameters that may change.
	Alpha float64
	// Alpha0 is the step per square root of the number of variational
	// parameters; 0 means DefaultAlpha0 for GVA and DefaultAlpha0BlockDiag
	// for BlockDiag, times sqrt(RVBStepSubjects/n) for RVB targets of n >
	// RVBStepSubjects subjects that start from their own mode (a Starter
	// under InitMode), and times StepShared/K when K > StepShared global
	// variables are each outside some subject's support
	// (GlobalSupporter), divided by QuadraticStepDivisor as well when
	// the start is refined (QuadraticStarter).
	Alpha0 float64
	// Beta1 is the momentum's decay rate; 0 means 0.9. Beta2 is, for the
	// block-diagonal family, the decay rate of the mean square gradient
	// norm by which it normalises; 0 means 0.999.
	Beta1, Beta2 float64
}

// Adam is Kingma and Ba's rule on the Euclidean gradient.
type Adam struct {
	// Alpha is the step size; 0 means 1e-3.
	Alpha float64
	// Beta1 and Beta2 are the decay rates of the first and second
	// moments; 0 means 0.9 and 0.999.
	Beta1, Beta2 float64
	// Eps is added to the root of the second moment; 0 means 1e-8.
	Eps float64
}

// NAdam is Adam fed the natural gradient (the paper's name).
type NAdam Adam

// PGA is ProxGenAdam: Adam's moments, uncorrected, on the gradient of
// E_q log p alone, with a proximal step for the entropy on each diagonal
// entry of the factor (the paper's supplement S5.2).
type PGA Adam

// Nagm is natural gradient ascent on the momentum of the clipped
// Euclidean gradient.
type Nagm struct {
	// Alpha is the step of the mean; the factor's diagonal steps Alpha/10
	// and its other entries Alpha/100. 0 means 0.01.
	Alpha float64
	// Beta1 is the momentum's decay rate; 0 means 0.9.
	Beta1 float64
	// Clip is the largest norm of a gradient; 0 means 5e5.
	Clip float64
}

// VOGN is variational online Gauss–Newton (Khan et al. 2018), adapted to
// the structured precision as in the paper's supplement S5.1: the
// precision follows a moving average of the Gauss–Newton outer products of
// the per-subject gradients, and the mean a step along its inverse times
// the momentum of the gradient of log p.
type VOGN struct {
	// Alpha is the mean's step; 0 means 1e-3.
	Alpha float64
	// Beta1 is the momentum's decay rate and Beta2 the precision's; 0
	// means 0.9 and 0.999.
	Beta1, Beta2 float64
}

// String returns "snngm".
func (Snngm) String() string { return "snngm" }

// String returns "adam".
func (Adam) String() string { return "adam" }

// String returns "nadam".
func (NAdam) String() string { return "nadam" }

// String returns "pga".
func (PGA) String() string { return "pga" }

// String returns "nagm".
func (Nagm) String() string { return "nagm" }

// String returns "vogn".
func (VOGN) String() string { return "vogn" }

// Rules returns the zero value of every rule, the default first.
func Rules() []Rule { return []Rule{Snngm{}, Adam{}, NAdam{}, PGA{}, Nagm{}, VOGN{}} }

// ParseRule returns the zero value (the defaults) of the rule with the
// given name, ignoring case.
func ParseRule(name string) (Rule, error) {
	var names []string
	for _, r := range Rules() {
		if strings.EqualFold(name, r.String()) {
			return r, nil
		}
		names = append(names, r.String())
	}
	return nil, fmt.Errorf("vi: unknown step rule %q (want one of %s)", name, strings.Join(names, ", "))
}

// Defaults of the rules' fields.
const (
	defaultBeta1 = 0.9
	defaultBeta2 = 0.999
	defaultEps   = 1e-8
	defaultAlpha = 1e-3 // Adam, NAdam, PGA and VOGN
	defaultNagm  = 0.01
	defaultClip  = 5e5
)

func orDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

func (s Snngm) withDefaults(alpha0 float64, free int) Rule {
	s.Alpha0 = orDefault(s.Alpha0, alpha0)
	s.Alpha = orDefault(s.Alpha, s.Alpha0*math.Sqrt(float64(free)))
	s.Beta1 = orDefault(s.Beta1, defaultBeta1)
	s.Beta2 = orDefault(s.Beta2, defaultBeta2)
	return s
}

func (a Adam) withDefaults(float64, int) Rule { return a.defaults() }

func (a Adam) defaults() Adam {
	a.Alpha = orDefault(a.Alpha, defaultAlpha)
	a.Beta1 = orDefault(a.Beta1, defaultBeta1)
	a.Beta2 = orDefault(a.Beta2, defaultBeta2)
	a.Eps = orDefault(a.Eps, defaultEps)
	return a
}

func (a NAdam) withDefaults(float64, int) Rule { return NAdam(Adam(a).defaults()) }
func (a PGA) withDefaults(float64, int) Rule   { return PGA(Adam(a).defaults()) }

func (a Nagm) withDefaults(float64, int) Rule {
	a.Alpha = orDefault(a.Alpha, defaultNagm)
	a.Beta1 = orDefault(a.Beta1, defaultBeta1)
	a.Clip = orDefault(a.Clip, defaultClip)
	return a
}

func (v VOGN) withDefaults(float64, int) Rule {
	v.Alpha = orDefault(v.Alpha, defaultAlpha)
	v.Beta1 = orDefault(v.Beta1, defaultBeta1)
	v.Beta2 = orDefault(v.Beta2, defaultBeta2)
	return v
}

// field is one field of a rule for checkFields.
type field struct {
	name string
	v    float64
	kind uint8 // fieldStep, fieldRate or fieldNorm
}

const (
	fieldStep uint8 = iota // a positive finite number, or 0 for the default
	fieldRate              // a decay rate in [0, 1)
	fieldNorm              // a positive number, +Inf allowed
)

// checkFields returns an error naming the first of the rule's fields out
// of its range. Zero values are valid: they select defaults.
func checkFields(rule string, fields ...field) error {
	for _, f := range fields {
		var want string
		switch f.kind {
		case fieldRate:
			// A decay rate of 1 or more never forgets (Adam's bias
			// correction then divides by zero), a negative one
			// oscillates.
			if f.v >= 0 && f.v < 1 {
				continue
			}
			want = "a decay rate in (0, 1), or 0 for the default"
		default:
			// A NaN or infinite step leaves the fit nowhere to go; an
			// infinite clip (never clip) is meaningful.
			if !math.IsNaN(f.v) && f.v >= 0 && !(math.IsInf(f.v, 1) && f.kind != fieldNorm) {
				continue
			}
			want = "a positive finite number, or 0 for the default"
			if f.kind == fieldNorm {
				want = "a positive norm, or 0 for the default"
			}
		}
		return fmt.Errorf("vi: %w: %s.%s is %v; want %s", ErrSettings, rule, f.name, f.v, want)
	}
	return nil
}

func (s Snngm) check() error {
	return checkFields("Snngm", field{name: "Alpha", v: s.Alpha}, field{name: "Alpha0", v: s.Alpha0},
		field{name: "Beta1", v: s.Beta1, kind: fieldRate}, field{name: "Beta2", v: s.Beta2, kind: fieldRate})
}

func (a Adam) check() error { return a.checkAs("Adam") }

func (a Adam) checkAs(name string) error {
	return checkFields(name, field{name: "Alpha", v: a.Alpha}, field{name: "Beta1", v: a.Beta1, kind: fieldRate},
		field{name: "Beta2", v: a.Beta2, kind: fieldRate}, field{name: "Eps", v: a.Eps})
}

func (a NAdam) check() error { return Adam(a).checkAs("NAdam") }
func (a PGA) check() error   { return Adam(a).checkAs("PGA") }

func (a Nagm) check() error {
	return checkFields("Nagm", field{name: "Alpha", v: a.Alpha}, field{name: "Beta1", v: a.Beta1, kind: fieldRate},
		field{name: "Clip", v: a.Clip, kind: fieldNorm})
}

func (v VOGN) check() error {
	return checkFields("VOGN", field{name: "Alpha", v: v.Alpha}, field{name: "Beta1", v: v.Beta1, kind: fieldRate},
		field{name: "Beta2", v: v.Beta2, kind: fieldRate})
}
