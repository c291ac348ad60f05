// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
)

// Prior says which coefficients the prior of the fixed effects, normal
// with mean 0 and standard deviation Options.PriorSD, is put on.
type Prior int

const (
	// PriorPaper puts it on the raw coefficients, as Tan's paper does.
	// Its strength then depends on how a predictor is coded: a covariate
	// far from zero makes the intercept's prior fight its slope.
	PriorPaper Prior = iota
	// PriorAuto puts it on the coefficients of the predictors centred at
	// their means and divided by their standard deviations (columns of 0s
	// and 1s, such as factor levels, are left as they are), like
	// rstanarm's autoscaling and brms's centred intercept. The prior, and
	// so the posterior on the user's scale, is then the same however a
	// predictor is shifted or rescaled, and the fit works on well-scaled
	// columns. A gaussian response is likewise centred (when the model has
	// an intercept) and divided by its standard deviation, so that the
	// prior is the same in any units of the response. Build fits the
	// transformed columns; FixedMap, RandomScale and ResponseScale map the
	// results back.
	PriorAuto
)

// String returns "paper" or "auto".
func (p Prior) String() string {
	switch p {
	case PriorPaper:
		return "paper"
	case PriorAuto:
		return "auto"
	}
	return fmt.Sprintf("Prior(%d)", int(p))
}

// ParsePrior parses "paper" or "auto".
func ParsePrior(s string) (Prior, error) {
	switch s {
	case "paper":
		return PriorPaper, nil
	case "auto":
		return PriorAuto, nil
	}
	return 0, fmt.Errorf("unknown prior %q (want auto or paper)", s)
}

// standardize sets the centring and scaling of c's columns from their
// values at rows: every column that is not the intercept, not constant and
// not made of 0s and 1s is centred (when there is an intercept) and
// divided by its standard deviation.
func (c *coder) standardize(fr *datasets.Frame, rows []int) error {
	stats, err := designStats(c.bind(fr), rows)
	if err != nil {
		return err
	}
	c.setScale(stats)
	return nil
}

// setScale sets the centring and scaling of standardize from the
// columns' statistics.
func (c *coder) setScale(stats []colStat) {
	p := len(c.cols)
	c.center = make([]float64, p)
	c.scale = make([]float64, p)
	for j, st := range stats {
		if len(c.cols[j]) == 0 || st.binary || !(st.sd > 0) || math.IsInf(st.sd, 0) {
			continue // intercept, dummies and constants as they are
		}
		if c.intercept {
			c.center[j] = st.mean
		}
		c.scale[j] = st.sd
	}
}

// scaleOnly divides each random-effect column that is not the intercept,
// not constant and not made of 0s and 1s by its standard deviation, without
// centring it: a random slope's variance then has a prior that does not
// depend on the predictor's units, while the random intercept keeps its
// meaning (the effect at a predictor of 0).
func (c *coder) scaleOnly(fr *datasets.Frame, rows []int) error {
	if err := c.standardize(fr, rows); err != nil {
		return err
	}
	clear(c.center)
	return nil
}

// RandomScale returns, for each random effect of a model built with
// PriorAuto, the positive number to divide it by to get it on the data's
// scale: the scale its column was divided by (1 for a column left as it
// is), divided in turn by ResponseScale's scale. It returns nil when
// every such number is 1. The random effects b_a and their standard
// deviations on the data's scale are the fitted ones divided by it, and
// correlations are unchanged.
func (d *Design) RandomScale() []float64 {
	if d.random == nil || (d.random.scale == nil && d.resp.scale == 0) {
		return nil
	}
	_, s := d.ResponseScale()
	out := make([]float64, len(d.random.names))
	for a := range out {
		out[a] = 1 / s
		if d.random.scale != nil && d.random.scale[a] != 0 {
			out[a] = d.random.scale[a] / s
		}
	}
	return out
}

// ResponseScale returns the centre and the scale of a gaussian response
// standardised under PriorAuto, (0, 1) otherwise: the model is fitted to
// (y - center)/scale, so its linear predictor maps to the data's scale as
// center + scale eta, and its residual standard deviation as scale sigma.
func (d *Design) ResponseScale() (center, scale float64) {
	if d.resp.scale == 0 {
		return 0, 1
	}
	return d.resp.center, d.resp.scale
}

// ResponseLogJacobian returns what to add to a log density of the model's
// response, such as a lower bound on its log marginal likelihood, to get
// that of the data's: -W log scale for a gaussian response standardised
// under PriorAuto (W the sum of the weights, the number of observations
// without weights), 0 otherwise.
func (d *Design) ResponseLogJacobian() float64 {
	if d.resp.scale == 0 {
		return 0
	}
	return -d.resp.weight * math.Log(d.resp.scale)
}

// standardizeResponse centres (when the model has an intercept) and scales
// the gaussian response, and scales the offsets with it.
func (d *Design) standardizeResponse() {
	y := d.cfg.Y
	var mean float64
	for _, v := range y {
		mean += v
	}
	mean /= float64(len(y))
	var ss float64
	for _, v := range y {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(len(y)))
	if !(sd > 0) || math.IsInf(sd, 0) {
		return // a constant response: left as it is
	}
	if !d.fixed.intercept {
		mean = 0
	}
	d.resp.center, d.resp.scale = mean, sd
	d.resp.weight = float64(len(y))
	if d.cfg.Weights != nil {
		d.resp.weight = 0
		for _, v := range d.cfg.Weights {
			d.resp.weight += v
		}
	}
	d.applyResponseScale()
}

