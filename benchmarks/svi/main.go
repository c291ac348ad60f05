// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command svi compares stochastic updates over subjects
// (vi.Settings.Stochastic) with the full-batch fit of the block-diagonal
// family (issue 16): the wall time of each to its end, and whether the
// stochastic fit's global posterior is the full batch's (means within 0.1
// posterior sd, sds within 10%).
//
// Usage:
//
//	go run ./benchmarks/svi [-n 100000,1000000] [-batch 10000] [-workers 2] [-targets rvb1,rvb2] [-expansion start] [-sample -1] [-finaldraws 0] [-repeat 1] [-start] [-step 0] [-plot dir] [-cpuprofile file] [-out results.md]
//
// The data are the Bernoulli random-intercept model of the scaling
// program, y ~ 1 + t + x1 + x2 + x3 + (1 | id), p = 5, 7 observations per
// subject, beta = (-1, 0.5, 0.5, -0.5, 1), random-intercept sd 1, simulated
// by datasets.Simulate with seed 7. Both fits are vi.BlockDiag from the
// default start (the target's mode) on each target: the glmm model itself
// (block-independent variational Bayes) or its reparametrisations RVB1 and
// RVB2 (package rvb), expanded at the model's start as glmmfit expands
// them by default (-expansion start, rvb.NewAtStart; glmmfit -method auto
// fits RVB1 so), or at the paper's point (-expansion jeffreys, rvb.New).
// Each fit has its target built anew (a target built at the model's start
// hands it to its first fit alone), timed apart: "target built" gives the
// full batch's, then the stochastic fit's. With -sample k (k >= 0) the
// stochastic fit's target is expanded at the start of a sample of k
// subjects instead (rvb.NewAtSampleStart, seed 3; 0 for its default size,
// glmm.Model.Sample's), the full batch's still at the model's full start;
// -sample -1 (the default) builds both alike. "total ratio" is the
// stochastic fit's target build and fit over the full batch's: the time
// a user waits for each. -finaldraws sets the stochastic fit's
// Settings.FinalDraws (0: the default). -repeat runs each comparison that
// many times. The full batch runs with the
// default settings (seed 1), the stochastic fit with Stochastic{Batch:
// batch} (seed 2; -step sets its first step), to its own convergence
// rule. The fits run one after the other in this process, each timed by
// vi.Result.Elapsed (start, iterations and the final bound over all
// subjects; the stochastic fit's cell also gives its start inside vi.Fit,
// with the fill of its control variate where there is one, and the time
// of a pass, from the trace's first two passes, the first taken to cost
// what the second did); "CPU" is the process's CPU time over each fit
// alone (beside the fit time ratio) and over its target build and fit
// (beside the total ratio), which other jobs on the machine
// change less. With -start, a
// third fit, on the stochastic fit's kind of target, stopped after one
// full-batch iteration says how far the stochastic fit's start itself is
// from the full batch. With -plot, the bound of each fit against the
// passes over the data goes to svi_bound_<n>_<target>.png in that
// directory.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
)

func main() {
	ns := flag.String("n", "100000,1000000", "numbers of subjects, comma-separated")
	batch := flag.Int("batch", 10000, "subjects per stochastic iteration")
	workers := flag.Int("workers", 2, "workers of each fit")
	targets := flag.String("targets", "rvb1,rvb2", "targets, comma-separated: glmm (the model itself), rvb1, rvb2 (its reparametrisations, package rvb)")
	expansion := flag.String("expansion", "start", "RVB's expansion point: start (glmmfit's default) or jeffreys")
	plotDir := flag.String("plot", "", "write the plots of the bound against passes to this directory")
	out := flag.String("out", "", "write the table to this markdown file too")
	withStart := flag.Bool("start", false, "compare the start (after one full-batch iteration) with the full batch too")
	step := flag.Float64("step", 0, "the stochastic fit's first step (vi.Stochastic.Step); 0 for its default")
	sample := flag.Int("sample", -1, "expand the stochastic fit's RVB target at the start of a sample of this many subjects (rvb.NewAtSampleStart; 0: its default size); -1: at the model's full start, as the full batch's")
	finalDraws := flag.Int("finaldraws", 0, "the stochastic fit's Settings.FinalDraws; 0 for the default")
	repeat := flag.Int("repeat", 1, "run each comparison this many times")
	cpuProfile := flag.String("cpuprofile", "", "write a CPU profile of the first stochastic fit (its vi.Fit alone) to this file (go tool pprof -top)")
	flag.Parse()
	var rows []string
	var prof *profiler
	if *cpuProfile != "" {
		prof = &profiler{path: *cpuProfile}
		defer prof.close()
	}
	for _, s := range benchio.List(*ns) {
		n, err := strconv.Atoi(s)
		if err != nil {
			log.Fatal(err)
		}
		m, err := model(n)
		if err != nil {
			log.Fatal(err)
		}
		for range *repeat {
			for _, name := range benchio.List(*targets) {
				c := comparison{name: name, expansion: *expansion, plotDir: *plotDir, withStart: *withStart, sample: *sample, finalDraws: *finalDraws, workers: *workers, profile: prof}
				row, err := c.run(m, n, vi.Stochastic{Batch: *batch, Step: *step})
				if err != nil {
					log.Fatal(err)
				}
				fmt.Println(row)
				rows = append(rows, row)
			}
		}
	}
	if *out != "" {
		if err := write(*out, rows); err != nil {
			log.Fatal(err)
		}
	}
}

