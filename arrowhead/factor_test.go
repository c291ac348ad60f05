// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestLayout(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(s.n*100+s.r*10+s.g)))
			f := randFactor(rng, s)
			d := s.n*s.r + s.g
			if got, want := Len(s.n, s.r, s.g), s.n*(s.r*(s.r+1)/2+s.g*s.r)+s.g*(s.g+1)/2; got != want || len(f.Data()) != want {
				t.Fatalf("Len = %d, len(Data) = %d, want %d", got, len(f.Data()), want)
			}
			if f.Dim() != d {
				t.Errorf("Order = %d, want %d", f.Dim(), d)
			}
			want := denseOf(f)
			// At, ToTriDense and ToCSR against the layout.
			tri := f.ToTriDense()
			csr := f.ToCSR()
			if csr.NNZ() != len(f.Data()) {
				t.Errorf("CSR has %d nonzeros, want %d", csr.NNZ(), len(f.Data()))
			}
			for i := range d {
				for j := range d {
					w := want.At(i, j)
					if !onPattern(s, i, j) && w != 0 {
						t.Fatalf("dense reference nonzero off the pattern at (%d,%d)", i, j)
					}
					if got := f.At(i, j); got != w {
						t.Errorf("At(%d,%d) = %v, want %v", i, j, got, w)
					}
					if got := tri.At(i, j); got != w {
						t.Errorf("ToTriDense (%d,%d) = %v, want %v", i, j, got, w)
					}
					if got := csr.At(i, j); got != w {
						t.Errorf("ToCSR (%d,%d) = %v, want %v", i, j, got, w)
					}
				}
			}
			raw := csr.RawMatrix()
			for i := range d {
				for k := raw.Indptr[i] + 1; k < raw.Indptr[i+1]; k++ {
					if raw.Ind[k] <= raw.Ind[k-1] {
						t.Fatalf("CSR row %d: columns not ascending", i)
					}
				}
			}
			// Accessors alias the storage at the documented offsets.
			st := Stride(s.r, s.g)
			for i := range s.n {
				if len(f.Local(i)) > 0 && &f.Local(i)[0] != &f.Data()[i*st] {
					t.Errorf("Local(%d) not at offset %d", i, i*st)
				}
				if len(f.Cross(i)) > 0 && &f.Cross(i)[0] != &f.Data()[i*st+s.r*(s.r+1)/2] {
					t.Errorf("Cross(%d) at the wrong offset", i)
				}
				if a, b := f.Span(i, i+1); a != i*st || b != (i+1)*st {
					t.Errorf("Span(%d,%d) = [%d,%d)", i, i+1, a, b)
				}
			}
			if len(f.Global()) != s.g*(s.g+1)/2 {
				t.Errorf("len(Global) = %d", len(f.Global()))
			}
			// Wrap aliases, CopyFrom copies.
			w := Wrap(s.n, s.r, s.g, f.Data())
			c := New(s.n, s.r, s.g)
			c.CopyFrom(w)
			if !mat.Equal(denseOf(c), want) {
				t.Error("CopyFrom of a wrapped factor differs")
			}
			if len(f.Data()) > 0 {
				f.Data()[0] += 1
				if w.Data()[0] != f.Data()[0] || c.Data()[0] == f.Data()[0] {
					t.Error("Wrap does not alias or CopyFrom does")
				}
			}
			// SetIdentity.
			c.SetIdentity(2.5)
			id := denseOf(c)
			for i := range d {
				for j := range d {
					w := 0.0
					if i == j {
						w = 2.5
					}
					if id.At(i, j) != w {
						t.Fatalf("SetIdentity: (%d,%d) = %v", i, j, id.At(i, j))
					}
				}
			}
		})
	}
}

func TestLogDet(t *testing.T) {
	for _, s := range allDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(2, uint64(s.n*100+s.r*10+s.g)))
			f := randFactor(rng, s)
			// Flip the sign of some diagonal entries: log|det| is still defined.
			if s.n > 0 {
				f.Local(0)[0] = -f.Local(0)[0]
			}
			var lu mat.LU
			lu.Factorize(denseOf(f))
			want, sign := lu.LogDet()
			if sign == 0 {
				t.Fatal("singular test factor")
			}
			if got := f.LogDet(); math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
				t.Errorf("LogDet = %v, want %v", got, want)
			}
			if got := f.LogDetRange(0, s.n) + f.LogDetGlobal(); math.Abs(got-want) > 1e-10*math.Max(1, math.Abs(want)) {
				t.Errorf("LogDetRange + LogDetGlobal = %v, want %v", got, want)
			}
		})
	}
}

