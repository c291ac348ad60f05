// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
)

// TestCodesOf checks codesOf against labelling every row and sorting the
// distinct labels as R does (numerically when all are numbers, else
// byte-wise): the same sorted levels, each row's level, and levelIndex
// finding every level and no other label.
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
		{"numbers written two ways", datasets.NewCategorical("g", []string{"1.0", "1", "01", "2", "1", "2"}), []int{0, 1, 2, 3, 4, 5}},
		{"runs", datasets.NewCategorical("g", []string{"s2", "s2", "s1", "s1", "s2", "s3"}), []int{0, 1, 2, 3, 4, 5}},
	} {
		lev, code, numeric := codesOf(c.col, c.rows)
		var want []string
		for _, i := range c.rows {
			if s := Label(c.col, i); !slices.Contains(want, s) {
				want = append(want, s)
			}
		}
		allNum := true
		for _, s := range want {
			v, err := strconv.ParseFloat(s, 64)
			allNum = allNum && err == nil && !math.IsInf(v, 0) && !math.IsNaN(v)
		}
		sort.Slice(want, func(a, b int) bool {
			if allNum {
				va, _ := strconv.ParseFloat(want[a], 64)
				vb, _ := strconv.ParseFloat(want[b], 64)
				if va != vb {
					return va < vb
				}
			}
			return want[a] < want[b]
		})
		if !slices.Equal(lev, want) || numeric != allNum {
			t.Errorf("%s: levels %q (numeric %v), want %q (%v)", c.name, lev, numeric, want, allNum)
			continue
		}
		for k, i := range c.rows {
			if got := lev[code[k]]; got != Label(c.col, i) {
				t.Errorf("%s: row %d has level %q, want %q", c.name, i, got, Label(c.col, i))
			}
		}
		for j, s := range lev {
			if got, ok := levelIndex(lev, numeric, s); !ok || got != j {
				t.Errorf("%s: levelIndex(%q) = %d, %v, want %d", c.name, s, got, ok, j)
			}
		}
		for _, s := range []string{"", "x", "1.00", "-1", "1e3", "NaN", "00"} {
			if _, ok := levelIndex(lev, numeric, s); ok && !slices.Contains(lev, s) {
				t.Errorf("%s: levelIndex found %q, not a level", c.name, s)
			}
		}
	}
}
