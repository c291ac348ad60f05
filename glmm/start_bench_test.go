// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
)

// BenchmarkStart times Model.Start, on the hot path of every fit, on the
// scaling benchmark's models at 10^4 and 10^5 subjects. With -cpu 1,
// cpu-ns/op is ns/op on an idle machine but robust to other load.
func BenchmarkStart(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, s := range []struct {
			name string
			spec datasets.SimSpec
		}{
			{"bernoulli-ri", datasets.SimSpec{Family: "bernoulli", Subjects: n, Obs: 7,
				Beta: []float64{-1, 0.5, 0.5, -0.5, 1}, RECov: [][]float64{{1}}, Seed: 1_000_003 + uint64(n)}},
			{"poisson-ris", datasets.SimSpec{Family: "poisson", Subjects: n, Obs: 7,
				Beta: []float64{0.5, -0.5, 0.25, -0.25}, RECov: [][]float64{{0.25, -0.05}, {-0.05, 0.16}}, Seed: 2_000_006 + uint64(n)}},
		} {
			b.Run(fmt.Sprintf("%s/n=%d", s.name, n), func(b *testing.B) {
				fr, truth, err := datasets.Simulate(s.spec)
				if err != nil {
					b.Fatal(err)
				}
				f, err := formula.Parse(truth.Formula)
				if err != nil {
					b.Fatal(err)
				}
				fam, _ := glmm.ParseFamily(s.spec.Family)
				d, err := formula.Build(f, fr, formula.Options{Family: fam})
				if err != nil {
					b.Fatal(err)
				}
				m := d.Model()
				nn, r, g := m.Dims()
				theta := make([]float64, nn*r+g)
				prec := make([]float64, arrowhead.Len(nn, r, g))
				pool := parallel.NewPool(context.Background(), 0)
				defer pool.Close()
				b.ReportAllocs()
				cpu0, okCPU := processCPU()
				for b.Loop() {
					if err := m.Start(pool, theta, prec); err != nil {
						b.Fatal(err)
					}
				}
				if cpu1, _ := processCPU(); okCPU {
					b.ReportMetric(float64((cpu1-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
				}
			})
		}
	}
}
