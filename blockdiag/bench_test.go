// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import (
	"fmt"
	"testing"
)

// BenchmarkKernels times the range kernels alone over 10^5 subjects on one
// goroutine.
func BenchmarkKernels(b *testing.B) {
	const n = 100000
	for _, r := range []int{1, 2, 3} {
		f := randFactor(newRand(1), size{n, r, 5}, false)
		d, nt := f.Dim(), len(f.Data())
		x, y, z := randVec(newRand(2), d), make([]float64, d), randVec(newRand(3), d)
		dC, aC := make([]float64, nt), randVec(newRand(4), nt)
		spd := make([]float64, nt)
		f.CovRange(0, n, spd)
		g := New(n, r, 5)
		for _, k := range []struct {
			name string
			fn   func()
		}{
			{"MulVec", func() { f.MulVecRange(0, n, y, x) }},
			{"SolveTrans", func() { f.SolveTransRange(0, n, y, x) }},
			{"Draw", func() { f.DrawRange(0, n, y, x, z) }},
			{"LogDet", func() { _ = f.LogDetRange(0, n) }},
			{"NatGrad", func() { f.NatGradRange(0, n, y, dC, z, x) }},
			{"InvFisher", func() { f.InvFisherRange(0, n, y, dC, x, aC) }},
			{"Cholesky", func() { _ = g.CholRange(0, n, spd) }},
		} {
			b.Run(fmt.Sprintf("%s/r=%d", k.name, r), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					k.fn()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/subject")
			})
		}
	}
}
