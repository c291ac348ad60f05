// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
)

// modelSpec is everything besides the data that determines the model: what
// a saved fit records so that predict can rebuild the design exactly.
type modelSpec struct {
	Formula string `json:"formula"`
	Family  string `json:"family"`
	// Link is -link: "" (the family's own), "probit" or "cloglog".
	Link      string            `json:"link,omitempty"`
	Weights   string            `json:"weights,omitempty"`
	Offset    string            `json:"offset,omitempty"`
	Reference map[string]string `json:"reference,omitempty"`
	Missing   string            `json:"missing"`
	PriorSD   float64           `json:"prior_sd"`
	// Prior is -prior: "auto", or "paper" (also when absent, as in fit
	// files written before the flag existed).
	Prior string `json:"prior,omitempty"`
	// DoubleBar is -double-bar: "independent", "correlated" or "reject"
	// (also when absent, as in fit files written before the first).
	DoubleBar string `json:"double_bar,omitempty"`
	// LocalFactor is -local-factor: the grouping factor whose levels are
	// the subjects when the formula has several ("" chooses).
	LocalFactor string `json:"local_factor,omitempty"`
	// Nest is -nest: "auto", "local" or "crossed" (also when absent, as
	// in fit files written before the flag existed).
	Nest string `json:"nest,omitempty"`
}

// policies of -nest.
const (
	nestAuto    = "auto"
	nestLocal   = "local"
	nestCrossed = "crossed"
)

// policies of -double-bar.
const (
	doubleBarReject      = "reject"
	doubleBarCorrelated  = "correlated"
	doubleBarIndependent = "independent"
)

// missing policies of -missing.
const (
	missingReject = "reject"
	missingDrop   = "drop"
)

// options returns the formula options of the spec; the family must be set.
func (s *modelSpec) options() (formula.Options, error) {
	fam, err := glmm.ParseFamily(s.Family)
	if err != nil {
		return formula.Options{}, err
	}
	o := formula.Options{Family: fam, Weights: s.Weights, Offset: s.Offset, Reference: s.Reference, PriorSD: s.PriorSD, LocalFactor: s.LocalFactor}
	if o.Link, err = glmm.ParseLink(s.Link); err != nil {
		return o, err
	}
	if s.Prior != "" {
		if o.Prior, err = formula.ParsePrior(s.Prior); err != nil {
			return o, err
		}
	}
	switch s.DoubleBar {
	case "", doubleBarReject:
	case doubleBarIndependent:
		o.DoubleBar = formula.IndependentDoubleBar
	case doubleBarCorrelated:
		o.DoubleBar = formula.CorrelatedDoubleBar
	default:
		return o, fmt.Errorf("unknown -double-bar policy %q", s.DoubleBar)
	}
	switch s.Nest {
	case "", nestCrossed:
	case nestAuto:
		o.Nest = formula.NestAuto
	case nestLocal:
		o.Nest = formula.NestAlways
	default:
		return o, fmt.Errorf("unknown -nest policy %q (want auto, local or crossed)", s.Nest)
	}
	switch s.Missing {
	case missingReject, "":
	case missingDrop:
		o.Missing = formula.DropMissing
	default:
		return o, fmt.Errorf("unknown missing-value policy %q", s.Missing)
	}
	return o, nil
}

// columns returns the data columns the model reads.
func (s *modelSpec) columns(f *formula.Formula) []string {
	cols := f.Columns()
	for _, c := range []string{s.Weights, s.Offset} {
		if c != "" && !slices.Contains(cols, c) {
			cols = append(cols, c)
		}
	}
	return cols
}

// resolveFamily sets s.Family when the formula implies it: binomial for a
// cbind() response, bernoulli for a categorical one. A numeric response
// without -family is a usage error.
func (s *modelSpec) resolveFamily(cmd string, f *formula.Formula, fr *datasets.Frame) error {
	if s.Family != "" {
		return nil
	}
	if strings.HasPrefix(f.Response(), "cbind(") {
		s.Family = glmm.Binomial.String()
		return nil
	}
	y := f.Columns()[0]
	col, ok := fr.Column(y)
	if !ok {
		return nil // Build names the missing column
	}
	if col.Kind == datasets.Categorical {
		s.Family = glmm.Bernoulli.String()
		return nil
	}
	return usageErrorf(cmd, "-family is needed: the response %q is numeric (counts: -family poisson; 0/1: -family bernoulli)", y)
}

