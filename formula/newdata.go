// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
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
