// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// ErrSimSpec is wrapped by the errors of Simulate for an invalid SimSpec.
var ErrSimSpec = errors.New("datasets: invalid simulation spec")

// DefaultTrials is the number of binomial trials per observation when
// SimSpec.Trials is zero.
const DefaultTrials = 10

// maxTrials bounds SimSpec.Trials, far beyond any use, so that counts stay
// exact in float64.
const maxTrials = 1 << 30

// maxSimRows bounds the rows Simulate generates, so that a mistyped spec
// fails instead of exhausting memory. It admits issue 16's 10^7 subjects
// of 7 rows (7·10^7 rows, about 4.4 GB as a Frame).
const maxSimRows = 1 << 27

// SimSpec describes a GLMM to simulate from. Observation j of subject i
// has the linear predictor
//
//	eta_ij = Beta[0] + Beta[1] t_ij + Beta[2] x1_ij + ... + z_ij' b_i,
//
// with z_ij = (1), (1, t_ij) or (1, t_ij, x1_ij) for a random-effects
// covariance RECov of size 1, 2 or 3, and b_i ~ N(0, RECov) independent.
type SimSpec struct {
	// Family is "poisson" or "negbinomial" (log link), "bernoulli" or
	// "binomial" (logit link), or "gaussian" (identity link).
	Family string
	// Subjects is the number of subjects.
	Subjects int
	// Obs is the number of observations per subject. If ObsMax > Obs,
	// each subject's count is uniform on [Obs, ObsMax]; an ObsMax of zero
	// means Obs.
	Obs    int
	ObsMax int
	// Beta holds the intercept, the coefficient of t and those of
	// x1, x2, ...; its length p is the number of fixed effects.
	Beta []float64
	// RECov is the r×r covariance of the random effects, r in {1, 2, 3}:
	// random terms (1 | id), (1 + t | id) or (1 + t + x1 | id). It must be
	// symmetric positive semidefinite; zeros give a GLM.
	RECov [][]float64
	// Trials is the number of binomial trials per observation; zero means
	// DefaultTrials.
	Trials int
	// Dispersion is the residual standard deviation of a gaussian response
	// or the shape phi of a negative binomial one (variance mu + mu^2/phi);
	// it must be positive for those families and is ignored by the others.
	Dispersion float64
	// Seed seeds the PCG generator that drives all draws.
	Seed uint64
}

// Truth is the truth behind a simulated data set.
type Truth struct {
	// Beta and RECov are copies of the spec's.
	Beta  []float64
	RECov [][]float64
	// B holds the random effects b_i of each subject, in the order of the
	// subjects' labels.
	B [][]float64
	// Formula is the lme4 formula of the generating model for the frame,
	// such as "y ~ 1 + t + x1 + (1 + t | id)", or for the binomial family
	// "cbind(y, failures) ~ ...".
	Formula string
}

