package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

func moments(m *glmm.Model, res *vi.Result) ([]float64, []float64) {
	nn, r, g := m.Dims()
	mu := res.Mu[nn*r:]
	cg := res.Factor[nn*r*(r+1)/2:]
	sd := make([]float64, g)
	for i := range g {
		var ss float64
		for j := 0; j <= i; j++ {
			x := cg[i*(i+1)/2+j]
			ss += x * x
		}
		sd[i] = math.Sqrt(ss)
	}
	return mu, sd
}

func main() {
	n := flag.Int("n", 10000, "")
	batch := flag.Int("batch", 1000, "")
	step := flag.Float64("step", 0, "")
	forget := flag.Float64("forget", 0, "")
	delay := flag.Float64("delay", 0, "")
	fb := flag.Bool("fb", true, "")
	passes := flag.Int("passes", 0, "")
	tight := flag.Bool("tight", false, "")
	flag.Parse()
	t0 := time.Now()
	fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: "bernoulli", Subjects: *n, Obs: 7, Beta: []float64{-1, 0.5, 0.5, -0.5, 1}, RECov: [][]float64{{1}}, Seed: 7})
	if err != nil {
		panic(err)
	}
	f, _ := formula.Parse(truth.Formula)
	d, err := formula.Build(f, fr, formula.Options{Family: glmm.Bernoulli})
	if err != nil {
		panic(err)
	}
	m := d.Model()
	fmt.Println("setup", time.Since(t0))
	var rmu, rsd []float64
	if *fb {
		res, err := vi.Fit(context.Background(), m, vi.Settings{Method: vi.BlockDiag, Seed: 1, Workers: 2})
		if *tight {
			res, err = vi.Fit(context.Background(), m, vi.Settings{Method: vi.BlockDiag, Seed: 1, Workers: 2, Refine: 2, Tol: 0.001, RelTol: -1, Rule: vi.Snngm{Alpha0: 0.0001}, MaxIter: 5000})
		}
		if err != nil {
			panic(err)
		}
		rmu, rsd = moments(m, res)
		fmt.Printf("full: %d iters %v, elapsed %v, first window %v, lb %.2f\n  mu %.5f\n  sd %.5f\n", res.Iterations, res.Status, res.Elapsed, res.Trace[0].Elapsed, res.LowerBound, rmu, rsd)
	}
	set := vi.Settings{Method: vi.BlockDiag, Seed: 2, Workers: 2, Stochastic: vi.Stochastic{Batch: *batch, Step: *step, Forget: *forget, Delay: *delay, MaxPasses: *passes}}
	set.Progress = func(p vi.Progress) {}
	res, err := vi.Fit(context.Background(), m, set)
	if err != nil {
		panic(err)
	}
	mu, sd := moments(m, res)
	fmt.Printf("svi: %d iters %d passes %v, elapsed %v, lb %.2f\n  mu %.5f\n  sd %.5f\n", res.Iterations, res.Passes, res.Status, res.Elapsed, res.LowerBound, mu, sd)
	for _, tp := range res.Trace {
		fmt.Printf("   iter %d lb %.2f move %.4f at %v\n", tp.Iter, tp.LowerBound, tp.StepNorm, tp.Elapsed)
	}
	if rmu != nil {
		for i := range mu {
			fmt.Printf(" %.3f/%.3f", (mu[i]-rmu[i])/rsd[i], sd[i]/rsd[i]-1)
		}
		fmt.Println(" (mean diff in sd / sd rel diff)")
	}
}
