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

// dims are the sizes every dense comparison runs over.
type dims struct{ n, r, g int }

func (s dims) String() string { return fmt.Sprintf("n=%d/r=%d/g=%d", s.n, s.r, s.g) }

func allDims() []dims {
	var out []dims
	for _, n := range []int{1, 3, 17} {
		for _, r := range []int{1, 2, 3} {
			for _, g := range []int{1, 4, 9} {
				out = append(out, dims{n, r, g})
			}
		}
	}
	// Local blocks larger than the specialised orders.
	return append(out, dims{4, 5, 2}, dims{2, 4, 0}, dims{0, 2, 3})
}

// randFactor returns a well-conditioned random factor: diagonal entries in
// [1, 2], off-diagonal ones in [-0.3, 0.3], cross blocks in [-0.5, 0.5].
func randFactor(rng *rand.Rand, s dims) *Factor {
	f := New(s.n, s.r, s.g)
	fill := func(m int, l []float64) {
		for a := range m {
			for b := 0; b < a; b++ {
				l[a*(a+1)/2+b] = 0.6*rng.Float64() - 0.3
			}
			l[a*(a+1)/2+a] = 1 + rng.Float64()
		}
	}
	for i := range s.n {
		fill(s.r, f.Local(i))
		for j := range f.Cross(i) {
			f.Cross(i)[j] = rng.Float64() - 0.5
		}
	}
	fill(s.g, f.Global())
	return f
}

func randVec(rng *rand.Rand, m int) []float64 {
	v := make([]float64, m)
	for i := range v {
		v[i] = rng.NormFloat64()
	}
	return v
}

// denseOf builds T as a dense d×d matrix straight from the documented
// storage layout, independently of At and ToTriDense.
func denseOf(f *Factor) *mat.Dense {
	n, r, g := f.Shape()
	d := n*r + g
	t := mat.NewDense(d, d, nil)
	data := f.Data()
	st := r*(r+1)/2 + g*r
	for i := range n {
		for a := range r {
			for b := 0; b <= a; b++ {
				t.Set(i*r+a, i*r+b, data[i*st+a*(a+1)/2+b])
			}
		}
		for k := range g {
			for b := range r {
				t.Set(n*r+k, i*r+b, data[i*st+r*(r+1)/2+k*r+b])
			}
		}
	}
	for a := range g {
		for b := 0; b <= a; b++ {
			t.Set(n*r+a, n*r+b, data[n*st+a*(a+1)/2+b])
		}
	}
	return t
}

// blockDiagOf returns the dense T_d = blockdiag(T_1, ..., T_n, T_g).
func blockDiagOf(f *Factor) *mat.Dense {
	n, r, _ := f.Shape()
	t := denseOf(f)
	d, _ := t.Dims()
	for i := n * r; i < d; i++ {
		for j := range n * r {
			t.Set(i, j, 0)
		}
	}
	return t
}

// pos lists, in storage order, the (row, column) in T of every stored
// element.
func pos(s dims) [][2]int {
	var p [][2]int
	nr := s.n * s.r
	for i := range s.n {
		for a := range s.r {
			for b := 0; b <= a; b++ {
				p = append(p, [2]int{i*s.r + a, i*s.r + b})
			}
		}
		for k := range s.g {
			for b := range s.r {
				p = append(p, [2]int{nr + k, i*s.r + b})
			}
		}
	}
	for a := range s.g {
		for b := 0; b <= a; b++ {
			p = append(p, [2]int{nr + a, nr + b})
		}
	}
	return p
}

// onPattern reports whether (i, j) is in the pattern of T.
func onPattern(s dims, i, j int) bool {
	nr := s.n * s.r
	if j > i {
		return false
	}
	if i < nr {
		return i/s.r == j/s.r
	}
	return true
}

// packDense gathers the elements of m on the pattern of T in storage order.
func packDense(s dims, m mat.Matrix) []float64 {
	p := pos(s)
	out := make([]float64, len(p))
	for k, ij := range p {
		out[k] = m.At(ij[0], ij[1])
	}
	return out
}

