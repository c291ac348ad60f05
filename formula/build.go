// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/james-bowman/sparse"
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/editdist"
)

// MissingPolicy says what Build does with rows that have a missing value in
// a column the model uses.
type MissingPolicy int

const (
	// RejectMissing, the default, makes Build fail, naming the first such
	// row and its column.
	RejectMissing MissingPolicy = iota
	// DropMissing leaves such rows out (complete cases, R's na.omit).
	DropMissing
)

// DoubleBarPolicy says what Build does with random-effects terms that lme4
// fits as independent blocks: (1 + x || g), and several terms with the same
// grouping factor such as (1 | g) + (0 + x | g).
type DoubleBarPolicy int

const (
	// RejectDoubleBar, the default, makes Build fail, so that a program
	// written before the other policies existed fits no model it did not
	// ask for.
	RejectDoubleBar DoubleBarPolicy = iota
	// CorrelatedDoubleBar fits the union of the terms as one correlated
	// block, as if written (1 + x | g): a different, larger model than
	// lme4's, which the user accepts knowingly.
	CorrelatedDoubleBar
	// IndependentDoubleBar fits what lme4 fits: each term of a || its own
	// block (the intercept one more), each | term one block, blocks
	// independent (glmm.Config.REBlocks). glmmfit's default.
	IndependentDoubleBar
)

// Options are the settings of Build. The zero value gives the defaults.
type Options struct {
	// Family is the response distribution. Zero infers it: Binomial for a
	// cbind response, Bernoulli for a categorical response; any other
	// response needs an explicit family. Binomial with a single response
	// column of 0/1 values (one trial per row) is fitted as Bernoulli, the
	// same model, so that both spellings give the same fit.
	Family glmm.Family

	// Link is the link function: glmm.CanonicalLink, or glmm.Probit or
	// glmm.Cloglog for the binomial families.
	Link glmm.Link

	// Missing is the policy for rows with missing values in used columns.
	Missing MissingPolicy

	// Weights and Offset name optional numeric columns of per-row weights
	// and of an offset added to those of the formula's offset() terms.
	// For a binomial response of one column that is not 0/1, the weights
	// are its numbers of trials and the response the proportions of
	// successes, as glmer's weights = n: the model of cbind(p n, n - p n).
	Weights, Offset string

	// Reference maps a column name to the reference level of its
	// treatment contrasts, as R's relevel; by default the reference is the
	// first level (see Build for the order of levels). It applies to the
	// column wherever it is used as categorical, including factor(col),
	// and, for a two-level categorical response, names the level coded 0.
	Reference map[string]string

	// PriorSD is the prior standard deviation of beta and omega; zero
	// means glmm.DefaultPriorSD.
	PriorSD float64

	// Prior says which coefficients the prior of the fixed effects is on:
	// the raw ones (PriorPaper, the zero value) or those of the centred
	// and scaled predictors (PriorAuto).
	Prior Prior

	// DoubleBar is the policy for || and repeated grouping factors.
	DoubleBar DoubleBarPolicy

	// LocalFactor names the grouping factor whose levels are the subjects
	// (the local blocks) when the formula has several, as in
	// (1 | id) + (1 | item). "" chooses the factor with random slopes, or
	// else the one with the most levels. The others are crossed factors
	// (glmm.Crossed): each must have a random intercept only.
	LocalFactor string

	// Nest says when a model of two grouping factors with random
	// intercepts, one nested in the other ((1 | a/b), or (1 | a) + (1 | b)
	// with each level of b within one level of a), is a glmm.Nested: the
	// levels of a are the subjects, each with the effects of its own b
	// levels in its local block (Design.Nested; Model is then nil). It
	// applies without LocalFactor and Part; otherwise, and when b is not
	// nested in a, the finer factor's levels are the subjects and a is
	// crossed.
	Nest NestPolicy

	// Release lets Build take the columns of the data frame that it makes
	// its design from, so that the data and the design are not held at
	// once: plain numeric covariates become X's columns (centred and
	// scaled in place), and the columns that only the response and the
	// fixed effects use are emptied (Num, Str and Missing set to nil)
	// once X is made, and collected (runtime.GC) before the rest is built;
	// the random part's and the grouping factors' columns once they are
	// coded, before the model is made. A 0/1 response (Bernoulli, or
	// binomial successes of one trial) goes to glmm as Config.Binary, a
	// byte a row, and Config().Y is nil. The caller must not use the
	// frame's columns afterwards, nor give Build a frame whose columns
	// something else still reads.
	Release bool

	// Part, when not nil, makes the design one process's part of a fit
	// over a vi.Group: Build calls it with the number n of subjects
	// (levels of the local grouping factor) the data hold, and keeps the
	// subjects [lo, hi) it returns, in the order of the levels, with
	// their rows alone. Everything else is coded from all the rows, as
	// the whole design would be: the levels of factors, the centring and
	// scaling of PriorAuto, the family inferred, the warnings and the
	// check of the fixed-effect design's rank. The parts' models are then
	// the whole model's subjects bit for bit (glmm.Config.Share). Models
	// with crossed factors have no parts.
	Part func(n int) (lo, hi int, err error)

	// Whole, when not nil, is what Scan read of the whole data, of which
	// the frame given to Build holds some rows (those of the part's
	// subjects at least, with the whole data's column kinds, as
	// datasets.Reader.Keep reads them): Build then codes the part from
	// Whole instead of from the frame, the same design bit for bit as
	// Part alone gives on the whole data. It needs Part, and the Options
	// given to Scan.
	Whole *Whole
}

// Design is a formula built on a data frame: the glmm model with the
// design matrices, names and levels behind it, and what NewData needs to
// code new data the same way.
type Design struct {
	f      *Formula
	model  *glmm.Model
	nested *glmm.Nested // Options.Nest's model; model is then nil
	cfg    glmm.Config
	rows   []int // the data's rows used; nil when every row is, in order
	fixed  *coder
	random *coder
	group  string
	// gnumeric says whether the subjects' levels are in numeric order
	// (levelOrder), for groupIndex.
	gnumeric bool
	offsets  []variable
	opts     Options
	// crossed are the grouping factors crossed with the subjects.
	crossed []crossedCoding
	// resp is the centre and scale of a gaussian response under PriorAuto
	// (scale 0 when the response is as the data give it), and the sum of
	// its weights.
	resp struct{ center, scale, weight float64 }
	// part is set for a design of Options.Part.
	part *partOf
	// whole is Options.Whole, whose levels the design codes by.
	whole *Whole
	// leftOut is LeftOut's count.
	leftOut int

	warnings []string
}

// use is a data column used by the model, with the formula token that uses
// it for messages.
type use struct {
	col, tok string
	pos      int
	numeric  bool   // the column must be numeric
	why      string // why it must be numeric
}