func TestAddScaled(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	s := dims{7, 2, 3}
	f := randFactor(rng, s)
	n := randVec(rng, len(f.Data()))
	want := mat.NewDense(s.n*s.r+s.g, s.n*s.r+s.g, nil)
	nf := Wrap(s.n, s.r, s.g, n)
	want.Scale(-0.3, denseOf(nf))
	want.Add(want, denseOf(f))
	g := New(s.n, s.r, s.g)
	g.CopyFrom(f)
	g.AddScaled(-0.3, n)
	if !mat.EqualApprox(denseOf(g), want, 1e-14) {
		t.Error("AddScaled differs from T - 0.3 N")
	}
	g.CopyFrom(f)
	g.AddScaledRange(0, 3, -0.3, n)
	g.AddScaledRange(3, 7, -0.3, n)
	g.AddScaledGlobal(-0.3, n)
	if !mat.EqualApprox(denseOf(g), want, 1e-14) {
		t.Error("AddScaledRange and AddScaledGlobal differ from T - 0.3 N")
	}
}

func TestPanics(t *testing.T) {
	f := New(3, 2, 2)
	d := f.Dim()
	ok := make([]float64, d)
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"Wrap short", func() { Wrap(3, 2, 2, make([]float64, 5)) }},
		{"negative dims", func() { Len(-1, 2, 2) }},
		{"range beyond n", func() { f.SolveTransRange(0, 4, ok, ok) }},
		{"inverted range", func() { f.SolveRange(2, 1, ok, ok, make([]float64, 2)) }},
		{"short vector", func() { f.SolveTransGlobal(ok[:d-1], ok) }},
		{"short sum", func() { f.SolveRange(0, 3, ok, ok, make([]float64, 1)) }},
		{"dst aliases factor", func() { f.NatGradRange(0, 3, f.Data(), ok, ok, make([]float64, 2)) }},
		{"CopyFrom shape", func() { f.CopyFrom(New(3, 1, 2)) }},
		{"Local out of range", func() { f.Local(3) }},
		{"At out of range", func() { f.At(d, 0) }},
		{"Cov short", func() { f.CovGlobal(make([]float64, 3)) }},
		{"SetRows length", func() { f.SetRows([]int{0, 0}, nil) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.fn()
		}()
	}
}

// TestDiagIndices: DiagIndices gives the positions in Data of T's
// diagonal, row by row.
func TestDiagIndices(t *testing.T) {
	for _, s := range allDims() {
		rng := rand.New(rand.NewPCG(52, seedOf(s)))
		f := randFactor(rng, s)
		idx := f.DiagIndices()
		if len(idx) != f.Dim() {
			t.Fatalf("%v: %d indices for order %d", s, len(idx), f.Dim())
		}
		for d, j := range idx {
			if f.Data()[j] != f.At(d, d) {
				t.Errorf("%v: Data()[%d] = %v, T[%d,%d] = %v", s, j, f.Data()[j], d, d, f.At(d, d))
			}
		}
	}
}

// TestFactorIsMatrix: as a mat.Matrix a Factor reads as its dense copy,
// transposed too.
func TestFactorIsMatrix(t *testing.T) {
	for _, s := range allDims() {
		f := randFactor(rand.New(rand.NewPCG(55, seedOf(s))), s)
		var _ mat.Matrix = f
		if r, c := f.Dims(); r != f.Dim() || c != f.Dim() {
			t.Errorf("%v: Dims %d×%d, want %d×%d", s, r, c, f.Dim(), f.Dim())
		}
		want := denseOf(f)
		if !mat.Equal(f, want) || !mat.Equal(f.T(), want.T()) {
			t.Errorf("%v: the Factor as a mat.Matrix differs from its dense copy", s)
		}
	}
}
