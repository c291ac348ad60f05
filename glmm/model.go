// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/james-bowman/sparse"
	"gonum.org/v1/gonum/mat"
)

// DefaultPriorSD is the prior standard deviation sigma0 of every global
// variable when Config.PriorSD is zero (the value of Tan's paper).
const DefaultPriorSD = 10

// Config describes a GLMM to New. Slices are read, not kept, but for the
// data of rows already grouped by subject, in the order of the subjects
// (as data files usually are): then New keeps Y, and X and Z when they are
// *mat.Dense with rows of their own width, rather than copy them, and
// they must not change after New. Rows are the observations; they need
// not be sorted by subject.
type Config struct {
	Family Family    // response distribution
	Link   Link      // link function; CanonicalLink, or Probit or Cloglog for the binomial families
	Y      []float64 // response (successes for binomial)
	// Binary, instead of Y, holds a 0/1 response, 0 or 1 a byte (Y
	// must then be nil): a Bernoulli response, or binomial successes,
	// without a float64 copy of it. New reads it (the model holds such
	// responses as bits, from Y too).
	Binary  []uint8
	Trials  []float64 // binomial trials m; nil means 1
	Offset  []float64 // added to the linear predictor; nil means 0
	Weights []float64 // non-negative weights multiplying each log-likelihood term; nil means 1

	// X is the nobs×p fixed-effect design: a *mat.Dense, a
	// *sparse.CSR (github.com/james-bowman/sparse), or any mat.Matrix. A nil
	// X means no fixed effects (p = 0).
	X mat.Matrix
	// Z is the nobs×r random-effect design, r >= 1.
	Z mat.Matrix

	Group     []int // subject index in [0, NumGroups) of each row
	NumGroups int   // number of subjects; each must have at least one row

	FixedNames  []string // p column names of X; nil means "x1", "x2", ...
	RandomNames []string // r column names of Z; nil means "z1", "z2", ...
	GroupName   string   // name of the grouping factor; "" means "group"
	GroupLevels []string // NumGroups subject labels; nil means "1", "2", ...

	// Rows optionally gives the original data-file row of each observation
	// (1-based line or index), used in error messages. Nil means the 1-based
	// position in Y.
	Rows []int

	PriorSD float64 // prior standard deviation sigma0; 0 means DefaultPriorSD

	// Crossed lists grouping factors crossed with the subjects, each with
	// a random intercept (see Crossed); nil means none.
	Crossed []Crossed
	// CrossedLimit overrides MaxCrossedLevels when positive, for studies
	// of the approximation beyond it (benchmarks/crossed).
	CrossedLimit int

	// REBlocks, when not nil, gives each random effect's block: effects
	// of different blocks are independent, as in lme4's (1 + x || g). Nil
	// means one block, a full covariance.
	REBlocks []int

	// Share marks the data as the subjects of one process of a fit over
	// a vi.Group, whose whole fixed-effect design the caller has checked
	// with CheckRank: New then leaves out its own check of X's rank,
	// which one process's rows alone may fail (a level of a factor that
	// only other processes' subjects have).
	Share bool
}

// Errors wrapped by the errors New returns, for use with errors.Is.
var (
	ErrNonFinite     = errors.New("non-finite value")
	ErrLength        = errors.New("length mismatch")
	ErrGroup         = errors.New("bad subject index")
	ErrEmptySubject  = errors.New("subject with no rows")
	ErrRankDeficient = errors.New("rank-deficient fixed-effect design")
	ErrConfig        = errors.New("invalid configuration")
	// ErrUnsupportedModel marks a valid model the package cannot fit
	// reliably, such as crossed factors with too many levels.
	ErrUnsupportedModel = errors.New("model not supported")
)

// DataError is an error in the data given to New. It names the data row or
// column at fault when there is one.
type DataError struct {
	Row    int    // 1-based data row (Config.Rows when given), or 0
	Column string // column name, or ""
	Err    error  // the error, wrapping one of the package's sentinel errors
}

