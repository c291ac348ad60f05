// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package paper

import (
	"fmt"
	"strings"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
)

// The formulas of the models, in lme4 syntax over the columns of the
// loaders of package datasets.
const (
	// EpilepsyFormula is the Poisson random-slope model of the paper:
	// Base = log(base/4), Trt = 1 for progabide, Age = log(age) centred,
	// Visit = -0.3, -0.1, 0.1, 0.3 (see datasets.Epilepsy).
	EpilepsyFormula = "y ~ Base*Trt + Age + Visit + (1 + Visit | subject)"

	// ToenailFormula is the logistic random-intercept model of the paper:
	// Trt = 1 for terbinafine, t = time in months (see datasets.Toenail).
	ToenailFormula = "y ~ Trt*t + (1 | patientID)"

	// HERSFormula is the logistic random-intercept model of the paper:
	// y = 1{sbp > 140}, Age and BMI standardised, HTN = htnmeds,
	// Visit = -1, -0.6, ..., 1 (see datasets.HERS).
	HERSFormula = "y ~ Age + BMI + HTN + Visit + (1 | pptid)"

	// DiabetesFormula is the paper's diabetes model read literally: the
	// main term admission source and the four interactions, coded as R
	// codes this formula (46 fixed effects; see Diabetes).
	DiabetesFormula = "y ~ Admission + Discharge:Time + Discharge:Race + Time:Diagnosis + HbA1c:Diagnosis + (1 | patient_nbr)"

	// DiabetesMainFormula is the diabetes model with the main effects of
	// every variable of the interactions as well (55 fixed effects).
	DiabetesMainFormula = "y ~ Admission + Discharge*Time + Discharge*Race + Time*Diagnosis + HbA1c*Diagnosis + (1 | patient_nbr)"

	// CBPPFormula is the standard binomial model of lme4::cbpp, with
	// period categorical.
	CBPPFormula = "cbind(incidence, size - incidence) ~ period + (1 | herd)"

	// GrouseticksFormula is the Poisson model of Elston et al. (2001) for
	// lme4::grouseticks with its brood random intercept only (YEAR is
	// categorical). Their model also has random intercepts for the chick
	// (INDEX) and the location; sparsevi fits one grouping factor per model.
	GrouseticksFormula = "TICKS ~ YEAR + cHEIGHT + (1 | BROOD)"
)

// build parses src and builds it on fr for the family.
func build(src string, fr *datasets.Frame, fam glmm.Family) (*formula.Design, error) {
	f, err := formula.Parse(src)
	if err != nil {
		return nil, err
	}
	return formula.Build(f, fr, formula.Options{Family: fam})
}

// Epilepsy returns the Poisson random-slope model of the Epilepsy data
// (EpilepsyFormula): 236 rows of 59 patients, p = 6, r = 2. The paper's
// Base = log(base/4) is not centred, unlike MASS's lbase; Age is centred.
func Epilepsy(dir string) (*formula.Design, error) {
	fr, err := datasets.Epilepsy(dir)
	if err != nil {
		return nil, err
	}
	return build(EpilepsyFormula, fr, glmm.Poisson)
}

// Toenail returns the logistic random-intercept model of the Toenail data
// (ToenailFormula): 1908 rows of 294 patients, p = 4, r = 1. By default t
// is time in months, as the paper states; opts can standardise it.
func Toenail(dir string, opts datasets.ToenailOptions) (*formula.Design, error) {
	fr, err := datasets.Toenail(dir, opts)
	if err != nil {
		return nil, err
	}
	return build(ToenailFormula, fr, glmm.Bernoulli)
}

// HERS returns the logistic random-intercept model of the HERS data
// (HERSFormula) on the complete cases: 9172 rows of 2031 women, p = 5,
// r = 1.
func HERS(dir string) (*formula.Design, error) {
	fr, err := datasets.HERS(dir)
	if err != nil {
		return nil, err
	}
	return build(HERSFormula, fr, glmm.Bernoulli)
}

