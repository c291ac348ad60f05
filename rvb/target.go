// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/mathext"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
)

// Method selects the affine reparametrisation of the random effects.
type Method int

const (
	// RVB1 centres and scales b_i by a Gaussian approximation of
	// p(b_i | y_i, theta_g) from a second-order expansion of the
	// log-likelihood about a fixed, data-based linear predictor.
	RVB1 Method = iota + 1
	// RVB2 centres and scales b_i by the Laplace approximation of
	// p(b_i | y_i, theta_g) at its mode, found by Newton's method at every
	// evaluation.
	RVB2
)

// String returns "rvb1" or "rvb2".
func (m Method) String() string {
	switch m {
	case RVB1:
		return "rvb1"
	case RVB2:
		return "rvb2"
	}
	return fmt.Sprintf("Method(%d)", int(m))
}

// Default returns the method Tan's paper uses for a family: RVB1 for
// Poisson and binomial counts, whose data-based expansion point is
// informative, and RVB2 for Bernoulli responses, whose expansion point
// ±2 carries little information. Expanded at the start instead
// (NewAtStart), RVB1 reaches RVB2's bound on Bernoulli data too, at
// RVB1's cost; glmmfit fits every family RVB supports that way.
func Default(f glmm.Family) Method {
	if f == glmm.Bernoulli {
		return RVB2
	}
	return RVB1
}

// DefaultExpansion returns the data-based linear predictor about which
// RVB1 expands the log-likelihood of one observation of y successes (or a
// count y) out of m trials: the posterior mean of the canonical parameter
// under the Jeffreys prior for that observation alone,
//
//	poisson:             digamma(y + 1/2)
//	bernoulli, binomial: digamma(y + 1/2) - digamma(m - y + 1/2).
//
// It is finite at y = 0 and y = m, is about log y (log odds) for large
// counts, and is ±2 for a Bernoulli response. Tan's paper may define the
// point differently (RVB.md, open point 1); any point that does not depend
// on theta_g gives an exact method, only the decorrelation changes.
func DefaultExpansion(f glmm.Family, y, m float64) float64 {
	switch f {
	case glmm.Poisson:
		return mathext.Digamma(y + 0.5)
	case glmm.Bernoulli, glmm.Binomial:
		return mathext.Digamma(y+0.5) - mathext.Digamma(m-y+0.5)
	}
	panic("rvb: invalid family")
}

// Defaults of the options.
const (
	// DefaultModeTol is the Newton step, in the max norm, below which
	// RVB2's mode solve takes a last step and stops. Newton's method
	// converges quadratically, so the last step leaves the mode accurate to
	// rounding, as the implicit derivatives of the gradient assume.
	DefaultModeTol = 1e-7
	// DefaultMaxNewton is the most Newton iterations of one mode solve.
	DefaultMaxNewton = 100
)

type config struct {
	eta       []float64
	tol       float64
	maxNewton int
}

// options returns the configuration of opts, or an error for an unknown
// method, a family with a dispersion parameter, or a non-positive
// tolerance or iteration limit.
func options(method Method, f glmm.Family, opts []Option) (config, error) {
	o := config{tol: DefaultModeTol, maxNewton: DefaultMaxNewton}
	if method != RVB1 && method != RVB2 {
		return o, fmt.Errorf("rvb: unknown method %v", method)
	}
	if f.HasDispersion() {
		return o, fmt.Errorf("rvb: the %v family is not supported: its dispersion parameter %s would enter the reparametrisation, which is not implemented; fit the model itself (GVA), whose local blocks are exactly Gaussian given the global ones for the gaussian family", f, f.DispersionName())
	}
	for _, f := range opts {
		f(&o)
	}
	if !(o.tol > 0) || math.IsInf(o.tol, 0) {
		return o, fmt.Errorf("rvb: mode tolerance %v is not positive and finite", o.tol)
	}
	if o.maxNewton < 1 {
		return o, fmt.Errorf("rvb: Newton iteration limit %d is below 1", o.maxNewton)
	}
	return o, nil
}

// Option configures a Target.
type Option func(*config)

// Expansion sets RVB1's expansion point: eta[k] is the linear predictor
// about which the log-likelihood of data row k (in the order given to
// glmm.New) is expanded. It overrides DefaultExpansion. It must have one
// finite entry per observation. RVB2 uses it only for the start of its
// first mode solve of each subject.
func Expansion(eta []float64) Option {
	return func(o *config) { o.eta = eta }
}

