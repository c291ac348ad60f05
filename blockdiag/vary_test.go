// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// varShape is a test instance of variable-size blocks.
type varShape struct {
	sizes []int
	g     int
}

func (s varShape) String() string { return fmt.Sprintf("sizes=%v/G=%d", s.sizes, s.g) }

func varShapes() []varShape {
	return []varShape{
		{[]int{1}, 1},
		{[]int{3, 1, 2}, 2},
		{[]int{2, 4, 1, 1, 5, 3}, 3},
		{[]int{2, 0, 3}, 1}, // a subject without locals
		{[]int{4, 2}, 0},
		{nil, 3},
	}
}

// varLayout gives, independently of the package, the block of each row of
// the dense matrix (len(sizes) for the global block), the block's first
// row and its first position in compressed storage.
type varLayout struct {
	d                 int
	blk, first, start []int
}

func newVarLayout(s varShape) varLayout {
	var l varLayout
	pos := 0
	for i, m := range s.sizes {
		for range m {
			l.blk = append(l.blk, i)
			l.first = append(l.first, l.d)
			l.start = append(l.start, pos)
		}
		l.d += m
		pos += m * (m + 1) / 2
	}
	first := l.d
	for range s.g {
		l.blk = append(l.blk, len(s.sizes))
		l.first = append(l.first, first)
		l.start = append(l.start, pos)
	}
	l.d += s.g
	return l
}

func (l varLayout) on(i, j int) bool { return i >= j && l.blk[i] == l.blk[j] }

func (l varLayout) at(i, j int) int {
	a, b := i-l.first[i], j-l.first[i]
	return l.start[i] + a*(a+1)/2 + b
}

func (l varLayout) dense(comp []float64) *mat.Dense {
	m := mat.NewDense(max(l.d, 1), max(l.d, 1), nil)
	for i := range l.d {
		for j := 0; j <= i; j++ {
			if l.on(i, j) {
				m.Set(i, j, comp[l.at(i, j)])
			}
		}
	}
	return m
}

func (l varLayout) comp(m mat.Matrix, n int) []float64 {
	c := make([]float64, n)
	for i := range l.d {
		for j := 0; j <= i; j++ {
			if l.on(i, j) {
				c[l.at(i, j)] = m.At(i, j)
			}
		}
	}
	return c
}

func (l varLayout) mask(m *mat.Dense) {
	for i := range l.d {
		for j := range l.d {
			if !l.on(i, j) {
				m.Set(i, j, 0)
			}
		}
	}
}

func randVarFactor(rng *rand.Rand, s varShape) *Factor {
	f := NewVar(s.sizes, s.g)
	fill := func(m int, c []float64) {
		for a := range m {
			for b := 0; b < a; b++ {
				c[a*(a+1)/2+b] = 0.5 * rng.NormFloat64()
			}
			c[a*(a+1)/2+a] = 0.5 + rng.Float64()
		}
	}
	for i, m := range s.sizes {
		fill(m, f.Local(i))
	}
	fill(s.g, f.Global())
	return f
}

// allRanges runs a range kernel over the subjects in two ranges and the
// global kernel, as a caller cutting the subjects into chunks would.
func allRanges(f *Factor, rng func(lo, hi int), glob func()) {
	n, _, _ := f.Shape()
	rng(0, n/2)
	rng(n/2, n)
	glob()
}

