// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestCov(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(40, seedOf(s)))
			f := randFactor(rng, s)
			d, nr := f.Dim(), s.n*s.r
			tinv := denseInverse(t, denseOf(f))
			var sig mat.Dense
			sig.Mul(tinv.T(), tinv)

			global := make([]float64, s.g*s.g)
			local := make([]float64, s.n*s.r*s.r)
			cross := make([]float64, s.n*s.r*s.g)
			f.CovGlobal(global)
			f.CovRange(0, s.n, local, cross)
			check := func(how string) {
				checkClose(t, how+" Cov(theta_g)", global, sub(&sig, nr, d, nr, d), tol)
				for i := range s.n {
					lo, hi := i*s.r, (i+1)*s.r
					checkClose(t, how+" Cov(theta_i)", local[i*s.r*s.r:(i+1)*s.r*s.r], sub(&sig, lo, hi, lo, hi), tol)
					checkClose(t, how+" Cov(theta_i, theta_g)", cross[i*s.r*s.g:(i+1)*s.r*s.g], sub(&sig, lo, hi, nr, d), tol)
				}
			}
			check("kernels")
			for _, v := range [][]float64{global, local, cross} {
				for i := range v {
					v[i] = math.NaN()
				}
			}
			run := newRunner(t, 2, s.n, 4)
			if err := run.Cov(f, global, local, cross); err != nil {
				t.Fatal(err)
			}
			check("Runner")
		})
	}
}
