// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// TestStartExpansion checks the expansion point of NewAtStart against a
// dense reference, X beta^ + Z_i b^_i + offset from the model's start with
// gonum, and that NewAtStart's Target is the Target of that Expansion, its
// Start (which reuses the start) included, bit for bit.
func TestStartExpansion(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	for _, c := range []struct {
		fam  glmm.Family
		r    int
		meth Method
	}{
		{glmm.Bernoulli, 1, RVB1}, {glmm.Bernoulli, 2, RVB2}, {glmm.Poisson, 2, RVB1}, {glmm.Binomial, 1, RVB1},
	} {
		m := randomModel(t, rng, c.fam, 30, 3, c.r, false)
		n, r, g := m.Dims()
		p := m.P()
		theta := make([]float64, n*r+g)
		prec := make([]float64, n*(r*(r+1)/2+g*r)+g*(g+1)/2)
		if err := m.Start(testPool(t), theta, prec); err != nil {
			t.Fatal(err)
		}
		eta, err := StartExpansion(testPool(t), m)
		if err != nil {
			t.Fatal(err)
		}
		var xb mat.VecDense
		xb.MulVec(m.FixedDesign(), mat.NewVecDense(p, theta[n*r:n*r+p]))
		z := m.RandomDesign()
		perm := m.Perm()
		for i := range n {
			lo, hi := m.SubjectRows(i)
			off := m.Offsets(i)
			for s := lo; s < hi; s++ {
				want := xb.AtVec(s) + off[s-lo]
				for a := range r {
					want += z.At(s, a) * theta[i*r+a]
				}
				if got := eta[perm[s]]; math.Abs(got-want) > 1e-12*(1+math.Abs(want)) {
					t.Fatalf("%v r=%d: eta of stored row %d is %v, want %v", c.fam, r, s, got, want)
				}
			}
		}

		at, err := NewAtStart(testPool(t), m, c.meth)
		if err != nil {
			t.Fatal(err)
		}
		ref, err := New(m, c.meth, Expansion(eta))
		if err != nil {
			t.Fatal(err)
		}
		th1, th2 := make([]float64, len(theta)), make([]float64, len(theta))
		pr1, pr2 := make([]float64, len(prec)), make([]float64, len(prec))
		if err := at.Start(testPool(t), th1, pr1); err != nil {
			t.Fatal(err)
		}
		if err := ref.Start(testPool(t), th2, pr2); err != nil {
			t.Fatal(err)
		}
		for k := range th1 {
			if th1[k] != th2[k] {
				t.Fatalf("%v r=%d: Start's theta[%d] %v, want %v", c.fam, r, k, th1[k], th2[k])
			}
		}
		for k := range pr1 {
			if pr1[k] != pr2[k] {
				t.Fatalf("%v r=%d: Start's precision[%d] %v, want %v", c.fam, r, k, pr1[k], pr2[k])
			}
		}
		// Once used, the start is computed again, to the same values.
		if err := at.Start(testPool(t), th1, pr1); err != nil || th1[0] != th2[0] || pr1[len(pr1)-1] != pr2[len(pr2)-1] {
			t.Errorf("%v r=%d: a second Start differs (%v)", c.fam, r, err)
		}
		grad1, grad2 := make([]float64, len(theta)), make([]float64, len(theta))
		l1 := logJoint(t, at, at.NewWorkspace(), th2, grad1)
		l2 := logJoint(t, ref, ref.NewWorkspace(), th2, grad2)
		if l1 != l2 {
			t.Errorf("%v r=%d: log joint %v, want %v", c.fam, r, l1, l2)
		}
		for k := range grad1 {
			if grad1[k] != grad2[k] {
				t.Fatalf("%v r=%d: gradient[%d] %v, want %v", c.fam, r, k, grad1[k], grad2[k])
			}
		}
	}
}

// TestAtStartReachesRVB2: on toenail, whose Bernoulli responses make
// RVB1's Jeffreys expansion (±2) poor, RVB1 expanded at the start reaches
// RVB2's lower bound (within 0.5 nat) and beats the Jeffreys expansion by
// more than 1 nat (measured: -656.14, RVB2 -656.11, Jeffreys -658.55 with
// the default prior of glmmfit; here the paper's prior).
func TestAtStartReachesRVB2(t *testing.T) {
	if testing.Short() {
		t.Skip("three toenail fits")
	}
	m := paperModel(t, "toenail")
	set := vi.Settings{Method: vi.BlockDiag, Seed: 1, Workers: 2}
	fit := func(tg *Target) float64 {
		res, err := vi.Fit(context.Background(), tg, set)
		if err != nil {
			t.Fatal(err)
		}
		return res.LowerBound
	}
	jeffreys, err := New(m, RVB1)
	if err != nil {
		t.Fatal(err)
	}
	at, err := NewAtStart(testPool(t), m, RVB1)
	if err != nil {
		t.Fatal(err)
	}
	rvb2, err := New(m, RVB2)
	if err != nil {
		t.Fatal(err)
	}
	lj, la, l2 := fit(jeffreys), fit(at), fit(rvb2)
	t.Logf("toenail: RVB1 Jeffreys %.2f, RVB1 at the start %.2f, RVB2 %.2f", lj, la, l2)
	if la < l2-0.5 || la < lj+1 {
		t.Errorf("RVB1 at the start %.2f, want within 0.5 of RVB2's %.2f and 1 above the Jeffreys expansion's %.2f", la, l2, lj)
	}
}