// Build checks f against the data frame fr and returns the design and its
// glmm model. Errors name the formula token and its position, or the data row
// and column at fault: a *DataError for problems of data, or glmm's error
// wrapped in one for a response impossible for the family or a
// rank-deficient design.
//
// Categorical predictors are coded by treatment contrasts exactly as R's
// model.matrix does (see the package documentation). Their levels are those
// present in the rows used, sorted numerically when every label is a number
// and byte-wise otherwise; the first is the reference unless
// Options.Reference says otherwise.
//
// A categorical response must have two levels (FALSE and TRUE count as
// two even if one is absent); the second is coded 1, as R does.
func Build(f *Formula, fr *datasets.Frame, opts Options) (*Design, error) {
	if f == nil || fr == nil {
		return nil, errors.New("formula: Build needs a formula and a data frame")
	}
	if fr.NumRows() == 0 {
		return nil, &DataError{Msg: "the data frame has no rows"}
	}
	if opts.Whole != nil {
		if err := noScale(f); err != nil {
			return nil, err
		}
		return buildPart(f, fr, opts)
	}
	if err := checkRandom(f, opts); err != nil {
		return nil, err
	}
	fr = withInteractions(f, fr)
	facs := factorsOf(f.randoms)
	first := mergeRandoms(facs[0].terms)
	first.groupCols = facs[0].terms[0].groupCols
	uses := f.uses(first)
	for _, fc := range facs[1:] {
		for _, r := range fc.terms {
			for _, v := range r.lhs.vars {
				uses = append(uses, varUse(v))
			}
		}
		uses = append(uses, groupUses(fc.group, fc.pos, fc.terms[0].groupCols)...)
	}
	uses = append(uses, optionUses(opts)...)
	if err := resolve(uses, fr); err != nil {
		return nil, err
	}
	fam, err := family(f, fr, opts)
	if err != nil {
		return nil, err
	}
	rows, err := completeRows(uses, fr, opts.Missing)
	if err != nil {
		return nil, err
	}
	local, err := chooseLocal(facs, fr, rows, opts)
	if err != nil {
		return nil, err
	}
	rnd := mergeRandoms(facs[local].terms)
	rnd.groupCols = facs[local].terms[0].groupCols

	d := &Design{f: f, rows: rows, leftOut: fr.NumRows() - len(rows), offsets: f.offsets, opts: opts}
	if d.fixed, err = newCoder(&f.fixed, fr, rows, opts.Reference); err != nil {
		return nil, err
	}
	if opts.Prior == PriorAuto && len(d.fixed.cols) > 0 {
		if err := d.fixed.standardize(fr, rows); err != nil {
			return nil, err
		}
	}
	d.cfg = glmm.Config{
		Family:     fam,
		Link:       opts.Link,
		FixedNames: d.fixed.names,
		PriorSD:    opts.PriorSD,
	}
	// Rows name the data's rows in glmm's errors; nil says every row is
	// used, in order (completeRows keeps the order).
	allRows := len(rows) == fr.NumRows()
	if !allRows {
		d.cfg.Rows = make([]int, len(rows))
		for k, i := range rows {
			d.cfg.Rows[k] = i + 1
		}
	}
	if err := d.response(fr, opts); err != nil {
		return nil, err
	}
	if len(d.fixed.cols) > 0 {
		var cols *glmm.Columns
		if opts.Release && allRows {
			if cols, err = d.fixed.frameColumns(fr, rows, uses, keptColumns(f, facs)); err != nil {
				return nil, err
			}
		}
		if cols != nil {
			d.cfg.X = cols
		} else if d.cfg.X, err = designMatrix(d.fixed.bind(fr), rows); err != nil {
			return nil, err
		}
	}
	if d.cfg.Offset, err = d.offset(fr, rows); err != nil {
		return nil, err
	}
	if opts.Weights != "" && !d.weightsAreTrials() {
		col, _ := fr.Column(opts.Weights)
		d.cfg.Weights = make([]float64, len(rows))
		for k, i := range rows {
			d.cfg.Weights[k] = col.Num[i]
		}
	}
	if fam == glmm.Gaussian && opts.Prior == PriorAuto {
		d.standardizeResponse()
	}
	if opts.Release {
		releaseFixed(f, facs, fr, uses)
	}

	if d.random, err = newCoder(&rnd.lhs, fr, rows, opts.Reference); err != nil {
		return nil, err
	}
	if opts.Prior == PriorAuto {
		if err := d.random.scaleOnly(fr, rows); err != nil {
			return nil, err
		}
	}
	if d.random.interceptOnly() {
		d.cfg.Z = onesColumn(len(rows))
	} else if d.cfg.Z, err = designMatrix(d.random.bind(fr), rows); err != nil {
		return nil, err
	}
	d.cfg.RandomNames = d.random.names
	if opts.DoubleBar == IndependentDoubleBar {
		if d.cfg.REBlocks, err = d.random.blocks(facs[local]); err != nil {
			return nil, err
		}
	}
	if err := d.grouping(rnd, fr); err != nil {
		return nil, err
	}
	for k, fc := range facs {
		if k != local {
			if err := d.crossedFactor(fc, fr); err != nil {
				return nil, err
			}
		}
	}

	if opts.Release {
		releaseCoded(f, facs, fr)
	}

	warnings := append(columnWarnings(uses, fr), scaleWarnings(d.cfg, d.fixed.scale != nil)...)
	if opts.Part != nil {
		if len(d.cfg.Crossed) > 0 {
			return nil, fmt.Errorf("%w: %s", ErrCrossedPart, d.cfg.Crossed[0].Name)
		}
		if err := glmm.CheckRank(d.cfg.X, d.cfg.FixedNames); err != nil {
			return nil, d.modelError(err, fr)
		}
		// The error of Part itself is the caller's own.
		if err := d.keepPart(opts.Part); err != nil {
			return nil, err
		}
	}
	if d.nestable() {
		if d.nested, err = glmm.NewNested(d.nestedConfig()); err != nil {
			return nil, d.modelError(err, fr)
		}
		d.warnings = warnings
		if allRows {
			d.rows = nil
		}
		return d, nil
	}
	model, err := glmm.New(d.cfg)
	if err != nil {
		return nil, d.modelError(err, fr)
	}
	d.model = model
	d.warnings = warnings
	if allRows && d.part == nil {
		d.rows = nil // Rows makes them: every row
	}
	return d, nil
}

// noScale refuses a formula with scale() for a design built from the
// pieces of the data (Scan, Options.Whole): its mean and sd would be
// over every piece's rows, which Scan does not gather.
func noScale(f *Formula) error {
	if v, ok := f.scaled(); ok {
		return &DataError{Token: v.token(), Pos: v.pos, Column: v.col,
			Msg: "scale() is not supported for a model built from pieces of the data, as under glmmfit -shard: scale the column in the data"}
	}
	return nil
}

// releaseFixed empties the columns of uses that only the response, the
// fixed effects, the offsets and the weights use, which Build has coded
// when it calls it (Options.Release). A cbind response's columns stay,
// for the message of a response glmm rejects.
func releaseFixed(f *Formula, facs []factor, fr *datasets.Frame, uses []use) {
	keep := keptColumns(f, facs)
	for _, u := range uses {
		if c, ok := fr.Column(u.col); ok && !keep[u.col] {
			c.Num, c.Str, c.Missing = nil, nil, nil
		}
	}
	runtime.GC()
}

// releaseCoded empties the columns of the random part and of the
// grouping factors, which Build has coded when it calls it
// (Options.Release), and collects them before glmm.New: at a million
// subjects of 7 rows the subjects' labels alone held 16 bytes a row in
// the frame. A cbind response's columns stay, as in releaseFixed.
func releaseCoded(f *Formula, facs []factor, fr *datasets.Frame) {
	for name := range keptColumns(f, facs) {
		if f.resp.kind != respSingle && (name == f.resp.y.col || name == f.resp.second.col) {
			continue
		}
		if c, ok := fr.Column(name); ok {
			c.Num, c.Str, c.Missing = nil, nil, nil
		}
	}
	runtime.GC()
}

// keptColumns returns the columns that Build reads after the fixed
// effects: the random part's and the grouping factors', and a cbind
// response's, for the message of a response glmm rejects.
func keptColumns(f *Formula, facs []factor) map[string]bool {
	keep := make(map[string]bool)
	if f.resp.kind != respSingle {
		keep[f.resp.y.col], keep[f.resp.second.col] = true, true
	}
	for _, fc := range facs {
		keep[fc.group] = true
		for _, r := range fc.terms {
			for _, c := range r.groupCols {
				keep[c] = true
			}
			for _, v := range r.lhs.vars {
				keep[v.col] = true
			}
		}
	}
	return keep
}

// frameColumns returns the design of c at rows, every row of fr, as
// glmm.Columns made of fr's own columns, centred and scaled in place:
// when each column of the design is the intercept (a nil column) or a
// numeric data column as it is, which nothing else uses (uses, keep);
// else nil. With Options.Release the data's covariates then become the
// design rather than being copied into it. The values and the errors are
// those of designMatrix, which makes a dense matrix for so few columns.
func (c *coder) frameColumns(fr *datasets.Frame, rows []int, uses []use, keep map[string]bool) (*glmm.Columns, error) {
	if len(c.cols) > sparseMinCols {
		return nil, nil // designMatrix might make it sparse
	}
	n := map[string]int{}
	for _, u := range uses {
		n[u.col]++
	}
	cols := make([][]float64, len(c.cols))
	taken := map[string]bool{}
	for j, parts := range c.cols {
		if len(parts) == 0 {
			continue // the intercept, never scaled
		}
		if len(parts) > 1 || parts[0].level >= 0 {
			return nil, nil
		}
		v := c.vars[parts[0].v].v
		col, ok := fr.Column(v.col)
		if !ok || v.fn != "" || col.Kind != datasets.Numeric || n[v.col] != 1 || keep[v.col] || taken[v.col] {
			return nil, nil
		}
		taken[v.col] = true
		cols[j] = col.Num[:len(rows)]
	}
	// The errors of designMatrix (a value that is not finite), row by row.
	b := c.bind(fr)
	rv := c.newRowValues()
	for _, i := range rows {
		if err := b.values(i, rv); err != nil {
			return nil, err
		}
	}
	for j, col := range cols {
		if col == nil || c.scale == nil || c.scale[j] == 0 {
			continue
		}
		for k, x := range col {
			col[k] = (x - c.center[j]) / c.scale[j] // as c.row
		}
	}
	return &glmm.Columns{Rows: len(rows), Cols: cols}, nil
}