// ModeTol sets RVB2's Newton tolerance (see DefaultModeTol).
func ModeTol(tol float64) Option {
	return func(o *config) { o.tol = tol }
}

// MaxNewton sets the most Newton iterations of one RVB2 mode solve.
func MaxNewton(iter int) Option {
	return func(o *config) { o.maxNewton = iter }
}

// Target is a GLMM reparametrised for variational Bayes: a vi.Target whose
// local variables are
//
//	b~_i = L_i(theta_g)^-1 (b_i - lambda_i(theta_g)),
//
// with N(lambda_i, L_i L_i') a Gaussian approximation of
// p(b_i | y_i, theta_g) and L_i lower triangular, and whose global
// variables theta_g = (beta, omega) are those of the model. The log
// density includes the Jacobian sum_i log|L_i| and every constant of the
// model, so vi's lower bounds on a Target bound log p(y) and can be
// compared with those of the plain model.
//
// Local may be called concurrently on disjoint subject ranges, each caller
// with its own workspace. An RVB2 Target keeps each subject's last mode to
// warm-start the next solve; a subject's mode is read and written only by
// the caller that evaluates that subject, so one Target must not serve two
// fits at the same time.
type Target struct {
	m       *glmm.Model  // nil for a nested model
	nm      *glmm.Nested // nil for a Model
	src     source       // m or nm
	method  Method
	fam     glmm.Family
	link    glmm.Link // a non-canonical link of the binomial families, or CanonicalLink
	n, r, p int
	g       int

	// A nested model's local blocks vary in size (sizes); off and sq give
	// each subject's offset in the locals and in the storage of its r×r
	// matrices (a, the warm start's). Nil for a Model; rmax is r for it.
	sizes, off, sq []int
	rmax           int

	tol       float64
	maxNewton int

	// The expansion of RVB1 per stored row: hw = w kappa''(eta^) and
	// qw = w (y - kappa'(eta^)) + hw eta^, so that
	// lambda_i = Lambda_i Z_i' (qw - hw (X_i beta + offset)).
	hw, qw []float64
	// a holds Z_i' diag(hw) Z_i, r_i×r_i per subject.
	a []float64
	// commonWM is the weight times trials shared by all rows of a
	// subject, or NaN when they differ.
	commonWM []float64
	// unit reports a Bernoulli model without weights.
	unit bool

	// warm holds RVB2's last solve of each subject, nil for RVB1.
	warm *warmStart

	// start holds the model's start computed by NewAtStart, which Start
	// transforms instead of computing it again; nil once used.
	start *modelStart
	// atStart reports a Target made by NewAtStart.
	atStart bool
	// origin is the theta of the start about whose linear predictor the
	// Target was expanded (ExpansionStart), nil if it was not.
	origin []float64
}

// modelStart is a start of the model: theta and prec as glmm.Model.Start
// writes them.
type modelStart struct {
	theta, prec []float64
	// The start of a share, NewShareAtStart's: the subjects [lo, hi)
	// and the carrier; c is nil for the whole model. part marks
	// NewGroupAtStart's, of a model of the process's subjects alone.
	lo, hi int
	c      parallel.Carrier
	part   bool
}

// NewRVB1 returns the RVB1 reparametrisation of m.
func NewRVB1(m *glmm.Model, opts ...Option) (*Target, error) { return New(m, RVB1, opts...) }

// NewRVB2 returns the RVB2 reparametrisation of m.
func NewRVB2(m *glmm.Model, opts ...Option) (*Target, error) { return New(m, RVB2, opts...) }

// errIndependent refuses a model with independent blocks of random effects.
var errIndependent = errors.New("rvb: independent blocks of random effects, as in (1 + x || g), are not supported; fit the model itself (GVA)")

// New returns the reparametrisation of m by the given method. It reports
// an error for an expansion point of the wrong length or with a
// non-finite entry, and for a non-positive tolerance or iteration limit.
func New(m *glmm.Model, method Method, opts ...Option) (*Target, error) {
	if m.IndependentBlocks() {
		return nil, errIndependent
	}
	o, err := options(method, m.Family(), opts)
	if err != nil {
		return nil, err
	}
	return modelTarget(m, method).expand(nil, o)
}

