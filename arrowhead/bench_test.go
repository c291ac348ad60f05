// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"fmt"
	"testing"
)

// BenchmarkKernels times the range kernels of a step on a cache-resident
// problem, per subject.
func BenchmarkKernels(b *testing.B) {
	const n = 1000
	for _, r := range []int{1, 2, 3} {
		for _, g := range []int{5, 10} {
			f := New(n, r, g)
			f.SetIdentity(1)
			d := f.Dim()
			x, y, z, mu := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
			for i := range z {
				z[i] = float64(i%7) - 3
			}
			dir := make([]float64, len(f.Data()))
			sum, tz := make([]float64, g), make([]float64, g)
			for _, k := range []struct {
				name string
				fn   func()
			}{
				{"Draw", func() { f.DrawRange(0, n, x, y, mu, z) }},
				{"Solve", func() { f.SolveRange(0, n, x, z, sum) }},
				{"SolveTrans", func() { f.SolveTransRange(0, n, x, z) }},
				{"NatGrad", func() { f.NatGradRange(0, n, dir, z, y, tz) }},
				{"AddScaled", func() { f.AddScaledRange(0, n, 1e-9, dir) }},
			} {
				b.Run(fmt.Sprintf("%s/r=%d/G=%d", k.name, r, g), func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						k.fn()
					}
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/subject")
				})
			}
		}
	}
}
