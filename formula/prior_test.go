// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
)

// TestPriorAutoDesign: with PriorAuto the design's columns are the
// centred and scaled predictors (dummies and the intercept as they are),
// and X* beta* equals X (A beta*) for the raw X at every row, for the
// training data and for new data; Apply and Cov agree with A as a dense
// matrix.
func TestPriorAutoDesign(t *testing.T) {
	fr := smallFrame()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, src := range []string{
		"y ~ x1 + x + f + (1 | id)",
		"y ~ x1 * f + k + (1 + x | id)",
		"y ~ 0 + x1 + x + (1 | id)",
		"y ~ x1 + b + (1 | id)",
	} {
		f, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := Build(f, fr, Options{Family: glmm.Poisson})
		if err != nil {
			t.Fatal(err)
		}
		auto, err := Build(f, fr, Options{Family: glmm.Poisson, Prior: PriorAuto})
		if err != nil {
			t.Fatal(err)
		}
		if raw.FixedMap() != nil {
			t.Errorf("%s: PriorPaper design has a FixedMap", src)
		}
		fm := auto.FixedMap()
		if fm == nil {
			t.Fatalf("%s: PriorAuto design has no FixedMap", src)
		}
		xs, xr := auto.X(), raw.X()
		n, p := xs.Dims()
		// The transformed numeric columns have mean 0 (with an intercept)
		// and sd 1; the others are the raw ones.
		for j := range p {
			var sum, ss float64
			for i := range n {
				sum += xs.At(i, j)
			}
			mean := sum / float64(n)
			for i := range n {
				ss += (xs.At(i, j) - mean) * (xs.At(i, j) - mean)
			}
			sd := math.Sqrt(ss / float64(n))
			if fm.Scale[j] != 0 {
				if fm.Intercept >= 0 && math.Abs(mean) > 1e-12 || math.Abs(sd-1) > 1e-12 {
					t.Errorf("%s: column %d: mean %v, sd %v after standardizing", src, j, mean, sd)
				}
			} else {
				for i := range n {
					if xs.At(i, j) != xr.At(i, j) {
						t.Fatalf("%s: column %d, row %d changed: %v, raw %v", src, j, i, xs.At(i, j), xr.At(i, j))
					}
				}
			}
		}
		betaStar := make([]float64, p)
		for j := range betaStar {
			betaStar[j] = rng.NormFloat64()
		}
		beta := make([]float64, p)
		fm.Apply(betaStar, beta)
		var want mat.VecDense
		want.MulVec(fm.Matrix(), mat.NewVecDense(p, betaStar))
		for j := range p {
			if math.Abs(beta[j]-want.AtVec(j)) > 1e-12*(1+math.Abs(beta[j])) {
				t.Errorf("%s: Apply %v, A beta* %v", src, beta[j], want.AtVec(j))
			}
		}
		etaEqual := func(what string, xs, xr mat.Matrix) {
			var es, er mat.VecDense
			es.MulVec(xs, mat.NewVecDense(p, betaStar))
			er.MulVec(xr, mat.NewVecDense(p, beta))
			for i := range es.Len() {
				if math.Abs(es.AtVec(i)-er.AtVec(i)) > 1e-10*(1+math.Abs(er.AtVec(i))) {
					t.Errorf("%s: %s row %d: X* beta* = %v, X beta = %v", src, what, i, es.AtVec(i), er.AtVec(i))
				}
			}
		}
		etaEqual("training", xs, xr)
		nd := fr.Rows([]int{0, 5, 7, 11})
		ns, _, _, _, err := auto.NewData(nd)
		if err != nil {
			t.Fatal(err)
		}
		nr, _, _, _, err := raw.NewData(nd)
		if err != nil {
			t.Fatal(err)
		}
		etaEqual("new data", ns, nr)

		// Cov against A S A' with gonum.
		var l mat.Dense
		l.Apply(func(i, j int, _ float64) float64 { return rng.NormFloat64() }, mat.NewDense(p, p, nil))
		var s mat.SymDense
		s.SymOuterK(1, &l)
		got := fm.Cov(&s)
		var t1, ref mat.Dense
		t1.Mul(fm.Matrix(), &s)
		ref.Mul(&t1, fm.Matrix().T())
		if !mat.EqualApprox(got, &ref, 1e-10) {
			t.Errorf("%s: Cov\n%v\nwant\n%v", src, mat.Formatted(got), mat.Formatted(&ref))
		}
	}
}

func TestParsePrior(t *testing.T) {
	for _, p := range []Prior{PriorPaper, PriorAuto} {
		q, err := ParsePrior(p.String())
		if err != nil || q != p {
			t.Errorf("ParsePrior(%q) = %v, %v", p.String(), q, err)
		}
	}
	if _, err := ParsePrior("flat"); err == nil {
		t.Error("ParsePrior(\"flat\") accepted")
	}
}

