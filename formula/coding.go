// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/sparsevi/sparsevi/datasets"
)

// varCoding is how one variable of a model is turned into numbers: a
// numeric value (possibly transformed) or a level of a categorical variable
// with the training levels, reference level first.
type varCoding struct {
	v      variable
	cat    bool
	levels []string       // categorical: training levels, the reference first
	index  map[string]int // categorical: level -> position in levels
	// center and sd of scale(x): the mean and standard deviation of x
	// over the training rows, which new rows are scaled by too.
	center, sd float64
}

// part is one factor of a design column: variable v's value (level < 0) or
// the indicator of variable v being at levels[level].
type part struct {
	v, level int
}

// coder builds the columns of one design matrix (fixed or random) following
// R's model.matrix with treatment contrasts.
type coder struct {
	m         *model
	vars      []varCoding
	cols      [][]part // columns; an empty part list is the intercept
	names     []string
	intercept bool
	// center and scale, when not nil, transform column j to
	// (x - center[j]) / scale[j] where scale[j] is not 0 (PriorAuto).
	center, scale []float64
}

// Label returns the label of row i of a column used as a factor (a
// grouping factor or a categorical covariate): the text itself, or the
// number as R prints it. Levels and subjects are named and matched by it.
func Label(c *datasets.Column, i int) string {
	if c.Kind == datasets.Categorical {
		return c.Str[i]
	}
	return numberLabel(c.Num[i])
}

