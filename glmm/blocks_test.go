// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/diff/fd"

	"github.com/sparsevi/sparsevi/glmm"
)

// TestIndependentBlocks: with REBlocks the log joint is the reference's at
// omega with its cross-block entries set to zero, plus their own prior;
// the gradient agrees with finite differences (the cross-block entries'
// is their prior's alone); MaskOmega and OmegaFree mark those entries.
func TestIndependentBlocks(t *testing.T) {
	for _, fam := range allFamilies {
		rng := rand.New(rand.NewPCG(uint64(fam), 5))
		const n, p, r = 7, 2, 3
		cfg := randomConfig(rng, fam, n, p, r, false)
		// Effects 0 and 2 in one block, effect 1 alone: interleaved.
		cfg.REBlocks = []int{0, 1, 0}
		mod, err := glmm.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if !mod.IndependentBlocks() {
			t.Fatalf("%v: IndependentBlocks false", fam)
		}
		local := randomLocal(rng, n, r)
		thetaG := withDispersion(rng, fam, randomGlobal(rng, p, r))
		masked := slices.Clone(thetaG)
		mod.MaskOmega(masked[p : p+glmm.NumOmega(r)])
		var cross float64
		for l := range r {
			for k := l; k < r; k++ {
				j := glmm.OmegaIndex(k, l, r)
				want := k == l || (k == 2 && l == 0)
				if mod.OmegaFree(j) != want {
					t.Errorf("%v: OmegaFree(%d) = %v", fam, j, !want)
				}
				if !want {
					if masked[p+j] != 0 {
						t.Errorf("%v: MaskOmega left entry %d", fam, j)
					}
					cross += thetaG[p+j] * thetaG[p+j]
				}
			}
		}
		// The reference at the masked point already has the cross-block
		// entries' prior at zero; add the difference to their values.
		want := referenceLogJoint(cfg, local, masked, 10) - cross/200
		got, _ := logJoint(t, mod, local, thetaG, false)
		if math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("%v: log joint %v, reference %v", fam, got, want)
		}
		checkGradientFD(t, fam.String(), mod, local, thetaG)
	}
}

// checkGradientFD compares the gradient of the log joint at (local,
// thetaG) with finite differences.
func checkGradientFD(t *testing.T, label string, mod *glmm.Model, local, thetaG []float64) {
	t.Helper()
	nr := len(local)
	theta := append(slices.Clone(local), thetaG...)
	_, grad := logJoint(t, mod, local, thetaG, true)
	num := fd.Gradient(nil, func(x []float64) float64 {
		v, _ := logJoint(t, mod, x[:nr], x[nr:], false)
		return v
	}, theta, fdSettings)
	for k := range theta {
		if e := relErr(grad[k], num[k]); e > 1e-6 {
			t.Errorf("%s: d/d%d = %v, finite difference %v", label, k, grad[k], num[k])
		}
	}
}