// modelTarget returns the Target of m before its expansion (expand).
func modelTarget(m *glmm.Model, method Method) *Target {
	n, r, g := m.Dims()
	return &Target{
		m: m, src: m, method: method, fam: m.Family(), link: m.Link(),
		n: n, r: r, p: m.P(), g: g, rmax: r,
	}
}

// source is what the reparametrisation reads of a model subject by
// subject, as glmm.Model and glmm.Nested give it.
type source interface {
	NumObs() int
	ObsRange(lo, hi int) int
	MaxSubjectObs() int
	SubjectRows(i int) (lo, hi int)
	DataRow(k int) int
	Response(i int) (y, m, w []float64)
	SubjectConstant(i int) float64
	NewWorkspace() any
	GlobalEta(ws any, i int, thetaG, dst []float64)
	AddGlobalEtaGrad(ws any, i int, thetaG, v, gradG []float64)
	Global(thetaG, grad []float64) float64
}

// NewNested returns the reparametrisation of a nested model (glmm.Nested,
// (1|a) + (1|a:b)) by the given method: the local block of level i of a,
// b_i = (u_a, v_b of its k_i levels of b), is reparametrised as a Model's,
//
//	b~_i = L_i^-1 (b_i - lambda_i(theta_g)),  L_i L_i' = P_i^-1,
//	P_i = Omega_i + Z_i' H_i Z_i,  Omega_i = diag(exp(2 omega_a), exp(2 omega_b) I_{k_i}),
//
// with omega = -log sigma of each intercept as glmm.Nested has it and
// Z_i's rows loading on u_a and on the row's v_b. Blocks vary in size
// (BlockSizes), so vi fits the Target with Method vi.BlockDiag in one
// process. Families with a dispersion parameter are refused, as by New.
// The options are New's; Expansion's entries are per data row as given to
// glmm.NewNested.
func NewNested(m *glmm.Nested, method Method, opts ...Option) (*Target, error) {
	o, err := options(method, m.Family(), opts)
	if err != nil {
		return nil, err
	}
	return nestedTarget(m, method).expand(nil, o)
}

// nestedTarget returns the Target of m before its expansion (expand).
func nestedTarget(m *glmm.Nested, method Method) *Target {
	n, _, g := m.Dims()
	t := &Target{
		nm: m, src: m, method: method, fam: m.Family(), link: m.LinkFunc(),
		n: n, p: m.NumFixed(), g: g, rmax: m.MaxBlockSize(),
		sizes: m.BlockSizes(), off: make([]int, n+1), sq: make([]int, n+1),
	}
	for i, r := range t.sizes {
		t.off[i+1] = t.off[i] + r
		t.sq[i+1] = t.sq[i] + r*r
	}
	return t
}

// blk returns subject i's block order r_i, the offset of its block in the
// locals and that of its r_i×r_i matrices.
func (t *Target) blk(i int) (r, o, sq int) {
	if t.sizes == nil {
		return t.r, i * t.r, i * t.r * t.r
	}
	return t.sizes[i], t.off[i], t.sq[i]
}

// at returns the offset of subject i's block in the locals (i = n: their
// length).
func (t *Target) at(i int) int {
	if t.sizes == nil {
		return i * t.r
	}
	return t.off[i]
}

// zRows returns subject i's random-effect design Z_i, n_i×r_i row-major:
// a Model's stored rows, a nested model's laid out in ws.
func (t *Target) zRows(ws *workspace, i int) []float64 {
	if t.nm != nil {
		return t.nm.ZRowsTo(i, ws.zbuf)
	}
	return t.m.ZRows(i)
}

// expand sets the expansion of RVB1 from the options, and RVB2's warm
// starts: subject by subject, independently, on pool's workers (in this
// goroutine if pool is nil), and bit for bit alike either way.
func (t *Target) expand(pool *parallel.Pool, o config) (*Target, error) {
	nobs := t.src.NumObs()
	if o.eta != nil && len(o.eta) != nobs {
		return nil, fmt.Errorf("rvb: expansion point has %d entries for %d observations", len(o.eta), nobs)
	}
	n := t.n
	t.tol, t.maxNewton = o.tol, o.maxNewton
	t.hw, t.qw = make([]float64, nobs), make([]float64, nobs)
	t.a, t.commonWM = make([]float64, t.sqLen()), make([]float64, n)
	chunks := parallel.NewChunking(n, parallel.DefaultChunkSize)
	// Each chunk says whether it has a weight other than 1.
	weighted := make([]bool, chunks.Len())
	each := func(k int) error {
		lo, hi := chunks.Bounds(k)
		return t.expandRange(o, lo, hi, &weighted[k])
	}
	if err := runChunks(pool, chunks.Len(), each); err != nil {
		return nil, err
	}
	t.unit = t.fam == glmm.Bernoulli && t.link == glmm.CanonicalLink && !slices.Contains(weighted, true)
	if t.method == RVB2 {
		t.warm = newWarmStart(t.at(n), t.sqLen(), nobs)
	}
	return t, nil
}