// ErrCrossedPart is the error of Build with Options.Part for a model with
// crossed grouping factors, which has no parts.
var ErrCrossedPart = errors.New("formula: a model with crossed grouping factors has no parts (Options.Part)")

// partOf is where a part's subjects lie among the whole design's.
type partOf struct {
	levels []string // the whole grouping factor's
	lo, hi int
}

// PartOf returns, for a design built with Options.Part, the levels of the
// whole design's grouping factor and the subjects [lo, hi) of them it
// holds; levels is nil for a design that is no part.
func (d *Design) PartOf() (levels []string, lo, hi int) {
	if d.part == nil {
		return nil, 0, 0
	}
	return d.part.levels, d.part.lo, d.part.hi
}

// keepPart keeps the rows of the subjects [lo, hi) that part returns
// (Options.Part).
func (d *Design) keepPart(part func(n int) (lo, hi int, err error)) error {
	c := &d.cfg
	lo, hi, err := part(c.NumGroups)
	if err != nil {
		return err
	}
	if lo < 0 || lo >= hi || hi > c.NumGroups {
		return fmt.Errorf("formula: part [%d, %d) of %d subjects (Options.Part)", lo, hi, c.NumGroups)
	}
	var keep []int
	for k, g := range c.Group {
		if lo <= g && g < hi {
			keep = append(keep, k)
		}
	}
	pick := func(v []float64) []float64 {
		if v == nil {
			return nil
		}
		out := make([]float64, len(keep))
		for t, k := range keep {
			out[t] = v[k]
		}
		return out
	}
	c.Y, c.Trials, c.Offset, c.Weights = pick(c.Y), pick(c.Trials), pick(c.Offset), pick(c.Weights)
	if c.Binary != nil {
		bin := make([]uint8, len(keep))
		for t, k := range keep {
			bin[t] = c.Binary[k]
		}
		c.Binary = bin
	}
	if c.X != nil {
		c.X = keepRows(c.X, keep)
	}
	c.Z = keepRows(c.Z, keep)
	group, rows, dataRows := make([]int, len(keep)), make([]int, len(keep)), make([]int, len(keep))
	for t, k := range keep {
		group[t], rows[t], dataRows[t] = c.Group[k]-lo, k+1, d.rows[k]
		if c.Rows != nil {
			rows[t] = c.Rows[k]
		}
	}
	c.Group, c.Rows, d.rows = group, rows, dataRows
	d.part = &partOf{levels: c.GroupLevels, lo: lo, hi: hi}
	c.GroupLevels = c.GroupLevels[lo:hi:hi]
	c.NumGroups = hi - lo
	c.Share = true
	return nil
}

// keepRows returns the rows keep of x, a *mat.Dense or *sparse.CSR as
// designMatrix makes them, in a matrix of the same kind.
func keepRows(x mat.Matrix, keep []int) mat.Matrix {
	_, p := x.Dims()
	if c, ok := x.(*sparse.CSR); ok {
		m := c.RawMatrix()
		ptr := make([]int, len(keep)+1)
		var ind []int
		var val []float64
		for t, k := range keep {
			ind = append(ind, m.Ind[m.Indptr[k]:m.Indptr[k+1]]...)
			val = append(val, m.Data[m.Indptr[k]:m.Indptr[k+1]]...)
			ptr[t+1] = len(ind)
		}
		return sparse.NewCSR(len(keep), p, ptr, ind, val)
	}
	out := mat.NewDense(len(keep), p, nil) // a part has rows
	for t, k := range keep {
		mat.Row(out.RawRowView(t), k, x)
	}
	return out
}

// columnWarnings returns the warnings of the data columns used, such as
// the CSV reader's for a numeric column with a typo, each once.
func columnWarnings(uses []use, fr *datasets.Frame) []string {
	var w []string
	seen := make(map[string]bool, len(uses))
	for _, u := range uses {
		if seen[u.col] {
			continue
		}
		seen[u.col] = true
		if c, ok := fr.Column(u.col); ok && c.Warning != "" {
			w = append(w, c.Warning)
		}
	}
	return w
}

// Design columns whose standard deviation or largest magnitude is outside
// [scaleLo, scaleHi] get a warning: the fit works on the raw scale, and
// coefficients of very different sizes make its geometry ill-conditioned
// (lme4 warns likewise and advises rescaling).
const (
	scaleLo = 1e-3
	scaleHi = 1e3
)

// scaleWarnings returns a warning for each column of X (unless the design
// standardized it), then of Z, far from unit scale. Columns of zeros and
// ones (intercept, dummies) have their natural scale and are not checked.
func scaleWarnings(cfg glmm.Config, standardized bool) []string {
	var xs, zs []colStat
	if cfg.X != nil && !standardized {
		xs = columnStats(cfg.X)
	}
	if cfg.Z != nil {
		zs = columnStats(cfg.Z)
	}
	return scaleWarningsOf(xs, cfg.FixedNames, zs, cfg.RandomNames)
}

// scaleWarnings returns scaleWarnings of the columnStats of X (nil if
// it has none, or is standardized) and of Z.
func scaleWarningsOf(xs []colStat, xnames []string, zs []colStat, znames []string) []string {
	var w []string
	seen := make(map[string]bool)
	for _, m := range []struct {
		stats []colStat
		names []string
		what  string
	}{{xs, xnames, "fixed-effect"}, {zs, znames, "random-effect"}} {
		for j, st := range m.stats {
			if st.binary || seen[m.names[j]] {
				continue
			}
			if st.sd > scaleHi || st.sd > 0 && st.sd < scaleLo || st.maxAbs > scaleHi || st.maxAbs < scaleLo {
				seen[m.names[j]] = true
				w = append(w, fmt.Sprintf("%s column %q has standard deviation %.3g and largest |value| %.3g, far from unit scale: consider rescaling it, as predictors on very different scales slow the fit and can stop it converging",
					m.what, m.names[j], st.sd, st.maxAbs))
			}
		}
	}
	return w
}

type colStat struct {
	mean, sd, maxAbs float64
	binary           bool // every value is 0 or 1
}

// columnStats returns the (population) standard deviation and largest
// magnitude of each column of x, a *mat.Dense or *sparse.CSR as
// designMatrix makes them.
func columnStats(x mat.Matrix) []colStat {
	n, p := x.Dims()
	return entryStats(n, p, func(f func(j int, v float64)) {
		switch x := x.(type) {
		case *sparse.CSR:
			m := x.RawMatrix()
			for t, j := range m.Ind[:m.Indptr[n]] {
				f(j, m.Data[t])
			}
		default:
			for i := range n {
				for j := range p {
					f(j, x.At(i, j))
				}
			}
		}
	})
}

// entryStats returns columnStats of an n×p matrix whose entries each
// visits, row by row, in the order of their columns; a sparse matrix's
// stored entries alone, the others being zeros.
func entryStats(n, p int, each func(f func(j int, v float64))) []colStat {
	a := newStatsAcc(p)
	a.n = n
	each(a.first)
	each(a.second)
	return a.stats()
}

// statsAcc accumulates entryStats over two passes of the entries, for a
// caller that cannot give them as one function (Scan, a piece at a time).
// n must be set before the second pass.
type statsAcc struct {
	n   int
	sum []float64
	st  []colStat
	ss  []float64
	nz  []int
}

func newStatsAcc(p int) *statsAcc {
	a := &statsAcc{sum: make([]float64, p), st: make([]colStat, p), ss: make([]float64, p), nz: make([]int, p)}
	for j := range a.st {
		a.st[j].binary = true
	}
	return a
}

// first visits entry v of column j in the first pass. Visiting a zero
// entry changes nothing: a column's sum, which starts at +0, never is -0.
func (a *statsAcc) first(j int, v float64) {
	a.sum[j] += v
	a.st[j].maxAbs = max(a.st[j].maxAbs, math.Abs(v))
	if v != 0 && v != 1 {
		a.st[j].binary = false
	}
}

