// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mat"
)

// NestedConfig describes to NewNested a GLMM with random intercepts on a
// grouping factor a and on a factor b nested in it (lme4's (1|a/b), that is
// (1|a) + (1|a:b)):
//
//	eta_j = x_j' beta + u_a(j) + v_b(j) + offset_j,
//	u_a ~ N(0, sigma_a^2),  v_b ~ N(0, sigma_b^2).
//
// Each level of a is a subject whose local block holds u_a and the v_b of
// its own b levels, so that local blocks vary in size from subject to
// subject.
type NestedConfig struct {
	Family  Family
	Link    Link
	Y       []float64
	Trials  []float64 // binomial trials; nil means 1
	Offset  []float64 // nil means 0
	Weights []float64 // nil means 1
	X       mat.Matrix

	Outer    []int // level of a of each row, in [0, NumOuter)
	NumOuter int
	Inner    []int // level of b (a:b) of each row, in [0, NumInner)
	NumInner int

	FixedNames  []string
	OuterName   string // "a"
	InnerName   string // "a:b"
	OuterLevels []string
	InnerLevels []string
	Rows        []int // data-file row of each observation, for errors; nil means 1-based positions

	PriorSD float64 // 0 means DefaultPriorSD
}

// ErrNotNested is wrapped by NewNested's error for a level of b that occurs
// within two levels of a.
var ErrNotNested = errors.New("factor is not nested")

// Nested is the target of a nested GLMM (NestedConfig) for package vi: n
// subjects (the levels of a) with local blocks of 1 + k_i variables, u_a
// then the v_b of its k_i levels of b in increasing order, and the global
// block theta_g = (beta, omega_a, omega_b[, psi]), omega = -log sigma of
// each random intercept (the log of the precision factor W, as Model's
// omega for one effect) and psi the log dispersion of the families that
// have one. The prior of theta_g is N(0, sigma0^2 I). Memory is linear in
// the number of rows and effects.
type Nested struct {
	family Family
	link   Link
	p, n   int
	nd     int
	nobs   int

	start []int // stored rows of subject i: start[i]..start[i+1]-1
	sizes []int // 1 + k_i
	boff  []int // offset of subject i's block in theta
	perm  []int // data row of stored row k

	y, m, w, off []float64
	x            []float64 // nobs×p row-major
	inner        []int32   // index within its subject's b levels of each stored row
	innerLevel   []int     // global b level of each local v, in theta order

	fixedNames               []string
	outerName, innerName     string
	outerLevels, innerLevels []string
	priorSD                  float64
	dataConst                float64
	subjConst                []float64 // per subject, the rows' w Constant(y, m)
}