// runChunks calls fn(k) for every chunk k in [0, chunks) on pool, or in
// this goroutine in order if pool is nil, and returns the error of the
// lowest-numbered chunk that failed.
func runChunks(pool *parallel.Pool, chunks int, fn func(k int) error) error {
	if pool != nil {
		return pool.Run(chunks, fn)
	}
	for k := range chunks {
		if err := fn(k); err != nil {
			return err
		}
	}
	return nil
}

// expandRange is expand's work for the subjects [lo, hi): their rows'
// hw and qw, their a and commonWM; it sets *weighted if a row's weight
// is not 1.
func (t *Target) expandRange(o config, lo, hi int, weighted *bool) error {
	m := t.src
	var ws *workspace
	if t.nm != nil {
		ws = &workspace{zbuf: make([]float64, m.MaxSubjectObs()*t.rmax)}
	}
	for i := lo; i < hi; i++ {
		r, _, sq := t.blk(i)
		rlo, rhi := m.SubjectRows(i)
		y, tr, w := m.Response(i)
		z := t.zRows(ws, i)
		ai := t.a[sq : sq+r*r]
		t.commonWM[i] = w[0] * tr[0]
		for j := range rhi - rlo {
			if w[j]*tr[j] != t.commonWM[i] {
				t.commonWM[i] = math.NaN()
			}
			if w[j] != 1 {
				*weighted = true
			}
			k := rlo + j
			var e float64
			if o.eta != nil {
				e = o.eta[m.DataRow(k)]
				if math.IsNaN(e) || math.IsInf(e, 0) {
					return fmt.Errorf("rvb: expansion point of data row %d is %v", m.DataRow(k)+1, e)
				}
			} else {
				e = DefaultExpansion(t.fam, y[j], tr[j])
				if t.link != glmm.CanonicalLink {
					// The Jeffreys mean of the success probability,
					// on the link's scale.
					e = glmm.LinkOf(t.link, (y[j]+0.5)/(tr[j]+1))
				}
			}
			_, d1, d2, _ := terms(t.fam, t.link, y[j], tr[j], w[j], e)
			t.hw[k] = -d2
			t.qw[k] = d1 - d2*e
			zj := z[j*r : j*r+r]
			for u := range r {
				for v := range r {
					ai[u*r+v] -= d2 * zj[u] * zj[v]
				}
			}
		}
	}
	return nil
}

// sqLen returns the length of the subjects' r_i×r_i matrices.
func (t *Target) sqLen() int {
	if t.sizes == nil {
		return t.n * t.r * t.r
	}
	return t.sq[t.n]
}

// NewAtStart returns the reparametrisation of m by the given method
// expanded about the linear predictor at the model's start
// (glmm.Model.Start): X_i beta^ + Z_i b^_i + offset, with beta^ and the
// random-effect covariance at an approximate posterior mode and b^_i each
// subject's conditional mode there (StartExpansion), computed on pool. For Bernoulli data,
// whose Jeffreys point ±2 (DefaultExpansion) carries little information,
// RVB1 expanded there reaches RVB2's lower bound at RVB1's cost. The start
// is computed once: the Target's Start transforms it rather than computing
// it again. An Expansion option is overridden.
func NewAtStart(pool *parallel.Pool, m *glmm.Model, method Method, opts ...Option) (*Target, error) {
	n, _, _ := m.Dims()
	return NewShareAtStart(pool, nil, 0, n, m, method, opts...)
}

// NewShareAtStart is NewAtStart in one of several processes that each hold
// the whole model but fit the subjects [lo, hi) (a vi.Share of the Target
// over a vi.Group, c): the processes compute the model's start together
// (glmm.Model.StartShare), pass each other their subjects' modes, so that
// every process's Target is the one NewAtStart makes, and the Target's
// StartShare then computes RVB's start together too. lo and hi are as for
// glmm.Model.StartShare. Every process must call it together.
func NewShareAtStart(pool *parallel.Pool, c parallel.Carrier, lo, hi int, m *glmm.Model, method Method, opts ...Option) (*Target, error) {
	st, err := shareStartOf(pool, c, lo, hi, m)
	if err != nil {
		return nil, err
	}
	return newStarted(pool, m, method, st, opts)
}