// Two passes, as the mean of a large column swamps its spread; the
// deviations in units of the largest |value|, so that a column of
// 1e-300s does not underflow to a zero sd when squared.
func (a *statsAcc) unit(j int) float64 {
	if u := a.st[j].maxAbs; u > 0 && !math.IsInf(u, 0) {
		return u
	}
	return 1
}

// second visits entry v of column j in the second pass: every entry, or
// the stored ones of a CSR alone.
func (a *statsAcc) second(j int, v float64) {
	d := (v - a.sum[j]/float64(a.n)) / a.unit(j)
	a.ss[j] += d * d
	a.nz[j]++
}

// stats returns the statistics after the second pass.
func (a *statsAcc) stats() []colStat {
	for j := range a.st {
		mean := a.sum[j] / float64(a.n)
		m := mean / a.unit(j)
		a.ss[j] += float64(a.n-a.nz[j]) * m * m // entries a CSR does not store
		a.st[j].mean = mean
		a.st[j].sd = a.unit(j) * math.Sqrt(a.ss[j]/float64(a.n))
	}
	return a.st
}

// checkRandom enforces one random-effects term (or, under
// CorrelatedDoubleBar, one grouping factor) and the || policy.
func checkRandom(f *Formula, opts Options) error {
	if len(f.randoms) == 0 {
		return &DataError{Token: "~", Pos: charPos(f.src, strings.Index(f.src, "~")),
			Msg: "the formula has no random-effects term such as (1 | g); sparsevi fits mixed models"}
	}
	if opts.DoubleBar == CorrelatedDoubleBar || opts.DoubleBar == IndependentDoubleBar {
		return nil
	}
	for _, r := range f.randoms {
		if r.double {
			return &DataError{Token: "||", Pos: r.barTok.pos, Err: ErrUnsupported,
				Msg: "uncorrelated random effects (||): sparsevi fits one full covariance per grouping factor; write | , or set Options.DoubleBar to CorrelatedDoubleBar to fit them as correlated"}
		}
	}
	for _, fc := range factorsOf(f.randoms) {
		if len(fc.terms) > 1 {
			r := fc.terms[1]
			return &DataError{Token: "(", Pos: r.pos, Err: ErrUnsupported,
				Msg: fmt.Sprintf("several random-effects terms for %s (independent blocks): combine them into one term such as (1 + x | %s), or set Options.DoubleBar to CorrelatedDoubleBar", r.group, r.group)}
		}
	}
	return nil
}

// factor is a grouping factor with its random-effects terms.
type factor struct {
	group string
	pos   int
	terms []random
}

// interceptOnly reports whether the factor's only random effect is an
// intercept: (1 | g).
func (fc factor) interceptOnly() bool {
	for _, r := range fc.terms {
		if !r.lhs.intercept || len(r.lhs.terms) > 0 {
			return false
		}
	}
	return true
}

// factorsOf groups the random-effects terms by grouping factor, in order
// of first appearance.
func factorsOf(rs []random) []factor {
	var out []factor
	for _, r := range rs {
		k := slices.IndexFunc(out, func(f factor) bool { return f.group == r.group })
		if k < 0 {
			out = append(out, factor{group: r.group, pos: r.groupPos})
			k = len(out) - 1
		}
		out[k].terms = append(out[k].terms, r)
	}
	return out
}

// chooseLocal returns the index of the factor whose levels are the
// subjects: Options.LocalFactor, else the one factor with more than a
// random intercept, else the one with the most levels at rows (the first
// on a tie). Every other factor must have a random intercept only.
func chooseLocal(facs []factor, fr *datasets.Frame, rows []int, opts Options) (int, error) {
	if len(facs) == 1 {
		if opts.LocalFactor != "" && opts.LocalFactor != facs[0].group {
			return 0, &DataError{Token: "Options.LocalFactor",
				Msg: fmt.Sprintf("%q is not a grouping factor of the formula (it has %s)", opts.LocalFactor, facs[0].group)}
		}
		return 0, nil
	}
	local := -1
	if opts.LocalFactor != "" {
		local = slices.IndexFunc(facs, func(f factor) bool { return f.group == opts.LocalFactor })
		if local < 0 {
			var names []string
			for _, f := range facs {
				names = append(names, f.group)
			}
			return 0, &DataError{Token: "Options.LocalFactor",
				Msg: fmt.Sprintf("%q is not a grouping factor of the formula (it has %s)", opts.LocalFactor, strings.Join(names, ", "))}
		}
	}
	for k, f := range facs {
		if f.interceptOnly() || k == local {
			continue
		}
		if local >= 0 {
			return 0, &DataError{Token: f.group, Pos: f.pos, Err: ErrUnsupported,
				Msg: fmt.Sprintf("random slopes for %s, a grouping factor crossed with %s: a crossed factor has a random intercept only, (1 | %s); the factor with slopes must be the subjects' (Options.LocalFactor)", f.group, facs[local].group, f.group)}
		}
		local = k
	}
	if local >= 0 {
		return local, nil
	}
	most := -1
	for k, f := range facs {
		col, _ := fr.Column(f.group)
		if nl := len(levelsOf(col, rows)); nl > most {
			local, most = k, nl
		}
	}
	return local, nil
}

// mergeRandoms returns the single random-effects term to fit: the first,
// or the union of all of them (all have the same grouping factor).
func mergeRandoms(rs []random) *random {
	if len(rs) == 1 {
		r := rs[0]
		return &r
	}
	m := &random{group: rs[0].group, groupPos: rs[0].groupPos, pos: rs[0].pos}
	e := &expander{m: &m.lhs}
	var terms []term
	for _, r := range rs {
		m.lhs.intercept = m.lhs.intercept || r.lhs.intercept
		for _, t := range r.lhs.terms {
			nt := make(term, len(t))
			for k, v := range t {
				nt[k] = e.variable(r.lhs.vars[v])
			}
			slices.Sort(nt)
			terms = union(terms, []term{nt})
		}
	}
	m.lhs.terms = orderTerms(terms)
	return m
}

// uses lists the columns the formula uses, response first.
func (f *Formula) uses(rnd *random) []use {
	var u []use
	r := f.resp
	if r.kind == respSingle {
		u = append(u, use{col: r.y.col, tok: r.y.label, pos: r.y.pos})
	} else {
		why := "cbind() needs numeric counts"
		u = append(u, use{col: r.y.col, tok: r.y.label, pos: r.y.pos, numeric: true, why: why},
			use{col: r.second.col, tok: r.second.label, pos: r.second.pos, numeric: true, why: why})
	}
	for _, v := range f.fixed.vars {
		u = append(u, varUse(v))
	}
	for _, v := range f.offsets {
		x := varUse(v)
		x.numeric, x.why = true, "an offset must be numeric"
		u = append(u, x)
	}
	for _, v := range rnd.lhs.vars {
		u = append(u, varUse(v))
	}
	return append(u, groupUses(rnd.group, rnd.groupPos, rnd.groupCols)...)
}

// optionUses lists the columns of Options.Weights and Options.Offset.
func optionUses(opts Options) []use {
	var uses []use
	if opts.Weights != "" {
		uses = append(uses, use{col: opts.Weights, tok: "Options.Weights", numeric: true, why: "weights must be numeric"})
	}
	if opts.Offset != "" {
		uses = append(uses, use{col: opts.Offset, tok: "Options.Offset", numeric: true, why: "an offset must be numeric"})
	}
	return uses
}

// groupUses lists the columns a grouping factor uses: an interaction's
// own columns first, so that a missing one is named, then the factor.
func groupUses(group string, pos int, cols []string) []use {
	var u []use
	for _, c := range cols {
		u = append(u, use{col: c, tok: group, pos: pos})
	}
	return append(u, use{col: group, tok: group, pos: pos})
}