// Error returns the message, prefixed with the row and column when known.
func (e *DataError) Error() string {
	var b strings.Builder
	b.WriteString("glmm: ")
	if e.Row > 0 {
		b.WriteString("row ")
		b.WriteString(strconv.Itoa(e.Row))
		if e.Column != "" {
			b.WriteString(", ")
		}
	}
	if e.Column != "" {
		b.WriteString("column ")
		b.WriteString(strconv.Quote(e.Column))
	}
	if e.Row > 0 || e.Column != "" {
		b.WriteString(": ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *DataError) Unwrap() error { return e.Err }

// Model is a Bayesian GLMM
//
//	eta_ij = x_ij' beta + z_ij' b_i + offset_ij,
//	b_i ~ N(0, (W W')^-1),  theta_g = (beta, omega[, psi]) ~ N(0, sigma0^2 I),
//
// as a target density over the local blocks b_1..b_n (r each) and the global
// block theta_g = (beta, omega) of size G = p + r(r+1)/2, omega = vech(W*)
// (see OmegaToW). A family with a dispersion parameter (Gaussian,
// NegBinomial) adds its log psi as the last entry, G = p + r(r+1)/2 + 1. A Model is immutable after New and safe for concurrent
// use; each concurrent caller of Local needs its own workspace.
//
// Observations are stored subject-major (stably sorted by subject); Perm
// maps stored positions to the rows given to New.
type Model struct {
	family Family
	nobs   int
	p, r   int
	n      int
	nd     int // 1 when the family has a dispersion parameter, else 0
	link   Link

	cross  []crossFactor
	ncross int // entries of theta_g for crossed factors: levels and omega_u
	nscale int // levels of all crossed factors

	omegaFree []bool // per omega entry, whether it is a parameter; nil: all

	start []int // stored rows of subject i are start[i]..start[i+1]-1
	// perm[k] is the row given to New of stored row k; nil when that is
	// k, the rows given grouped by subject in order (inOrder).
	perm    []int
	inOrder bool
	maxNi   int

	// y holds the responses, nil when yb holds them as bits (0/1
	// responses, binaryResponse; bit j%64 of word j/64 that of stored row
	// j; read them with yAt and yRange); m, w and
	// off the trials, weights and offsets, nil when every one is 1, 1 or
	// 0 (use trials, weight, offset and their ranges, which read ones and
	// zeros for them).
	y, m, w, off []float64
	yb           []uint64
	ywin         *binaryWindows
	ones, zeros  []float64 // maxNi ones and zeros for the ranges

	// Fixed design, stored row-major dense (x), CSR (xptr, xind, xval),
	// or as the columns given (xcols, nil for a column of ones; Columns).
	sparseX bool
	x       []float64
	xcols   [][]float64
	xptr    []int
	xind    []int
	xval    []float64

	z []float64 // nobs×r row-major

	// subjConst is the sum over each subject's rows of w * Constant(y, m),
	// nil when every one is +0 (Bernoulli); commonWM the w m shared by
	// every row of the subject, or NaN, nil when every one is 1 (no
	// weights or trials). Read them with subjectConst and wmOf.
	subjConst []float64
	commonWM  []float64
	unitWM    bool // a binomial family with w = m = 1 on every row
	dataConst float64

	fixedNames  []string
	randomNames []string
	groupName   string
	groupLevels []string

	priorSD float64
}

// MaxWeight is the largest observation weight New accepts. The lower bound
// of a fit is a weighted sum of log-likelihood terms, and with weights past
// 1e12 its rounding error outgrows the convergence tolerance of package vi
// (1/80 nat); much larger weights, next to weights of 1, make the curvature
// of the global block too ill-conditioned to factorise.
const MaxWeight = 1e12

// MaxFixedEffects is the largest number of fixed-effect columns New
// accepts.
const MaxFixedEffects = 1000

// New validates cfg and returns the model. Every error names the data row
// (Config.Rows when given) or the column at fault and wraps one of the
// package's sentinel errors.
func New(cfg Config) (*Model, error) {
	if !cfg.Family.Valid() {
		return nil, &DataError{Err: fmt.Errorf("%w: unknown family %v", ErrConfig, cfg.Family)}
	}
	if cfg.Y != nil && cfg.Binary != nil {
		return nil, &DataError{Err: fmt.Errorf("%w: both Y and Binary given", ErrConfig)}
	}
	nobs := len(cfg.Y)
	yIn := func(k int) float64 { return cfg.Y[k] }
	if cfg.Binary != nil {
		if cfg.Family != Bernoulli && cfg.Family != Binomial {
			return nil, &DataError{Err: fmt.Errorf("%w: a Binary response is for the bernoulli and binomial families, not %v", ErrConfig, cfg.Family)}
		}
		nobs = len(cfg.Binary)
		yIn = func(k int) float64 { return float64(cfg.Binary[k]) }
	}
	if nobs == 0 {
		return nil, &DataError{Err: fmt.Errorf("%w: no observations", ErrConfig)}
	}
	lengthErr := func(what string, got int) error {
		return &DataError{Err: fmt.Errorf("%w: %s has %d entries for %d observations", ErrLength, what, got, nobs)}
	}
	for _, s := range []struct {
		name string
		n    int
		nilk bool
	}{
		{"Trials", len(cfg.Trials), cfg.Trials == nil},
		{"Offset", len(cfg.Offset), cfg.Offset == nil},
		{"Weights", len(cfg.Weights), cfg.Weights == nil},
		{"Rows", len(cfg.Rows), cfg.Rows == nil},
	} {
		if !s.nilk && s.n != nobs {
			return nil, lengthErr(s.name, s.n)
		}
	}
	if len(cfg.Group) != nobs {
		return nil, lengthErr("Group", len(cfg.Group))
	}
	p := 0
	if cfg.X != nil {
		xr, xc := cfg.X.Dims()
		if xr != nobs {
			return nil, lengthErr("fixed-effect design X (rows)", xr)
		}
		p = xc
	}
	if cfg.Z == nil {
		return nil, &DataError{Err: fmt.Errorf("%w: no random-effect design Z (at least one random effect is required)", ErrConfig)}
	}
	zr, r := cfg.Z.Dims()
	if zr != nobs {
		return nil, lengthErr("random-effect design Z (rows)", zr)
	}
	if r < 1 {
		return nil, &DataError{Err: fmt.Errorf("%w: random-effect design Z has no columns", ErrConfig)}
	}
	if cfg.NumGroups < 1 {
		return nil, &DataError{Err: fmt.Errorf("%w: NumGroups is %d", ErrConfig, cfg.NumGroups)}
	}
	fixedNames, err := names(cfg.FixedNames, p, "x", "FixedNames")
	if err != nil {
		return nil, err
	}
	randomNames, err := names(cfg.RandomNames, r, "z", "RandomNames")
	if err != nil {
		return nil, err
	}
	levels, err := names(cfg.GroupLevels, cfg.NumGroups, "", "GroupLevels")
	if err != nil {
		return nil, err
	}
	groupName := cfg.GroupName
	if groupName == "" {
		groupName = "group"
	}
	sigma0 := cfg.PriorSD
	if sigma0 == 0 {
		sigma0 = DefaultPriorSD
	}
	if !(sigma0 > 0) || math.IsInf(sigma0, 0) {
		return nil, &DataError{Err: fmt.Errorf("%w: prior standard deviation %v is not positive and finite", ErrConfig, cfg.PriorSD)}
	}
	rowName := func(k int) int {
		if cfg.Rows != nil {
			return cfg.Rows[k]
		}
		return k + 1
	}

	// Per-row checks, in the order of the data.
	count := make([]int, cfg.NumGroups+1)
	for k := range nobs {
		g := cfg.Group[k]
		if g < 0 || g >= cfg.NumGroups {
			return nil, &DataError{Row: rowName(k), Column: groupName,
				Err: fmt.Errorf("%w: subject index %d is outside [0, %d)", ErrGroup, g, cfg.NumGroups)}
		}
		count[g+1]++
		if cfg.Binary != nil && cfg.Binary[k] > 1 {
			return nil, &DataError{Row: rowName(k), Err: fmt.Errorf("%w: Binary response %d is not 0 or 1", ErrResponse, cfg.Binary[k])}
		}
		y, m := yIn(k), 1.0
		if cfg.Trials != nil {
			m = cfg.Trials[k]
		}
		if err := cfg.Family.CheckResponse(y, m); err != nil {
			if math.IsNaN(y) || math.IsInf(y, 0) || math.IsNaN(m) || math.IsInf(m, 0) {
				err = fmt.Errorf("%w: %w", ErrNonFinite, err)
			}
			return nil, &DataError{Row: rowName(k), Err: err}
		}
		if cfg.Offset != nil {
			if v := cfg.Offset[k]; math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, &DataError{Row: rowName(k), Column: "offset", Err: fmt.Errorf("%w: offset %v", ErrNonFinite, v)}
			}
		}
		if cfg.Weights != nil {
			v := cfg.Weights[k]
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return nil, &DataError{Row: rowName(k), Column: "weights", Err: fmt.Errorf("%w: weight %v", ErrNonFinite, v)}
			}
			if v < 0 {
				return nil, &DataError{Row: rowName(k), Column: "weights", Err: fmt.Errorf("%w: negative weight %v", ErrConfig, v)}
			}
			if v > MaxWeight {
				return nil, &DataError{Row: rowName(k), Column: "weights", Err: fmt.Errorf("%w: weight %v exceeds %v", ErrConfig, v, float64(MaxWeight))}
			}
		}
	}
	for g := range cfg.NumGroups {
		if count[g+1] == 0 {
			return nil, &DataError{Column: groupName,
				Err: fmt.Errorf("%w: subject %q (index %d) has no rows", ErrEmptySubject, levels[g], g)}
		}
	}

	mod := &Model{
		family:      cfg.Family,
		nobs:        nobs,
		p:           p,
		r:           r,
		n:           cfg.NumGroups,
		fixedNames:  fixedNames,
		randomNames: randomNames,
		groupName:   groupName,
		groupLevels: levels,
		priorSD:     sigma0,
	}
	if cfg.Family.HasDispersion() {
		mod.nd = 1
	}
	mod.link = cfg.Link
	if cfg.Link != CanonicalLink && !(cfg.Link.binary() && (cfg.Family == Bernoulli || cfg.Family == Binomial)) {
		return nil, &DataError{Err: fmt.Errorf("%w: the %v link is for the bernoulli and binomial families, not %v", ErrConfig, cfg.Link, cfg.Family)}
	}

	// Stable counting sort of the rows by subject.
	for g := range cfg.NumGroups {
		count[g+1] += count[g]
		mod.maxNi = max(mod.maxNi, count[g+1]-count[g])
	}
	mod.start = count
	mod.inOrder = true
	for k := 1; k < nobs && mod.inOrder; k++ {
		mod.inOrder = cfg.Group[k] >= cfg.Group[k-1]
	}
	if !mod.inOrder {
		mod.perm = make([]int, nobs)
		next := append([]int(nil), count[:cfg.NumGroups]...)
		for k, g := range cfg.Group {
			mod.perm[next[g]] = k
			next[g]++
		}
	}

	// Trials, weights and offsets are stored only when some differ from
	// 1, 1 and 0 (a Bernoulli model without weights or offsets keeps none:
	// 24 bytes per observation). A 0/1 response is stored as bits
	// (binaryResponse; 63 bits per observation fewer).
	switch {
	case cfg.Binary != nil && mod.maxNi <= maxBinaryRun || cfg.Binary == nil && binaryResponse(cfg.Family, cfg.Y, mod.maxNi):
		mod.yb = make([]uint64, (nobs+63)/64)
	case mod.inOrder && cfg.Binary == nil:
		mod.y = cfg.Y // kept, as Config says
	default:
		mod.y = make([]float64, nobs)
	}
	if mod.yb != nil {
		mod.ywin = newBinaryWindows(mod.maxNi)
	}
	stored := func(v []float64, trivial float64) []float64 {
		for _, x := range v {
			if x != trivial {
				return make([]float64, nobs)
			}
		}
		return nil
	}
	mod.m, mod.w, mod.off = stored(cfg.Trials, 1), stored(cfg.Weights, 1), stored(cfg.Offset, 0)
	mod.ones, mod.zeros = make([]float64, mod.maxNi), make([]float64, mod.maxNi)
	for k := range mod.ones {
		mod.ones[k] = 1
	}
	for s := range nobs {
		k := mod.dataRow(s)
		if mod.yb != nil {
			mod.yb[s/64] |= uint64(yIn(k)) << (s % 64)
		} else {
			mod.y[s] = yIn(k)
		}
		if mod.m != nil {
			mod.m[s] = cfg.Trials[k]
		}
		if mod.w != nil {
			mod.w[s] = cfg.Weights[k]
		}
		if mod.off != nil {
			mod.off[s] = cfg.Offset[k]
		}
	}

	if err := mod.setZ(cfg.Z, rowName); err != nil {
		return nil, err
	}
	if err := mod.setBlocks(cfg.REBlocks); err != nil {
		return nil, err
	}
	if err := mod.setCrossed(cfg.Crossed, cfg.CrossedLimit, nobs, rowName); err != nil {
		return nil, err
	}
	mod.crossedWeights()
	if err := mod.setX(cfg.X, rowName); err != nil {
		return nil, err
	}
	if mod.p > MaxFixedEffects {
		return nil, &DataError{Column: mod.fixedNames[MaxFixedEffects], Err: fmt.Errorf("%w: %d fixed-effect columns, at most %d are supported (the rank check is cubic in their number); a factor with this many levels is usually a grouping factor, to be modelled as a random effect", ErrConfig, mod.p, MaxFixedEffects)}
	}
	if !cfg.Share {
		buf := make([]float64, mod.p)
		if err := checkRank(mod.p, func(_ []float64, visit func([]float64)) {
			for s := range mod.nobs {
				visit(mod.xRow(s, buf))
			}
		}, mod.fixedNames); err != nil {
			return nil, err
		}
	}

	mod.subjConst = make([]float64, mod.n)
	mod.commonWM = make([]float64, mod.n)
	for i := range mod.n {
		var c float64
		wm := mod.weight(mod.start[i]) * mod.trials(mod.start[i])
		for j := mod.start[i]; j < mod.start[i+1]; j++ {
			c += mod.weight(j) * mod.family.Constant(mod.yAt(j), mod.trials(j))
			if mod.weight(j)*mod.trials(j) != wm {
				wm = math.NaN()
			}
		}
		mod.commonWM[i] = wm
		mod.subjConst[i] = c
		mod.dataConst += c
	}
	if !slices.ContainsFunc(mod.subjConst, func(c float64) bool { return c != 0 || math.Signbit(c) }) {
		mod.subjConst = nil
	}
	if !slices.ContainsFunc(mod.commonWM, func(wm float64) bool { return wm != 1 }) {
		mod.commonWM = nil
	}
	mod.unitWM = (mod.family == Bernoulli || mod.family == Binomial) && mod.link == CanonicalLink
	for j := range mod.nobs {
		if mod.weight(j) != 1 || mod.trials(j) != 1 {
			mod.unitWM = false
			break
		}
	}
	return mod, nil
}

// subjectConst returns subject i's share of the data constant.
func (mod *Model) subjectConst(i int) float64 {
	if mod.subjConst == nil {
		return 0
	}
	return mod.subjConst[i]
}

// wmOf returns the w m shared by every row of subject i, or NaN.
func (mod *Model) wmOf(i int) float64 {
	if mod.commonWM == nil {
		return 1
	}
	return mod.commonWM[i]
}

// names returns given, checked to have n entries, or n default names.
func names(given []string, n int, prefix, field string) ([]string, error) {
	if given == nil {
		out := make([]string, n)
		for i := range out {
			out[i] = prefix + strconv.Itoa(i+1)
		}
		return out, nil
	}
	if len(given) != n {
		return nil, &DataError{Err: fmt.Errorf("%w: %s has %d names for %d", ErrLength, field, len(given), n)}
	}
	return append([]string(nil), given...), nil
}

// dataRow returns the row given to New of stored row s.
func (mod *Model) dataRow(s int) int {
	if mod.perm == nil {
		return s
	}
	return mod.perm[s]
}

// zRange returns the random-effect design of stored rows [s, e) of one
// subject, row-major. A single column of ones, a random intercept's, is
// not stored (8 bytes an observation): its rows are views of mod.ones.
func (mod *Model) zRange(s, e int) []float64 {
	if mod.z == nil {
		return mod.ones[:e-s]
	}
	return mod.z[s*mod.r : e*mod.r]
}

// setZ copies the random-effect design in stored order, keeps it
// (Config), or stores nothing for a column of ones (zRange).
func (mod *Model) setZ(z mat.Matrix, rowName func(int) int) error {
	r := mod.r
	if r == 1 {
		ones := true
		for k := 0; k < mod.nobs && ones; k++ {
			ones = z.At(k, 0) == 1
		}
		if ones {
			return nil
		}
	}
	if d, ok := z.(*mat.Dense); ok && mod.inOrder && d.RawMatrix().Stride == r {
		mod.z = d.RawMatrix().Data[:mod.nobs*r]
	} else {
		mod.z = make([]float64, mod.nobs*r)
	}
	for s := range mod.nobs {
		k := mod.dataRow(s)
		row := mod.z[s*r : s*r+r]
		for c := range row {
			v := z.At(k, c)
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return &DataError{Row: rowName(k), Column: mod.randomNames[c], Err: fmt.Errorf("%w: random-effect design value %v", ErrNonFinite, v)}
			}
			row[c] = v
		}
	}
	return nil
}