// Simulate draws a data set from the GLMM described by spec. It returns a
// frame with the columns
//
//	id        categorical subject label "s0001", "s0002", ... (zero-padded
//	          to at least 4 digits so that labels sort in subject order)
//	t         time j/(n_i - 1) of observation j = 0, ..., n_i-1: equally
//	          spaced on [0, 1] (0 for a subject with one observation)
//	x1, x2..  independent standard normal covariates, as many as Beta has
//	          coefficients after t, and at least one if r = 3
//	y         the response: a count, 0/1, or successes out of trials
//	trials    binomial only: the number of trials
//	failures  binomial only: trials - y
//
// and the truth. The draws are deterministic given spec: they come from one
// math/rand/v2 PCG stream seeded by Seed, subject by subject (the count
// n_i, then b_i, then each observation's covariates and response).
// Correlated random effects are L z with L the Cholesky factor of RECov (or
// a symmetric square root if RECov is singular) and z standard normal.
func Simulate(spec SimSpec) (*Frame, *Truth, error) {
	if err := spec.validate(); err != nil {
		return nil, nil, err
	}
	r := len(spec.RECov)
	p := len(spec.Beta)
	nx := max(p-2, 0)
	if r == 3 {
		nx = max(nx, 1)
	}
	trials := spec.Trials
	if trials == 0 {
		trials = DefaultTrials
	}
	L, err := covFactor(spec.RECov)
	if err != nil {
		return nil, nil, err
	}

	rng := rand.New(rand.NewPCG(spec.Seed, 0x5eed_5a11_ce5e_ed00))
	width := max(4, len(strconv.Itoa(spec.Subjects)))
	var (
		ids   []string
		tcol  []float64
		xcols = make([][]float64, nx)
		ycol  []float64
		tcnt  []float64
		fcol  []float64
	)
	truth := &Truth{
		Beta:  append([]float64(nil), spec.Beta...),
		RECov: make([][]float64, r),
		B:     make([][]float64, spec.Subjects),
	}
	for k, row := range spec.RECov {
		truth.RECov[k] = append([]float64(nil), row...)
	}
	if spec.ObsMax <= spec.Obs {
		// The columns' lengths are known: made at once, they are not
		// regrown (which at 10^7 subjects held twice a column's memory
		// while its values were copied into the larger array).
		rows := spec.Subjects * spec.Obs
		ids, tcol, ycol = make([]string, 0, rows), make([]float64, 0, rows), make([]float64, 0, rows)
		for k := range xcols {
			xcols[k] = make([]float64, 0, rows)
		}
		if spec.Family == "binomial" {
			tcnt, fcol = make([]float64, 0, rows), make([]float64, 0, rows)
		}
	}
	z := make([]float64, r)
	x := make([]float64, nx)
	for i := range spec.Subjects {
		label := fmt.Sprintf("s%0*d", width, i+1)
		ni := spec.Obs
		if spec.ObsMax > spec.Obs {
			ni += rng.IntN(spec.ObsMax - spec.Obs + 1)
		}
		for k := range z {
			z[k] = rng.NormFloat64()
		}
		b := make([]float64, r)
		for k := range r {
			for m := 0; m <= k; m++ {
				b[k] += L.At(k, m) * z[m]
			}
		}
		truth.B[i] = b
		for j := range ni {
			t := 0.0
			if ni > 1 {
				t = float64(j) / float64(ni-1)
			}
			for k := range x {
				x[k] = rng.NormFloat64()
			}
			eta := spec.Beta[0]
			if p > 1 {
				eta += spec.Beta[1] * t
			}
			for k := 2; k < p; k++ {
				eta += spec.Beta[k] * x[k-2]
			}
			eta += b[0]
			if r > 1 {
				eta += b[1] * t
			}
			if r > 2 {
				eta += b[2] * x[0]
			}
			y, err := draw(spec.Family, eta, trials, spec.Dispersion, rng)
			if err != nil {
				return nil, nil, fmt.Errorf("datasets: Simulate: subject %d, observation %d: %w", i+1, j+1, err)
			}
			ids = append(ids, label)
			tcol = append(tcol, t)
			for k := range x {
				xcols[k] = append(xcols[k], x[k])
			}
			ycol = append(ycol, y)
			if spec.Family == "binomial" {
				tcnt = append(tcnt, float64(trials))
				fcol = append(fcol, float64(trials)-y)
			}
		}
	}

	cols := []*Column{NewCategorical("id", ids), numeric("t", tcol)}
	for k, xc := range xcols {
		cols = append(cols, numeric("x"+strconv.Itoa(k+1), xc))
	}
	cols = append(cols, numeric("y", ycol))
	if spec.Family == "binomial" {
		cols = append(cols, numeric("trials", tcnt), numeric("failures", fcol))
	}
	f, err := NewFrame(cols...)
	if err != nil {
		return nil, nil, err
	}
	truth.Formula = simFormula(spec.Family, p, r)
	return f, truth, nil
}

// maxPoissonMean bounds the Poisson mean, beyond which a simulated count
// would be meaningless for a benchmark and slow to draw.
const maxPoissonMean = 1e9

// draw samples one response given the linear predictor.
func draw(family string, eta float64, trials int, disp float64, rng *rand.Rand) (float64, error) {
	switch family {
	case "gaussian":
		return eta + disp*rng.NormFloat64(), nil
	case "poisson", "negbinomial":
		mu := math.Exp(eta)
		if family == "negbinomial" && mu > 0 && mu <= maxPoissonMean {
			// A Poisson mean drawn from Gamma(phi, rate phi/mu).
			mu = distuv.Gamma{Alpha: disp, Beta: disp / mu, Src: rng}.Rand()
		}
		if !(mu <= maxPoissonMean) {
			return 0, fmt.Errorf("Poisson mean exp(%v) too large", eta)
		}
		if mu == 0 {
			return 0, nil
		}
		return distuv.Poisson{Lambda: mu, Src: rng}.Rand(), nil
	case "bernoulli":
		if rng.Float64() < logistic(eta) {
			return 1, nil
		}
		return 0, nil
	default: // binomial
		pr := logistic(eta)
		if pr == 0 || pr == 1 {
			return pr * float64(trials), nil
		}
		return distuv.Binomial{N: float64(trials), P: pr, Src: rng}.Rand(), nil
	}
}