// NewGroupAtStart is NewAtStart in one of the processes of a fit over a
// vi.Group (c), each holding a model of its own subjects alone, as
// glmm.Model.StartGroup: the processes compute the model's start
// together, and the Target's StartGroup then computes RVB's start
// together too. Every process must call it together.
func NewGroupAtStart(pool *parallel.Pool, c parallel.Carrier, m *glmm.Model, method Method, opts ...Option) (*Target, error) {
	n, r, g := m.Dims()
	st := &modelStart{theta: make([]float64, n*r+g), prec: make([]float64, arrowhead.Len(n, r, g)), hi: n, c: c, part: c != nil}
	if err := m.StartGroup(pool, c, st.theta, st.prec); err != nil {
		return nil, err
	}
	return newStarted(pool, m, method, st, opts)
}

// newStarted returns the Target of m expanded at the model's start st,
// which its Start then uses; the expansion runs on pool.
func newStarted(pool *parallel.Pool, m *glmm.Model, method Method, st *modelStart, opts []Option) (*Target, error) {
	if m.IndependentBlocks() {
		return nil, errIndependent
	}
	o, err := options(method, m.Family(), opts)
	if err != nil {
		return nil, err
	}
	return modelTarget(m, method).startedAt(pool, st, o)
}

// startedAt expands t, made without its expansion, about the linear
// predictor at its model's start st (overriding o's), which its Start
// then uses; both run on pool.
func (t *Target) startedAt(pool *parallel.Pool, st *modelStart, o config) (*Target, error) {
	if err := t.expandAt(pool, st.theta, o); err != nil {
		return nil, err
	}
	t.start = st
	return t, nil
}

// expandAt expands t, made without its expansion, about the linear
// predictor at the start theta (overriding o's), on pool.
func (t *Target) expandAt(pool *parallel.Pool, theta []float64, o config) error {
	o.eta = t.etaAt(pool, theta)
	if _, err := t.expand(pool, o); err != nil {
		return err
	}
	t.atStart, t.origin = true, theta
	return nil
}

// ExpansionStart returns the start about whose linear predictor the
// Target was expanded, theta as glmm.Model.Start writes it (the model's
// start for NewAtStart, the corrected start of NewAtSampleStart), or nil
// for a Target not expanded at a start (New). A fit saved with it can
// make the same Target again without computing the start
// (NewAtGivenStart). It must not be modified.
func (t *Target) ExpansionStart() []float64 { return t.origin }

// NewAtGivenStart returns the Target expanded about the linear predictor
// at theta, the start that a Target was expanded at (ExpansionStart):
// NewAtStart's Target (or NewAtSampleStart's) bit for bit, without
// computing the start, for loading a saved fit. Its Start computes the
// model's start afresh. theta must have one finite entry per variable
// of the model.
func NewAtGivenStart(pool *parallel.Pool, m *glmm.Model, method Method, theta []float64, opts ...Option) (*Target, error) {
	if m.IndependentBlocks() {
		return nil, errIndependent
	}
	n, r, g := m.Dims()
	if err := checkGiven(theta, n*r+g); err != nil {
		return nil, err
	}
	return newGiven(pool, m.Family(), method, modelTarget(m, method), theta, opts)
}

// NewNestedAtGivenStart is NewAtGivenStart for a nested model: the Target
// of NewNestedAtStart from the start it was expanded at.
func NewNestedAtGivenStart(pool *parallel.Pool, m *glmm.Nested, method Method, theta []float64, opts ...Option) (*Target, error) {
	t := nestedTarget(m, method)
	n, _, g := m.Dims()
	if err := checkGiven(theta, t.at(n)+g); err != nil {
		return nil, err
	}
	return newGiven(pool, m.Family(), method, t, theta, opts)
}

// checkGiven checks a given start's length, want, and its values.
func checkGiven(theta []float64, want int) error {
	if len(theta) != want {
		return fmt.Errorf("rvb: a start of %d values, the model has %d variables", len(theta), want)
	}
	for k, v := range theta {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("rvb: the start's value %d is %v", k+1, v)
		}
	}
	return nil
}