func vecOf(m mat.Matrix) []float64 {
	r, _ := m.Dims()
	out := make([]float64, r)
	for i := range out {
		out[i] = m.At(i, 0)
	}
	return out
}

func colOf(v []float64) *mat.Dense { return mat.NewDense(len(v), 1, append([]float64(nil), v...)) }

// relDiff returns max|got - want| / max|want| (absolute when want is zero).
func relDiff(got, want []float64) float64 {
	if len(got) != len(want) {
		return math.Inf(1)
	}
	var num, den float64
	for i := range got {
		num = math.Max(num, math.Abs(got[i]-want[i]))
		den = math.Max(den, math.Abs(want[i]))
		if math.IsNaN(got[i]) != math.IsNaN(want[i]) {
			return math.Inf(1)
		}
	}
	if den == 0 {
		return num
	}
	return num / den
}

func checkClose(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if e := relDiff(got, want); !(e <= tol) {
		t.Errorf("%s: relative difference %.3g > %.1g\n got %v\nwant %v", what, e, tol, got, want)
	}
}

func denseInverse(t *testing.T, m *mat.Dense) *mat.Dense {
	t.Helper()
	var inv mat.Dense
	if err := inv.Inverse(m); err != nil {
		t.Fatalf("dense inverse: %v", err)
	}
	return &inv
}

// The whole-vector operations below run each kernel pair over all
// subjects in one range, as a serial caller would; package vi runs the
// ranges on its workers. They return an error to read like the callers'.

func drawAll(f *Factor, theta, u, mu, z []float64) error {
	f.DrawGlobal(theta, u, mu, z)
	f.DrawRange(0, f.n, theta, u, mu, z)
	return nil
}

func solveTransAll(f *Factor, x, w []float64) error {
	f.SolveTransGlobal(x, w)
	f.SolveTransRange(0, f.n, x, w)
	return nil
}

func solveAll(f *Factor, v, g []float64) error {
	sum := make([]float64, f.g)
	f.SolveRange(0, f.n, v, g, sum)
	f.SolveGlobal(v, g, sum)
	return nil
}

func mulAll(f *Factor, y, x []float64) error {
	sum := make([]float64, f.g)
	f.MulVecRange(0, f.n, y, x, sum)
	f.MulVecGlobal(y, x, sum)
	return nil
}

// precSolveAll sets x = (T T')^-1 b.
func precSolveAll(f *Factor, x, b []float64) error {
	solveAll(f, x, b)
	return solveTransAll(f, x, x)
}

func natGradAll(f *Factor, dst, z, v []float64) error {
	tz := make([]float64, f.g)
	f.NatGradGlobal(dst, z, v, tz)
	f.NatGradRange(0, f.n, dst, z, v, tz)
	return nil
}

func euclidGradAll(f *Factor, dst, theta, mu, u, v []float64) error {
	f.EuclidGradGlobal(dst, u, v)
	f.EuclidGradRange(0, f.n, dst, theta, mu, u, v)
	return nil
}

func invFisherAll(f *Factor, dst, a []float64) error {
	f.InvFisherGlobal(dst, a)
	f.InvFisherRange(0, f.n, dst, a)
	return nil
}

func covAll(f *Factor, global, local, cross []float64) error {
	f.CovGlobal(global)
	f.CovRange(0, f.n, local, cross)
	return nil
}

func cholAll(f *Factor, s []float64) error {
	sum := make([]float64, f.g*(f.g+1)/2)
	if err := f.CholRange(0, f.n, s, sum); err != nil {
		return err
	}
	return f.CholGlobal(s, sum)
}

// sub returns the dense block rows [r0, r1) × columns [c0, c1) of m.
func sub(m *mat.Dense, r0, r1, c0, c1 int) []float64 {
	out := make([]float64, 0, (r1-r0)*(c1-c0))
	for i := r0; i < r1; i++ {
		for j := c0; j < c1; j++ {
			out = append(out, m.At(i, j))
		}
	}
	return out
}
