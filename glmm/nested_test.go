// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
)

// smallNested has 3 levels of a with 1, 3 and 2 levels of b, given out of
// order, and rows not grouped by a.
func smallNested(t *testing.T, fam Family) *Nested {
	t.Helper()
	outer := []int{0, 1, 1, 2, 1, 0, 2, 1, 2, 0}
	inner := []int{5, 0, 2, 3, 4, 5, 1, 2, 3, 5}
	y := []float64{1, 0, 2, 1, 3, 0, 1, 1, 0, 2}
	if fam == Bernoulli {
		for k := range y {
			y[k] = math.Min(y[k], 1)
		}
	}
	x := make([]float64, 2*len(y))
	for k := range y {
		x[2*k], x[2*k+1] = 1, 0.3*float64(k)-1
	}
	mod, err := NewNested(NestedConfig{Family: fam, Y: y, X: mat.NewDense(len(y), 2, x), Outer: outer, NumOuter: 3,
		Inner: inner, NumInner: 6, Offset: []float64{0, 0.1, 0, 0, 0, 0, 0.2, 0, 0, 0}})
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// TestNestedLocal checks the sizes, the log density against a direct sum
// and the gradients against finite differences.
func TestNestedLocal(t *testing.T) {
	for _, fam := range []Family{Poisson, Bernoulli, Gaussian, NegBinomial} {
		mod := smallNested(t, fam)
		if got := mod.BlockSizes(); len(got) != 3 || got[0] != 2 || got[1] != 4 || got[2] != 3 {
			t.Fatalf("sizes %v, want [2 4 3]", got)
		}
		n, _, g := mod.Dims()
		rng := rand.New(rand.NewPCG(1, 2))
		theta := make([]float64, 9+g)
		for j := range theta {
			theta[j] = 0.5 * rng.NormFloat64()
		}
		f := func(th []float64) float64 {
			lp, err := mod.Local(nil, 0, n, th[9:], th[:9], nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			return lp
		}
		// Direct: each data row with its own a and b levels.
		outer := []int{0, 1, 1, 2, 1, 0, 2, 1, 2, 0}
		inner := []int{5, 0, 2, 3, 4, 5, 1, 2, 3, 5}
		pos := map[int]int{5: 1, 0: 3, 2: 4, 4: 5, 1: 7, 3: 8} // b level -> theta index
		aPos := []int{0, 2, 6}
		th := theta
		beta := th[9:11]
		psi := 0.0
		if fam.HasDispersion() {
			psi = th[13]
		}
		var want float64
		for k := range 10 {
			xk := 0.3*float64(k) - 1
			off := []float64{0, 0.1, 0, 0, 0, 0, 0.2, 0, 0, 0}[k]
			eta := beta[0] + beta[1]*xk + off + th[aPos[outer[k]]] + th[pos[inner[k]]]
			y := mod.y[slices.Index(mod.perm, k)] // the stored row of data row k
			want += fam.LogLik(y, 1, eta, psi) + fam.Constant(y, 1)
		}
		for _, j := range aPos {
			want += th[11] - 0.5*log2Pi - 0.5*math.Exp(2*th[11])*th[j]*th[j]
		}
		for _, j := range pos {
			want += th[12] - 0.5*log2Pi - 0.5*math.Exp(2*th[12])*th[j]*th[j]
		}
		if got := f(theta); math.Abs(got-want) > 1e-10*math.Abs(want) {
			t.Errorf("%v: log density %v, want %v", fam, got, want)
		}
		grad := make([]float64, len(theta))
		if _, err := mod.Local(nil, 0, 2, theta[9:], theta[:6], grad[:6], grad[9:]); err != nil {
			t.Fatal(err)
		}
		if _, err := mod.Local(nil, 2, 3, theta[9:], theta[6:9], grad[6:9], grad[9:]); err != nil {
			t.Fatal(err)
		}
		num := fd.Gradient(nil, f, theta, &fd.Settings{Formula: fd.Central, Step: 1e-6})
		for j := range grad {
			if math.Abs(grad[j]-num[j]) > 1e-5*(1+math.Abs(num[j])) {
				t.Errorf("%v: gradient[%d] = %v, finite differences %v", fam, j, grad[j], num[j])
			}
		}
	}
}

// TestNestedErrors: a b level in two a levels is refused naming the row
// and both levels.
func TestNestedErrors(t *testing.T) {
	_, err := NewNested(NestedConfig{Family: Poisson, Y: []float64{1, 2, 3}, Outer: []int{0, 1, 1}, NumOuter: 2,
		Inner: []int{0, 0, 1}, NumInner: 2, OuterName: "school", InnerName: "school:class",
		OuterLevels: []string{"s1", "s2"}, InnerLevels: []string{"c1", "c2"}})
	var de *DataError
	if !errors.As(err, &de) || !errors.Is(err, ErrNotNested) || de.Row != 2 {
		t.Fatalf("error %v, want a DataError at row 2 wrapping ErrNotNested", err)
	}
	t.Log(err)
	if _, err := NewNested(NestedConfig{Family: Poisson, Y: []float64{-1}, Outer: []int{0}, NumOuter: 1, Inner: []int{0}, NumInner: 1}); !errors.Is(err, ErrResponse) {
		t.Fatalf("negative count: %v", err)
	}
}

// TestNestedStart: the start's precision factorises, and its mean is
// near the subjects' conditional modes (the gradient in the local blocks
// is zero there).
func TestNestedStart(t *testing.T) {
	mod := smallNested(t, Poisson)
	_, _, g := mod.Dims()
	theta := make([]float64, 9+g)
	prec := make([]float64, 2*3/2+2*g+4*5/2+4*g+3*4/2+3*g+g*(g+1)/2)
	if err := mod.Start(nil, theta, prec); err != nil {
		t.Fatal(err)
	}
	grad := make([]float64, len(theta))
	if _, err := mod.Local(nil, 0, 3, theta[9:], theta[:9], grad[:9], grad[9:]); err != nil {
		t.Fatal(err)
	}
	for j, v := range grad[:9] {
		if math.Abs(v) > 1e-6 {
			t.Errorf("local gradient %d at the start: %v", j, v)
		}
	}
}
