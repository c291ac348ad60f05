// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// A Model is a target for vi (glmm cannot import vi, so this is checked
// here).
var (
	_ vi.Target         = (*glmm.Model)(nil)
	_ vi.LocalHessianer = (*glmm.Model)(nil)
)

// problem is a random model with a point theta = (b_1..b_n, theta_g) at
// which to evaluate it.
type problem struct {
	cfg    glmm.Config
	mod    *glmm.Model
	local  []float64
	thetaG []float64
}

// poissonDraw draws a Poisson variate by inversion of the cdf.
func poissonDraw(rng *rand.Rand, mu float64) float64 {
	u := rng.Float64()
	k, pk := 0, math.Exp(-mu)
	cdf := pk
	for u > cdf && k < 1000 {
		k++
		pk *= mu / float64(k)
		cdf += pk
	}
	return float64(k)
}

// randomConfig builds a config of n subjects (1 to 6 rows each, rows in
// random order) with p fixed effects (the first an intercept unless
// dummies) and r random effects, responses drawn from fam, random offsets,
// weights and original row numbers. With dummies, X is an intercept plus
// p-1 mostly-zero indicator columns, as from a factor with p levels.
func randomConfig(rng *rand.Rand, fam glmm.Family, n, p, r int, dummies bool) glmm.Config {
	var group []int
	for i := range n {
		for range 1 + rng.IntN(6) {
			group = append(group, i)
		}
	}
	// p more rows make sure every dummy level (row k has level k%p) occurs.
	if dummies {
		for range p {
			group = append(group, rng.IntN(n))
		}
	}
	rng.Shuffle(len(group), func(a, b int) { group[a], group[b] = group[b], group[a] })
	nobs := len(group)
	x := mat.NewDense(nobs, max(p, 1), nil)
	z := mat.NewDense(nobs, r, nil)
	for k := range nobs {
		for c := range p {
			switch {
			case c == 0:
				x.Set(k, c, 1)
			case dummies:
				if k%p == c { // rows k%p == 0 are the reference level

					x.Set(k, c, 1)
				}
			default:
				x.Set(k, c, rng.NormFloat64())
			}
		}
		z.Set(k, 0, 1)
		for c := 1; c < r; c++ {
			z.Set(k, c, rng.NormFloat64())
		}
	}
	cfg := glmm.Config{
		Family:    fam,
		Y:         make([]float64, nobs),
		Offset:    make([]float64, nobs),
		Weights:   make([]float64, nobs),
		Z:         z,
		Group:     group,
		NumGroups: n,
		GroupName: "subject",
		Rows:      make([]int, nobs),
	}
	if p > 0 {
		cfg.X = x
	}
	if fam == glmm.Binomial {
		cfg.Trials = make([]float64, nobs)
	}
	for k := range nobs {
		cfg.Offset[k] = 0.2 * rng.NormFloat64()
		cfg.Weights[k] = 0.5 + 1.5*rng.Float64()
		cfg.Rows[k] = 101 + k
		eta := 0.7 * rng.NormFloat64()
		switch fam {
		case glmm.Poisson:
			cfg.Y[k] = poissonDraw(rng, math.Exp(eta+1))
		case glmm.Gaussian:
			cfg.Y[k] = eta + 0.8*rng.NormFloat64()
		case glmm.NegBinomial:
			// Gamma(shape 2) mixing of a Poisson: phi = 2.
			g := -math.Log(rng.Float64()*rng.Float64()) / 2
			cfg.Y[k] = poissonDraw(rng, g*math.Exp(eta+1))
		case glmm.Bernoulli:
			if rng.Float64() < 1/(1+math.Exp(-eta)) {
				cfg.Y[k] = 1
			}
		case glmm.Binomial:
			m := 1 + rng.IntN(8)
			cfg.Trials[k] = float64(m)
			for range m {
				if rng.Float64() < 1/(1+math.Exp(-eta)) {
					cfg.Y[k]++
				}
			}
		}
	}
	for c := range p {
		cfg.FixedNames = append(cfg.FixedNames, fmt.Sprintf("x%d", c))
	}
	for c := range r {
		cfg.RandomNames = append(cfg.RandomNames, fmt.Sprintf("z%d", c))
	}
	for i := range n {
		cfg.GroupLevels = append(cfg.GroupLevels, fmt.Sprintf("s%d", i))
	}
	return cfg
}

