// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestCheckRankRows checks that the design given row by row gets the
// error of the design whole: full rank, a column all zero, a column the
// sum of two before it.
func TestCheckRankRows(t *testing.T) {
	rnd := rand.New(rand.NewPCG(5, 6))
	const n, p = 40, 4
	names := []string{"a", "b", "c", "d"}
	for _, dep := range []string{"none", "zero", "sum"} {
		x := mat.NewDense(n, p, nil)
		for i := range n {
			for j := range p {
				x.Set(i, j, rnd.NormFloat64())
			}
			switch dep {
			case "zero":
				x.Set(i, 2, 0)
			case "sum":
				x.Set(i, 3, x.At(i, 0)+x.At(i, 1))
			}
		}
		want := CheckRank(x, names)
		if (want == nil) != (dep == "none") {
			t.Fatalf("%s: CheckRank gave %v", dep, want)
		}
		got := CheckRankRows(p, func(_ []float64, visit func([]float64)) {
			for i := range n {
				visit(mat.Row(nil, i, x))
			}
		}, names)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: CheckRankRows gave %v, want %v", dep, got, want)
		}
	}
}