// NewNested validates cfg, checks that b is nested in a and stores the
// data subject-major.
func NewNested(cfg NestedConfig) (*Nested, error) {
	nobs := len(cfg.Y)
	rowName := func(k int) int {
		if cfg.Rows != nil {
			return cfg.Rows[k]
		}
		return k + 1
	}
	if !cfg.Family.Valid() {
		return nil, fmt.Errorf("glmm: %w: invalid family", ErrConfig)
	}
	if cfg.Link.binary() && cfg.Family != Bernoulli && cfg.Family != Binomial {
		return nil, fmt.Errorf("glmm: %w: link %v needs a binomial family", ErrConfig, cfg.Link)
	}
	for _, s := range []struct {
		name string
		v    []float64
	}{{"trials", cfg.Trials}, {"offset", cfg.Offset}, {"weights", cfg.Weights}} {
		if s.v != nil && len(s.v) != nobs {
			return nil, &DataError{Column: s.name, Err: ErrLength}
		}
	}
	if len(cfg.Outer) != nobs || len(cfg.Inner) != nobs || (cfg.Rows != nil && len(cfg.Rows) != nobs) {
		return nil, fmt.Errorf("glmm: %w: grouping indices of %d and %d rows for %d responses", ErrLength, len(cfg.Outer), len(cfg.Inner), nobs)
	}
	p := 0
	if cfg.X != nil {
		r, c := cfg.X.Dims()
		if r != nobs {
			return nil, fmt.Errorf("glmm: %w: X has %d rows for %d responses", ErrLength, r, nobs)
		}
		p = c
	}
	mod := &Nested{family: cfg.Family, link: cfg.Link, p: p, n: cfg.NumOuter, nobs: nobs,
		outerName: cfg.OuterName, innerName: cfg.InnerName, priorSD: cfg.PriorSD}
	if cfg.Family.HasDispersion() {
		mod.nd = 1
	}
	if mod.priorSD == 0 {
		mod.priorSD = DefaultPriorSD
	}
	if !(mod.priorSD > 0) || math.IsInf(mod.priorSD, 0) {
		return nil, fmt.Errorf("glmm: %w: prior sd %v", ErrConfig, cfg.PriorSD)
	}
	// The a level of every b level: one, or b is not nested in a.
	parent := make([]int, cfg.NumInner)
	for k := range parent {
		parent[k] = -1
	}
	count := make([]int, cfg.NumOuter+1)
	for j := range nobs {
		a, b := cfg.Outer[j], cfg.Inner[j]
		if a < 0 || a >= cfg.NumOuter || b < 0 || b >= cfg.NumInner {
			return nil, &DataError{Row: rowName(j), Err: ErrGroup}
		}
		switch parent[b] {
		case -1:
			parent[b] = a
		case a:
		default:
			return nil, &DataError{Row: rowName(j), Column: cfg.InnerName,
				Err: fmt.Errorf("%w: level %s of %s occurs within levels %s and %s of %s", ErrNotNested,
					label(cfg.InnerLevels, b), cfg.InnerName, label(cfg.OuterLevels, parent[b]), label(cfg.OuterLevels, a), cfg.OuterName)}
		}
		count[a+1]++
	}
	for a := range cfg.NumOuter {
		if count[a+1] == 0 {
			return nil, &DataError{Column: cfg.OuterName, Err: fmt.Errorf("%w: level %s", ErrEmptySubject, label(cfg.OuterLevels, a))}
		}
		count[a+1] += count[a]
	}
	mod.start = slices.Clone(count)
	mod.perm = make([]int, nobs)
	next := slices.Clone(count[:cfg.NumOuter])
	for j := range nobs {
		a := cfg.Outer[j]
		mod.perm[next[a]] = j
		next[a]++
	}
	// Each subject's b levels in increasing order.
	kids := make([][]int, cfg.NumOuter)
	for b, a := range parent {
		if a >= 0 {
			kids[a] = append(kids[a], b)
		}
	}
	mod.sizes = make([]int, cfg.NumOuter)
	mod.boff = make([]int, cfg.NumOuter+1)
	mod.innerLevel = make([]int, 0, cfg.NumInner)
	pos := make([]int32, cfg.NumInner)
	for a, ks := range kids {
		mod.sizes[a] = 1 + len(ks)
		mod.boff[a+1] = mod.boff[a] + mod.sizes[a]
		for q, b := range ks {
			pos[b] = int32(q)
			mod.innerLevel = append(mod.innerLevel, b)
		}
	}
	mod.y = make([]float64, nobs)
	mod.m = make([]float64, nobs)
	mod.w = make([]float64, nobs)
	mod.off = make([]float64, nobs)
	mod.inner = make([]int32, nobs)
	mod.x = make([]float64, nobs*p)
	mod.subjConst = make([]float64, cfg.NumOuter)
	for k, j := range mod.perm {
		mod.y[k], mod.m[k], mod.w[k] = cfg.Y[j], 1, 1
		if cfg.Trials != nil {
			mod.m[k] = cfg.Trials[j]
		}
		if cfg.Weights != nil {
			mod.w[k] = cfg.Weights[j]
		}
		if cfg.Offset != nil {
			mod.off[k] = cfg.Offset[j]
		}
		mod.inner[k] = pos[cfg.Inner[j]]
		for c := range p {
			mod.x[k*p+c] = cfg.X.At(j, c)
		}
		if err := mod.checkRow(k, rowName(j)); err != nil {
			return nil, err
		}
		c := mod.w[k] * mod.family.Constant(mod.y[k], mod.m[k])
		mod.subjConst[cfg.Outer[j]] += c
		mod.dataConst += c
	}
	var err error
	if mod.fixedNames, err = names(cfg.FixedNames, p, "x", "FixedNames"); err != nil {
		return nil, err
	}
	mod.outerLevels = cfg.OuterLevels
	mod.innerLevels = cfg.InnerLevels
	if mod.outerName == "" {
		mod.outerName = "a"
	}
	if mod.innerName == "" {
		mod.innerName = mod.outerName + ":b"
	}
	return mod, nil
}