// newProblem builds a random model and a random point with non-zero
// off-diagonal omega.
func newProblem(t testing.TB, seed uint64, fam glmm.Family, n, p, r int) problem {
	return newProblemPlain(t, seed, fam, n, p, r, false)
}

// newProblemPlain is newProblem, without weights and with the same number
// of trials in all rows of a subject when plain is set: the case where
// Local takes one log per subject.
func newProblemPlain(t testing.TB, seed uint64, fam glmm.Family, n, p, r int, plain bool) problem {
	rng := rand.New(rand.NewPCG(seed, 7))
	cfg := randomConfig(rng, fam, n, p, r, false)
	if plain {
		cfg.Weights = nil
		for k := range cfg.Trials {
			cfg.Trials[k] = float64(1 + cfg.Group[k]%5)
			cfg.Y[k] = min(cfg.Y[k], cfg.Trials[k])
		}
	}
	mod, err := glmm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return problem{cfg: cfg, mod: mod, local: randomLocal(rng, n, r), thetaG: withDispersion(rng, fam, randomGlobal(rng, p, r))}
}

func randomLocal(rng *rand.Rand, n, r int) []float64 {
	b := make([]float64, n*r)
	for k := range b {
		b[k] = rng.NormFloat64()
	}
	return b
}

// withDispersion appends a random psi to thetaG for a family with a
// dispersion parameter.
func withDispersion(rng *rand.Rand, fam glmm.Family, thetaG []float64) []float64 {
	if !fam.HasDispersion() {
		return thetaG
	}
	return append(thetaG, 0.5*rng.NormFloat64())
}

func randomGlobal(rng *rand.Rand, p, r int) []float64 {
	th := make([]float64, p+glmm.NumOmega(r))
	for k := range p {
		th[k] = 0.4 * rng.NormFloat64()
	}
	for l := range r {
		th[p+glmm.OmegaIndex(l, l, r)] = 0.3 * rng.NormFloat64()
		for k := l + 1; k < r; k++ {
			th[p+glmm.OmegaIndex(k, l, r)] = 0.3 + 0.4*rng.NormFloat64()
		}
	}
	return th
}

// referenceLogJoint computes log p(y, theta) from the config in data order,
// with gonum/mat for the random-effect density and math.Lgamma for the
// constants, sharing no code with the package.
func referenceLogJoint(cfg glmm.Config, local, thetaG []float64, sigma0 float64) float64 {
	_, r := cfg.Z.Dims()
	p := 0
	if cfg.X != nil {
		_, p = cfg.X.Dims()
	}
	lg := func(x float64) float64 { v, _ := math.Lgamma(x); return v }
	var s float64
	for k, y := range cfg.Y {
		i := cfg.Group[k]
		eta := cfg.Offset[k]
		for c := range p {
			eta += cfg.X.At(k, c) * thetaG[c]
		}
		for c := range r {
			eta += cfg.Z.At(k, c) * local[i*r+c]
		}
		var l float64
		psi := thetaG[len(thetaG)-1]
		switch cfg.Family {
		case glmm.Poisson:
			l = y*eta - math.Exp(eta) - lg(y+1)
		case glmm.Gaussian:
			sd := math.Exp(psi)
			l = -0.5*math.Log(2*math.Pi) - psi - (y-eta)*(y-eta)/(2*sd*sd)
		case glmm.NegBinomial:
			phi, mu := math.Exp(psi), math.Exp(eta)
			l = lg(y+phi) - lg(phi) - lg(y+1) + phi*math.Log(phi/(phi+mu)) + y*math.Log(mu/(phi+mu))
		case glmm.Bernoulli:
			l = y*eta - math.Log1p(math.Exp(eta))
		case glmm.Binomial:
			m := cfg.Trials[k]
			l = y*eta - m*math.Log1p(math.Exp(eta)) + lg(m+1) - lg(y+1) - lg(m-y+1)
		}
		if cfg.Weights != nil {
			l *= cfg.Weights[k]
		}
		s += l
	}
	// W from omega by hand, then the precision W W' and its log determinant
	// by Cholesky.
	w := mat.NewTriDense(r, mat.Lower, nil)
	idx := p
	for c := range r {
		for k := c; k < r; k++ {
			v := thetaG[idx]
			if k == c {
				v = math.Exp(v)
			}
			w.SetTri(k, c, v)
			idx++
		}
	}
	var prec mat.SymDense
	prec.SymOuterK(1, w)
	var chol mat.Cholesky
	if !chol.Factorize(&prec) {
		panic("precision not positive definite")
	}
	logDet := chol.LogDet()
	for i := range cfg.NumGroups {
		b := mat.NewVecDense(r, local[i*r:(i+1)*r])
		s += -0.5*float64(r)*math.Log(2*math.Pi) + 0.5*logDet - 0.5*mat.Inner(b, &prec, b)
	}
	g := float64(len(thetaG))
	s += -0.5 * g * math.Log(2*math.Pi*sigma0*sigma0)
	for _, v := range thetaG {
		s -= v * v / (2 * sigma0 * sigma0)
	}
	return s
}

