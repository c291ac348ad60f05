// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkLocal evaluates the log density and gradient over all subjects
// of the paper's models at a point near the posterior; it must not
// allocate.
func BenchmarkLocal(b *testing.B) {
	for _, name := range []string{"epilepsy", "toenail", "hers"} {
		m := paperModel(b, name)
		for _, method := range []Method{RVB1, RVB2} {
			b.Run(fmt.Sprintf("%s/%v", name, method), func(b *testing.B) {
				tg, err := New(m, method)
				if err != nil {
					b.Fatal(err)
				}
				n, r, g := tg.Dims()
				theta := make([]float64, n*r+g)
				prec := make([]float64, n*(r*(r+1)/2+g*r)+g*(g+1)/2)
				if err := tg.Start(testPool(b), theta, prec); err != nil {
					b.Fatal(err)
				}
				rng := rand.New(rand.NewPCG(1, 2))
				for k := range n * r {
					theta[k] = rng.NormFloat64()
				}
				grad := make([]float64, len(theta))
				ws := tg.NewWorkspace()
				b.ReportAllocs()
				for b.Loop() {
					// Move theta_g a little, as draws do, so that RVB2's
					// solves start from a neighbouring mode.
					theta[n*r] += 1e-3 * rng.NormFloat64()
					if _, err := tg.Local(ws, 0, n, theta[n*r:], theta[:n*r], grad[:n*r], grad[n*r:]); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