// model simulates the data set of n subjects and builds its model.
func model(n int) (*glmm.Model, error) {
	fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: "bernoulli", Subjects: n, Obs: 7, Beta: []float64{-1, 0.5, 0.5, -0.5, 1}, RECov: [][]float64{{1}}, Seed: 7})
	if err != nil {
		return nil, err
	}
	f, err := formula.Parse(truth.Formula)
	if err != nil {
		return nil, err
	}
	d, err := formula.Build(f, fr, formula.Options{Family: glmm.Bernoulli})
	if err != nil {
		return nil, err
	}
	return d.Model(), nil
}

// target returns the target of the given name over the model, an RVB one
// expanded at the given point: at the start of a sample of sample
// subjects, if sample >= 0 and expansion is start.
func target(m *glmm.Model, name, expansion string, sample, workers int) (vi.Target, error) {
	meth := rvb.RVB1
	switch name {
	case "glmm":
		return m, nil
	case "rvb1":
	case "rvb2":
		meth = rvb.RVB2
	default:
		return nil, fmt.Errorf("unknown target %q (want glmm, rvb1 or rvb2)", name)
	}
	switch expansion {
	case "start":
		pool := parallel.NewPollingPool(context.Background(), workers)
		defer pool.Close()
		if sample >= 0 {
			return rvb.NewAtSampleStart(pool, m, meth, sample, sampleSeed)
		}
		return rvb.NewAtStart(pool, m, meth)
	case "jeffreys":
		return rvb.New(m, meth)
	}
	return nil, fmt.Errorf("unknown expansion %q (want start or jeffreys)", expansion)
}

// sampleSeed seeds the sample of rvb.NewAtSampleStart.
const sampleSeed = 3

// comparison is one comparison's settings.
type comparison struct {
	name, expansion, plotDir string
	withStart                bool
	sample, finalDraws       int
	workers                  int
	profile                  *profiler // of the stochastic fits, or nil
}

// run fits the target of the given name over the model of n subjects
// both ways and returns a table row.
func (c comparison) run(m *glmm.Model, n int, stoch vi.Stochastic) (string, error) {
	name, expansion, plotDir, withStart, workers := c.name, c.expansion, c.plotDir, c.withStart, c.workers
	batch := stoch.Batch
	// Each fit has a target of its own: a target built at the model's
	// start hands that start to its first fit alone.
	// The CPU time of the fit, which other jobs on the machine change
	// less than its wall time.
	fit := func(set vi.Settings, sample int, prof *profiler) (res *vi.Result, build time.Duration, cpu, cpuFit float64, err error) {
		built := time.Now()
		cpu0 := cpuSeconds()
		t, err := target(m, name, expansion, sample, workers)
		if err != nil {
			return nil, 0, 0, 0, err
		}
		build = time.Since(built)
		if err := prof.start(); err != nil {
			return nil, 0, 0, 0, err
		}
		cpu1 := cpuSeconds()
		res, err = vi.Fit(context.Background(), t, set)
		prof.stop()
		cpu2 := cpuSeconds()
		return res, build, cpu2 - cpu0, cpu2 - cpu1, err
	}
	full, buildFull, cpuFull, cpuFitFull, err := fit(vi.Settings{Method: vi.BlockDiag, Seed: 1, Workers: workers}, -1, nil)
	if err != nil {
		return "", err
	}
	loadFull := load()
	sto, buildSto, cpuSto, cpuFitSto, err := fit(vi.Settings{Method: vi.BlockDiag, Seed: 2, Workers: workers, Stochastic: stoch, FinalDraws: c.finalDraws}, c.sample, c.profile)
	if err != nil {
		return "", err
	}
	worstMu, worstSD := worst(sto, full)
	startDiff := "-"
	if withStart {
		// The start, moved by one full-batch iteration, with the fewest
		// final draws.
		one, _, _, _, err := fit(vi.Settings{Method: vi.BlockDiag, Seed: 1, Workers: workers, MaxIter: 1, FinalDraws: 2}, c.sample, nil)
		if err != nil {
			return "", err
		}
		mu, sd := worst(one, full)
		startDiff = fmt.Sprintf("%.3f sd, %.1f%%", mu, 100*sd)
	}
	if plotDir != "" {
		path := filepath.Join(plotDir, fmt.Sprintf("svi_bound_%d_%s.png", n, name))
		title := fmt.Sprintf("%s expanded at %s, 10^%.0f subjects, batch %d", name, expansion, math.Log10(float64(n)), batch)
		if err := plotBound(path, title, full, sto); err != nil {
			return "", err
		}
	}
	bf, bs, f, s := buildFull.Seconds(), buildSto.Seconds(), full.Elapsed.Seconds(), sto.Elapsed.Seconds()
	startSto := "full"
	if c.sample >= 0 && expansion == "start" && name != "glmm" {
		startSto = fmt.Sprintf("sample %d", c.sample)
	}
	st, pass := startAndPass(sto)
	return fmt.Sprintf("| 10^%.0f | %s | %s | %s | %d | %.1f s, %.1f s | %v, %d iterations, %.1f s (final %.1f s) | %v, %d passes, %.1f s (start %.1f s, %.1f s a pass, final %.1f s; moves %s) | %.2f (CPU %.1f s, %.1f s: %.2f) | %.2f (CPU %.1f s, %.1f s: %.2f) | %.3f sd | %.1f%% | %s | %.2f ± %.2f | %.2f ± %.2f (%d draws) | %s; %s |",
		math.Log10(float64(n)), name, expansion, startSto, batch, bf, bs, full.Status, full.Iterations, f, final(full), sto.Status, sto.Passes, s, st, pass, final(sto), moves(sto),
		s/f, cpuFitFull, cpuFitSto, cpuFitSto/cpuFitFull, (bs+s)/(bf+f), cpuFull, cpuSto, cpuSto/cpuFull, worstMu, 100*worstSD, startDiff,
		full.LowerBound, full.LowerBoundSE, sto.LowerBound, sto.LowerBoundSE, sto.LowerBoundDraws, loadFull, load()), nil
}

