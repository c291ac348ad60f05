// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
)

// NewData codes the rows of a new data frame as the design's training data
// were coded, for prediction: the same columns, contrasts and levels. It
// returns the fixed-effect design X (nil without fixed effects), the
// random-effect design Z and, for each row, the subject index of its group
// in the model and whether the group was known; rows of new groups have
// group -1 and known false, and should be predicted from the fixed effects
// (their random effects drawn from the prior). The response is not needed.
//
// Every row is used: a missing value in a needed column is an error, as is
// a level of a categorical predictor absent from the training data.
func (d *Design) NewData(fr *datasets.Frame) (X, Z mat.Matrix, group []int, known []bool, err error) {
	if fr == nil {
		return nil, nil, nil, nil, &DataError{Msg: "no data frame"}
	}
	fr = withInteractions(d.f, fr)
	uses := []use{{col: d.group, tok: d.group, pos: d.f.randoms[0].groupPos}}
	for _, c := range []*coder{d.fixed, d.random} {
		for _, vc := range c.vars {
			u := varUse(vc.v)
			// A categorical training variable accepts numeric labels, which
			// a CSV file of codes may give.
			u.numeric = !vc.cat
			u.why = "it was numeric in the data the model was built on"
			uses = append(uses, u)
		}
	}
	if err := resolve(uses, fr); err != nil {
		return nil, nil, nil, nil, err
	}
	rows, err := completeRows(uses, fr, RejectMissing)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	if len(d.fixed.cols) > 0 {
		if X, err = designMatrix(d.fixed.bind(fr), rows); err != nil {
			return nil, nil, nil, nil, err
		}
	}
	if Z, err = designMatrix(d.random.bind(fr), rows); err != nil {
		return nil, nil, nil, nil, err
	}
	gc, _ := fr.Column(d.group)
	group = make([]int, len(rows))
	known = make([]bool, len(rows))
	for k, i := range rows {
		g, ok := d.groupIndex(Label(gc, i))
		if !ok {
			g = -1
		}
		group[k], known[k] = g, ok
	}
	return X, Z, group, known, nil
}

// WithGroups returns fr with the columns of the formula's interaction
// grouping factors, such as a:b from (1 | a/b), which the data do not
// hold: a categorical column named "a:b" labelled "la:lb". Their columns
// share fr's; fr itself is returned when there are none.
func (d *Design) WithGroups(fr *datasets.Frame) *datasets.Frame { return d.f.WithGroups(fr) }

// WithGroups returns fr with the columns of the formula's interaction
// grouping factors, as Design.WithGroups does.
func (f *Formula) WithGroups(fr *datasets.Frame) *datasets.Frame { return withInteractions(f, fr) }

// NewOffset returns the offset of each row of a new data frame: the sum of
// the formula's offset() terms and of Options.Offset, or nil if the model
// has no offset.
func (d *Design) NewOffset(fr *datasets.Frame) ([]float64, error) {
	if fr == nil {
		return nil, &DataError{Msg: "no data frame"}
	}
	rows := make([]int, fr.NumRows())
	for i := range rows {
		rows[i] = i
	}
	return d.offset(fr, rows)
}

// NewTrials returns the number of trials of each row of a new data frame
// for a binomial response, as the training data's were counted: s + f
// for cbind(s, f), n for cbind(s, n - s), the weights for a response of
// proportions with Options.Weights. It returns nil for a response without
// trials, or when fr lacks a column the count needs, so that a new
// observation of the response cannot be drawn. A row with a missing value
// in such a column has NaN; a value that is not a whole number, no trial
// at all, or more than glmm.MaxCount is an error naming the row.
func (d *Design) NewTrials(fr *datasets.Frame) ([]float64, error) {
	if fr == nil {
		return nil, &DataError{Msg: "no data frame"}
	}
	r := d.f.resp
	vars := d.trialVars()
	if vars == nil {
		return nil, nil
	}
	var uses []use
	for _, v := range vars {
		if _, ok := fr.Column(v.col); !ok {
			return nil, nil
		}
		uses = append(uses, use{col: v.col, tok: v.label, pos: v.pos, numeric: true, why: "the trials must be numeric counts"})
	}
	if err := resolve(uses, fr); err != nil {
		return nil, err
	}
	cols := make([]*datasets.Column, len(vars))
	for j, v := range vars {
		cols[j], _ = fr.Column(v.col)
	}
	trials := make([]float64, fr.NumRows())
	for i := range trials {
		missing := false
		for _, c := range cols {
			missing = missing || c.Missing[i]
		}
		if missing {
			trials[i] = math.NaN()
			continue
		}
		m := 0.0
		for j, c := range cols {
			x := c.Num[i]
			if !(x >= 0) || x != math.Trunc(x) || math.IsInf(x, 0) {
				return nil, &DataError{Token: vars[j].label, Pos: vars[j].pos, Column: vars[j].col, Row: i + 1,
					Msg: fmt.Sprintf("%v is not a count: the trials need whole numbers", x)}
			}
			m += x
		}
		v := vars[len(vars)-1]
		tok, pos := "cbind", r.pos
		if r.kind == respSingle {
			tok, pos = v.label, 0
		}
		switch {
		case m < 1:
			return nil, &DataError{Token: tok, Pos: pos, Column: v.col, Row: i + 1, Msg: "a new observation needs at least one trial, not 0"}
		case m > glmm.MaxCount:
			return nil, &DataError{Token: tok, Pos: pos, Column: v.col, Row: i + 1,
				Msg: fmt.Sprintf("%v trials are more than %.4g, the largest number a float64 holds exactly", m, float64(glmm.MaxCount))}
		}
		trials[i] = m
	}
	return trials, nil
}

// TrialColumns returns the columns from which NewTrials counts a new
// row's trials (s and f of cbind(s, f), n of cbind(s, n - s), the weights
// of a response of proportions), or nil for a response without trials.
func (d *Design) TrialColumns() []string {
	var cols []string
	for _, v := range d.trialVars() {
		cols = append(cols, v.col)
	}
	return cols
}

// trialVars returns the variables that count the response's trials.
func (d *Design) trialVars() []variable {
	r := d.f.resp
	switch {
	case r.kind == respFailures:
		return []variable{r.y, r.second}
	case r.kind == respTrials:
		return []variable{r.second}
	case d.weightsAreTrials():
		return []variable{{col: d.opts.Weights, label: "Options.Weights"}}
	}
	return nil
}