// parseFormula parses the formula text with a message that says so.
func parseFormula(src string) (*formula.Formula, error) {
	f, err := formula.Parse(src)
	if err != nil {
		var se *formula.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("%v (in %q)", se, src)
		}
		return nil, err
	}
	return f, nil
}

// buildDesign checks the data and builds the design of spec on in. Errors
// name the file, line and column, or the formula token at fault. With
// release, the columns of in's frame that the design has coded are emptied
// on the way (formula.Options.Release): only their names and number of
// rows are left.
func buildDesign(spec *modelSpec, f *formula.Formula, in *input, part func(n int) (lo, hi int, err error), release bool) (*formula.Design, error) {
	opts, err := spec.options()
	if err != nil {
		return nil, err
	}
	opts.Part, opts.Release = part, release
	if err := checkOptionColumns(in, spec, numericTypo); err != nil {
		return nil, err
	}
	if err := checkReferences(in, f, spec); err != nil {
		return nil, err
	}
	if err := checkTypos(in, f, spec); err != nil {
		return nil, err
	}
	d, err := formula.Build(f, in.frame, opts)
	if errors.Is(err, formula.ErrCrossedPart) {
		return nil, errors.New("crossed random effects do not run with -shard yet; run glmmfit without it")
	}
	if err != nil {
		return nil, dataError(err, in)
	}
	return d, nil
}

// checkOptionColumns checks the columns of -weights and -offset: each
// must be numeric, typo (numericTypo) saying why when it is nearly so.
func checkOptionColumns(in *input, spec *modelSpec, typo func(*input, *datasets.Column) error) error {
	for _, c := range []struct{ flag, col string }{{"-weights", spec.Weights}, {"-offset", spec.Offset}} {
		if c.col == "" {
			continue
		}
		col, ok := in.frame.Column(c.col)
		if !ok {
			return fmt.Errorf("%s: %s: no column %q%s", in.name, c.flag, c.col, didYouMean(c.col, in.frame.Names()))
		}
		if col.Kind != datasets.Numeric {
			if err := typo(in, col); err != nil {
				return err
			}
			return fmt.Errorf("%s: %s: column %q is not numeric", in.name, c.flag, c.col)
		}
	}
	return nil
}

// dataError rewrites an error of formula.Build to name the file line and
// column of a data row at fault.
func dataError(err error, in *input) error {
	var de *formula.DataError
	if !errors.As(err, &de) {
		return fmt.Errorf("%s: %v", in.name, err)
	}
	if de.Row == 0 {
		return fmt.Errorf("%s: %v", in.name, err)
	}
	msg := de.Msg
	if de.Err != nil {
		var ge *glmm.DataError
		inner := de.Err
		if errors.As(inner, &ge) && ge.Err != nil {
			inner = ge.Err
		}
		if msg != "" {
			msg += ": "
		}
		msg += inner.Error()
	}
	col := de.Column
	where := in.where(de.Row-1, col)
	if de.Token != "" && de.Pos > 0 {
		return fmt.Errorf("%s: %s (%q at character %d of the formula)", where, msg, de.Token, de.Pos)
	}
	return fmt.Errorf("%s: %s", where, msg)
}

// checkTypos reports a column used by the model that was read as
// categorical only because of a few values that are not numbers: a typo in
// a numeric column. R would silently make such a column a factor. The
// grouping factor and columns wrapped in factor() are categorical on
// purpose and are not checked.
func checkTypos(in *input, f *formula.Formula, spec *modelSpec) error {
	for _, col := range typoColumns(in.frame, f, spec) {
		if err := numericTypo(in, col); err != nil {
			return err
		}
	}
	return nil
}

// typoColumns returns the columns of fr that checkTypos checks: the
// categorical ones the model uses as such.
func typoColumns(fr *datasets.Frame, f *formula.Formula, spec *modelSpec) []*datasets.Column {
	src := strings.ReplaceAll(f.Source(), " ", "")
	var cols []*datasets.Column
	for _, name := range spec.columns(f) {
		if name == f.Group() || strings.Contains(src, "factor("+name+")") {
			continue
		}
		if col, ok := fr.Column(name); ok && col.Kind == datasets.Categorical {
			cols = append(cols, col)
		}
	}
	return cols
}