// numberLabel returns v as R prints it: integers in full (1000001, where
// Go's shortest 'g' form is 1.000001e+06), other numbers shortest.
func numberLabel(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e21 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// levelOrder returns the order in which R sorts the distinct labels lev
// as the levels of a factor: numerically if every label is a decimal
// number (a factor made from numbers, such as a period 1..12 or a
// hospital code), else byte-wise (R's C locale); ord[j] is the index in
// lev of the j-th level. numeric says which. It sorts indices, with the
// numbers in a slice, rather than the labels through maps: a grouping
// factor of a million subjects took two maps of them.
func levelOrder(lev []string) (ord []int, numeric bool) {
	ord = make([]int, len(lev))
	for j := range ord {
		ord[j] = j
	}
	num := make([]float64, len(lev))
	numeric = true
	for j, s := range lev {
		v, ok := levelNumber(s)
		if !ok {
			numeric = false
			break
		}
		num[j] = v
	}
	if numeric {
		slices.SortFunc(ord, func(a, b int) int {
			if c := cmp.Compare(num[a], num[b]); c != 0 {
				return c
			}
			return cmp.Compare(lev[a], lev[b])
		})
	} else {
		slices.SortFunc(ord, func(a, b int) int { return cmp.Compare(lev[a], lev[b]) })
	}
	return ord, numeric
}

// levelNumber returns the number a label spells and whether it is a
// finite one, for the numeric order of levels.
func levelNumber(s string) (float64, bool) {
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// levelIndex returns the index of s in lev, levels sorted as levelOrder
// sorts them (numeric says how), and whether it is there.
func levelIndex(lev []string, numeric bool, s string) (int, bool) {
	if !numeric {
		return slices.BinarySearch(lev, s)
	}
	v, ok := levelNumber(s)
	if !ok {
		return 0, false
	}
	return slices.BinarySearchFunc(lev, s, func(l, s string) int {
		w, _ := levelNumber(l)
		if c := cmp.Compare(w, v); c != 0 {
			return c
		}
		return cmp.Compare(l, s)
	})
}

// levelsOf returns the sorted distinct labels of c over rows.
func levelsOf(c *datasets.Column, rows []int) []string {
	lev, _, _ := codesOf(c, rows)
	return lev
}

// codesOf returns the sorted distinct labels of c on the given rows, the
// level of each of those rows, and whether the levels are in numeric
// order (levelOrder). A numeric column is labelled once per distinct
// value rather than once per row: formatting every row's number took a
// quarter of building a model of 700,000 rows.
func codesOf(c *datasets.Column, rows []int) (lev []string, code []int, numeric bool) {
	code = make([]int, len(rows))
	var distinct []int
	if c.Kind == datasets.Categorical {
		distinct = runCodes(func(i int) string { return c.Str[i] }, rows, code)
	} else {
		// Distinct bit patterns are distinct labels (shortest formatting
		// tells every float64 apart, -0 from 0 included): each distinct
		// number is labelled once.
		distinct = runCodes(func(i int) uint64 { return math.Float64bits(c.Num[i]) }, rows, code)
	}
	lev = make([]string, len(distinct))
	for j, i := range distinct {
		lev[j] = Label(c, i)
	}
	ord, numeric := levelOrder(lev)
	if slices.IsSortedFunc(ord, cmp.Compare) {
		return lev, code, numeric // labels in byte order, as wanted
	}
	rank := make([]int, len(ord))
	sorted := make([]string, len(ord))
	for j, o := range ord {
		rank[o] = j
		sorted[j] = lev[o]
	}
	for k, j := range code {
		code[k] = rank[j]
	}
	return sorted, code, numeric
}

// runCodes sets code[k] to the index of the key of row rows[k] among the
// distinct keys, and returns for each distinct key, in increasing order,
// a row that has it. It works on runs of rows with the same key (a
// subject's rows follow each other), sorted, rather than through a map
// of the keys: at a million subjects the map and its growth were the
// largest part of building a model's grouping.
func runCodes[K cmp.Ordered](key func(i int) K, rows []int, code []int) (distinct []int) {
	// The first of each run of rows with one key, counted first so that
	// no slice grows by appends: at a million subjects the growth of
	// heads and distinct left five times their size as garbage, the
	// building's peak (benchmarks/memory).
	newRun := func(k int) bool { return k == 0 || key(rows[k]) != key(rows[k-1]) }
	runs := 0
	for k := range rows {
		if newRun(k) {
			runs++
		}
	}
	heads := make([]int, 0, runs)
	for k := range rows {
		if newRun(k) {
			heads = append(heads, k)
		}
	}
	runKey := func(r int) K { return key(rows[heads[r]]) }
	sorted := true
	for r := 1; r < runs && sorted; r++ {
		sorted = runKey(r-1) < runKey(r)
	}
	distinct = make([]int, 0, runs)
	setRun := func(r, level int) {
		end := len(rows)
		if r+1 < runs {
			end = heads[r+1]
		}
		for t := heads[r]; t < end; t++ {
			code[t] = level
		}
	}
	if sorted {
		// Each run a key of its own, in order (subjects' rows grouped
		// and sorted by their labels, as data files often are).
		for r, k := range heads {
			distinct = append(distinct, rows[k])
			setRun(r, r)
		}
		return distinct
	}
	byKey := make([]int, runs)
	for r := range byKey {
		byKey[r] = r
	}
	slices.SortFunc(byKey, func(a, b int) int { return cmp.Compare(runKey(a), runKey(b)) })
	for _, r := range byKey {
		if n := len(distinct); n == 0 || key(distinct[n-1]) != runKey(r) {
			distinct = append(distinct, rows[heads[r]])
		}
		setRun(r, len(distinct)-1)
	}
	return distinct
}

// newCoder decides the coding of every variable of m on the rows of fr and
// lays out the columns. ref maps column names to reference levels; role
// names the design in messages.
func newCoder(m *model, fr *datasets.Frame, rows []int, ref map[string]string) (*coder, error) {
	c, err := codeVars(m, fr, ref, func(col *datasets.Column) []string { return levelsOf(col, rows) })
	if err != nil {
		return nil, err
	}
	for k := range c.vars {
		if vc := &c.vars[k]; vc.v.fn == "scale" {
			col, _ := fr.Column(vc.v.col)
			if err := vc.scaleOver(col, rows); err != nil {
				return nil, err
			}
		}
	}
	return c, nil
}

// scaleOver sets the center and sd of scale(x) from x's values in rows,
// as R's scale: the mean, and the standard deviation with n - 1.
func (vc *varCoding) scaleOver(col *datasets.Column, rows []int) error {
	v := vc.v
	var sum float64
	for _, i := range rows {
		x, err := numValue(v, col, i)
		if err != nil {
			return err
		}
		sum += x
	}
	n := float64(len(rows))
	vc.center = sum / n
	var ss float64
	for _, i := range rows {
		d := col.Num[i] - vc.center
		ss += d * d
	}
	vc.sd = math.Sqrt(ss / (n - 1))
	if !(vc.sd > 0) || math.IsInf(vc.sd, 0) {
		return &DataError{Token: v.token(), Pos: v.pos, Column: v.col,
			Msg: fmt.Sprintf("scale() needs a column that varies: its standard deviation over the %d rows used is %v", len(rows), vc.sd)}
	}
	return nil
}

// codeVars is newCoder with the levels of a column used as categorical
// given by levels; fr gives the columns' kinds.
func codeVars(m *model, fr *datasets.Frame, ref map[string]string, levels func(col *datasets.Column) []string) (*coder, error) {
	c := &coder{m: m, intercept: m.intercept, vars: make([]varCoding, len(m.vars))}
	for k, v := range m.vars {
		col, _ := fr.Column(v.col) // checked by resolve
		vc := varCoding{v: v, cat: col.Kind == datasets.Categorical || v.isFactor()}
		if vc.cat {
			vc.levels = levels(col)
			if r, ok := ref[v.col]; ok {
				i := slices.Index(vc.levels, r)
				if i < 0 {
					return nil, &DataError{Token: v.token(), Pos: v.pos, Column: v.col,
						Msg: fmt.Sprintf("reference level %q is not among the levels %s", r, quoteList(vc.levels, 12))}
				}
				// As R's relevel: the reference first, the others in order.
				vc.levels = append([]string{r}, slices.Delete(slices.Clone(vc.levels), i, i+1)...)
			}
			if len(vc.levels) < 2 {
				return nil, &DataError{Token: v.token(), Pos: v.pos, Column: v.col,
					Msg: fmt.Sprintf("categorical predictor has %d level(s) %s in the data used; it needs at least 2", len(vc.levels), quoteList(vc.levels, 3))}
			}
			vc.index = make(map[string]int, len(vc.levels))
			for i, s := range vc.levels {
				vc.index[s] = i
			}
		}
		c.vars[k] = vc
	}
	c.layout()
	return c, nil
}

// layout lists the columns and their names as R's model.matrix does:
// the intercept, then each term in order; within a term the first variable
// varies fastest. A categorical variable of a term is coded by contrasts
// (the levels but the reference) when the term without it is the intercept
// or is contained in an earlier term, else by indicators of all levels.
// Without an intercept, the first categorical variable of the first term
// holding one is coded by indicators, so that its levels span the intercept.
func (c *coder) layout() {
	terms := c.m.terms
	full := make([][]bool, len(terms)) // full[t][k]: variable t[k] coded by indicators
	for ti, t := range terms {
		full[ti] = make([]bool, len(t))
		for k, v := range t {
			if !c.vars[v].cat {
				continue
			}
			rest := slices.Delete(slices.Clone(t), k, k+1)
			contr := len(rest) == 0
			for _, u := range terms[:ti] {
				if contr {
					break
				}
				contr = subset(rest, u)
			}
			full[ti][k] = !contr
		}
	}
	if !c.intercept {
	search:
		for ti, t := range terms {
			for k, v := range t {
				if c.vars[v].cat {
					full[ti][k] = true
					break search
				}
			}
		}
	}
	if c.intercept {
		c.cols = append(c.cols, nil)
		c.names = append(c.names, "(Intercept)")
	}
	for ti, t := range terms {
		// Odometer over the choices of each variable, first fastest.
		choices := make([][]int, len(t))
		for k, v := range t {
			vc := &c.vars[v]
			switch {
			case !vc.cat:
				choices[k] = []int{-1}
			case full[ti][k]:
				choices[k] = seq(0, len(vc.levels))
			default:
				choices[k] = seq(1, len(vc.levels))
			}
		}
		idx := make([]int, len(t))
		for {
			col := make([]part, len(t))
			name := ""
			for k, v := range t {
				col[k] = part{v: v, level: choices[k][idx[k]]}
				if k > 0 {
					name += ":"
				}
				name += c.vars[v].v.label
				if col[k].level >= 0 {
					name += c.vars[v].levels[col[k].level]
				}
			}
			c.cols = append(c.cols, col)
			c.names = append(c.names, name)
			k := 0
			for ; k < len(t); k++ {
				idx[k]++
				if idx[k] < len(choices[k]) {
					break
				}
				idx[k] = 0
			}
			if k == len(t) {
				break
			}
		}
	}
}

func seq(lo, hi int) []int {
	s := make([]int, 0, hi-lo)
	for i := lo; i < hi; i++ {
		s = append(s, i)
	}
	return s
}

// subset reports whether every variable of a is in b.
func subset(a, b term) bool {
	for _, v := range a {
		if !slices.Contains(b, v) {
			return false
		}
	}
	return true
}

// rowValues holds the values of a model's variables at one row: val for
// numeric variables, lev for categorical ones.
type rowValues struct {
	val []float64
	lev []int
}

// bound is a coder bound to the columns of a frame.
type bound struct {
	c    *coder
	cols []*datasets.Column
}

func (c *coder) bind(fr *datasets.Frame) bound {
	b := bound{c: c, cols: make([]*datasets.Column, len(c.vars))}
	for k, vc := range c.vars {
		b.cols[k], _ = fr.Column(vc.v.col)
	}
	return b
}

// values reads the variables at row i into rv. An unknown level, a value
// outside a transformation's domain or a non-finite value is an error.
func (b bound) values(i int, rv *rowValues) error {
	for k, vc := range b.c.vars {
		col := b.cols[k]
		if vc.cat {
			s := Label(col, i)
			l, ok := vc.index[s]
			if !ok {
				return &DataError{Token: vc.v.token(), Pos: vc.v.pos, Column: vc.v.col, Row: i + 1,
					Msg: fmt.Sprintf("level %q was not in the data the model was built on (levels %s)", s, quoteList(vc.levels, 12))}
			}
			rv.lev[k] = l
			continue
		}
		x, err := numValue(vc.v, col, i)
		if err != nil {
			return err
		}
		if vc.v.fn == "scale" {
			x = (x - vc.center) / vc.sd
		}
		rv.val[k] = x
	}
	return nil
}

// numValue returns the value of a numeric variable at row i.
func numValue(v variable, col *datasets.Column, i int) (float64, error) {
	x := col.Num[i]
	bad := func(msg string) error {
		return &DataError{Token: v.token(), Pos: v.pos, Column: v.col, Row: i + 1, Msg: msg}
	}
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return 0, bad(fmt.Sprintf("value %v is not finite", x))
	}
	if v.expr != nil {
		y := v.expr.eval(x)
		if math.IsNaN(y) || math.IsInf(y, 0) {
			return 0, bad(fmt.Sprintf("%s is %v where %s is %v: %s", v.token(), y, v.col, x, v.expr.undefined(x)))
		}
		return y, nil
	}
	switch v.fn {
	case "log":
		if x <= 0 {
			return 0, bad(fmt.Sprintf("log of %v: the value must be positive", x))
		}
		x = math.Log(x)
	case "sqrt":
		if x < 0 {
			return 0, bad(fmt.Sprintf("sqrt of %v: the value must not be negative", x))
		}
		x = math.Sqrt(x)
	case "exp":
		x = math.Exp(x)
		if math.IsInf(x, 0) {
			return 0, bad(fmt.Sprintf("exp of %v overflows", col.Num[i]))
		}
	}
	return x, nil
}

// row writes the design row of rv into dst (length len(c.cols)).
func (c *coder) row(rv *rowValues, dst []float64) {
	for j, col := range c.cols {
		x := 1.0
		for _, p := range col {
			if p.level < 0 {
				x *= rv.val[p.v]
			} else if rv.lev[p.v] != p.level {
				x = 0
				break
			}
		}
		if c.scale != nil && c.scale[j] != 0 {
			x = (x - c.center[j]) / c.scale[j]
		}
		dst[j] = x
	}
}

func (c *coder) newRowValues() *rowValues {
	return &rowValues{val: make([]float64, len(c.vars)), lev: make([]int, len(c.vars))}
}

// quoteList returns up to max quoted strings in braces, with an ellipsis if
// there are more.
func quoteList(s []string, max int) string {
	out := "{"
	for i, x := range s {
		if i == max {
			out += fmt.Sprintf(", ... (%d in all)", len(s))
			break
		}
		if i > 0 {
			out += ", "
		}
		out += strconv.Quote(x)
	}
	return out + "}"
}
