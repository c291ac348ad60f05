// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// TestGlobalCovKept: GVA's global covariance is computed once and given
// again while the factor's global block is unchanged, as a copy the
// caller may modify; a change to the block in place is seen, in
// GlobalCov and in LocalCov, which agree with a Result that keeps
// nothing.
func TestGlobalCovKept(t *testing.T) {
	res, err := Fit(context.Background(), newGaussTarget(4, 12, 2, 3), Settings{Method: GVA, Seed: 2, MaxIter: 60})
	if err != nil {
		t.Fatal(err)
	}
	if res.cov == nil {
		t.Fatal("Fit's Result keeps no covariance")
	}
	fresh := func() (*mat.SymDense, []float64) {
		plain := *res
		plain.cov = nil
		return plain.GlobalCov(), plain.LocalCov()
	}
	check := func(when string) {
		t.Helper()
		wantG, wantL := fresh()
		got := res.GlobalCov()
		if !mat.Equal(got, wantG) {
			t.Errorf("%s: GlobalCov differs from a fresh computation", when)
		}
		if !slices.Equal(res.LocalCov(), wantL) {
			t.Errorf("%s: LocalCov differs from a fresh computation", when)
		}
		got.SetSym(0, 0, -1)
		if again := res.GlobalCov(); !mat.Equal(again, wantG) {
			t.Errorf("%s: a change to GlobalCov's result reached the kept covariance", when)
		}
	}
	check("first")
	check("kept")
	tg := res.Factor[len(res.Factor)-res.G*(res.G+1)/2:]
	tg[0] *= 1.5 // T_g's first diagonal entry, changed in place
	check("after a change to the factor")
	copied := *res
	copied.Factor = slices.Clone(res.Factor)
	copied.Factor[len(copied.Factor)-1] *= 2
	want, _ := func() (*mat.SymDense, []float64) { plain := copied; plain.cov = nil; return plain.GlobalCov(), nil }()
	if !mat.Equal(copied.GlobalCov(), want) {
		t.Errorf("a copy of the Result with its own factor got the original's covariance")
	}
}