func TestVariableAgainstDense(t *testing.T) {
	for _, s := range varShapes() {
		t.Run(s.String(), func(t *testing.T) {
			rng := newRand(7)
			f := randVarFactor(rng, s)
			l := newVarLayout(s)
			d := l.d
			if f.Dim() != d || f.Locals() != d-s.g || len(f.Data()) != LenVar(s.sizes, s.g) {
				t.Fatalf("Dim %d Locals %d Len %d, want %d %d %d", f.Dim(), f.Locals(), len(f.Data()), d, d-s.g, LenVar(s.sizes, s.g))
			}
			c := l.dense(f.Data())
			var cov mat.Dense
			cov.Mul(c, c.T())
			x, mu, z, gr := randVec(rng, d), randVec(rng, d), randVec(rng, d), randVec(rng, d)
			dst := make([]float64, d)
			vec := func(name string, rngK func(lo, hi int, dst, x []float64), globK func(dst, x []float64), want []float64) {
				t.Helper()
				clear(dst)
				allRanges(f, func(lo, hi int) { rngK(lo, hi, dst, x) }, func() { globK(dst, x) })
				if e := relErr(dst, want); e > tol {
					t.Errorf("%s: relative error %g", name, e)
				}
			}
			solve := func(a mat.Matrix) []float64 {
				var y mat.VecDense
				if err := y.SolveVec(a, mat.NewVecDense(d, x)); err != nil {
					t.Fatal(err)
				}
				return vecOf(&y)
			}
			if d == 0 {
				return
			}
			vec("MulVec", f.MulVecRange, f.MulVecGlobal, mulDense(c, x))
			vec("MulTransVec", f.MulTransVecRange, f.MulTransVecGlobal, mulDense(c.T(), x))
			vec("Solve", f.SolveRange, f.SolveGlobal, solve(c))
			vec("SolveTrans", f.SolveTransRange, f.SolveTransGlobal, solve(c.T()))
			vec("CovMulVec", f.CovMulVecRange, f.CovMulVecGlobal, mulDense(&cov, x))

			// Draw: mu + C z.
			theta := make([]float64, d)
			allRanges(f, func(lo, hi int) { f.DrawRange(lo, hi, theta, mu, z) }, func() { f.DrawGlobal(theta, mu, z) })
			want := mulDense(c, z)
			for j := range want {
				want[j] += mu[j]
			}
			if e := relErr(theta, want); e > tol {
				t.Errorf("Draw: relative error %g", e)
			}

			// LogDet: log|det C|.
			n := len(s.sizes)
			ld := f.LogDetRange(0, n/2) + f.LogDetRange(n/2, n) + f.LogDetGlobal()
			var wantLD float64
			for j := range d {
				wantLD += math.Log(math.Abs(c.At(j, j)))
			}
			if math.Abs(ld-wantLD) > tol*max(1, math.Abs(wantLD)) {
				t.Errorf("LogDet = %v, want %v", ld, wantLD)
			}

			// Natural gradient: dMu = C C' g, dC = C halfdiag(C' lower(g z')).
			nc := len(f.Data())
			dMu, dC := make([]float64, d), make([]float64, nc)
			allRanges(f, func(lo, hi int) { f.NatGradRange(lo, hi, dMu, dC, z, gr) }, func() { f.NatGradGlobal(dMu, dC, z, gr) })
			a := outer(gr, z)
			l.mask(a)
			wantC := l.comp(natGradVar(c, a, d), nc)
			if e := relErr(dMu, mulDense(&cov, gr)); e > tol {
				t.Errorf("NatGrad mean: relative error %g", e)
			}
			if e := relErr(dC, wantC); e > tol {
				t.Errorf("NatGrad factor: relative error %g", e)
			}

			// Euclidean gradient lower(g z') on the pattern.
			eC := make([]float64, nc)
			allRanges(f, func(lo, hi int) { f.EuclidGradRange(lo, hi, eC, z, gr) }, func() { f.EuclidGradGlobal(eC, z, gr) })
			if e := relErr(eC, l.comp(a, nc)); e > tol {
				t.Errorf("EuclidGrad: relative error %g", e)
			}

			// Inverse Fisher of a general Euclidean gradient.
			aC := randVec(rng, nc)
			am := l.dense(aC)
			fMu, fC := make([]float64, d), make([]float64, nc)
			allRanges(f, func(lo, hi int) { f.InvFisherRange(lo, hi, fMu, fC, x, aC) }, func() { f.InvFisherGlobal(fMu, fC, x, aC) })
			if e := relErr(fMu, mulDense(&cov, x)); e > tol {
				t.Errorf("InvFisher mean: relative error %g", e)
			}
			if e := relErr(fC, l.comp(natGradVar(c, am, d), nc)); e > tol {
				t.Errorf("InvFisher factor: relative error %g", e)
			}

			// Covariance blocks, and the Cholesky factor back from them.
			cc := make([]float64, nc)
			allRanges(f, func(lo, hi int) { f.CovRange(lo, hi, cc) }, func() { f.CovGlobal(cc) })
			wantCov := mat.DenseCopyOf(&cov)
			l.mask(wantCov)
			if e := relErr(cc, l.comp(wantCov, nc)); e > tol {
				t.Errorf("Cov: relative error %g", e)
			}
			back := NewVar(s.sizes, s.g)
			allRanges(back, func(lo, hi int) { check(t, back.CholRange(lo, hi, cc)) }, func() { check(t, back.CholGlobal(cc)) })
			if e := relErr(back.Data(), f.Data()); e > 1e-9 {
				t.Errorf("Chol of Cov: relative error %g", e)
			}

			// Element access and exports.
			if !mat.EqualApprox(f, c.Slice(0, d, 0, d), 0) || !mat.EqualApprox(f.ToTriDense(), c.Slice(0, d, 0, d), 0) {
				t.Error("At or ToTriDense differ from the layout")
			}
			csr := f.ToCSR()
			if !mat.Equal(csr, c.Slice(0, d, 0, d)) || csr.NNZ() != nc {
				t.Errorf("ToCSR differs from the layout (%d entries, want %d)", csr.NNZ(), nc)
			}
			for k, j := range f.DiagIndices() {
				if f.Data()[j] != c.At(k, k) {
					t.Fatalf("DiagIndices[%d] = %d is not the diagonal", k, j)
				}
			}
			wantOff := 0
			for i, m := range s.sizes {
				ri, off := f.Block(i)
				lo, hi := f.Span(i, i+1)
				if ri != m || off != wantOff || hi-lo != m*(m+1)/2 || len(f.Local(i)) != hi-lo {
					t.Errorf("subject %d: Block %d,%d Span %d,%d", i, ri, off, lo, hi)
				}
				var sd mat.SymDense
				f.LocalCovTo(i, &sd)
				for a := range m {
					for b := range m {
						if math.Abs(sd.At(a, b)-cov.At(off+a, off+b)) > tol {
							t.Fatalf("LocalCovTo(%d) differs at %d,%d", i, a, b)
						}
					}
				}
				wantOff += m
			}
		})
	}
}