// withInteractions returns fr with a categorical column for each
// interaction of grouping factors a:b of f whose columns fr has, named
// "a:b" and labelled "la:lb" (missing where a column is), sharing fr's
// columns; fr itself when f has none.
func withInteractions(f *Formula, fr *datasets.Frame) *datasets.Frame {
	var out *datasets.Frame
	for _, r := range f.randoms {
		if r.groupCols == nil {
			continue
		}
		if _, ok := fr.Column(r.group); ok {
			continue // already there (or a data column of that name)
		}
		cols := make([]*datasets.Column, len(r.groupCols))
		ok := true
		for k, c := range r.groupCols {
			cols[k], ok = fr.Column(c)
			if !ok {
				break
			}
		}
		if !ok {
			continue
		}
		lab := make([]string, fr.NumRows())
		for i := range lab {
			var b strings.Builder
			for k, c := range cols {
				if c.Missing[i] {
					b.Reset()
					break
				}
				if k > 0 {
					b.WriteByte(':')
				}
				b.WriteString(Label(c, i))
			}
			lab[i] = b.String()
		}
		if out == nil {
			out, _ = datasets.NewFrame(fr.Columns()...)
		}
		if err := out.Add(datasets.NewCategorical(r.group, lab)); err != nil {
			panic("formula: " + err.Error()) // the name was checked above
		}
		fr = out
	}
	if out == nil {
		return fr
	}
	return out
}

func varUse(v variable) use {
	x := use{col: v.col, tok: v.token(), pos: v.pos}
	if v.fn != "" && !v.isFactor() {
		x.numeric, x.why = true, v.fn+"() needs a numeric column"
	}
	return x
}

// resolve checks that every used column exists and has the right kind.
func resolve(uses []use, fr *datasets.Frame) error {
	for _, u := range uses {
		col, ok := fr.Column(u.col)
		if !ok {
			return &DataError{Token: u.tok, Pos: u.pos, Column: u.col,
				Msg: "no such column in the data (" + nearColumn(u.col, fr.Names()) + "columns: " + strings.Join(firstN(fr.Names(), 20), ", ") + ")"}
		}
		if u.numeric && col.Kind != datasets.Numeric {
			// The first label that is not a number is most likely why.
			for i, s := range col.Str {
				if !col.Missing[i] && !datasets.IsDecimal(strings.TrimSpace(s)) {
					return &DataError{Token: u.tok, Pos: u.pos, Column: u.col, Row: i + 1,
						Msg: fmt.Sprintf("the column is categorical (%q is not a number): %s", s, u.why)}
				}
			}
			return &DataError{Token: u.tok, Pos: u.pos, Column: u.col,
				Msg: "the column is categorical: " + u.why}
		}
	}
	return nil
}

func firstN(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(slices.Clone(s[:n]), fmt.Sprintf("... (%d in all)", len(s)))
}

// completeRows returns the rows with no missing value in a used column,
// or, under RejectMissing, an error naming the first row with one.
func completeRows(uses []use, fr *datasets.Frame, policy MissingPolicy) ([]int, error) {
	rows, err := completeRowsAfter(uses, fr, policy, 0)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, &DataError{Msg: "no row is complete in the columns the model uses"}
	}
	return rows, nil
}

// completeRowsAfter is completeRows of a piece of the data that follows
// before rows, which an error's Row counts; it returns no rows without
// an error when none is complete.
func completeRowsAfter(uses []use, fr *datasets.Frame, policy MissingPolicy, before int) ([]int, error) {
	cols := make([]*datasets.Column, len(uses))
	for k, u := range uses {
		cols[k], _ = fr.Column(u.col)
	}
	n := fr.NumRows()
	rows := make([]int, 0, n)
rowLoop:
	for i := range n {
		for k, c := range cols {
			if c.Missing[i] || c.Kind == datasets.Numeric && math.IsNaN(c.Num[i]) {
				if policy == RejectMissing {
					u := uses[k]
					return nil, &DataError{Token: u.tok, Pos: u.pos, Column: u.col, Row: before + i + 1,
						Msg: "missing value (set Options.Missing to DropMissing to leave such rows out)"}
				}
				continue rowLoop
			}
		}
		rows = append(rows, i)
	}
	return rows, nil
}

