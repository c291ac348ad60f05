// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import "gonum.org/v1/gonum/mat"

// Columns is a fixed-effect design held column by column, for Config.X:
// column c is Cols[c], of Rows values, or a column of ones when Cols[c] is
// nil (an intercept, which then takes no storage). A caller that has its
// covariates as columns, such as a data frame's, gives them without
// making a row-major copy; New keeps them when the rows come grouped by
// subject in order (Config), and they must not change after New.
type Columns struct {
	Rows int
	Cols [][]float64
}

var _ mat.Matrix = (*Columns)(nil)

// Dims returns the numbers of rows and columns.
func (x *Columns) Dims() (r, c int) { return x.Rows, len(x.Cols) }

// At returns the entry of row i and column j.
func (x *Columns) At(i, j int) float64 {
	if i < 0 || i >= x.Rows || j < 0 || j >= len(x.Cols) {
		panic(mat.ErrIndexOutOfRange)
	}
	return columnAt(x.Cols[j], i)
}

// T returns the transpose.
func (x *Columns) T() mat.Matrix { return mat.Transpose{Matrix: x} }

// columnAt returns entry i of col, a column of ones when nil.
func columnAt(col []float64, i int) float64 {
	if col == nil {
		return 1
	}
	return col[i]
}
