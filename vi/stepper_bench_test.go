// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/parallel"
)

// BenchmarkStepper times one Snngm step (norm pass and update pass) on a
// lambda of GVA's layout for n random-intercept subjects and 6 global
// variables, with the caches flushed before each step as the likelihood
// pass of a fit would. The step size is tiny so that lambda stays put.
func BenchmarkStepper(b *testing.B) {
	for _, n := range []int{100000, 1000000} {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("snngm/n=%d/workers=%d", n, w), func(b *testing.B) {
				const g = 6
				d := n + g
				m := d + n*(1+g) + g*(g+1)/2
				lam := make([]float64, m)
				kinds := make([]uint8, m)
				grad := make([]float64, m)
				for j := range lam {
					lam[j] = 1
					grad[j] = math.Sin(float64(j))
					if j >= d && (j-d)%(1+g) == 0 {
						kinds[j] = kindDiag
					}
				}
				pool := parallel.NewPool(context.Background(), w)
				defer pool.Close()
				rule := Snngm{Alpha: 1e-9}.withDefaults(DefaultAlpha0, len(lam)).(Snngm)
				st := newSnngmStep(newStepCoreOf(lam, kinds, true, pool, stepBlocks(parallel.NewChunking(n, 0), 1, g, 1+g, m), false), rule)
				b.SetBytes(int64(8 * m))
				b.ReportAllocs()
				evict := make([]float64, 8<<20)
				for b.Loop() {
					b.StopTimer()
					for j := range evict {
						evict[j]++
					}
					b.StartTimer()
					if _, err := st.step(grad); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
