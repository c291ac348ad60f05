package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"

	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

var (
	expN     = flag.Int("expn", 10000, "")
	expBatch = flag.Int("expbatch", 1000, "")
	expStep  = flag.Float64("expstep", 0, "")
	expDelay = flag.Float64("expdelay", 0, "")
	expForg  = flag.Float64("expforget", 0, "")
	expInit  = flag.Int("expinit", 0, "")
	expTol   = flag.Float64("exptol", 0, "")
	expRVB   = flag.Int("exprvb", 0, "")
	expPass  = flag.Int("exppasses", 0, "")
	expWin   = flag.Int("expwin", 0, "")
	expMX    = flag.Float64("expmx", 0, "")
	expLS    = flag.Int("expls", 0, "")
	expLR    = flag.Float64("explr", 0, "")
)

func TestExp(t *testing.T) {
	mm, _ := model(*expN)
	var m vi.Target = mm
	if *expRVB > 0 {
		m, _ = rvb.New(mm, rvb.Method(*expRVB))
	}
	ctx := context.Background()
	full, err := vi.Fit(ctx, m, vi.Settings{Method: vi.BlockDiag, Seed: 1, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	sto, err := vi.Fit(ctx, m, vi.Settings{Method: vi.BlockDiag, Seed: 2, Workers: 2, Init: vi.Init(*expInit), Stochastic: vi.Stochastic{Batch: *expBatch, Step: *expStep, Delay: *expDelay, Forget: *expForg, Tol: *expTol, MaxPasses: *expPass, Window: *expWin}})
	if err != nil {
		t.Fatal(err)
	}
	fm, fs := moments(full)
	sm, ss := moments(sto)
	fmt.Printf("full %d it %.2fs lb %.2f±%.2f; sto %d passes %.2fs lb %.2f±%.2f\n", full.Iterations, full.Elapsed.Seconds(), full.LowerBound, full.LowerBoundSE, sto.Passes, sto.Elapsed.Seconds(), sto.LowerBound, sto.LowerBoundSE)
	for j := range fm {
		fmt.Printf(" %.3f/%.3f", (sm[j]-fm[j])/fs[j], ss[j]/fs[j]-1)
	}
	fmt.Println()
	for k, tp := range sto.Trace {
		if k < 12 || k%10 == 0 {
			fmt.Printf("  pass %d lb %.2f move %.4f at %.2fs\n", k+1, tp.LowerBound, tp.StepNorm, tp.Elapsed.Seconds())
		}
	}
}

func TestTight(t *testing.T) {
	m, _ := model(*expN)
	ctx := context.Background()
	for _, set := range []vi.Settings{
		{Method: vi.BlockDiag, Seed: 1, Workers: 2},
		{Method: vi.BlockDiag, Seed: 1, Workers: 2, RelTol: -1, Refine: 2, Jitter: -1, Tol: 0.05},
		{Method: vi.BlockDiag, Seed: 3, Workers: 2, RelTol: -1, Refine: 2, Jitter: -1, Tol: 0.05, Rule: vi.Snngm{Alpha0: 0.001}},
	} {
		res, err := vi.Fit(ctx, m, set)
		if err != nil {
			t.Fatal(err)
		}
		mu, sd := moments(res)
		fmt.Printf("%d it %.1fs lb %.2f±%.2f mu %.5f sd %.5f\n", res.Iterations, res.Elapsed.Seconds(), res.LowerBound, res.LowerBoundSE, mu, sd)
	}
}

func TestProf(t *testing.T) {
	mm, _ := model(*expN)
	var m vi.Target = mm
	if *expRVB > 0 {
		m, _ = rvb.New(mm, rvb.Method(*expRVB))
	}
	sto, err := vi.Fit(context.Background(), m, vi.Settings{Method: vi.BlockDiag, Seed: 2, Workers: 2, Init: vi.InitPaper, FinalDraws: 2, ImportanceDraws: 1, Stochastic: vi.Stochastic{Batch: *expBatch, MaxPasses: *expPass}})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(sto.Elapsed, sto.Passes)
}

func TestSmall(t *testing.T) {
	fr, truth, _ := datasets.Simulate(datasets.SimSpec{Family: "poisson", Subjects: *expN, Obs: 6, Beta: []float64{0.5, -0.5, 0.3}, RECov: [][]float64{{0.5, 0.1}, {0.1, 0.3}}, Seed: 3})
	f, _ := formula.Parse(truth.Formula)
	d, _ := formula.Build(f, fr, formula.Options{Family: glmm.Poisson})
	mm := d.Model()
	m, _ := rvb.New(mm, rvb.RVB1)
	ctx := context.Background()
	full, _ := vi.Fit(ctx, m, vi.Settings{Method: vi.BlockDiag, Seed: 1})
	sto, err := vi.Fit(ctx, m, vi.Settings{Method: vi.BlockDiag, Seed: 2, Stochastic: vi.Stochastic{Batch: *expBatch, MaxPasses: *expPass}})
	if err != nil {
		t.Fatal(err)
	}
	fm, fs := moments(full)
	sm, ss := moments(sto)
	fmt.Printf("full %d it lb %.2f; sto %d passes %v lb %.2f\n", full.Iterations, full.LowerBound, sto.Passes, sto.Status, sto.LowerBound)
	for j := range fm {
		fmt.Printf(" %.3f/%.3f", (sm[j]-fm[j])/fs[j], ss[j]/fs[j]-1)
	}
	fmt.Println()
	for _, tp := range sto.Trace {
		if !math.IsNaN(tp.StepNorm) {
			fmt.Printf(" %.3f", tp.StepNorm)
		}
	}
	fmt.Println()
}
