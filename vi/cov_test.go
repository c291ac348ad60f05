// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// TestMarginalCovariances: the covariance blocks a Result reports equal the
// blocks of the dense covariance of its factor, for both methods.
func TestMarginalCovariances(t *testing.T) {
	m := simModel(t, "poisson", 12, [][]float64{{0.5, 0.1}, {0.1, 0.3}}, 4)
	n, r, g := m.Dims()

	for _, method := range []vi.Method{vi.GVA, vi.BlockDiag} {
		res, err := vi.Fit(context.Background(), m, vi.Settings{Method: method, MaxIter: 400})
		if err != nil {
			t.Fatal(err)
		}
		var sigma mat.Dense
		if method == vi.GVA {
			tt := arrowhead.Wrap(n, r, g, res.Factor).ToTriDense()
			var prec mat.Dense
			prec.Mul(tt, tt.T())
			if err := sigma.Inverse(&prec); err != nil {
				t.Fatal(err)
			}
		} else {
			c := blockdiag.Wrap(n, r, g, res.Factor).ToTriDense()
			sigma.Mul(c, c.T())
		}
		gc := res.GlobalCov()
		for a := range g {
			for b := range g {
				if got, want := gc.At(a, b), sigma.At(n*r+a, n*r+b); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
					t.Errorf("%v: global cov (%d,%d) = %v, want %v", method, a, b, got, want)
				}
			}
		}
		lc := res.LocalCov()
		for i := range n {
			for a := range r {
				for b := range r {
					if got, want := lc[i*r*r+a*r+b], sigma.At(i*r+a, i*r+b); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
						t.Errorf("%v: subject %d cov (%d,%d) = %v, want %v", method, i, a, b, got, want)
					}
				}
			}
		}
		if _, err := posterior.Summarize(res, m, 200, 1); err != nil {
			t.Errorf("%v: Summarize: %v", method, err)
		}
	}
}