// logJoint evaluates Global plus Local over all subjects and the gradient.
func logJoint(t testing.TB, mod *glmm.Model, local, thetaG []float64, withGrad bool) (float64, []float64) {
	n, r, g := mod.Dims()
	var grad, gl, gg []float64
	if withGrad {
		grad = make([]float64, n*r+g)
		gl, gg = grad[:n*r], grad[n*r:]
	}
	v, err := mod.Local(mod.NewWorkspace(), 0, n, thetaG, local, gl, gg)
	if err != nil {
		t.Fatal(err)
	}
	return v + mod.Global(thetaG, gg), grad
}

var allFamilies = []glmm.Family{glmm.Poisson, glmm.Bernoulli, glmm.Binomial, glmm.Gaussian, glmm.NegBinomial}

type problemCase struct {
	fam     glmm.Family
	p, r, n int
	seed    uint64
	plain   bool // no weights, equal trials within a subject
}

// problemCases are random models of every family with r = 1, 2, 3, p = 0,
// and weighted and unweighted data.
func problemCases() []problemCase {
	var cs []problemCase
	for fi, fam := range allFamilies {
		for r := 1; r <= 3; r++ {
			cs = append(cs, problemCase{fam, 3, r, 9, uint64(10*fi + r), false})
			cs = append(cs, problemCase{fam, 2, r, 7, uint64(50 + 10*fi + r), true})
		}
		cs = append(cs, problemCase{fam, 0, 2, 5, uint64(100 + fi), false})
	}
	return cs
}

func (c problemCase) String() string {
	w := ""
	if c.plain {
		w = "/plain"
	}
	return fmt.Sprintf("%v/p=%d/r=%d/n=%d%s", c.fam, c.p, c.r, c.n, w)
}

func (c problemCase) problem(t testing.TB) problem {
	return newProblemPlain(t, c.seed, c.fam, c.n, c.p, c.r, c.plain)
}

func (c problemCase) problemN(t testing.TB, n int) problem {
	return newProblemPlain(t, c.seed, c.fam, n, c.p, c.r, c.plain)
}

func TestLogJointAgainstReference(t *testing.T) {
	for _, c := range problemCases() {
		pr := c.problem(t)
		got, _ := logJoint(t, pr.mod, pr.local, pr.thetaG, false)
		want := referenceLogJoint(pr.cfg, pr.local, pr.thetaG, 10)
		if math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("%v: log joint %v, reference %v", c, got, want)
		}
		// The constants are those the reference includes.
		var dc float64
		for k, y := range pr.cfg.Y {
			m := 1.0
			if pr.cfg.Trials != nil {
				m = pr.cfg.Trials[k]
			}
			w := 1.0
			if pr.cfg.Weights != nil {
				w = pr.cfg.Weights[k]
			}
			dc += w * c.fam.Constant(y, m)
		}
		if d := pr.mod.DataConstant(); math.Abs(d-dc) > 1e-12*math.Max(1, math.Abs(dc)) {
			t.Errorf("%v: DataConstant %v, want %v", c, d, dc)
		}
		_, _, g := pr.mod.Dims()
		if pc, want := pr.mod.PriorConstant(), -0.5*float64(g)*math.Log(2*math.Pi*100); math.Abs(pc-want) > 1e-13*math.Abs(want) {
			t.Errorf("%v: PriorConstant %v, want %v", c, pc, want)
		}
		if e, want := pr.mod.PaperELBO(-100), -100-pr.mod.DataConstant()-pr.mod.PriorConstant(); math.Abs(e-want) > 1e-12*math.Abs(want) {
			t.Errorf("%v: PaperELBO(-100) = %v", c, e)
		}
	}
}

