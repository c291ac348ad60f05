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
//	go run ./benchmarks/svi [-n 100000,1000000] [-batch 10000] [-workers 2] [-out results.md]
//
// The data are the Bernoulli random-intercept model of the scaling
// program, y ~ 1 + t + x1 + x2 + x3 + (1 | id), p = 5, 7 observations per
// subject, beta = (-1, 0.5, 0.5, -0.5, 1), random-intercept sd 1, simulated
// by datasets.Simulate with seed 7. Both fits are vi.BlockDiag from the
// default start (the target's Laplace mode) on each target: the glmm model
// itself (block-independent variational Bayes) or its reparametrisations
// RVB1 and RVB2 at the paper's expansion point (package rvb). The full
// batch runs with the default settings (seed 1), the stochastic fit with
// Stochastic{Batch: batch} (seed 2), to its own convergence rule. The fits
// run one after the other in this process; each is timed by
// vi.Result.Elapsed (start, iterations and the final bound over all
// subjects), and the start alone by a fit stopped after one iteration with
// two final draws.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
)

func main() {
	ns := flag.String("n", "100000,1000000", "numbers of subjects, comma-separated")
	batch := flag.Int("batch", 10000, "subjects per stochastic iteration")
	workers := flag.Int("workers", 2, "workers of each fit")
	targets := flag.String("targets", "glmm,rvb2", "targets, comma-separated: glmm (the model itself), rvb1, rvb2 (its reparametrisations, package rvb)")
	out := flag.String("out", "", "write the table to this markdown file too")
	flag.Parse()
	var rows []string
	for _, s := range benchio.List(*ns) {
		n, err := strconv.Atoi(s)
		if err != nil {
			log.Fatal(err)
		}
		m, err := model(n)
		if err != nil {
			log.Fatal(err)
		}
		for _, name := range benchio.List(*targets) {
			row, err := compare(m, name, n, *batch, *workers)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Println(row)
			rows = append(rows, row)
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

// target returns the target of the given name over the model.
func target(m *glmm.Model, name string) (vi.Target, error) {
	switch name {
	case "glmm":
		return m, nil
	case "rvb1":
		return rvb.New(m, rvb.RVB1)
	case "rvb2":
		return rvb.New(m, rvb.RVB2)
	}
	return nil, fmt.Errorf("unknown target %q (want glmm, rvb1 or rvb2)", name)
}

// compare fits the target of the given name over the model of n subjects
// both ways and returns a table row.
func compare(m *glmm.Model, name string, n, batch, workers int) (string, error) {
	t, err := target(m, name)
	if err != nil {
		return "", err
	}
	ctx := context.Background()
	// The start alone: a fit stopped at its first iteration, without the
	// final bound's cost (2 fresh draws).
	st, err := vi.Fit(ctx, t, vi.Settings{Method: vi.BlockDiag, Seed: 1, Workers: workers, MaxIter: 1, FinalDraws: 2, ImportanceDraws: 1})
	if err != nil {
		return "", err
	}
	full, err := vi.Fit(ctx, t, vi.Settings{Method: vi.BlockDiag, Seed: 1, Workers: workers})
	if err != nil {
		return "", err
	}
	sto, err := vi.Fit(ctx, t, vi.Settings{Method: vi.BlockDiag, Seed: 2, Workers: workers, Stochastic: vi.Stochastic{Batch: batch}})
	if err != nil {
		return "", err
	}
	fm, fs := full.GlobalMoments()
	sm, ss := sto.GlobalMoments()
	var worstMu, worstSD float64
	for j := range fm {
		worstMu = max(worstMu, math.Abs(sm[j]-fm[j])/fs[j])
		worstSD = max(worstSD, math.Abs(ss[j]/fs[j]-1))
	}
	return fmt.Sprintf("| 10^%.0f | %s | %d | %v, %d iterations, %.1f s | %v, %d passes, %.1f s | %.1f s | %.2f | %.3f sd | %.1f%% | %.2f ± %.2f | %.2f ± %.2f | %s |",
		math.Log10(float64(n)), name, batch, full.Status, full.Iterations, full.Elapsed.Seconds(), sto.Status, sto.Passes, sto.Elapsed.Seconds(),
		st.Elapsed.Seconds(), sto.Elapsed.Seconds()/full.Elapsed.Seconds(), worstMu, 100*worstSD,
		full.LowerBound, full.LowerBoundSE, sto.LowerBound, sto.LowerBoundSE, load()), nil
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
	fmt.Fprintf(&b, "| n | target | batch | full batch | stochastic | start (in both) | time ratio | worst mean diff | worst sd diff | full bound | stochastic bound | load after |\n")
	fmt.Fprintf(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintln(&b, r)
	}
	return benchio.WriteFile(path, []byte(b.String()))
}