// numericTypo returns an error naming the first value of a categorical
// column that is not a number if most of its values are numbers.
func numericTypo(in *input, col *datasets.Column) error {
	var t typoCount
	t.count(in, col)
	return t.err(col.Name)
}

// typoCount is what numericTypo counts of a column, which it may be given
// a piece at a time.
type typoCount struct {
	nums, total int
	where       string // where the first value that is not a number is, "" if none
	first       string // that value
}

// count counts the values of col, rows of in.
func (t *typoCount) count(in *input, col *datasets.Column) {
	for k, s := range col.Str {
		if col.Missing[k] {
			continue
		}
		t.total++
		if datasets.IsDecimal(strings.TrimSpace(s)) {
			t.nums++
		} else if t.where == "" {
			t.where, t.first = in.where(k, col.Name), s
		}
	}
}

// err returns numericTypo's error of the counts of column name.
func (t *typoCount) err(name string) error {
	if t.nums == 0 || t.where == "" || 2*t.nums < t.total {
		return nil
	}
	return fmt.Errorf("%s: %q is not a number, but %d of the %d values of %q are; correct it or write NA for a missing value",
		t.where, t.first, t.nums, t.total, name)
}

// checkReferences checks every -ref COLUMN=LEVEL: the column must exist,
// be one the model reads as categorical (a text column, or a numeric one
// inside factor()), and have the level.
func checkReferences(in *input, f *formula.Formula, spec *modelSpec) error {
	return checkReferencesOf(in, f, spec, columnLevels)
}

// checkReferencesOf is checkReferences with the levels of a column given
// by levels.
func checkReferencesOf(in *input, f *formula.Formula, spec *modelSpec, levelsOf func(*datasets.Column) []string) error {
	src := strings.ReplaceAll(f.Source(), " ", "")
	used := spec.columns(f)
	keys := make([]string, 0, len(spec.Reference))
	for k := range spec.Reference {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, name := range keys {
		level := spec.Reference[name]
		col, ok := in.frame.Column(name)
		if !ok {
			return fmt.Errorf("%s: -ref %s=%s: no column %q%s", in.name, name, level, name, didYouMean(name, in.frame.Names()))
		}
		if !slices.Contains(used, name) {
			return fmt.Errorf("%s: -ref %s=%s: the formula does not use column %q", in.name, name, level, name)
		}
		factor := strings.Contains(src, "factor("+name+")")
		if col.Kind != datasets.Categorical && !factor {
			return fmt.Errorf("%s: -ref %s=%s: column %q is numeric, so it has no levels; write factor(%s) in the formula to treat it as categorical", in.name, name, level, name, name)
		}
		levels := levelsOf(col)
		if !slices.Contains(levels, level) {
			return fmt.Errorf("%s: -ref %s=%s: column %q has no level %q%s", in.name, name, level, name, level, didYouMeanLevel(level, levels))
		}
	}
	return nil
}

// columnLevels returns the distinct non-missing values of a column as text,
// in order of first appearance.
func columnLevels(col *datasets.Column) []string {
	seen := map[string]bool{}
	var out []string
	for k := range col.Missing {
		if col.Missing[k] {
			continue
		}
		var v string
		if col.Kind == datasets.Categorical {
			v = col.Str[k]
		} else {
			v = strconv.FormatFloat(col.Num[k], 'g', -1, 64)
		}
		if !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// didYouMeanLevel is didYouMean for the levels of a column.
func didYouMeanLevel(level string, levels []string) string {
	c := closest(level, levels)
	if len(c) == 0 {
		return ""
	}
	return " (levels include " + strings.Join(quoted(c), ", ") + ")"
}

// backtickHint returns advice for a formula that names a column which is
// not a syntactic name (it has spaces or punctuation) without backticks,
// or "".
func backtickHint(src string, names []string) string {
	for _, n := range names {
		syntactic := true
		for _, r := range n {
			if !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '.' || r == '_') {
				syntactic = false
				break
			}
		}
		if !syntactic && strings.Contains(src, n) && !strings.Contains(src, "`"+n+"`") {
			return fmt.Sprintf("column %q is not a plain name: write it in backticks, `%s`", n, n)
		}
	}
	return ""
}