// checkRow checks stored row k, data row row.
func (mod *Nested) checkRow(k, row int) error {
	for _, v := range append([]float64{mod.y[k], mod.m[k], mod.w[k], mod.off[k]}, mod.x[k*mod.p:(k+1)*mod.p]...) {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return &DataError{Row: row, Err: ErrNonFinite}
		}
	}
	if mod.w[k] < 0 {
		return &DataError{Row: row, Column: "weights", Err: fmt.Errorf("%w: negative weight", ErrConfig)}
	}
	if err := mod.family.CheckResponse(mod.y[k], mod.m[k]); err != nil {
		return &DataError{Row: row, Err: err}
	}
	return nil
}

func label(levels []string, k int) string {
	if k < len(levels) {
		return levels[k]
	}
	return fmt.Sprint(k + 1)
}

// Dims returns the number of subjects n, 0 for the size of the local
// blocks, which vary (BlockSizes), and the size of the global block.
func (mod *Nested) Dims() (n, r, g int) { return mod.n, 0, mod.p + 2 + mod.nd }

// BlockSizes returns the size 1 + k_i of each subject's local block. The
// slice must not be modified.
func (mod *Nested) BlockSizes() []int { return mod.sizes }

// NumObs returns the number of observations.
func (mod *Nested) NumObs() int { return mod.nobs }

// NumFixed returns p, the number of fixed effects.
func (mod *Nested) NumFixed() int { return mod.p }

// Family returns the response family.
func (mod *Nested) Family() Family { return mod.family }

// LinkFunc returns the link.
func (mod *Nested) LinkFunc() Link { return mod.link }

// FixedNames returns the names of the fixed effects.
func (mod *Nested) FixedNames() []string { return mod.fixedNames }

// FactorNames returns the names of a and of a:b.
func (mod *Nested) FactorNames() (outer, inner string) { return mod.outerName, mod.innerName }

// InnerLevel returns the level of b of local variable q >= 1 of subject i.
func (mod *Nested) InnerLevel(i, q int) int { return mod.innerLevel[mod.boff[i]-i+q-1] }

// Levels returns the labels of the levels of a and of b.
func (mod *Nested) Levels() (outer, inner []string) { return mod.outerLevels, mod.innerLevels }

// DataConstant returns the sum over rows of the data-only terms LogLik
// leaves out; Local includes it.
func (mod *Nested) DataConstant() float64 { return mod.dataConst }

// NewWorkspace returns nil: Local needs no scratch space.
func (mod *Nested) NewWorkspace() any { return nil }

// Global returns the log prior of theta_g and adds its gradient to grad.
func (mod *Nested) Global(thetaG, grad []float64) float64 {
	v := mod.priorSD * mod.priorSD
	lp := -0.5 * float64(len(thetaG)) * (log2Pi + math.Log(v))
	for k, t := range thetaG {
		lp -= 0.5 * t * t / v
		grad[k] -= t / v
	}
	return lp
}

func (mod *Nested) loglik(y, m, eta, psi float64) float64 {
	if mod.link.binary() {
		return LinkLogLik(mod.link, y, m, eta)
	}
	return mod.family.LogLik(y, m, eta, psi)
}

func (mod *Nested) derivs(y, m, eta, psi float64) (d1, d2 float64) {
	if mod.link.binary() {
		d1, d2, _ = LinkDerivs(mod.link, y, m, eta)
		return d1, d2
	}
	d1, d2, _ = mod.family.Derivs(y, m, eta, psi)
	return d1, d2
}

