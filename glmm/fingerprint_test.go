// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
)

// TestFingerprint: the same configuration gives the same fingerprint, and
// any change of a response, a design entry, a weight, an offset, the
// family or the prior gives another.
func TestFingerprint(t *testing.T) {
	fp := func(edit func(*glmm.Config)) string {
		t.Helper()
		cfg := validConfig()
		if edit != nil {
			edit(&cfg)
		}
		m, err := glmm.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		return m.Fingerprint()
	}
	base := fp(nil)
	if again := fp(nil); again != base || len(base) != 64 {
		t.Fatalf("fingerprints %q and %q of one configuration", base, again)
	}
	for _, c := range []struct {
		name string
		edit func(*glmm.Config)
	}{
		{"a response", func(c *glmm.Config) { c.Y[2]++ }},
		{"a fixed-effect entry", func(c *glmm.Config) { c.X.(*mat.Dense).Set(1, 1, 0.123) }},
		{"a weight", func(c *glmm.Config) { c.Weights = []float64{1, 1, 2, 1, 1, 1} }},
		{"an offset", func(c *glmm.Config) { c.Offset = []float64{0, 0, 0, 0.5, 0, 0} }},
		{"the prior", func(c *glmm.Config) { c.PriorSD = 3 }},
		{"the subjects", func(c *glmm.Config) { c.Group[1], c.Group[2] = c.Group[2], c.Group[1] }},
	} {
		if got := fp(c.edit); got == base {
			t.Errorf("%s changed: the fingerprint did not", c.name)
		}
	}
}