// Sparse storage of X pays when most entries are zero and rows are long.
const (
	sparseMaxDensity = 0.25
	sparseMinCols    = 10
)

// setX copies the fixed design in stored order, densely or as CSR.
func (mod *Model) setX(x mat.Matrix, rowName func(int) int) error {
	p := mod.p
	if p == 0 {
		return nil
	}
	// Read each original row k into buf; a CSR input is read from its raw
	// arrays (duplicate entries add, as in its MulVecTo).
	buf := make([]float64, p)
	var raw *struct {
		ptr, ind []int
		val      []float64
	}
	var dense *mat.Dense
	switch x := x.(type) {
	case *sparse.CSR:
		m := x.RawMatrix()
		raw = &struct {
			ptr, ind []int
			val      []float64
		}{m.Indptr, m.Ind, m.Data}
	case *mat.Dense:
		dense = x
	}
	cols, _ := x.(*Columns)
	readRow := func(k int) {
		switch {
		case raw != nil:
			clear(buf)
			for t := raw.ptr[k]; t < raw.ptr[k+1]; t++ {
				buf[raw.ind[t]] += raw.val[t]
			}
		case dense != nil:
			copy(buf, dense.RawRowView(k))
		default:
			for c := range buf {
				buf[c] = x.At(k, c)
			}
		}
	}
	nnz := 0
	for k := range mod.nobs {
		readRow(k)
		for c, v := range buf {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return &DataError{Row: rowName(k), Column: mod.fixedNames[c], Err: fmt.Errorf("%w: fixed-effect design value %v", ErrNonFinite, v)}
			}
			if v != 0 {
				nnz++
			}
		}
	}
	mod.sparseX = p > sparseMinCols && float64(nnz) < sparseMaxDensity*float64(mod.nobs)*float64(p)
	if !mod.sparseX && dense != nil && dense.RawMatrix().Stride == p && mod.inOrder {
		// The rows are already grouped by subject in order, as data files
		// usually are: keep X's storage rather than copy it (Config.X).
		mod.x = dense.RawMatrix().Data[:mod.nobs*p]
		return nil
	}
	if !mod.sparseX && cols != nil && mod.inOrder {
		mod.xcols = make([][]float64, p)
		for c, col := range cols.Cols {
			if col != nil {
				mod.xcols[c] = col[:mod.nobs]
			}
		}
		return nil
	}
	if mod.sparseX {
		mod.xptr = make([]int, mod.nobs+1)
		mod.xind = make([]int, 0, nnz)
		mod.xval = make([]float64, 0, nnz)
	} else {
		mod.x = make([]float64, mod.nobs*p)
	}
	for s := range mod.nobs {
		readRow(mod.dataRow(s))
		if !mod.sparseX {
			copy(mod.x[s*p:s*p+p], buf)
			continue
		}
		for c, v := range buf {
			if v != 0 {
				mod.xind = append(mod.xind, c)
				mod.xval = append(mod.xval, v)
			}
		}
		mod.xptr[s+1] = len(mod.xind)
	}
	return nil
}