// newGiven expands t, made without its expansion, at theta; its Start
// computes the start of its model afresh.
func newGiven(pool *parallel.Pool, fam glmm.Family, method Method, t *Target, theta []float64, opts []Option) (*Target, error) {
	o, err := options(method, fam, opts)
	if err != nil {
		return nil, err
	}
	if err := t.expandAt(pool, theta, o); err != nil {
		return nil, err
	}
	return t, nil
}

// NewNestedAtStart is NewAtStart for a nested model: NewNested's
// reparametrisation expanded about the linear predictor at the model's
// start (glmm.Nested.Start), computed on pool, which the Target's Start
// then transforms rather than computing it again. An Expansion option is
// overridden.
func NewNestedAtStart(pool *parallel.Pool, m *glmm.Nested, method Method, opts ...Option) (*Target, error) {
	o, err := options(method, m.Family(), opts)
	if err != nil {
		return nil, err
	}
	t := nestedTarget(m, method)
	n, _, g := m.Dims()
	st := &modelStart{theta: make([]float64, t.at(n)+g), prec: make([]float64, t.precLen()), hi: n}
	if err := m.Start(pool, st.theta, st.prec); err != nil {
		return nil, err
	}
	return t.startedAt(pool, st, o)
}

// ExpandedAtStart reports whether the Target was made by NewAtStart, and
// so is expanded about the linear predictor at the model's start.
func (t *Target) ExpandedAtStart() bool { return t.atStart }

// StartExpansion returns the expansion point of NewAtStart: the linear
// predictor of every data row (in the order given to glmm.New) at the
// model's start, computed on pool.
func StartExpansion(pool *parallel.Pool, m *glmm.Model) ([]float64, error) {
	st, err := startOf(pool, m)
	if err != nil {
		return nil, err
	}
	return modelTarget(m, RVB1).etaAt(pool, st.theta), nil
}

// startOf returns the model's start.
func startOf(pool *parallel.Pool, m *glmm.Model) (*modelStart, error) {
	n, _, _ := m.Dims()
	return shareStartOf(pool, nil, 0, n, m)
}

// shareStartOf returns the model's start computed by the processes that
// c links, this one for the subjects [lo, hi): the global block and every
// subject's mode are set (the modes passed between the processes), the
// local precision blocks of [lo, hi) alone.
func shareStartOf(pool *parallel.Pool, c parallel.Carrier, lo, hi int, m *glmm.Model) (*modelStart, error) {
	n, r, g := m.Dims()
	st := &modelStart{theta: make([]float64, n*r+g), prec: make([]float64, arrowhead.Len(n, r, g)), lo: lo, hi: hi, c: c}
	if c == nil {
		if err := m.Start(pool, st.theta, st.prec); err != nil {
			return nil, err
		}
		return st, nil
	}
	if err := m.StartShare(pool, c, lo, hi, st.theta, st.prec); err != nil {
		return nil, err
	}
	// The modes of every subject, each process writing its own: copies,
	// so every process holds the bits of the whole start.
	modes := st.theta[:n*r]
	own := slices.Clone(modes[lo*r : hi*r])
	if err := c.Receive(modes); err != nil {
		return nil, err
	}
	copy(modes[lo*r:hi*r], own)
	if err := c.Pass(modes); err != nil {
		return nil, err
	}
	return st, nil
}

// etaAt returns the linear predictor of every data row at theta, a start
// of t's model (the b_i, then theta_g), crossed effects included.
func (t *Target) etaAt(pool *parallel.Pool, theta []float64) []float64 {
	eta := make([]float64, t.src.NumObs())
	nr := t.at(t.n)
	chunks := parallel.NewChunking(t.n, parallel.DefaultChunkSize)
	// Each subject writes its own rows.
	runChunks(pool, chunks.Len(), func(k int) error {
		buf := make([]float64, t.src.MaxSubjectObs())
		ws := t.NewWorkspace().(*workspace)
		lo, hi := chunks.Bounds(k)
		for i := lo; i < hi; i++ {
			r, o, _ := t.blk(i)
			rlo, rhi := t.src.SubjectRows(i)
			fe := buf[:rhi-rlo]
			t.src.GlobalEta(ws.mws, i, theta[nr:], fe)
			z := t.zRows(ws, i)
			b := theta[o : o+r]
			for j, v := range fe {
				for a, za := range z[j*r : j*r+r] {
					v += za * b[a]
				}
				eta[t.src.DataRow(rlo+j)] = v
			}
		}
		return nil
	})
	return eta
}