// natGradVar is C halfdiag(C' A) for dense C and A already on the pattern.
func natGradVar(c, a *mat.Dense, d int) *mat.Dense {
	var h mat.Dense
	h.Mul(c.T(), a)
	for i := range d {
		for j := range d {
			switch {
			case j > i:
				h.Set(i, j, 0)
			case j == i:
				h.Set(i, j, h.At(i, j)/2)
			}
		}
	}
	var nd mat.Dense
	nd.Mul(c, &h)
	return &nd
}

// TestVariableSameSizes checks that a factor of variable size whose
// blocks all have order r computes, bit for bit, what the fixed-size
// factor computes on the same storage.
func TestVariableSameSizes(t *testing.T) {
	for _, s := range sizes() {
		t.Run(s.String(), func(t *testing.T) {
			rng := newRand(11)
			fix := randFactor(rng, s, true)
			sz := make([]int, s.n)
			for i := range sz {
				sz[i] = s.r
			}
			vr := WrapVar(sz, s.g, append([]float64(nil), fix.Data()...))
			d := fix.Dim()
			nc := len(fix.Data())
			x, mu, z := randVec(rng, d), randVec(rng, d), randVec(rng, d)
			aC := randVec(rng, nc)
			type out struct{ v, c []float64 }
			run := []struct {
				name string
				fn   func(f *Factor) out
			}{
				{"MulVec", func(f *Factor) out { v := make([]float64, d); f.MulVecRange(0, s.n, v, x); return out{v: v} }},
				{"MulTransVec", func(f *Factor) out { v := make([]float64, d); f.MulTransVecRange(0, s.n, v, x); return out{v: v} }},
				{"Solve", func(f *Factor) out { v := make([]float64, d); f.SolveRange(0, s.n, v, x); return out{v: v} }},
				{"SolveTrans", func(f *Factor) out { v := make([]float64, d); f.SolveTransRange(0, s.n, v, x); return out{v: v} }},
				{"CovMulVec", func(f *Factor) out { v := make([]float64, d); f.CovMulVecRange(0, s.n, v, x); return out{v: v} }},
				{"Draw", func(f *Factor) out { v := make([]float64, d); f.DrawRange(0, s.n, v, mu, z); return out{v: v} }},
				{"LogDet", func(f *Factor) out { return out{v: []float64{f.LogDetRange(0, s.n)}} }},
				{"NatGrad", func(f *Factor) out {
					v, c := make([]float64, d), make([]float64, nc)
					f.NatGradRange(0, s.n, v, c, z, x)
					return out{v, c}
				}},
				{"EuclidGrad", func(f *Factor) out { c := make([]float64, nc); f.EuclidGradRange(0, s.n, c, z, x); return out{c: c} }},
				{"InvFisher", func(f *Factor) out {
					v, c := make([]float64, d), make([]float64, nc)
					f.InvFisherRange(0, s.n, v, c, x, aC)
					return out{v, c}
				}},
				{"Cov", func(f *Factor) out { c := make([]float64, nc); f.CovRange(0, s.n, c); return out{c: c} }},
				{"Chol", func(f *Factor) out {
					c := make([]float64, nc)
					f.CovRange(0, s.n, c)
					g := New(s.n, s.r, s.g)
					if f.Variable() {
						g = NewVar(sz, s.g)
					}
					check(t, g.CholRange(0, s.n, c))
					return out{c: g.Data()}
				}},
				{"DiagIndices", func(f *Factor) out {
					var v []float64
					for _, j := range f.DiagIndices() {
						v = append(v, float64(j))
					}
					return out{v: v}
				}},
			}
			for _, k := range run {
				a, b := k.fn(fix), k.fn(vr)
				if !sameBits(a.v, b.v) || !sameBits(a.c, b.c) {
					t.Errorf("%s: variable-size result differs from the fixed-size one", k.name)
				}
			}
		})
	}
}

