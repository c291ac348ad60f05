// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"context"
	"fmt"
	"testing"

	"github.com/sparsevi/sparsevi/parallel"
)

// BenchmarkStep times one whole natural-gradient step of Algorithm 2S (draw,
// synthetic gradient, v = T^-1 grad h, direction, update of T and mu) with
// the range kernels fused into two passes over chunks of 256 subjects, and
// reports the time per subject. The direction is applied in place
// (NatGradStepRange).
func BenchmarkStep(b *testing.B) { benchStep(b, false) }

// BenchmarkStepStored is BenchmarkStep with the direction N written to its
// own storage and then added (NatGradRange, AddScaledRange), as step rules
// with momentum or norms need.
func BenchmarkStepStored(b *testing.B) { benchStep(b, true) }

func benchStep(b *testing.B, store bool) {
	ns := []int{1000, 10000, 100000}
	if !testing.Short() {
		ns = append(ns, 1000000)
	}
	for _, n := range ns {
		for _, r := range []int{1, 2} {
			for _, g := range []int{5, 10} {
				for _, w := range []int{1, 2} {
					b.Run(fmt.Sprintf("n=%d/r=%d/G=%d/workers=%d", n, r, g, w), func(b *testing.B) {
						f := New(n, r, g)
						f.SetIdentity(1)
						pool := parallel.NewPool(context.Background(), w)
						defer pool.Close()
						st := newStepper(f, pool, parallel.DefaultChunkSize, 1, store)
						if err := st.step(); err != nil {
							b.Fatal(err)
						}
						b.ReportAllocs()
						b.ResetTimer()
						for b.Loop() {
							if err := st.step(); err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/subject")
					})
				}
			}
		}
	}
}

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
				{"NatGradStep", func() { f.NatGradStepRange(0, n, 1e-12, z, y, tz) }},
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