// ResetModes forgets RVB2's warm-start modes, so that the next evaluation
// of every subject solves from RVB1's centre. It must not be called
// concurrently with Local.
func (t *Target) ResetModes() {
	if t.warm != nil {
		t.warm.reset()
	}
}

// WarmStarts reports whether the Target keeps each subject's last mode to
// start its next solve (RVB2), which makes it a vi.WarmStarter.
func (t *Target) WarmStarts() bool { return t.warm != nil }

// Model returns the wrapped model, nil for a nested one (NewNested).
func (t *Target) Model() *glmm.Model { return t.m }

// Nested returns the wrapped nested model, nil for a Model.
func (t *Target) Nested() *glmm.Nested { return t.nm }

// BlockSizes returns the size of each subject's local block for a nested
// model, whose blocks vary (Dims gives r = 0), and nil for a Model. It
// makes a nested Target a vi.BlockSizer; the slice must not be modified.
func (t *Target) BlockSizes() []int { return t.sizes }

// Method returns the reparametrisation method.
func (t *Target) Method() Method { return t.method }

// Dims returns the number of subjects n, the number of random effects r and
// the size G of theta_g, as the model's.
func (t *Target) Dims() (n, r, g int) { return t.n, t.r, t.g }

// LocalsReparametrised reports true: the local variables are the b~_i,
// not the random effects (see vi.Reparametrised).
func (t *Target) LocalsReparametrised() bool { return true }

// NumObs returns the number of observations, which vi's paper start uses
// to scale the global block of the factor.
func (t *Target) NumObs() int { return t.src.NumObs() }

// ObsRange returns the number of observations of the subjects [lo, hi),
// the model's. It makes Target a vi.ObsRanger.
func (t *Target) ObsRange(lo, hi int) int { return t.src.ObsRange(lo, hi) }

// Global returns the log prior density of theta_g with its normalising
// constant and adds its gradient into grad, as the model's Global: the
// reparametrisation leaves theta_g unchanged.
func (t *Target) Global(thetaG, grad []float64) float64 { return t.src.Global(thetaG, grad) }

// terms returns the weighted log-likelihood (without its data constant) of
// one observation at eta and its first three derivatives in eta.
func terms(f glmm.Family, link glmm.Link, y, m, w, eta float64) (ll, d1, d2, d3 float64) {
	if link != glmm.CanonicalLink {
		a1, a2, a3 := glmm.LinkDerivs(link, y, m, eta)
		return w * glmm.LinkLogLik(link, y, m, eta), w * a1, w * a2, w * a3
	}
	if f == glmm.Poisson {
		mu := math.Exp(min(eta, glmm.MaxPoissonEta))
		return w * (y*eta - mu), w * (y - mu), -w * mu, -w * mu
	}
	// Logistic: with e = exp(-|eta|), the mean p and 1-p are 1/(1+e) and
	// e/(1+e) in the order of the sign of eta, p(1-p) = e/(1+e)^2 and
	// 2p-1 = sign(eta)(1-e)/(1+e); the log-likelihood
	// -(m log(1+e) + y max(-eta,0) + (m-y) max(eta,0)) is a sum of terms of
	// one sign.
	a := math.Abs(eta)
	e := math.Exp(-a)
	q := 1 / (1 + e)
	p, p1 := q, e*q
	if eta < 0 {
		p, p1 = p1, p
	}
	v := e * q * q
	ll = -(m*math.Log1p(e) + y*max(-eta, 0) + (m-y)*max(eta, 0))
	s := (1 - e) * q
	if eta < 0 {
		s = -s
	}
	return w * ll, w * (y*p1 - (m-y)*p), -w * m * v, w * m * v * s
}

// GlobalSupport appends to dst the indices in theta_g on which subject i's
// log density depends, the model's (glmm.Model.GlobalSupport): its
// reparametrisation reads theta_g through the same GlobalEta and omega. It
// makes Target a vi.GlobalSupporter.
func (t *Target) GlobalSupport(i int, dst []int) []int {
	if t.nm != nil {
		// Every subject reads all of theta_g.
		for k := range t.g {
			dst = append(dst, k)
		}
		return dst
	}
	return t.m.GlobalSupport(i, dst)
}