// fdSettings are five-point central differences (fourth order), whose
// larger step keeps the rounding error of the difference quotient of a log
// joint of size ~1e3 near 1e-10; plain three-point central differences
// leave it near 1e-7 at best.
var fdSettings = &fd.Settings{Formula: fd.Formula{
	Stencil: []fd.Point{
		{Loc: -2, Coeff: 1.0 / 12}, {Loc: -1, Coeff: -8.0 / 12},
		{Loc: 1, Coeff: 8.0 / 12}, {Loc: 2, Coeff: -1.0 / 12},
	},
	Derivative: 1,
	Step:       2e-3,
}}

// relErr returns |got - want| relative to max(|want|, 1e-3): relative,
// except for entries so close to zero that the rounding error of the
// difference quotient (about 1e-16 |f| / step) dominates.
func relErr(got, want float64) float64 {
	return math.Abs(got-want) / math.Max(math.Abs(want), 1e-3)
}

func TestGradientFD(t *testing.T) {
	const tol = 1e-6
	for _, c := range problemCases() {
		pr := c.problem(t)
		n, r, g := pr.mod.Dims()
		theta := append(slices.Clone(pr.local), pr.thetaG...)
		_, grad := logJoint(t, pr.mod, pr.local, pr.thetaG, true)
		f := func(x []float64) float64 {
			v, _ := logJoint(t, pr.mod, x[:n*r], x[n*r:], false)
			return v
		}
		num := fd.Gradient(nil, f, theta, fdSettings)
		worst := 0.0
		for k := range theta {
			e := relErr(grad[k], num[k])
			worst = max(worst, e)
			if e > tol {
				what := fmt.Sprintf("b[%d][%d]", k/r, k%r)
				if k >= n*r {
					what = pr.mod.GlobalNames()[k-n*r]
				}
				t.Errorf("%v: d/d%s = %v, finite difference %v", c, what, grad[k], num[k])
			}
		}
		nd := 0
		if c.fam.HasDispersion() {
			nd = 1
		}
		if g != c.p+c.r*(c.r+1)/2+nd {
			t.Errorf("%v: G = %d", c, g)
		}
		t.Logf("%v: worst relative gradient error %.2g", c, worst)
	}
}

func TestLocalHessianFD(t *testing.T) {
	for _, c := range problemCases() {
		pr := c.problem(t)
		n, r, g := pr.mod.Dims()
		ws := pr.mod.NewWorkspace()
		gg := make([]float64, g)
		for i := range n {
			bi := slices.Clone(pr.local[i*r : (i+1)*r])
			h := make([]float64, r*r)
			pr.mod.LocalHessian(ws, i, pr.thetaG, bi, h)
			num := mat.NewDense(r, r, nil)
			fd.Jacobian(num, func(dst, x []float64) {
				if _, err := pr.mod.Local(ws, i, i+1, pr.thetaG, x, dst, gg); err != nil {
					t.Fatal(err)
				}
			}, bi, &fd.JacobianSettings{Formula: fd.Central, Step: 1e-5})
			for a := range r {
				for b := range r {
					if e := relErr(h[a*r+b], num.At(a, b)); e > 1e-6 {
						t.Errorf("%v subject %d: H[%d,%d] = %v, finite difference %v", c, i, a, b, h[a*r+b], num.At(a, b))
					}
				}
				// The Hessian of a log-concave density is negative definite.
				if h[a*r+a] >= 0 {
					t.Errorf("%v subject %d: H[%d,%d] = %v is not negative", c, i, a, a, h[a*r+a])
				}
			}
		}
	}
}

// TestChunkedSums checks that Local over any split of the subjects sums to
// Local over all of them, with the same local gradients.
func TestChunkedSums(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, c := range problemCases() {
		pr := c.problemN(t, 23)
		n, r, g := pr.mod.Dims()
		ws := pr.mod.NewWorkspace()
		wholeGL, wholeGG := make([]float64, n*r), make([]float64, g)
		whole, err := pr.mod.Local(ws, 0, n, pr.thetaG, pr.local, wholeGL, wholeGG)
		if err != nil {
			t.Fatal(err)
		}
		noGrad, err := pr.mod.Local(ws, 0, n, pr.thetaG, pr.local, nil, nil)
		if err != nil || noGrad != whole {
			t.Errorf("%v: without gradient %v, with %v (%v)", c, noGrad, whole, err)
		}
		for trial := range 5 {
			var sum float64
			gl, gg := make([]float64, n*r), make([]float64, g)
			for lo := 0; lo < n; {
				hi := lo + rng.IntN(6) // empty ranges included
				hi = min(hi, n)
				v, err := pr.mod.Local(ws, lo, hi, pr.thetaG, pr.local[lo*r:hi*r], gl[lo*r:hi*r], gg)
				if err != nil {
					t.Fatal(err)
				}
				sum += v
				lo = hi
			}
			if math.Abs(sum-whole) > 1e-12*math.Abs(whole) {
				t.Errorf("%v split %d: sum %v, whole %v", c, trial, sum, whole)
			}
			if !slices.Equal(gl, wholeGL) {
				t.Errorf("%v split %d: local gradients differ", c, trial)
			}
			for k := range gg {
				if relErr(gg[k], wholeGG[k]) > 1e-12 {
					t.Errorf("%v split %d: global gradient %d: %v, whole %v", c, trial, k, gg[k], wholeGG[k])
				}
			}
		}
	}
}