// TestGivenStart: a Target made from the start that NewAtStart expanded
// at (ExpansionStart, the model's start) is NewAtStart's, bit for bit: the
// log joint and its gradient at a point off the start, and its Start,
// which computes the start again. Also for a nested model, and the errors
// of a start of the wrong length or with a non-finite value.
func TestGivenStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(6, 7))
	type pair struct {
		name        string
		at, given   *Target
		theta, prec int // lengths
	}
	var pairs []pair
	for _, c := range []struct {
		fam  glmm.Family
		r    int
		meth Method
	}{
		{glmm.Bernoulli, 1, RVB1}, {glmm.Bernoulli, 2, RVB2}, {glmm.Poisson, 2, RVB1},
	} {
		m := randomModel(t, rng, c.fam, 30, 3, c.r, false)
		n, r, g := m.Dims()
		theta := make([]float64, n*r+g)
		prec := make([]float64, n*(r*(r+1)/2+g*r)+g*(g+1)/2)
		if err := m.Start(testPool(t), theta, prec); err != nil {
			t.Fatal(err)
		}
		at, err := NewAtStart(testPool(t), m, c.meth)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(at.ExpansionStart(), theta) {
			t.Fatalf("%v r=%d: ExpansionStart is not the model's start", c.fam, c.r)
		}
		given, err := NewAtGivenStart(testPool(t), m, c.meth, slices.Clone(at.ExpansionStart()))
		if err != nil {
			t.Fatal(err)
		}
		pairs = append(pairs, pair{fmt.Sprintf("%v r=%d %v", c.fam, c.r, c.meth), at, given, len(theta), len(prec)})

		for _, bad := range []struct {
			theta []float64
			want  string
		}{
			{theta[1:], "a start of"},
			{append(slices.Clone(theta[:len(theta)-1]), math.NaN()), "is NaN"},
		} {
			if _, err := NewAtGivenStart(testPool(t), m, c.meth, bad.theta); err == nil || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("%v: bad start: error %v, want one containing %q", c.fam, err, bad.want)
			}
		}
	}
	nm := nestedModel(t, glmm.Bernoulli, 40, 3, 4, []float64{-0.5, 1}, 1, 0.6, 8)
	at, err := NewNestedAtStart(testPool(t), nm, RVB1)
	if err != nil {
		t.Fatal(err)
	}
	given, err := NewNestedAtGivenStart(testPool(t), nm, RVB1, slices.Clone(at.ExpansionStart()))
	if err != nil {
		t.Fatal(err)
	}
	n, _, g := at.Dims()
	pairs = append(pairs, pair{"nested", at, given, at.at(n) + g, at.precLen()})

	for _, p := range pairs {
		if !p.given.ExpandedAtStart() || !slices.Equal(p.given.ExpansionStart(), p.at.ExpansionStart()) {
			t.Errorf("%s: the given Target does not report its start", p.name)
		}
		// Start: the first from NewAtStart's kept start, the second
		// computed again.
		th1, th2 := make([]float64, p.theta), make([]float64, p.theta)
		pr1, pr2 := make([]float64, p.prec), make([]float64, p.prec)
		if err := p.at.Start(testPool(t), th1, pr1); err != nil {
			t.Fatal(err)
		}
		if err := p.given.Start(testPool(t), th2, pr2); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(th1, th2) || !slices.Equal(pr1, pr2) {
			t.Fatalf("%s: the given Target's Start differs from NewAtStart's", p.name)
		}
		x := slices.Clone(th1)
		for k := range x {
			x[k] += 0.3 * rng.NormFloat64()
		}
		grad1, grad2 := make([]float64, p.theta), make([]float64, p.theta)
		l1 := logJoint(t, p.at, p.at.NewWorkspace(), x, grad1)
		l2 := logJoint(t, p.given, p.given.NewWorkspace(), x, grad2)
		if l1 != l2 || !slices.Equal(grad1, grad2) {
			t.Errorf("%s: log joint %v and its gradient differ from NewAtStart's %v", p.name, l2, l1)
		}
	}
}