// DiabetesOptions holds the choices of the diabetes model. The zero value
// is the default model.
type DiabetesOptions struct {
	// Data are the choices of the data coding (see datasets.Diabetes).
	Data datasets.DiabetesOptions

	// MainEffects adds the main effects of discharge disposition, time in
	// hospital, race, diagnosis and HbA1c (DiabetesMainFormula) to the
	// literal model (DiabetesFormula).
	MainEffects bool
}

// Diabetes returns the logistic random-intercept model of the diabetes data:
// 45,694 encounters of 16,341 patients with at least two, r = 1.
//
// The paper "includes as main term the admission source, and the
// interactions between discharge disposition and time in hospital,
// discharge disposition and race, time in hospital and diagnosis, and HbA1c
// result and diagnosis". By default the model is that sentence read
// literally, DiabetesFormula, coded as R's model.matrix codes it: the
// intercept, Admission (2 contrasts), Discharge (both levels) × Time,
// Discharge (both levels) × Race (3 contrasts), Time × Diagnosis (8
// contrasts) and Diagnosis (all 9 levels) × HbA1c (3 contrasts): 46 fixed
// effects. This spans the main effects of Time, Race and HbA1c but not
// those of Discharge and Diagnosis. With opts.MainEffects the model is the
// hierarchical one, DiabetesMainFormula, with every main effect: 55 fixed
// effects.
func Diabetes(dir string, opts DiabetesOptions) (*formula.Design, error) {
	fr, err := datasets.Diabetes(dir, opts.Data)
	if err != nil {
		return nil, err
	}
	src := DiabetesFormula
	if opts.MainEffects {
		src = DiabetesMainFormula
	}
	return build(src, fr, glmm.Bernoulli)
}

// CBPP returns the binomial model of lme4::cbpp (CBPPFormula): 56 rows of
// 15 herds, p = 4, r = 1.
func CBPP(dir string) (*formula.Design, error) {
	fr, err := datasets.CBPP(dir)
	if err != nil {
		return nil, err
	}
	return build(CBPPFormula, fr, glmm.Binomial)
}

// Grouseticks returns the Poisson model of lme4::grouseticks with a brood
// random intercept (GrouseticksFormula): 403 chicks of 118 broods, p = 4,
// r = 1.
func Grouseticks(dir string) (*formula.Design, error) {
	fr, err := datasets.Grouseticks(dir)
	if err != nil {
		return nil, err
	}
	return build(GrouseticksFormula, fr, glmm.Poisson)
}

// entry is one model of the registry.
type entry struct {
	name    string
	formula string
	load    func(dir string) (*formula.Design, error)
}

// registry lists the models in the order of Names: Table 11's four first.
var registry = []entry{
	{"epilepsy", EpilepsyFormula, Epilepsy},
	{"toenail", ToenailFormula, func(dir string) (*formula.Design, error) { return Toenail(dir, datasets.ToenailOptions{}) }},
	{"hers", HERSFormula, HERS},
	{"diabetes", DiabetesFormula, func(dir string) (*formula.Design, error) { return Diabetes(dir, DiabetesOptions{}) }},
	{"cbpp", CBPPFormula, CBPP},
	{"grouseticks", GrouseticksFormula, Grouseticks},
}

// Names returns the names of the models: "epilepsy", "toenail", "hers",
// "diabetes" (the GLMMs of the paper's Table 11, in its order), then
// "cbpp" and "grouseticks".
func Names() []string {
	names := make([]string, len(registry))
	for k, e := range registry {
		names[k] = e.name
	}
	return names
}

func lookup(name string) (entry, error) {
	for _, e := range registry {
		if e.name == strings.ToLower(name) {
			return e, nil
		}
	}
	return entry{}, fmt.Errorf("paper: unknown model %q (known: %s)", name, strings.Join(Names(), ", "))
}

// Formula returns the formula of the named model with its default options.
func Formula(name string) (string, error) {
	e, err := lookup(name)
	if err != nil {
		return "", err
	}
	return e.formula, nil
}

// Load returns the named model with its default options, reading its data
// from dir.
func Load(name, dir string) (*formula.Design, error) {
	e, err := lookup(name)
	if err != nil {
		return nil, err
	}
	return e.load(dir)
}
