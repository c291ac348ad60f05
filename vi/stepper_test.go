// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/parallel"
)

// TestStepBlocksPartition: the blocks cover every entry of lambda once, and
// block k holds exactly the entries of chunk k's subjects (plus, for the
// last block, the global ones).
func TestStepBlocksPartition(t *testing.T) {
	for _, tc := range []struct{ n, size, r, g, stride int }{
		{n: 10, size: 4, r: 1, g: 3, stride: 4},  // GVA, r = 1
		{n: 7, size: 3, r: 2, g: 5, stride: 13},  // GVA, r = 2
		{n: 9, size: 256, r: 2, g: 4, stride: 3}, // RVB, one chunk
		{n: 0, size: 4, r: 1, g: 3, stride: 4},   // no subjects
	} {
		c := parallel.NewChunking(tc.n, tc.size)
		d := tc.n*tc.r + tc.g
		total := d + tc.n*tc.stride + tc.g*(tc.g+1)/2
		owner := make([]int, total)
		for j := range owner {
			owner[j] = -1
		}
		blocks := stepBlocks(c, tc.r, tc.g, tc.stride, total)
		for k, b := range blocks {
			for _, sp := range b {
				for j := sp.lo; j < sp.hi; j++ {
					if owner[j] >= 0 {
						t.Fatalf("%+v: entry %d in blocks %d and %d", tc, j, owner[j], k)
					}
					owner[j] = k
				}
			}
		}
		last := len(blocks) - 1
		for j, k := range owner {
			// The chunk that should own entry j.
			want := last
			switch {
			case j < tc.n*tc.r:
				want = j / tc.r / tc.size
			case j >= d && j < d+tc.n*tc.stride:
				want = (j - d) / tc.stride / tc.size
			}
			if k != want {
				t.Errorf("%+v: entry %d in block %d, want %d", tc, j, k, want)
			}
		}
	}
}

// TestStepperNorm: the norm reduced over the blocks matches a direct
// computation, also for gradients whose squares overflow or underflow.
func TestStepperNorm(t *testing.T) {
	const n, g = 1000, 3
	c := parallel.NewChunking(n, 64)
	d := n + g
	total := d + n*(1+g) + g*(g+1)/2
	pool := parallel.NewPool(context.Background(), 2)
	defer pool.Close()
	for _, scale := range []float64{1, 1e300, 1e-300} {
		grad := make([]float64, total)
		var want float64
		for j := range grad {
			x := math.Sin(float64(j)+0.5) * scale
			grad[j] = x
			want = math.Hypot(want, x)
		}
		st := newStepCoreOf(make([]float64, total), make([]uint8, total), true, pool, stepBlocks(c, 1, g, 1+g, total), false)
		got, err := st.norm(grad)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-want) > 1e-12*want {
			t.Errorf("scale %g: norm %v, want %v", scale, got, want)
		}
	}
}