// logistic returns 1/(1+exp(-x)) without overflow.
func logistic(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// simFormula returns the lme4 formula of the simulated model.
func simFormula(family string, p, r int) string {
	var b strings.Builder
	if family == "binomial" {
		b.WriteString("cbind(y, failures) ~ 1")
	} else {
		b.WriteString("y ~ 1")
	}
	if p > 1 {
		b.WriteString(" + t")
	}
	for k := 2; k < p; k++ {
		b.WriteString(" + x" + strconv.Itoa(k-1))
	}
	b.WriteString([]string{" + (1 | id)", " + (1 + t | id)", " + (1 + t + x1 | id)"}[r-1])
	return b.String()
}

func (s *SimSpec) validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrSimSpec}, args...)...)
	}
	switch s.Family {
	case "poisson", "bernoulli", "binomial":
	case "gaussian", "negbinomial":
		if !(s.Dispersion > 0) || math.IsInf(s.Dispersion, 0) {
			return bad("Dispersion = %v, want positive and finite for the %s family", s.Dispersion, s.Family)
		}
	default:
		return bad("unknown family %q (want poisson, bernoulli, binomial, gaussian or negbinomial)", s.Family)
	}
	if s.Subjects < 1 {
		return bad("Subjects = %d, want at least 1", s.Subjects)
	}
	if s.Obs < 1 {
		return bad("Obs = %d, want at least 1", s.Obs)
	}
	if s.ObsMax != 0 && s.ObsMax < s.Obs {
		return bad("ObsMax = %d is less than Obs = %d", s.ObsMax, s.Obs)
	}
	if float64(s.Subjects)*float64(max(s.Obs, s.ObsMax)) > maxSimRows {
		return bad("%d subjects with up to %d observations exceed %d rows", s.Subjects, max(s.Obs, s.ObsMax), maxSimRows)
	}
	if len(s.Beta) == 0 {
		return bad("Beta is empty, want at least the intercept")
	}
	for k, v := range s.Beta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return bad("Beta[%d] = %v is not finite", k, v)
		}
	}
	r := len(s.RECov)
	if r < 1 || r > 3 {
		return bad("RECov is %d×%d, want 1×1, 2×2 or 3×3", r, r)
	}
	for k, row := range s.RECov {
		if len(row) != r {
			return bad("RECov row %d has %d entries, want %d", k, len(row), r)
		}
		for m, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return bad("RECov[%d][%d] = %v is not finite", k, m, v)
			}
			if v != s.RECov[m][k] {
				return bad("RECov is not symmetric at [%d][%d]", k, m)
			}
		}
	}
	if s.Trials < 0 || s.Trials > maxTrials {
		return bad("Trials = %d, want 0 to %d", s.Trials, maxTrials)
	}
	return nil
}

// covFactor returns a lower-triangular L with L L' = c: the Cholesky
// factor if c is positive definite, else, for a positive semidefinite c, a
// factor of its eigendecomposition made lower triangular by a QR step.
func covFactor(c [][]float64) (*mat.TriDense, error) {
	r := len(c)
	sym := mat.NewSymDense(r, nil)
	for k := range r {
		for m := k; m < r; m++ {
			sym.SetSym(k, m, c[k][m])
		}
	}
	var ch mat.Cholesky
	if ch.Factorize(sym) {
		var L mat.TriDense
		ch.LTo(&L)
		return &L, nil
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, true) {
		return nil, fmt.Errorf("%w: eigendecomposition of RECov failed", ErrSimSpec)
	}
	vals := eig.Values(nil)
	scale := 0.0
	for _, v := range vals {
		scale = max(scale, math.Abs(v))
	}
	var vec mat.Dense
	eig.VectorsTo(&vec)
	for k, v := range vals {
		if v < -1e-12*max(scale, 1) {
			return nil, fmt.Errorf("%w: RECov is not positive semidefinite (eigenvalue %v)", ErrSimSpec, v)
		}
		v = math.Sqrt(max(v, 0))
		for m := range r {
			vec.Set(m, k, vec.At(m, k)*v)
		}
	}
	// A = V sqrt(Λ) has A A' = c. With A' = Q R, A A' = R' R, so the
	// lower-triangular R' is a factor of c.
	var qr mat.QR
	qr.Factorize(vec.T())
	var R mat.Dense
	qr.RTo(&R)
	L := mat.NewTriDense(r, mat.Lower, nil)
	for k := range r {
		for m := 0; m <= k; m++ {
			L.SetTri(k, m, R.At(m, k))
		}
	}
	return L, nil
}
