// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/parallel"
)

// trajectory runs iterations of Algorithm 1S on the Gaussian target
// N(c, I) through a Runner and returns every value it computed.
func trajectory(t *testing.T, s size, chunk, workers int, fused bool) []float64 {
	f := New(s.n, s.r, s.g)
	f.SetBlockScales(1, 1/math.Sqrt(float64(s.n+1)))
	var p *parallel.Pool
	if workers > 0 {
		p = parallel.NewPool(context.Background(), workers)
		defer p.Close()
	}
	c := parallel.NewChunking(s.n, chunk)
	run := NewRunner(f, p, c)
	st := parallel.NewStreams(99, c.Len()+1)
	d := f.Dim()
	target := randVec(newRand(5), d)
	mu, z, theta, g := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	dMu, dC, eu := make([]float64, d), make([]float64, Len(s.n, s.r, s.g)), make([]float64, Len(s.n, s.r, s.g))
	var out []float64
	for iter := range uint64(6) {
		check(t, run.Sample(st, iter, z, theta, mu))
		for i := range g {
			g[i] = target[i] - theta[i]
		}
		check(t, run.AddSolveTrans(g, z))
		ld, err := run.LogDet()
		check(t, err)
		check(t, run.EuclidGrad(eu, z, g))
		out = append(out, ld)
		out = append(out, eu...)
		if fused {
			check(t, run.Step(0.1, mu, z, g))
		} else {
			check(t, run.NatGrad(dMu, dC, z, g))
			check(t, run.InvFisher(dMu, eu, g, eu))
			out = append(out, eu...)
			check(t, run.Update(0.1, mu, dMu, dC))
		}
		out = append(out, mu...)
		out = append(out, f.Data()...)
	}
	cv := make([]float64, len(f.Data()))
	check(t, run.Cov(cv))
	check(t, run.Chol(cv))
	return append(out, f.Data()...)
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	for _, tc := range []struct {
		s     size
		chunk int
	}{
		{size{17, 2, 4}, 3},
		{size{1000, 2, 9}, 37},
		{size{250, 3, 1}, 0},
	} {
		for _, fused := range []bool{false, true} {
			want := trajectory(t, tc.s, tc.chunk, 1, fused)
			for _, w := range []int{0, 2, 3, 8} {
				if got := trajectory(t, tc.s, tc.chunk, w, fused); !sameBits(got, want) {
					t.Errorf("%v fused=%v: workers=%d not bit-identical to one worker", tc.s, fused, w)
				}
			}
			// A different chunk size changes the random streams, so the
			// comparison above is not vacuous.
			if got := trajectory(t, tc.s, tc.chunk+1, 2, fused); sameBits(got, want) {
				t.Errorf("%v: chunk size did not change the draws", tc.s)
			}
		}
	}
}

func TestRunnerAllocatesNothing(t *testing.T) {
	s := size{200, 2, 5}
	fx := newFixture(t, s, 1, 2)
	run := fx.run
	nt := Len(s.n, s.r, s.g)
	st := parallel.NewStreams(1, run.Chunking().Len()+1)
	v1, v2, v3 := make([]float64, fx.d), make([]float64, fx.d), make([]float64, fx.d)
	c1, c2 := make([]float64, nt), make([]float64, nt)
	spd := randSPDComp(s, 3)
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"MulVec", func() { must(run.MulVec(v1, fx.x)) }},
		{"MulTransVec", func() { must(run.MulTransVec(v1, fx.x)) }},
		{"Solve", func() { must(run.Solve(v1, fx.x)) }},
		{"SolveTrans", func() { must(run.SolveTrans(v1, fx.x)) }},
		{"AddSolveTrans", func() { must(run.AddSolveTrans(v1, fx.x)) }},
		{"CovMulVec", func() { must(run.CovMulVec(v1, fx.x)) }},
		{"Sample", func() { must(run.Sample(st, 3, v1, v2, fx.mu)) }},
		{"Draw", func() { must(run.Draw(v2, fx.mu, fx.z)) }},
		{"LogDet", func() { _, err := run.LogDet(); must(err) }},
		{"NatGrad", func() { must(run.NatGrad(v1, c1, fx.z, fx.g)) }},
		{"EuclidGrad", func() { must(run.EuclidGrad(c1, fx.z, fx.g)) }},
		{"InvFisher", func() { must(run.InvFisher(v1, c2, fx.x, c1)) }},
		{"Update", func() { must(run.Update(0, v3, v1, c1)) }},
		{"Step", func() { copy(v2, fx.g); must(run.Step(0, v3, fx.z, v2)) }},
		{"Cov", func() { must(run.Cov(c1)) }},
		{"Cholesky", func() { copy(c2, spd); must(run.Chol(c2)) }}, // last but one: it overwrites the factor
		{"RangeKernels", func() {
			f := fx.f
			f.MulVecRange(0, s.n, v1, fx.x)
			f.SolveTransRange(0, s.n, v1, v1)
			f.AddSolveTransRange(0, s.n, v1, fx.x)
			f.AddSolveTransGlobal(v1, fx.x)
			f.NatGradRange(0, s.n, v2, c1, fx.z, fx.g)
			f.InvFisherRange(0, s.n, v2, c2, v2, c1)
			f.UpdateRange(0, s.n, 0, v3, v2, c2)
			_ = f.LogDetRange(0, s.n)
		}},
	} {
		if a := testing.AllocsPerRun(20, tc.fn); a != 0 {
			t.Errorf("%s: %v allocations per call", tc.name, a)
		}
	}
}

func TestRunnerCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	f := New(100, 2, 3)
	f.SetIdentity(1)
	p := parallel.NewPool(ctx, 2)
	defer p.Close()
	run := NewRunner(f, p, parallel.NewChunking(100, 10))
	cancel()
	v := make([]float64, f.Dim())
	if err := run.MulVec(v, v); !errors.Is(err, context.Canceled) {
		t.Errorf("MulVec on a cancelled pool: %v", err)
	}
	if _, err := run.LogDet(); !errors.Is(err, context.Canceled) {
		t.Errorf("LogDet on a cancelled pool: %v", err)
	}
}

// ExampleRunner fits q = N(mu, C C') with block-diagonal C to the Gaussian
// target N(c, I) by Algorithm 1S, with the draws of each chunk from its own
// stream.
func ExampleRunner() {
	const n, r, g = 50, 2, 3
	f := New(n, r, g)
	f.SetBlockScales(1, 0.1) // the paper's start for RVB: local diagonals 1
	pool := parallel.NewPool(context.Background(), 2)
	defer pool.Close()
	chunks := parallel.NewChunking(n, 8)
	run := NewRunner(f, pool, chunks)
	streams := parallel.NewStreams(1, chunks.Len()+1) // one more for the global block

	d := f.Dim()
	c := make([]float64, d)
	for i := range c {
		c[i] = 1 + float64(i%3)
	}
	mu, z, theta, grad := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
	for iter := range uint64(2000) {
		rho := 1 / (10 + float64(iter)/10)
		if err := run.Sample(streams, iter, z, theta, mu); err != nil {
			panic(err)
		}
		// grad h = grad log p(theta) + C^-T z.
		for i := range grad {
			grad[i] = c[i] - theta[i]
		}
		if err := run.AddSolveTrans(grad, z); err != nil {
			panic(err)
		}
		if err := run.Step(rho, mu, z, grad); err != nil {
			panic(err)
		}
	}
	var worstMu, worstC float64
	for i := range d {
		worstMu = max(worstMu, math.Abs(mu[i]-c[i]))
		for j := 0; j <= i; j++ {
			want := 0.0
			if i == j {
				want = 1
			}
			worstC = max(worstC, math.Abs(math.Abs(f.At(i, j))-want))
		}
	}
	fmt.Printf("max |mu - c| < 0.1: %v\n", worstMu < 0.1)
	fmt.Printf("max ||C| - I| < 0.1: %v\n", worstC < 0.1)
	// Output:
	// max |mu - c| < 0.1: true
	// max ||C| - I| < 0.1: true
}

func ExampleFactor_CholRange() {
	// Two subjects with 2×2 blocks and a 1×1 global block, given by the
	// lower triangles of a block-diagonal matrix. Subject 1 is indefinite.
	s := []float64{
		4, 2, 5, // subject 0: [[4 2] [2 5]]
		1, 3, 1, // subject 1: [[1 3] [3 1]]
		9, // global
	}
	f := New(2, 2, 1)
	err := f.CholRange(0, 2, s)
	fmt.Println(err)
	var npd *NotPositiveDefiniteError
	if errors.As(err, &npd) {
		fmt.Println("subject", npd.Subject)
	}
	fmt.Println("subject 0 factor:", f.Local(0))
	fmt.Println(f.CholGlobal(s), f.Global())
	// Output:
	// blockdiag: block of subject 1 not positive definite (pivot -8 at row 1)
	// subject 1
	// subject 0 factor: [2 1 2]
	// <nil> [3]
}