// Rank tolerance: a column whose squared sine of angle to the span of the
// columns before it is below this is taken as a linear combination of them.
// Exact collinearity leaves rounding error of order 1e-15; a tolerance far
// above it but far below any identifiable design (angle 3e-6 radians).
const rankTol = 1e-11

// CheckRank returns the error New returns for a fixed-effect design x
// whose rank is short, nil if its rank is full: a *DataError naming the
// first column (by names, one per column of x) that is all zero or
// (numerically) a linear combination of the columns before it. A caller
// that builds the models of a Group's processes from its shares of one
// design checks the whole design with it (see Config.Share).
func CheckRank(x mat.Matrix, names []string) error {
	if x == nil {
		return nil
	}
	nobs, p := x.Dims()
	if len(names) != p {
		panic("glmm: CheckRank with a name per column wanted")
	}
	buf := make([]float64, p)
	row := func(k int) []float64 {
		if d, ok := x.(*mat.Dense); ok {
			return d.RawRowView(k)
		}
		clear(buf)
		if c, ok := x.(*sparse.CSR); ok {
			m := c.RawMatrix()
			for t := m.Indptr[k]; t < m.Indptr[k+1]; t++ {
				buf[m.Ind[t]] += m.Data[t]
			}
			return buf
		}
		for c := range buf {
			buf[c] = x.At(k, c)
		}
		return buf
	}
	return CheckRankRows(p, func(_ []float64, visit func(row []float64)) {
		for s := range nobs {
			visit(row(s))
		}
	}, names)
}