// psi returns the log dispersion in theta_g, or 0.
// Dispersion returns the index in theta_g of psi, the log of the family's
// dispersion parameter, and true; or 0 and false for a family without
// one, as Model.Dispersion.
func (mod *Nested) Dispersion() (int, bool) {
	if mod.nd == 0 {
		return 0, false
	}
	return mod.p + 2, true
}

func (mod *Nested) psi(thetaG []float64) float64 {
	if mod.nd == 0 {
		return 0
	}
	return thetaG[mod.p+2]
}

// Local returns the sum over the subjects in [lo, hi) of log p(y_i | b_i,
// theta_g) + log p(b_i | theta_g), b_i the subject's block in local, with
// every constant. It allocates nothing.
func (mod *Nested) Local(_ any, lo, hi int, thetaG, local, gradLocal, gradG []float64) (float64, error) {
	p := mod.p
	beta := thetaG[:p]
	oa, ob := thetaG[p], thetaG[p+1]
	psi := mod.psi(thetaG)
	pa, pb := math.Exp(2*oa), math.Exp(2*ob)
	base := mod.boff[lo]
	var lp float64
	for i := lo; i < hi; i++ {
		bi := local[mod.boff[i]-base : mod.boff[i+1]-base]
		var gi []float64
		if gradLocal != nil {
			gi = gradLocal[mod.boff[i]-base : mod.boff[i+1]-base]
			clear(gi)
		}
		var li float64
		for k := mod.start[i]; k < mod.start[i+1]; k++ {
			xk := mod.x[k*p : k*p+p]
			eta := mod.off[k] + bi[0] + bi[1+mod.inner[k]]
			for c, xc := range xk {
				eta += xc * beta[c]
			}
			w := mod.w[k]
			li += w * mod.loglik(mod.y[k], mod.m[k], eta, psi)
			if gi == nil {
				continue
			}
			d1, _ := mod.derivs(mod.y[k], mod.m[k], eta, psi)
			d1 *= w
			gi[0] += d1
			gi[1+mod.inner[k]] += d1
			for c, xc := range xk {
				gradG[c] += d1 * xc
			}
			if mod.nd == 1 {
				gradG[p+2] += w * mod.family.PsiDeriv(mod.y[k], mod.m[k], eta, psi)
			}
		}
		// The random effects' prior: N(0, 1/pa) for u, N(0, 1/pb) for each v.
		li += mod.subjConst[i] + oa - 0.5*log2Pi - 0.5*pa*bi[0]*bi[0]
		if gi != nil {
			gi[0] -= pa * bi[0]
			gradG[p] += 1 - pa*bi[0]*bi[0]
		}
		for q, v := range bi[1:] {
			li += ob - 0.5*log2Pi - 0.5*pb*v*v
			if gi != nil {
				gi[1+q] -= pb * v
				gradG[p+1] += 1 - pb*v*v
			}
		}
		if math.IsNaN(li) || math.IsInf(li, 0) {
			return 0, fmt.Errorf("glmm: non-finite log density at subject %d (%s %s)", i, mod.outerName, label(mod.outerLevels, i))
		}
		lp += li
	}
	return lp, nil
}

// PriorSD returns sigma0, the prior sd of every global variable.
func (mod *Nested) PriorSD() float64 { return mod.priorSD }

// PaperELBO converts a lower bound with every constant (as vi computes it
// on this target) to the convention of Tan's paper, without the data's
// constants and the prior's normalising constant, as Model.PaperELBO.
func (mod *Nested) PaperELBO(elbo float64) float64 {
	_, _, g := mod.Dims()
	return elbo - mod.dataConst + 0.5*float64(g)*math.Log(2*math.Pi*mod.priorSD*mod.priorSD)
}

// SubjectLevel returns the label of subject i, a level of a.
func (mod *Nested) SubjectLevel(i int) string { return label(mod.outerLevels, i) }

// InnerLabel returns the label of level b of a:b.
func (mod *Nested) InnerLabel(b int) string { return label(mod.innerLevels, b) }
