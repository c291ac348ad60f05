// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/sparsevi/sparsevi/parallel"
)

// runAll runs every Runner operation and the fused step on a fixed problem
// with the given number of workers and returns all results concatenated.
func runAll(t *testing.T, workers int) []float64 {
	s := dims{37, 2, 3}
	rng := rand.New(rand.NewPCG(70, 0))
	f := randFactor(rng, s)
	d, m := f.Dim(), len(f.Data())
	run := newRunner(t, workers, s.n, 4)
	var out []float64
	add := func(err error, v ...[]float64) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range v {
			out = append(out, x...)
		}
	}
	b, mu, z := randVec(rng, d), randVec(rng, d), randVec(rng, d)
	x, y, theta, u := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	add(run.Solve(f, x, b), x)
	add(run.Mul(f, y, b), y)
	add(run.PrecSolve(f, x, b), x)
	add(run.SolveTrans(f, y, b), y)
	add(run.Draw(f, theta, u, mu, z), theta, u)
	n1, n2, n3 := make([]float64, m), make([]float64, m), make([]float64, m)
	add(run.NatGrad(f, n1, z, x), n1)
	add(run.EuclidGrad(f, n2, theta, mu, u, x), n2)
	add(run.InvFisher(f, n3, n2), n3)
	global, local, cross := make([]float64, s.g*s.g), make([]float64, s.n*s.r*s.r), make([]float64, s.n*s.r*s.g)
	add(run.Cov(f, global, local, cross), global, local, cross)
	ld, err := run.LogDet(f)
	add(err, []float64{ld})
	spd, _ := randSPD(rng, s)
	c := New(s.n, s.r, s.g)
	add(run.Chol(c, spd), c.Data())

	add(run.NatGradStep(c, 0.1, z, x), c.Data())
	for _, store := range []bool{false, true} {
		st := newStepper(f, run.Pool(), 4, 3, store)
		for range 3 {
			add(st.step())
		}
		add(st.flush(), f.Data(), st.mu)
	}
	return out
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	want := runAll(t, 1)
	for _, w := range []int{2, 3, 8} {
		got := runAll(t, w)
		if len(got) != len(want) {
			t.Fatalf("workers=%d: %d results, want %d", w, len(got), len(want))
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("workers=%d: result %d is %v, want bit-identical %v", w, i, got[i], want[i])
			}
		}
	}
}

// TestChunkPartials: the Runner's reductions add the chunks' partial sums in
// chunk order, exactly as a sequential loop over the same chunks does.
func TestChunkPartials(t *testing.T) {
	s := dims{50, 3, 4}
	rng := rand.New(rand.NewPCG(71, 0))
	f := randFactor(rng, s)
	d := f.Dim()
	g := randVec(rng, d)
	c := parallel.NewChunking(s.n, 7)
	want := make([]float64, d)
	sum := make([]float64, s.g)
	for k := range c.Len() {
		lo, hi := c.Bounds(k)
		part := make([]float64, s.g)
		f.SolveRange(lo, hi, want, g, part)
		for j, p := range part {
			sum[j] += p
		}
	}
	f.SolveGlobal(want, g, sum)
	for _, w := range []int{1, 2, 3, 8} {
		run := newRunner(t, w, s.n, 7)
		got := make([]float64, d)
		if err := run.Solve(f, got, g); err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if math.Float64bits(got[i]) != math.Float64bits(want[i]) {
				t.Fatalf("workers=%d: v[%d] = %v, want %v", w, i, got[i], want[i])
			}
		}
	}
}

func TestCancelled(t *testing.T) {
	s := dims{20, 2, 2}
	f := randFactor(rand.New(rand.NewPCG(72, 0)), s)
	ctx, cancel := context.WithCancel(context.Background())
	p := parallel.NewPool(ctx, 2)
	defer p.Close()
	run := NewRunner(p, parallel.NewChunking(s.n, 3))
	cancel()
	v := make([]float64, f.Dim())
	if err := run.Solve(f, v, v); err != context.Canceled {
		t.Errorf("Solve on a cancelled pool: %v, want context.Canceled", err)
	}
}

func TestZeroAllocs(t *testing.T) {
	s := dims{64, 2, 5}
	rng := rand.New(rand.NewPCG(73, 0))
	f := randFactor(rng, s)
	d, m := f.Dim(), len(f.Data())
	for _, w := range []int{1, 2} {
		run := newRunner(t, w, s.n, 8)
		b, mu, z := randVec(rng, d), randVec(rng, d), randVec(rng, d)
		x, theta, u := make([]float64, d), make([]float64, d), make([]float64, d)
		n1, n2 := make([]float64, m), make([]float64, m)
		global, local, cross := make([]float64, s.g*s.g), make([]float64, s.n*s.r*s.r), make([]float64, s.n*s.r*s.g)
		sum := make([]float64, s.g)
		spd, _ := randSPD(rng, s)
		c := New(s.n, s.r, s.g)
		st := newStepper(randFactor(rng, s), run.Pool(), 8, 1, false)
		stStored := newStepper(randFactor(rng, s), run.Pool(), 8, 1, true)
		for _, tc := range []struct {
			name string
			fn   func() error
		}{
			{"SolveRange", func() error { f.SolveRange(0, s.n, x, b, sum); return nil }},
			{"DrawRange", func() error { f.DrawRange(0, s.n, theta, u, mu, z); return nil }},
			{"NatGradRange", func() error { f.NatGradRange(0, s.n, n1, z, x, sum); return nil }},
			{"InvFisherRange", func() error { f.InvFisherRange(0, s.n, n2, n1); return nil }},
			{"CovRange", func() error { f.CovRange(0, s.n, local, cross); return nil }},
			{"NatGradStepRange", func() error { f.NatGradStepRange(0, s.n, 1e-9, z, x, sum); return nil }},
			{"GlobalMul", func() error { f.GlobalMul(sum, z[:s.g]); return nil }},
			{"Solve", func() error { return run.Solve(f, x, b) }},
			{"Mul", func() error { return run.Mul(f, x, b) }},
			{"PrecSolve", func() error { return run.PrecSolve(f, x, b) }},
			{"Draw", func() error { return run.Draw(f, theta, u, mu, z) }},
			{"NatGrad", func() error { return run.NatGrad(f, n1, z, x) }},
			{"EuclidGrad", func() error { return run.EuclidGrad(f, n2, theta, mu, u, x) }},
			{"InvFisher", func() error { return run.InvFisher(f, n2, n1) }},
			{"Cov", func() error { return run.Cov(f, global, local, cross) }},
			{"Chol", func() error { return run.Chol(c, spd) }},
			{"LogDet", func() error { _, err := run.LogDet(f); return err }},
			{"NatGradStep", func() error { return run.NatGradStep(c, 1e-3, z, x) }},
			{"step", st.step},
			{"step storing N", stStored.step},
			{"flush", func() error { _ = st.step(); return st.flush() }},
		} {
			if err := tc.fn(); err != nil { // sizes the workspaces
				t.Fatal(err)
			}
			if a := testing.AllocsPerRun(20, func() { _ = tc.fn() }); a != 0 {
				t.Errorf("workers=%d: %s allocates %v times per call", w, tc.name, a)
			}
		}
	}
}
