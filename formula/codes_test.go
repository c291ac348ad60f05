// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"math"
	"slices"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
)

// TestCodesOf checks codesOf against labelling every row (levelsOf and
// label): the same sorted levels, and each row's level.
func TestCodesOf(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, c := range []struct {
		name string
		col  *datasets.Column
		rows []int
	}{
		{"integers", datasets.NewNumeric("id", []float64{3, 1, 2, 3, 10, 1, 2}), []int{0, 1, 2, 3, 4, 5, 6}},
		{"a subset of rows", datasets.NewNumeric("id", []float64{3, 1, 2, 3, 10, 1, 2}), []int{6, 4, 0, 3}},
		{"zero and minus zero", datasets.NewNumeric("x", []float64{0, negZero, 0, 1}), []int{0, 1, 2, 3}},
		{"decimals and large", datasets.NewNumeric("x", []float64{0.1, 1e21, 1000001, 0.1, 2.5e-9}), []int{0, 1, 2, 3, 4}},
		{"labels", datasets.NewCategorical("g", []string{"b", "a", "10", "b", "9"}), []int{0, 1, 2, 3, 4}},
		{"numeric labels", datasets.NewCategorical("g", []string{"10", "9", "10", "100"}), []int{0, 1, 2, 3}},
	} {
		lev, code := codesOf(c.col, c.rows)
		want := levelsOf(c.col, c.rows)
		if !slices.Equal(lev, want) {
			t.Errorf("%s: levels %q, want %q", c.name, lev, want)
			continue
		}
		for k, i := range c.rows {
			if got := lev[code[k]]; got != label(c.col, i) {
				t.Errorf("%s: row %d has level %q, want %q", c.name, i, got, label(c.col, i))
			}
		}
	}
}