// final returns the seconds of a fit after its last iteration: the final
// bound over all subjects and what follows it.
func final(res *vi.Result) float64 {
	if len(res.Trace) == 0 {
		return math.NaN()
	}
	return (res.Elapsed - res.Trace[len(res.Trace)-1].Elapsed).Seconds()
}

// startAndPass returns the seconds of a stochastic fit's start (inside
// vi.Fit: RVB's start from the target's, and the family's) and of a pass
// after the first: the trace has a point at the end of every pass, and
// the first pass is taken to cost what the second did.
func startAndPass(res *vi.Result) (start, pass float64) {
	tr := res.Trace
	if len(tr) < 2 {
		return math.NaN(), math.NaN()
	}
	pass = (tr[1].Elapsed - tr[0].Elapsed).Seconds()
	return tr[0].Elapsed.Seconds() - pass, pass
}

// moves returns the moves of a stochastic fit's windows, from its trace
// (vi.TracePoint.StepNorm: the largest change of a global mean, in
// posterior sds, or sd, relative, from the window before), "-" for a
// pass that ends no window or the first window without a start to
// measure from.
func moves(res *vi.Result) string {
	var b strings.Builder
	for k, p := range res.Trace {
		if k > 0 {
			b.WriteString(", ")
		}
		if math.IsNaN(p.StepNorm) {
			b.WriteString("-")
			continue
		}
		fmt.Fprintf(&b, "%.4f", p.StepNorm)
	}
	return b.String()
}

// worst returns the largest distance of a global mean of fit from ref's,
// in ref's posterior sds, and the largest relative difference of their
// sds.
func worst(fit, ref *vi.Result) (mu, sd float64) {
	fm, fs := ref.GlobalMoments()
	sm, ss := fit.GlobalMoments()
	for j := range fm {
		mu = max(mu, math.Abs(sm[j]-fm[j])/fs[j])
		sd = max(sd, math.Abs(ss[j]/fs[j]-1))
	}
	return mu, sd
}

// cpuSeconds returns the user and system CPU time of this process from
// /proc/self/stat (Linux; in USER_HZ ticks, 100 a second), or NaN.
func cpuSeconds() float64 {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return math.NaN()
	}
	// The fields after the command's closing parenthesis; utime and stime
	// are the 14th and 15th of the whole line.
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 13 {
		return math.NaN()
	}
	u, err1 := strconv.ParseFloat(f[11], 64)
	s, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return math.NaN()
	}
	return (u + s) / 100
}

// load returns the machine's load averages, as uptime prints them.
func load() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func write(path string, rows []string) error {
	rev, _ := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	var b strings.Builder
	fmt.Fprintf(&b, "# Stochastic updates against the full batch\n\n")
	fmt.Fprintf(&b, "`go run ./benchmarks/svi %s` at %s, %s.\n\n", strings.Join(os.Args[1:], " "), strings.TrimSpace(string(rev)), time.Now().UTC().Format("2006-01-02 15:04 UTC"))
	fmt.Fprintf(&b, "| n | target | expansion | stochastic fit's start | batch | target built (full, stochastic) | full batch | stochastic | fit time ratio (CPU of the fit) | total ratio (CPU of build and fit) | worst mean diff | worst sd diff | start's diffs | full bound | stochastic bound | load after each |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintln(&b, r)
	}
	return benchio.WriteFile(path, []byte(b.String()))
}