// applyResponseScale centres and scales the response by d.resp, and
// scales the offsets with it.
func (d *Design) applyResponseScale() {
	y, mean, sd := d.cfg.Y, d.resp.center, d.resp.scale
	for k, v := range y {
		y[k] = (v - mean) / sd
	}
	for k, v := range d.cfg.Offset {
		d.cfg.Offset[k] = v / sd
	}
}

// FixedMap maps the fixed effects of a model built with PriorAuto, which
// are the coefficients of the centred and scaled predictors, to those of
// the predictors as the data give them: beta = A beta*. It is linear, so
// Gaussian means and covariances map exactly.
type FixedMap struct {
	// Center and Scale hold, per fixed-effect column, the centre and the
	// scale of the predictor; a scale of 0 marks a column left as it is.
	Center, Scale []float64
	// Intercept is the index of the intercept column, or -1.
	Intercept int
	// ResponseCenter and ResponseScale are those of a standardised
	// gaussian response (0 and 1 otherwise): beta = ResponseScale A beta*
	// + ResponseCenter e_Intercept.
	ResponseCenter, ResponseScale float64
}

// FixedMap returns the map of the fixed effects back to the user's scale,
// or nil when the design's columns are as the data give them (PriorPaper).
func (d *Design) FixedMap() *FixedMap {
	c := d.fixed
	if c == nil || c.scale == nil {
		return nil
	}
	m := &FixedMap{Center: c.center, Scale: c.scale, Intercept: -1}
	m.ResponseCenter, m.ResponseScale = d.ResponseScale()
	for j, col := range c.cols {
		if len(col) == 0 {
			m.Intercept = j
		}
	}
	return m
}

// Matrix returns the p×p matrix of the linear part of the map,
// ResponseScale A.
func (m *FixedMap) Matrix() *mat.Dense {
	p := len(m.Scale)
	a := mat.NewDense(p, p, nil)
	for j := range p {
		if m.Scale[j] == 0 {
			a.Set(j, j, 1)
			continue
		}
		a.Set(j, j, 1/m.Scale[j])
		if m.Intercept >= 0 {
			a.Set(m.Intercept, j, a.At(m.Intercept, j)-m.Center[j]/m.Scale[j])
		}
	}
	a.Scale(m.responseScale(), a)
	return a
}

// responseScale returns ResponseScale, with 0 (a map built by hand) taken
// as 1.
func (m *FixedMap) responseScale() float64 {
	if m.ResponseScale == 0 {
		return 1
	}
	return m.ResponseScale
}

// Apply writes the map of betaStar into beta (both of length p).
func (m *FixedMap) Apply(betaStar, beta []float64) {
	if len(betaStar) != len(m.Scale) || len(beta) != len(m.Scale) {
		panic("formula: bad length in FixedMap.Apply")
	}
	var shift float64
	for j, b := range betaStar {
		if m.Scale[j] == 0 {
			beta[j] = b
			continue
		}
		beta[j] = b / m.Scale[j]
		shift += m.Center[j] * beta[j]
	}
	if m.Intercept >= 0 {
		beta[m.Intercept] -= shift
	}
	if s := m.responseScale(); s != 1 || m.ResponseCenter != 0 {
		for j := range beta {
			beta[j] *= s
		}
		if m.Intercept >= 0 {
			beta[m.Intercept] += m.ResponseCenter
		}
	}
}

// ScaledCov returns c and u with M cov M' = diag(u) c diag(u), M the
// matrix of the map and u[j] the largest |entry| of its row j, so that
// standard deviations (u[j] sqrt(c[j][j])) and correlations come out
// without overflow when a predictor's scale is extreme (1e-300).
func (m *FixedMap) ScaledCov(cov mat.Symmetric) (c *mat.SymDense, u []float64) {
	a := m.Matrix()
	p := len(m.Scale)
	u = make([]float64, p)
	for i := range p {
		for j := range p {
			u[i] = max(u[i], math.Abs(a.At(i, j)))
		}
		if u[i] == 0 || math.IsInf(u[i], 0) {
			u[i] = 1
		}
		for j := range p {
			a.Set(i, j, a.At(i, j)/u[i])
		}
	}
	return sandwich(a, cov), u
}

// Cov returns the covariance of beta for the covariance cov of betaStar:
// M cov M', M the matrix of the map.
func (m *FixedMap) Cov(cov mat.Symmetric) *mat.SymDense {
	return sandwich(m.Matrix(), cov)
}

// sandwich returns a cov a', symmetrised.
func sandwich(a *mat.Dense, cov mat.Symmetric) *mat.SymDense {
	p, _ := a.Dims()
	var t mat.Dense
	t.Mul(a, cov)
	var full mat.Dense
	full.Mul(&t, a.T())
	out := mat.NewSymDense(p, nil)
	for i := range p {
		for j := i; j < p; j++ {
			out.SetSym(i, j, 0.5*(full.At(i, j)+full.At(j, i)))
		}
	}
	return out
}