// TestPriorAutoExtremeScale: a predictor multiplied by 1e-300 or 1e300
// gives the same standardised column under PriorAuto (its sd does not
// underflow or overflow when squared), and ScaledCov gives the sds and
// correlations of Cov without overflow.
func TestPriorAutoExtremeScale(t *testing.T) {
	fr := smallFrame()
	f, err := Parse("y ~ x1 + x + (1 | id)")
	if err != nil {
		t.Fatal(err)
	}
	base, err := Build(f, fr, Options{Family: glmm.Poisson, Prior: PriorAuto})
	if err != nil {
		t.Fatal(err)
	}
	x1, _ := fr.Column("x1")
	for _, c := range []float64{1e-300, 1e-200, 1e200, 1e300} {
		v := make([]float64, len(x1.Num))
		for i, x := range x1.Num {
			v[i] = x * c
		}
		cols := []*datasets.Column{datasets.NewNumeric("x1", v)}
		for _, name := range fr.Names() {
			if name != "x1" {
				col, _ := fr.Column(name)
				cols = append(cols, col)
			}
		}
		scaled, err := datasets.NewFrame(cols...)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Build(f, scaled, Options{Family: glmm.Poisson, Prior: PriorAuto})
		if err != nil {
			t.Fatalf("x1 times %g: %v", c, err)
		}
		if !mat.EqualApprox(d.X(), base.X(), 1e-12) {
			t.Errorf("x1 times %g: the standardised design differs", c)
		}
		fm, fb := d.FixedMap(), base.FixedMap()
		if r := fm.Scale[1] / (fb.Scale[1] * c); math.Abs(r-1) > 1e-12 {
			t.Errorf("x1 times %g: scale %g, want %g", c, fm.Scale[1], fb.Scale[1]*c)
		}
		// The sd of beta_x1 on the user's scale is that of the unscaled
		// predictor divided by c; its correlations are unchanged.
		s := mat.NewSymDense(3, []float64{1, 0.3, -0.2, 0.3, 2, 0.5, -0.2, 0.5, 1.5})
		cs, us := fm.ScaledCov(s)
		cb := fb.Cov(s)
		for i := range 3 {
			sd := us[i] * math.Sqrt(cs.At(i, i))
			want := math.Sqrt(cb.At(i, i))
			if i == 1 {
				want /= c
			}
			if math.IsInf(sd, 0) || math.Abs(sd/want-1) > 1e-10 {
				t.Errorf("x1 times %g: sd %d %g, want %g", c, i, sd, want)
			}
			for j := range 3 {
				got := cs.At(i, j) / math.Sqrt(cs.At(i, i)*cs.At(j, j))
				ref := cb.At(i, j) / math.Sqrt(cb.At(i, i)*cb.At(j, j))
				if math.Abs(got-ref) > 1e-10 {
					t.Errorf("x1 times %g: correlation %d,%d %g, want %g", c, i, j, got, ref)
				}
			}
		}
	}
}

// TestCompact: Compact drops the design's copy of the data and nothing the
// model, the maps to the data's scale or NewData need.
func TestCompact(t *testing.T) {
	fr := smallFrame()
	for _, src := range []string{"y ~ x1 + f + (1 + x | id)", "y ~ x1 + offset(k) + (1 | id)"} {
		f, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, fam := range []glmm.Family{glmm.Poisson, glmm.Gaussian} {
			d, err := Build(f, fr, Options{Family: fam, Prior: PriorAuto})
			if err != nil {
				t.Fatal(err)
			}
			m, jac, fm := d.Model(), d.ResponseLogJacobian(), d.FixedMap()
			nd := fr.Rows([]int{1, 4, 9})
			x0, z0, _, _, err := d.NewData(nd)
			if err != nil {
				t.Fatal(err)
			}
			d.Compact()
			if d.X() != nil || d.Z() != nil || d.Group() != nil || d.Config().Y != nil {
				t.Errorf("%s, %v: the design's data remain after Compact", src, fam)
			}
			if d.Model() != m || d.ResponseLogJacobian() != jac || (fam == glmm.Gaussian) != (jac != 0) {
				t.Errorf("%s, %v: the model or the log Jacobian changed (%v, %v)", src, fam, jac, d.ResponseLogJacobian())
			}
			if g := d.FixedMap(); !slices.Equal(g.Scale, fm.Scale) || !slices.Equal(g.Center, fm.Center) {
				t.Errorf("%s, %v: the fixed-effect map changed", src, fam)
			}
			x1, z1, _, _, err := d.NewData(nd)
			if err != nil {
				t.Fatal(err)
			}
			if !mat.Equal(x0, x1) || !mat.Equal(z0, z1) {
				t.Errorf("%s, %v: NewData changed", src, fam)
			}
		}
	}
}