func TestVariableCholError(t *testing.T) {
	f := NewVar([]int{1, 3, 2}, 1)
	s := make([]float64, len(f.Data()))
	for _, j := range f.DiagIndices() {
		s[j] = 1
	}
	lo, _ := f.Span(1, 2)
	s[lo+5] = -1 // subject 1, row 2
	err := f.CholRange(0, 3, s)
	var npd *NotPositiveDefiniteError
	if !errors.As(err, &npd) || npd.Subject != 1 || npd.Row != 2 {
		t.Fatalf("CholRange error %v, want subject 1 row 2", err)
	}
}

func TestVariablePanics(t *testing.T) {
	for _, c := range []struct {
		name string
		fn   func()
	}{
		{"NegativeSize", func() { NewVar([]int{1, -1}, 1) }},
		{"NegativeG", func() { NewVar([]int{1}, -1) }},
		{"DataLength", func() { WrapVar([]int{2, 1}, 1, make([]float64, 4)) }},
		{"Block", func() { NewVar([]int{2, 1}, 1).Block(2) }},
		{"CopyFrom", func() { NewVar([]int{2, 1}, 1).CopyFrom(NewVar([]int{1, 2}, 1)) }},
		{"CopyFromFixed", func() { NewVar([]int{2, 2}, 1).CopyFrom(New(2, 2, 1)) }},
		{"VecLength", func() { f := NewVar([]int{2, 1}, 1); f.MulVecRange(0, 2, make([]float64, 3), make([]float64, 4)) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			c.fn()
		})
	}
}
