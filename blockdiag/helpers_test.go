// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import (
	"fmt"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"
)

// size is one test instance shape.
type size struct{ n, r, g int }

func (s size) String() string { return fmt.Sprintf("n=%d/r=%d/G=%d", s.n, s.r, s.g) }

// sizes are the shapes every operation is checked on, and a few degenerate
// ones.
func sizes() []size {
	var s []size
	for _, n := range []int{1, 3, 17} {
		for _, r := range []int{1, 2, 3} {
			for _, g := range []int{1, 4, 9} {
				s = append(s, size{n, r, g})
			}
		}
	}
	return append(s, size{0, 2, 3}, size{5, 2, 0}, size{4, 0, 2})
}

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, 0x5eed)) }

// randFactor returns a factor with diagonal entries of magnitude in
// [0.5, 1.5] and off-diagonal entries N(0, 0.25). With negDiag some
// diagonal entries are negative.
func randFactor(rng *rand.Rand, s size, negDiag bool) *Factor {
	f := New(s.n, s.r, s.g)
	fill := func(m int, c []float64) {
		for a := range m {
			for b := 0; b < a; b++ {
				c[a*(a+1)/2+b] = 0.5 * rng.NormFloat64()
			}
			v := 0.5 + rng.Float64()
			if negDiag && rng.IntN(3) == 0 {
				v = -v
			}
			c[a*(a+1)/2+a] = v
		}
	}
	for i := range s.n {
		fill(s.r, f.Local(i))
	}
	fill(s.g, f.Global())
	return f
}

func randVec(rng *rand.Rand, d int) []float64 {
	v := make([]float64, d)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// blockOf returns the block index of row i of a size-s matrix (n for the
// global block) and the first row of that block.
func blockOf(s size, i int) (blk, first int) {
	if i >= s.n*s.r {
		return s.n, s.n * s.r
	}
	return i / s.r, i / s.r * s.r
}

// onPattern reports whether (i, j) is a structural entry of C.
func onPattern(s size, i, j int) bool {
	bi, _ := blockOf(s, i)
	bj, _ := blockOf(s, j)
	return bi == bj && i >= j
}

// compOffset returns the offset in compressed storage of the structural
// entry (i, j), computed from the layout rule independently of the package.
func compOffset(s size, i, j int) int {
	blk, first := blockOf(s, i)
	a, b := i-first, j-first
	return blk*s.r*(s.r+1)/2 + a*(a+1)/2 + b
}

// denseFromComp builds the dense d×d lower-triangular matrix whose pattern
// entries are stored in the compressed comp.
func denseFromComp(s size, comp []float64) *mat.Dense {
	d := s.n*s.r + s.g
	m := mat.NewDense(max(d, 1), max(d, 1), nil)
	for i := range d {
		for j := 0; j <= i; j++ {
			if onPattern(s, i, j) {
				m.Set(i, j, comp[compOffset(s, i, j)])
			}
		}
	}
	return m
}

// compFromDense extracts the pattern entries of a dense matrix.
func compFromDense(s size, m mat.Matrix) []float64 {
	d := s.n*s.r + s.g
	comp := make([]float64, Len(s.n, s.r, s.g))
	for i := range d {
		for j := 0; j <= i; j++ {
			if onPattern(s, i, j) {
				comp[compOffset(s, i, j)] = m.At(i, j)
			}
		}
	}
	return comp
}

// maskPattern zeroes the entries of m off the pattern of C.
func maskPattern(s size, m *mat.Dense) {
	r, c := m.Dims()
	for i := range r {
		for j := range c {
			if !onPattern(s, i, j) {
				m.Set(i, j, 0)
			}
		}
	}
}

func vecOf(v mat.Vector) []float64 {
	out := make([]float64, v.Len())
	for i := range out {
		out[i] = v.AtVec(i)
	}
	return out
}

// relErr returns max|got-want| / max|want|, or the absolute error if want is
// zero. It is +Inf on length mismatch or NaN.
func relErr(got, want []float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var diff, scale float64
	for i := range got {
		e := math.Abs(got[i] - want[i])
		if math.IsNaN(e) {
			return math.Inf(1)
		}
		diff = max(diff, e)
		scale = max(scale, math.Abs(want[i]))
	}
	if scale == 0 {
		return diff
	}
	return diff / scale
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

// mulDense returns A x for a dense A (d×d, possibly padded when d = 0).
func mulDense(a mat.Matrix, x []float64) []float64 {
	if len(x) == 0 {
		return nil
	}
	var y mat.VecDense
	y.MulVec(a, mat.NewVecDense(len(x), x))
	return vecOf(&y)
}
