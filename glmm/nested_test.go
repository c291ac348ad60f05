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
	mod, err := NewNested(smallNestedConfig(fam))
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// smallNestedConfig is smallNested's configuration.
func smallNestedConfig(fam Family) NestedConfig {
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
	return NestedConfig{Family: fam, Y: y, X: mat.NewDense(len(y), 2, x), Outer: outer, NumOuter: 3,
		Inner: inner, NumInner: 6, Offset: []float64{0, 0.1, 0, 0, 0, 0, 0.2, 0, 0, 0}}
}

// TestNestedFingerprint: the fingerprint of a nested model is the same for
// the same data and differs when one value of the data, the family, the
// link, the prior or the nesting differs.
func TestNestedFingerprint(t *testing.T) {
	build := func(edit func(*NestedConfig)) string {
		c := smallNestedConfig(Poisson)
		if edit != nil {
			edit(&c)
		}
		m, err := NewNested(c)
		if err != nil {
			t.Fatal(err)
		}
		return m.Fingerprint()
	}
	base := build(nil)
	if again := build(nil); again != base {
		t.Fatalf("the same model has fingerprints %s and %s", base, again)
	}
	for _, c := range []struct {
		name string
		edit func(*NestedConfig)
	}{
		{"a response", func(c *NestedConfig) { c.Y[5]++ }},
		{"a predictor", func(c *NestedConfig) { c.X.(*mat.Dense).Set(7, 1, 0.25) }},
		{"an offset", func(c *NestedConfig) { c.Offset[3] = 0.1 }},
		{"a weight", func(c *NestedConfig) {
			c.Weights = make([]float64, len(c.Y))
			for k := range c.Weights {
				c.Weights[k] = 1
			}
			c.Weights[9] = 2
		}},
		{"the family", func(c *NestedConfig) { c.Family = NegBinomial }},
		{"the link", func(c *NestedConfig) { c.Family, c.Link = Bernoulli, Probit; c.Y = make([]float64, len(c.Y)) }},
		{"the prior", func(c *NestedConfig) { c.PriorSD = 3 }},
		// Row 0 moves from a level 0's b level 5 to a level 1's b level 2.
		{"a row's level of b", func(c *NestedConfig) { c.Inner[0] = 2; c.Outer[0] = 1 }},
	} {
		if got := build(c.edit); got == base {
			t.Errorf("%s changed: the same fingerprint", c.name)
		}
	}
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

// TestNestedStart: the start's precision factorises, and each subject's
// block of it and its mean are a Gaussian variational fixed point given
// theta_g: with V_i the inverse of the block, the gradient of the expected
// log density in the mean is zero and its negative Hessian is the block.
// For a Poisson model both are in closed form (E exp(eta) = exp(m + v/2)),
// so the check does not share the start's quadrature; for a Gaussian
// model the mean is the conditional mode.
func TestNestedStart(t *testing.T) {
	for _, fam := range []Family{Poisson, Gaussian} {
		mod := smallNested(t, fam)
		_, _, g := mod.Dims()
		theta := make([]float64, 9+g)
		prec := make([]float64, 2*3/2+2*g+4*5/2+4*g+3*4/2+3*g+g*(g+1)/2)
		if err := mod.Start(nil, theta, prec); err != nil {
			t.Fatal(err)
		}
		thetaG := theta[9:]
		pa, pb := math.Exp(2*thetaG[2]), math.Exp(2*thetaG[3])
		so := 0
		for i, r := range mod.BlockSizes() {
			s := mat.NewSymDense(r, nil)
			for a := range r {
				for c := 0; c <= a; c++ {
					s.SetSym(a, c, prec[so+a*(a+1)/2+c])
				}
			}
			so += r*(r+1)/2 + g*r
			var ch mat.Cholesky
			if !ch.Factorize(s) {
				t.Fatalf("%v: subject %d's block of the precision is not positive definite", fam, i)
			}
			var v mat.SymDense
			if err := ch.InverseTo(&v); err != nil {
				t.Fatal(err)
			}
			b := theta[mod.boff[i]:mod.boff[i+1]]
			grad := make([]float64, r)
			hess := mat.NewSymDense(r, nil)
			grad[0] = -pa * b[0]
			hess.SetSym(0, 0, pa)
			for q := 1; q < r; q++ {
				grad[q] = -pb * b[q]
				hess.SetSym(q, q, pb)
			}
			for k := mod.start[i]; k < mod.start[i+1]; k++ {
				q := 1 + int(mod.inner[k])
				m := mod.eta(k, thetaG[:2], b, 0)
				var d1, d2 float64
				switch fam {
				case Poisson:
					mu := math.Exp(m + (v.At(0, 0)+v.At(q, q)+2*v.At(0, q))/2)
					d1, d2 = mod.y[k]-mu, -mu
				case Gaussian:
					s2 := math.Exp(2 * thetaG[4])
					d1, d2 = (mod.y[k]-m)/s2, -1/s2
				}
				d1, d2 = mod.w[k]*d1, mod.w[k]*d2
				grad[0] += d1
				grad[q] += d1
				hess.SetSym(0, 0, hess.At(0, 0)-d2)
				hess.SetSym(q, q, hess.At(q, q)-d2)
				hess.SetSym(0, q, hess.At(0, q)-d2)
			}
			for a := range r {
				if math.Abs(grad[a]) > 1e-4 {
					t.Errorf("%v: subject %d: expected gradient %d at the start: %v", fam, i, a, grad[a])
				}
				for c := 0; c <= a; c++ {
					if d := hess.At(a, c) - s.At(a, c); math.Abs(d) > 1e-4*(1+math.Abs(s.At(a, c))) {
						t.Errorf("%v: subject %d: expected negative Hessian (%d,%d) %v, the start's precision %v", fam, i, a, c, hess.At(a, c), s.At(a, c))
					}
				}
			}
		}
	}
}
