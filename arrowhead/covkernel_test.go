// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"math"
	"math/rand/v2"
	"testing"
)

// invLowerByColumn and gramLowerByColumn are invLower and gramLower as
// first written, column by column: the blocked kernels must give the same
// bits.
func invLowerByColumn(m int, l, dst []float64) {
	clear(dst[:m*m])
	for j := range m {
		dst[j*m+j] = 1 / l[j*(j+1)/2+j]
		for a := j + 1; a < m; a++ {
			var s float64
			for c := j; c < a; c++ {
				s += l[a*(a+1)/2+c] * dst[c*m+j]
			}
			dst[a*m+j] = -s / l[a*(a+1)/2+a]
		}
	}
}

func gramLowerByColumn(m int, x []float64) {
	for a := range m {
		for b := a + 1; b < m; b++ {
			var s float64
			for k := b; k < m; k++ {
				s += x[k*m+a] * x[k*m+b]
			}
			x[a*m+b] = s
		}
	}
	for a := range m {
		var s float64
		for k := a; k < m; k++ {
			s += x[k*m+a] * x[k*m+a]
		}
		x[a*m+a] = s
	}
	for a := range m {
		for b := a + 1; b < m; b++ {
			x[b*m+a] = x[a*m+b]
		}
	}
}

// TestCovKernelsBitwise: the blocked invLower and gramLower give the bits
// of the column-by-column kernels, at sizes around the block's, with
// entries of mixed sign and scale (and zeros, whose products are signed).
func TestCovKernelsBitwise(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	for _, m := range []int{0, 1, 2, 5, invBlock - 1, invBlock, invBlock + 1, 2*invBlock + 3, 200} {
		l := make([]float64, m*(m+1)/2)
		for a := range m {
			for c := 0; c <= a; c++ {
				v := rng.NormFloat64() * math.Exp(2*rng.NormFloat64())
				if rng.IntN(7) == 0 {
					v = 0
				}
				l[a*(a+1)/2+c] = v
			}
			l[a*(a+1)/2+a] = 0.5 + rng.Float64()
		}
		got := make([]float64, m*m)
		want := make([]float64, m*m)
		invLower(m, l, got)
		invLowerByColumn(m, l, want)
		if k := firstBitDiff(got, want); k >= 0 {
			t.Fatalf("m=%d: invLower entry (%d, %d) = %v, by column %v", m, k/m, k%m, got[k], want[k])
		}
		gramLower(m, got)
		gramLowerByColumn(m, want)
		if k := firstBitDiff(got, want); k >= 0 {
			t.Fatalf("m=%d: gramLower entry (%d, %d) = %v, by column %v", m, k/m, k%m, got[k], want[k])
		}
	}
}

// firstBitDiff returns the first index at which a and b differ in their
// bits, -1 if none.
func firstBitDiff(a, b []float64) int {
	for k := range a {
		if math.Float64bits(a[k]) != math.Float64bits(b[k]) {
			return k
		}
	}
	return -1
}

// BenchmarkCovGlobal times Sigma_gg at insteval's global order, blocked
// and column by column.
func BenchmarkCovGlobal(b *testing.B) {
	const g = 1148
	rng := rand.New(rand.NewPCG(1, 1))
	l := make([]float64, g*(g+1)/2)
	for a := range g {
		for c := 0; c < a; c++ {
			l[a*(a+1)/2+c] = 0.01 * rng.NormFloat64()
		}
		l[a*(a+1)/2+a] = 1 + rng.Float64()
	}
	dst := make([]float64, g*g)
	b.Run("blocked", func(b *testing.B) {
		for b.Loop() {
			invLower(g, l, dst)
			gramLower(g, dst)
		}
	})
	b.Run("by-column", func(b *testing.B) {
		for b.Loop() {
			invLowerByColumn(g, l, dst)
			gramLowerByColumn(g, dst)
		}
	})
}