func TestLocalDoesNotAllocate(t *testing.T) {
	for _, c := range problemCases() {
		pr := c.problem(t)
		n, r, g := pr.mod.Dims()
		ws := pr.mod.NewWorkspace()
		gl, gg := make([]float64, n*r), make([]float64, g)
		h := make([]float64, r*r)
		allocs := testing.AllocsPerRun(20, func() {
			_, _ = pr.mod.Local(ws, 0, n, pr.thetaG, pr.local, gl, gg)
			pr.mod.LocalHessian(ws, n-1, pr.thetaG, pr.local[(n-1)*r:], h)
		})
		if allocs != 0 {
			t.Errorf("%v: %v allocations per call", c, allocs)
		}
	}
}

func TestNonFiniteNamesSubject(t *testing.T) {
	pr := newProblem(t, 1, glmm.Poisson, 6, 2, 2)
	n, r, _ := pr.mod.Dims()
	ws := pr.mod.NewWorkspace()
	bad := slices.Clone(pr.local)
	bad[3*r+1] = math.NaN()
	if _, err := pr.mod.Local(ws, 0, n, pr.thetaG, bad, nil, nil); err == nil || !contains(err.Error(), `subject "s3"`) {
		t.Errorf("NaN random effect: error %v", err)
	}
	// A diverging precision: W_11 = exp(800) overflows in every subject.
	th := slices.Clone(pr.thetaG)
	th[2] = 800
	_, _, g := pr.mod.Dims()
	if _, err := pr.mod.Local(ws, 2, n, th, pr.local[2*r:], make([]float64, (n-2)*r), make([]float64, g)); err == nil || !contains(err.Error(), `subject "s2"`) {
		t.Errorf("diverging omega: error %v", err)
	}
	// A huge linear predictor is clamped (Poisson) and stays finite.
	big := slices.Clone(pr.local)
	big[0] = 1e4
	if v, err := pr.mod.Local(ws, 0, 1, pr.thetaG, big[:r], nil, nil); err != nil || v > -1e300 {
		t.Errorf("clamped Poisson predictor: %v, %v", v, err)
	}
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}

// TestLongSubject covers subjects with more rows than Local multiplies
// together before taking a log (512), for every family.
func TestLongSubject(t *testing.T) {
	for fi, fam := range allFamilies {
		rng := rand.New(rand.NewPCG(uint64(fi), 99))
		sizes := []int{1300, 3, 512, 513}
		var group []int
		for i, s := range sizes {
			group = append(group, slices.Repeat([]int{i}, s)...)
		}
		nobs := len(group)
		x := mat.NewDense(nobs, 2, nil)
		z := mat.NewDense(nobs, 1, nil)
		cfg := glmm.Config{Family: fam, Y: make([]float64, nobs), Offset: make([]float64, nobs), X: x, Z: z, Group: group, NumGroups: len(sizes)}
		if fam == glmm.Binomial {
			cfg.Trials = slices.Repeat([]float64{3}, nobs)
		}
		for k := range nobs {
			x.Set(k, 0, 1)
			x.Set(k, 1, rng.NormFloat64())
			z.Set(k, 0, 1)
			if rng.IntN(2) == 1 {
				cfg.Y[k] = 1
			}
		}
		mod, err := glmm.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		local, thetaG := randomLocal(rng, len(sizes), 1), withDispersion(rng, fam, randomGlobal(rng, 2, 1))
		got, _ := logJoint(t, mod, local, thetaG, false)
		if want := referenceLogJoint(cfg, local, thetaG, 10); math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("%v: log joint %v, reference %v", fam, got, want)
		}
	}
}