// nearColumn returns `did you mean "id"? ` for the column of names
// nearest to name, or "": the one that differs from it only in case, or
// else by one edit for a name of three characters or more (for shorter
// names every column would be as near).
func nearColumn(name string, names []string) string {
	best, bestD := "", 2
	for _, c := range names {
		switch d := editdist.Distance(name, c); {
		case strings.EqualFold(name, c):
			return fmt.Sprintf("did you mean %q? ", c)
		case d < bestD && utf8.RuneCountInString(name) >= 3:
			best, bestD = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("did you mean %q? ", best)
}

// family returns the family of the model, inferring it if unset.
func family(f *Formula, fr *datasets.Frame, opts Options) (glmm.Family, error) {
	return familyOf(f, opts, func() bool { return oneTrial(fr, f.resp.y.col) }, func() bool {
		col, ok := fr.Column(f.resp.y.col)
		return ok && col.Kind == datasets.Categorical
	})
}

// familyOf is family given whether the response column holds one trial
// per row and whether it is categorical.
func familyOf(f *Formula, opts Options, oneTrial, categorical func() bool) (glmm.Family, error) {
	r := f.resp
	fam := opts.Family
	if fam != 0 && !fam.Valid() {
		return 0, &DataError{Token: "Options.Family", Msg: fmt.Sprintf("unknown family %v", fam)}
	}
	if r.kind != respSingle {
		if fam != 0 && fam != glmm.Binomial {
			return 0, &DataError{Token: "cbind", Pos: r.pos,
				Msg: fmt.Sprintf("a cbind() response needs the binomial family, not %v", fam)}
		}
		return glmm.Binomial, nil
	}
	if fam == glmm.Binomial && oneTrial() {
		// One 0/1 outcome per row is a Bernoulli response: fitted as
		// such, the binomial spelling gets the Bernoulli fit.
		return glmm.Bernoulli, nil
	}
	if fam != 0 {
		return fam, nil
	}
	if categorical() {
		return glmm.Bernoulli, nil
	}
	return 0, &DataError{Token: r.y.label, Pos: r.y.pos,
		Msg: "a numeric response needs a family: set Options.Family (poisson, bernoulli, binomial, gaussian or negbinomial)"}
}

// oneTrial reports whether the response column holds one trial per row:
// categorical (two levels), or numeric with every value 0 or 1.
func oneTrial(fr *datasets.Frame, name string) bool {
	col, ok := fr.Column(name)
	if !ok {
		return false
	}
	if col.Kind == datasets.Categorical {
		return true
	}
	for k, v := range col.Num {
		if !col.Missing[k] && v != 0 && v != 1 {
			return false
		}
	}
	return true
}

// response fills Y (or Binary) and Trials.
func (d *Design) response(fr *datasets.Frame, opts Options) error {
	r := d.f.resp
	rows := d.rows
	yc, _ := fr.Column(r.y.col)
	binary := opts.Release && r.kind == respSingle && binaryColumn(yc, rows, d.cfg.Family)
	var setOne func(k int)
	if binary {
		// A 0/1 response as bytes, without a float64 copy of it
		// (glmm.Config.Binary): 7 bytes an observation fewer while the
		// rest is built.
		d.cfg.Binary = make([]uint8, len(rows))
		setOne = func(k int) { d.cfg.Binary[k] = 1 }
	} else {
		d.cfg.Y = make([]float64, len(rows))
		setOne = func(k int) { d.cfg.Y[k] = 1 }
	}
	if yc.Kind == datasets.Categorical {
		one, err := d.binaryLevel(yc, opts)
		if err != nil {
			return err
		}
		for k, i := range rows {
			if yc.Str[i] == one {
				setOne(k)
			}
		}
		return nil
	}
	if binary {
		for k, i := range rows {
			if yc.Num[i] == 1 {
				setOne(k)
			}
		}
		return nil
	}
	for k, i := range rows {
		d.cfg.Y[k] = yc.Num[i]
	}
	if d.weightsAreTrials() {
		return d.proportions(fr, opts)
	}
	if r.kind == respSingle {
		return nil
	}
	sc, _ := fr.Column(r.second.col)
	d.cfg.Trials = make([]float64, len(rows))
	for k, i := range rows {
		if r.kind == respFailures {
			d.cfg.Trials[k] = yc.Num[i] + sc.Num[i]
		} else {
			d.cfg.Trials[k] = sc.Num[i]
		}
	}
	return nil
}

// proportions reads a binomial response of one column, with
// Options.Weights, as glmer does: each row's proportion of successes out
// of its weight's trials. It sets Y to the successes and Trials to the
// weights, which are then not observation weights (weightsAreTrials):
// the likelihood is R's, constant included.
func (d *Design) proportions(fr *datasets.Frame, opts Options) error {
	r := d.f.resp
	wc, _ := fr.Column(opts.Weights)
	d.cfg.Trials = make([]float64, len(d.cfg.Y))
	for k, i := range d.rows {
		p, n := d.cfg.Y[k], wc.Num[i]
		switch {
		case !(n >= 1) || n != math.Trunc(n) || n > glmm.MaxCount:
			return &DataError{Token: "Options.Weights", Column: opts.Weights, Row: i + 1,
				Msg: fmt.Sprintf("the weights of a binomial response of proportions are its numbers of trials (glmer's weights = n): whole numbers of at least 1, not %v", n)}
		case !(p >= 0 && p <= 1):
			return &DataError{Token: r.y.label, Pos: r.y.pos, Column: r.y.col, Row: i + 1,
				Msg: fmt.Sprintf("a binomial response of one column with weights is the proportion of successes of the weights' trials, between 0 and 1, not %v (for counts write cbind(successes, failures))", p)}
		}
		// A proportion s/n as a float64 gives s back within rounding.
		s := math.Round(p * n)
		if math.Abs(p*n-s) > 1e-9*n {
			return &DataError{Token: r.y.label, Pos: r.y.pos, Column: r.y.col, Row: i + 1,
				Msg: fmt.Sprintf("the proportion %v of %v trials is %v successes, not a whole number (if the proportions were rounded, give the successes: cbind(s, n - s))", p, n, p*n)}
		}
		d.cfg.Y[k], d.cfg.Trials[k] = s, n
	}
	return nil
}

// weightsAreTrials reports whether Options.Weights gives a binomial
// response's numbers of trials, its proportions times them the successes
// (glmer's weights = n), rather than observation weights: for a response
// of one column, which a binomial family holds only when it is not 0/1.
func (d *Design) weightsAreTrials() bool {
	return d.f.resp.kind == respSingle && d.cfg.Family == glmm.Binomial && d.opts.Weights != ""
}

// binaryLevel returns the level of the categorical response yc coded 1,
// or the error of a response that is not binary.
func (d *Design) binaryLevel(yc *datasets.Column, opts Options) (string, error) {
	r := d.f.resp
	if d.cfg.Family != glmm.Bernoulli && d.cfg.Family != glmm.Binomial {
		return "", &DataError{Token: r.y.label, Pos: r.y.pos, Column: r.y.col,
			Msg: fmt.Sprintf("a categorical response needs the bernoulli family, not %v", d.cfg.Family)}
	}
	lev := d.levelsOf(yc, d.rows)
	if logicalLevels(lev) {
		return "TRUE", nil
	}
	if ref, ok := opts.Reference[r.y.col]; ok {
		i := slices.Index(lev, ref)
		if i < 0 {
			return "", &DataError{Token: r.y.label, Pos: r.y.pos, Column: r.y.col,
				Msg: fmt.Sprintf("reference level %q is not among the levels %s", ref, quoteList(lev, 12))}
		}
		lev = append([]string{ref}, slices.Delete(slices.Clone(lev), i, i+1)...)
	}
	if len(lev) != 2 {
		return "", &DataError{Token: r.y.label, Pos: r.y.pos, Column: r.y.col,
			Msg: fmt.Sprintf("a categorical response must have two levels, found %d %s", len(lev), quoteList(lev, 6))}
	}
	return lev[1], nil
}

// binaryColumn reports whether the response column yc is 0/1 at rows in
// a family of 0/1 responses: categorical (binaryLevel checks its levels)
// or numeric with every value +0 or 1 exactly, as glmm stores as bytes.
func binaryColumn(yc *datasets.Column, rows []int, fam glmm.Family) bool {
	if fam != glmm.Bernoulli && fam != glmm.Binomial {
		return false
	}
	if yc.Kind == datasets.Categorical {
		return true
	}
	for _, i := range rows {
		if b := math.Float64bits(yc.Num[i]); b != 0 && b != math.Float64bits(1) {
			return false
		}
	}
	return true
}

// logicalLevels reports whether lev holds only R's logical labels.
func logicalLevels(lev []string) bool {
	for _, s := range lev {
		if s != "FALSE" && s != "TRUE" {
			return false
		}
	}
	return len(lev) > 0
}

// offset returns the sum of the offsets at rows, or nil if there are none.
func (d *Design) offset(fr *datasets.Frame, rows []int) ([]float64, error) {
	offs := slices.Clone(d.offsets)
	if d.opts.Offset != "" {
		offs = append(offs, variable{col: d.opts.Offset, label: d.opts.Offset})
	}
	if len(offs) == 0 {
		return nil, nil
	}
	out := make([]float64, len(rows))
	for _, v := range offs {
		col, ok := fr.Column(v.col)
		if !ok {
			return nil, &DataError{Token: v.token(), Pos: v.pos, Column: v.col, Msg: "no such column in the data"}
		}
		if col.Kind != datasets.Numeric {
			return nil, &DataError{Token: v.token(), Pos: v.pos, Column: v.col, Msg: "the column is categorical: an offset must be numeric"}
		}
		for k, i := range rows {
			x, err := numValue(v, col, i)
			if err != nil {
				return nil, err
			}
			out[k] += x
		}
	}
	return out, nil
}

// grouping fills the subject index of each row from the grouping factor.
func (d *Design) grouping(rnd *random, fr *datasets.Frame) error {
	col, _ := fr.Column(rnd.group)
	lev, code, numeric := codesOf(col, d.rows)
	if len(lev) < 2 {
		return &DataError{Token: rnd.group, Pos: rnd.groupPos, Column: rnd.group,
			Msg: fmt.Sprintf("the grouping factor has a single level %s: a random effect needs at least 2 groups", quoteList(lev, 1))}
	}
	d.group = rnd.group
	d.gnumeric = numeric
	d.cfg.Group = code
	d.cfg.NumGroups = len(lev)
	d.cfg.GroupName = rnd.group
	d.cfg.GroupLevels = lev
	return nil
}

// crossedCoding is a grouping factor crossed with the subjects.
type crossedCoding struct {
	group  string
	pos    int
	levels []string
	index  map[string]int
}

// crossedFactor adds the crossed factor fc to the design's model.
func (d *Design) crossedFactor(fc factor, fr *datasets.Frame) error {
	col, _ := fr.Column(fc.group)
	lev, code, _ := codesOf(col, d.rows)
	if len(lev) < 2 {
		return &DataError{Token: fc.group, Pos: fc.pos, Column: fc.group,
			Msg: fmt.Sprintf("the grouping factor has a single level %s: a random effect needs at least 2 groups", quoteList(lev, 1))}
	}
	cc := crossedCoding{group: fc.group, pos: fc.pos, levels: lev, index: make(map[string]int, len(lev))}
	for i, s := range lev {
		cc.index[s] = i
	}
	cr := glmm.Crossed{Name: fc.group, NumLevels: len(lev), Levels: lev, Index: code}
	d.crossed = append(d.crossed, cc)
	d.cfg.Crossed = append(d.cfg.Crossed, cr)
	return nil
}

// NewCrossed returns, for each crossed factor of the design and each row
// of a new data frame, the index of its level in the model, or -1 for a
// level the model has not seen (whose effect is then drawn from the
// factor's distribution). Rows with a missing value are errors.
func (d *Design) NewCrossed(fr *datasets.Frame) ([][]int, error) {
	if len(d.crossed) == 0 {
		return nil, nil
	}
	fr = withInteractions(d.f, fr)
	var uses []use
	for _, cc := range d.crossed {
		uses = append(uses, use{col: cc.group, tok: cc.group, pos: cc.pos})
	}
	if err := resolve(uses, fr); err != nil {
		return nil, err
	}
	rows, err := completeRows(uses, fr, RejectMissing)
	if err != nil {
		return nil, err
	}
	out := make([][]int, len(d.crossed))
	for c, cc := range d.crossed {
		col, _ := fr.Column(cc.group)
		out[c] = make([]int, len(rows))
		for k, i := range rows {
			l, ok := cc.index[Label(col, i)]
			if !ok {
				l = -1
			}
			out[c][k] = l
		}
	}
	return out, nil
}

// Sparse storage of a design pays when it has many columns, mostly zero
// (many dummy columns); the same rule as glmm's storage.
const (
	sparseMinCols    = 10
	sparseMaxDensity = 0.25
)

// onesColumn is the design of a random intercept: n rows of a 1, which
// need no storage (glmm stores none either).
type onesColumn int

// Dims returns the n×1 shape.
func (o onesColumn) Dims() (r, c int) { return int(o), 1 }

// At returns 1 for every entry.
func (o onesColumn) At(i, j int) float64 {
	if i < 0 || i >= int(o) || j != 0 {
		panic(mat.ErrIndexOutOfRange)
	}
	return 1
}

// T returns the transpose, a row of ones.
func (o onesColumn) T() mat.Matrix { return mat.Transpose{Matrix: o} }

// interceptOnly reports whether c's design is an intercept alone.
func (c *coder) interceptOnly() bool { return len(c.cols) == 1 && len(c.cols[0]) == 0 }

// designStats returns columnStats of designMatrix(b, rows) without making
// the matrix, which would be a second copy of the design while it is
// built: it evaluates the rows again for each pass, and visits the entries
// in the order that the matrix designMatrix makes would give, so that the
// statistics are the same to the bit.
func designStats(b bound, rows []int) ([]colStat, error) {
	p := len(b.c.cols)
	rv := b.c.newRowValues()
	buf := make([]float64, p)
	n := len(rows)
	a := newStatsAcc(p)
	a.n = n
	// The first pass finds the errors of designMatrix, whether
	// designMatrix would make a wide design sparse, and the first pass of
	// the statistics, to which a zero entry adds nothing (statsAcc.first),
	// so that sparse or not it is entryStats'.
	nnz := 0
	for _, i := range rows {
		if err := b.values(i, rv); err != nil {
			return nil, err
		}
		b.c.row(rv, buf)
		for j, v := range buf {
			if v != 0 {
				nnz++
			}
			a.first(j, v)
		}
	}
	sparse := p > sparseMinCols && float64(nnz) < sparseMaxDensity*float64(n)*float64(p)
	for _, i := range rows {
		b.values(i, rv) // no error: the first pass read every row
		b.c.row(rv, buf)
		for j, v := range buf {
			if !sparse || v != 0 {
				a.second(j, v)
			}
		}
	}
	return a.stats(), nil
}

// designMatrix evaluates the coder's columns at rows: a *sparse.CSR when
// the design is wide and mostly zero, else a *mat.Dense.
func designMatrix(b bound, rows []int) (mat.Matrix, error) {
	return designMatrixAs(b, rows, nil)
}

// designMatrixAs is designMatrix, the choice of a sparse matrix for a wide
// design made by *sparse when not nil rather than by the rows' entries.
func designMatrixAs(b bound, rows []int, sparseAs *bool) (mat.Matrix, error) {
	p := len(b.c.cols)
	n := len(rows)
	rv := b.c.newRowValues()
	buf := make([]float64, p)
	if p <= sparseMinCols {
		x := mat.NewDense(n, p, nil)
		for k, i := range rows {
			if err := b.values(i, rv); err != nil {
				return nil, err
			}
			b.c.row(rv, x.RawRowView(k))
		}
		return x, nil
	}
	ptr := make([]int, n+1)
	var ind []int
	var val []float64
	for k, i := range rows {
		if err := b.values(i, rv); err != nil {
			return nil, err
		}
		b.c.row(rv, buf)
		for j, v := range buf {
			if v != 0 {
				ind = append(ind, j)
				val = append(val, v)
			}
		}
		ptr[k+1] = len(ind)
	}
	if isSparse := float64(len(ind)) < sparseMaxDensity*float64(n)*float64(p); sparseAs == nil && isSparse || sparseAs != nil && *sparseAs {
		return sparse.NewCSR(n, p, ptr, ind, val), nil
	}
	x := mat.NewDense(n, p, nil)
	for k := range n {
		row := x.RawRowView(k)
		for t := ptr[k]; t < ptr[k+1]; t++ {
			row[ind[t]] = val[t]
		}
	}
	return x, nil
}

// modelError turns an error of glmm.New into a *DataError naming the
// response column at fault for impossible responses.
func (d *Design) modelError(err error, fr *datasets.Frame) error {
	de := &DataError{Msg: "invalid model", Err: err}
	// glmm's errors name the row and the design column; the response is
	// named here, by its token.
	var ge *glmm.DataError
	if errors.As(err, &ge) {
		de.Row = ge.Row
		de.Err = ge.Err
		if errors.Is(err, glmm.ErrResponse) {
			r := d.f.resp
			v, role := r.y, ""
			if de.Row > 0 {
				v, role = d.responseCulprit(fr, de.Row-1)
			}
			de.Token, de.Pos, de.Column = r.String(), v.pos, v.col
			de.Msg = d.cfg.Family.String() + " family"
			if role != "" {
				de.Msg += ": " + role
			}
			// The row's response, which Release may have taken from fr.
			k := de.Row - 1
			if d.cfg.Rows != nil {
				k = slices.Index(d.cfg.Rows, de.Row)
			}
			if r.kind == respSingle && d.cfg.Family == glmm.Binomial && k >= 0 && k < len(d.cfg.Y) {
				switch y := d.cfg.Y[k]; {
				case y > 0 && y < 1:
					// glm's binomial proportions with weights = trials.
					de.Err = fmt.Errorf("%w; for proportions of n trials give n as Options.Weights (glmer's weights = n)", de.Err)
				case y > 1:
					de.Err = fmt.Errorf("%w; a response of one column has one trial a row: for counts of successes fit cbind(successes, failures) or cbind(successes, n - successes)", de.Err)
				}
			}
		} else if slices.Contains(d.cfg.FixedNames, ge.Column) || slices.Contains(d.cfg.RandomNames, ge.Column) {
			de.Token, de.Msg = ge.Column, "design column"
		} else if ge.Column == "weights" && d.opts.Weights != "" {
			de.Token, de.Column = "Options.Weights", d.opts.Weights
		} else if k := slices.IndexFunc(d.crossed, func(c crossedCoding) bool { return c.group == ge.Column }); k >= 0 {
			c := d.crossed[k]
			de.Token, de.Pos, de.Column, de.Msg = c.group, c.pos, c.group, "crossed factor"
		}
	}
	return de
}

// responseCulprit returns the column of a cbind() response that makes
// data row i impossible, and its role when it is not the successes: glmm
// sees only successes and trials, so a bad trials or failures value would
// otherwise be blamed on the successes.
func (d *Design) responseCulprit(fr *datasets.Frame, i int) (variable, string) {
	r := d.f.resp
	if r.kind == respSingle {
		return r.y, ""
	}
	yc, _ := fr.Column(r.y.col)
	sc, _ := fr.Column(r.second.col)
	count := func(v float64) bool { return v >= 0 && v == math.Trunc(v) && !math.IsInf(v, 0) }
	y, s := yc.Num[i], sc.Num[i]
	switch {
	case r.kind == respTrials && !(count(s) && s >= 1):
		return r.second, "the trials " + r.second.label
	case r.kind == respFailures && count(y):
		// The successes are fine: the failures are negative, fractional
		// or, with no successes, make zero trials.
		return r.second, "the failures " + r.second.label + " (trials are " + r.y.label + " + " + r.second.label + ")"
	}
	return r.y, ""
}

// Warnings returns what is suspect in a design that Build accepted: the
// warnings of the data columns it uses (datasets.Column.Warning, such as a
// numeric column read as categorical because of a typo), and design
// columns far from unit scale, whose standard deviation or largest
// magnitude is outside [1e-3, 1e3].
func (d *Design) Warnings() []string { return slices.Clone(d.warnings) }

// Model returns the glmm model, nil for a nested one (Nested).
func (d *Design) Model() *glmm.Model { return d.model }

// Nested returns the model of nested grouping factors (Options.Nest), or
// nil.
func (d *Design) Nested() *glmm.Nested { return d.nested }

// NestPolicy says when Build fits nested grouping factors as a
// glmm.Nested (Options.Nest).
type NestPolicy int

const (
	// NestNever crosses them: the finer factor's levels are the subjects,
	// the coarser factor's effects join the global block (at most
	// glmm.MaxCrossedLevels levels).
	NestNever NestPolicy = iota
	// NestAuto nests them when the coarser factor has at least
	// NestAutoLevels levels, and crosses them otherwise.
	NestAuto
	// NestAlways nests them, and a factor b not nested in a is an error
	// naming the row and the levels.
	NestAlways
)

// NestAutoLevels is the fewest levels of the coarser factor with which
// NestAuto nests. With few levels the posterior of their sd is far from
// log-normal and the crossed factor's non-centred effects describe it
// better: on arabidopsis ((1 | popu) + (1 | gen), 9 populations) nesting
// gave sd(popu) 0.555 ± 0.144 against HMC's 0.582 ± 0.183, crossing
// passes cmd/glmmfit's TestDefaultsAgainstHMC; with 300 schools nesting
// gave the higher bound (-3124.9 against -3131.9) and sds within 1.5% of
// glmer's (benchmarks/nested/results.md).
const NestAutoLevels = 50

// nestable reports whether the design is one Options.Nest fits as a
// glmm.Nested: the subjects' factor, with a random intercept alone, has
// each level within one level of the single crossed factor.
func (d *Design) nestable() bool {
	c := d.cfg
	if d.opts.Nest == NestNever || d.opts.LocalFactor != "" || d.opts.Part != nil || len(c.Crossed) != 1 || c.REBlocks != nil || !d.random.interceptOnly() {
		return false
	}
	if d.opts.Nest == NestAlways {
		return true // glmm.NewNested names a level of b in two of a
	}
	if c.Crossed[0].NumLevels < NestAutoLevels {
		return false
	}
	parent := make([]int, c.NumGroups)
	for k := range parent {
		parent[k] = -1
	}
	for j, g := range c.Group {
		a := c.Crossed[0].Index[j]
		if parent[g] >= 0 && parent[g] != a {
			return false
		}
		parent[g] = a
	}
	return true
}

// nestedConfig returns the glmm.NestedConfig of a nestable design: the
// crossed factor is a, the subjects' factor a:b.
func (d *Design) nestedConfig() glmm.NestedConfig {
	c, cr := d.cfg, d.cfg.Crossed[0]
	y := c.Y
	if y == nil {
		y = make([]float64, len(c.Binary))
		for k, b := range c.Binary {
			y[k] = float64(b)
		}
	}
	return glmm.NestedConfig{Family: c.Family, Link: c.Link, Y: y, Trials: c.Trials, Offset: c.Offset, Weights: c.Weights,
		X: c.X, Outer: cr.Index, NumOuter: cr.NumLevels, Inner: c.Group, NumInner: c.NumGroups,
		FixedNames: c.FixedNames, OuterName: cr.Name, InnerName: c.GroupName, OuterLevels: cr.Levels, InnerLevels: c.GroupLevels,
		Rows: c.Rows, PriorSD: c.PriorSD}
}

// Formula returns the formula the design was built from.
func (d *Design) Formula() *Formula { return d.f }

// Family returns the response family of the model.
func (d *Design) Family() glmm.Family { return d.cfg.Family }

// Config returns the glmm configuration the model was made from, in the
// order of Rows. Its slices and matrices are shared: do not modify them.
func (d *Design) Config() glmm.Config { return d.cfg }

// Compact drops the design's own copy of the data: the design matrices and
// the vectors of Config (response, trials, weights, offsets, subject and
// row of each observation), which the model holds too, in its own order.
// It halves the memory a large design keeps. Afterwards X, Z, Group and
// those fields of Config are nil; the model, the names and levels, the
// maps to the data's scale and NewData are unaffected.
func (d *Design) Compact() {
	c := &d.cfg
	c.X, c.Z, c.Y, c.Trials, c.Weights, c.Offset, c.Group, c.Rows = nil, nil, nil, nil, nil, nil, nil, nil
	c.Binary = nil
	if d.nested == nil {
		c.GroupLevels = nil // the model has them
	}
}

// X returns the fixed-effect design (a *mat.Dense or *sparse.CSR, nil
// without fixed effects), one row per used row of the data.
func (d *Design) X() mat.Matrix { return d.cfg.X }

// Z returns the random-effect design, one row per used row of the data.
func (d *Design) Z() mat.Matrix { return d.cfg.Z }

// Group returns the subject index of each used row; for a nested design
// (Nested), the index of its level of a:b, the finest grouping.
func (d *Design) Group() []int { return d.cfg.Group }

// FixedNames returns the names of the columns of X, as R names them.
func (d *Design) FixedNames() []string { return slices.Clone(d.fixed.names) }

// RandomNames returns the names of the columns of Z.
func (d *Design) RandomNames() []string { return slices.Clone(d.random.names) }

// GroupName returns the name of the grouping factor.
func (d *Design) GroupName() string { return d.group }

// GroupLevels returns the labels of the subjects, in the order of the
// model's local blocks; for a nested design (Nested), those of a:b, which
// Group indexes (the nested model's subjects are the levels of a:
// glmm.Nested.Levels).
func (d *Design) GroupLevels() []string {
	if d.nested != nil {
		return slices.Clone(d.cfg.GroupLevels)
	}
	return slices.Clone(d.model.GroupLevels())
}

// groupIndex returns the subject whose label is s and whether there is
// one. The levels are sorted, so a binary search finds it: a map of them
// took some 50 bytes a subject for as long as the design lived.
func (d *Design) groupIndex(s string) (int, bool) {
	if d.nested != nil {
		// Compact keeps them: the levels of a:b, as the nested model
		// numbers them.
		return levelIndex(d.cfg.GroupLevels, d.gnumeric, s)
	}
	return levelIndex(d.model.GroupLevels(), d.gnumeric, s)
}

// LeftOut returns the number of rows of the data that the design leaves
// out for a missing value in a column it uses (Options.Missing
// DropMissing): of the whole data, all the processes' rows, when built
// with Options.Whole.
func (d *Design) LeftOut() int { return d.leftOut }

// Rows returns the 0-based rows of the data frame the model uses, in order.
func (d *Design) Rows() []int {
	if d.rows == nil {
		nobs := 0
		if d.nested != nil {
			nobs = d.nested.NumObs()
		} else {
			nobs = d.model.NumObs()
		}
		rows := make([]int, nobs)
		for k := range rows {
			rows[k] = k
		}
		return rows
	}
	return slices.Clone(d.rows)
}

// Levels returns the levels of a categorical variable of the fixed or
// random part, given by its label ("trt", "factor(period)"), reference
// first, and whether there is such a variable.
func (d *Design) Levels(label string) ([]string, bool) {
	for _, c := range []*coder{d.fixed, d.random} {
		for _, vc := range c.vars {
			if vc.v.label == label && vc.cat {
				return slices.Clone(vc.levels), true
			}
		}
	}
	return nil, false
}

// blocks returns the block of each column of the random coder c, built
// from the merged terms of fc, as lme4 reads them: each term of a ||, and
// the intercept of one, is a block; a | term is one block. It returns nil
// when there is a single block, and an error for a term or intercept
// written twice.
func (c *coder) blocks(fc factor) ([]int, error) {
	key := func(labels []string) string {
		slices.Sort(labels)
		return strings.Join(labels, ":")
	}
	const interceptKey = "\x00(Intercept)"
	blockOf := map[string]int{}
	next := 0
	add := func(k string, b int, r random) error {
		if _, dup := blockOf[k]; dup {
			what := "the intercept"
			if k != interceptKey {
				what = "the term " + k
			}
			return &DataError{Token: "(", Pos: r.pos, Err: ErrUnsupported,
				Msg: fmt.Sprintf("%s is in two random-effects terms for %s", what, fc.group)}
		}
		blockOf[k] = b
		return nil
	}
	for _, r := range fc.terms {
		b := next
		next++
		if r.lhs.intercept {
			if err := add(interceptKey, b, r); err != nil {
				return nil, err
			}
		}
		for _, t := range r.lhs.terms {
			if r.double {
				b = next
				next++
			}
			var labels []string
			for _, v := range t {
				labels = append(labels, r.lhs.vars[v].label)
			}
			if err := add(key(labels), b, r); err != nil {
				return nil, err
			}
		}
	}
	out := make([]int, len(c.cols))
	seen := map[int]bool{}
	for j, col := range c.cols {
		k := interceptKey
		if len(col) > 0 {
			var labels []string
			for _, p := range col {
				labels = append(labels, c.vars[p.v].v.label)
			}
			k = key(labels)
		}
		b, ok := blockOf[k]
		if !ok {
			panic("formula: random-effect column " + c.names[j] + " of no term")
		}
		out[j] = b
		seen[b] = true
	}
	if len(seen) < 2 {
		return nil, nil
	}
	return out, nil
}