// CheckRankRows is CheckRank of a design of p columns given row by row:
// each calls visit with every row of the design in order (a row is not
// kept after visit returns), and is called twice. It lets a caller check
// a design too large to hold, a piece of rows at a time, and gives the
// error CheckRank gives for the design of the same rows.
//
// Each call of each is given the pass's accumulator acc, to which visit
// adds the rows. Rows divided among processes are visited in order when
// each process starts acc from the values the processes before it left
// and passes it on (formula.ScanShared).
func CheckRankRows(p int, each func(acc []float64, visit func(row []float64)), names []string) error {
	if len(names) != p {
		panic("glmm: CheckRankRows with a name per column wanted")
	}
	return checkRank(p, each, names)
}

// checkRank reports the first of the p fixed-effect columns that is
// (numerically) a linear combination of the columns before it, naming
// them, by a Cholesky factorisation of the column-scaled X'X that skips
// dependent columns; each visits the rows of X in order, adding them to
// acc.
func checkRank(p int, each func(acc []float64, visit func(row []float64)), names []string) error {
	if p == 0 {
		return nil
	}
	// Columns are divided by their largest magnitude first, so that a
	// column of 1e-300s does not underflow to zero when squared.
	scale := make([]float64, p)
	each(scale, func(row []float64) {
		for i, v := range row {
			scale[i] = max(scale[i], math.Abs(v))
		}
	})
	for i, v := range scale {
		if v == 0 {
			return &DataError{Column: names[i], Err: fmt.Errorf("%w: the column is all zero", ErrRankDeficient)}
		}
		if math.IsInf(v, 0) || math.IsNaN(v) {
			scale[i] = 1
		}
	}
	a := make([]float64, p*p) // X'X of the scaled columns, lower triangle
	each(a, func(row []float64) {
		for i, vi := range row {
			if vi == 0 {
				continue
			}
			vi /= scale[i]
			ai := a[i*p : i*p+i+1]
			for j, vj := range row[:i+1] {
				ai[j] += vi * vj / scale[j]
			}
		}
	})
	d := make([]float64, p)
	for i := range p {
		d[i] = math.Sqrt(a[i*p+i])
		if d[i] == 0 {
			return &DataError{Column: names[i], Err: fmt.Errorf("%w: the column is all zero", ErrRankDeficient)}
		}
	}
	for i := range p {
		for j := 0; j <= i; j++ {
			a[i*p+j] /= d[i] * d[j]
		}
	}
	// L holds rows of the Cholesky factor over the independent columns
	// indep (in order); row k of L is l_k with L[k][t] for t < len(indep).
	var indep []int
	l := make([]float64, p*p)
	for k := range p {
		lk := l[k*p : k*p+p]
		res := a[k*p+k]
		for t, j := range indep {
			v := a[k*p+j]
			lj := l[j*p : j*p+p]
			for u := range t {
				v -= lk[u] * lj[u]
			}
			v /= lj[t]
			lk[t] = v
			res -= v * v
		}
		if res > rankTol {
			lk[len(indep)] = math.Sqrt(res)
			indep = append(indep, k)
			continue
		}
		// x_k = sum_t c_t x_indep[t] with L_S' c = l_k (scaled units).
		nt := len(indep)
		c := append([]float64(nil), lk[:nt]...)
		for t := nt - 1; t >= 0; t-- {
			for u := t + 1; u < nt; u++ {
				c[t] -= l[indep[u]*p+t] * c[u]
			}
			c[t] /= l[indep[t]*p+t]
		}
		big := 0.0
		for _, v := range c {
			big = max(big, math.Abs(v))
		}
		var with []string
		for t, v := range c {
			if math.Abs(v) > 1e-6*big {
				with = append(with, strconv.Quote(names[indep[t]]))
			}
		}
		return &DataError{Column: names[k], Err: fmt.Errorf("%w: the column is a linear combination of %s",
			ErrRankDeficient, strings.Join(with, ", "))}
	}
	return nil
}

// xRow returns stored row s of X densely, in buf when X is not stored
// row-major.
func (mod *Model) xRow(s int, buf []float64) []float64 {
	p := mod.p
	switch {
	case mod.xcols != nil:
		for c, col := range mod.xcols {
			buf[c] = columnAt(col, s)
		}
		return buf
	case !mod.sparseX:
		return mod.x[s*p : s*p+p]
	}
	clear(buf)
	for t := mod.xptr[s]; t < mod.xptr[s+1]; t++ {
		buf[mod.xind[t]] = mod.xval[t]
	}
	return buf
}
