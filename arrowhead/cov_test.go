// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"fmt"
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
			if err := covAll(f, global, local, cross); err != nil {
				t.Fatal(err)
			}
			check("whole")

			// The same blocks through LocalCovTo and GlobalCovTo.
			var blk mat.SymDense
			for i := range s.n {
				lo, hi := i*s.r, (i+1)*s.r
				blk.Reset()
				f.LocalCovTo(i, &blk)
				checkClose(t, "LocalCovTo", mat.DenseCopyOf(&blk).RawMatrix().Data, sub(&sig, lo, hi, lo, hi), tol)
			}
			if s.g > 0 {
				blk.Reset()
				f.GlobalCovTo(&blk)
				checkClose(t, "GlobalCovTo", mat.DenseCopyOf(&blk).RawMatrix().Data, sub(&sig, nr, d, nr, d), tol)
			}
		})
	}
}

// TestLocalCovRange: from Sigma_gg, LocalCovRange gives CovRange's local
// covariances, to the last bit where T_gi is dense and within rounding
// where most of its rows are zero.
func TestLocalCovRange(t *testing.T) {
	for _, s := range allDims() {
		if s.n == 0 {
			continue
		}
		for _, sparse := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(uint64(s.n*100+s.r*10+s.g), 5))
			f := randFactor(rng, s)
			if sparse {
				for i := range s.n {
					c := f.Cross(i)
					for k := range s.g {
						if k%4 != i%4 {
							clear(c[k*s.r : (k+1)*s.r])
						}
					}
				}
			}
			want := make([]float64, s.n*s.r*s.r)
			f.CovRange(0, s.n, want, make([]float64, s.n*s.r*s.g))
			covG := make([]float64, s.g*s.g)
			f.CovGlobal(covG)
			got := make([]float64, len(want))
			f.LocalCovRange(0, s.n, covG, got)
			if !sparse {
				for j := range got {
					if got[j] != want[j] {
						t.Fatalf("%v sparse=%v: entry %d is %v, CovRange's %v", s, sparse, j, got[j], want[j])
					}
				}
				continue
			}
			checkClose(t, fmt.Sprintf("%v sparse", s), got, want, 1e-12)
		}
	}
}
