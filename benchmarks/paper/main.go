// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command paper reproduces the GLMM table of Tan's paper (Table 11 of
// "Analytic natural gradient updates for Cholesky factor in Gaussian
// variational approximation"): for each data set, approximation and step
// rule it fits the model and records the lower bound at termination in the
// paper's convention, its Monte Carlo error, iterations, wall time, status,
// and the time at which the windowed lower bound first reached the paper's
// best figure minus 1 nat (10 nats for Diabetes, whose design is a
// reconstruction).
//
// Usage:
//
//	go run ./benchmarks/paper -data DIR -out DIR [-datasets epilepsy,toenail] [-methods gva,rvb1,rvb2] [-optimizers snngm,adam] [-quick]
//
// It writes table11.csv (dataset,method,optimizer,elbo_paper,elbo,elbo_se,
// iterations,seconds,status,target,seconds_to_target,iterations_to_target;
// -1 and NaN where the target was not reached) and table11.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/paper"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
)

// best holds the paper's best lower bound per data set and method over its
// step rules (Table 11), and the allowance below it that counts as reached.
var best = map[string]map[string]float64{
	"epilepsy": {"gva": 3138.7, "rvb1": 3139.6, "rvb2": 3139.7, "rvb1s": 3139.7},
	"toenail":  {"gva": -644.8, "rvb1": -645.3, "rvb2": -644.3, "rvb1s": -644.3},
	"hers":     {"gva": -5042.7, "rvb1": -5040.5, "rvb2": -5040.1, "rvb1s": -5040.1},
	"diabetes": {"gva": -22691, "rvb1": -22599, "rvb2": -22599, "rvb1s": -22599},
}

func allowance(dataset string) float64 {
	if dataset == "diabetes" {
		return 10
	}
	return 1
}

func main() {
	log.SetFlags(0)
	log.SetPrefix("paper: ")
	dataDir := flag.String("data", "", "data directory (default $SPARSEVI_DATA or ../shared/datasets)")
	outDir := flag.String("out", ".", "directory for table11.csv and table11.md")
	dsFlag := flag.String("datasets", "epilepsy,toenail,hers,diabetes", "comma-separated data sets")
	methodsFlag := flag.String("methods", "gva", "comma-separated methods: gva, vb (block-diagonal on the plain model), rvb1, rvb2, rvb1s (RVB1 expanded at the start, glmmfit's default; its target is RVB2's figure)")
	optsFlag := flag.String("optimizers", "snngm", "comma-separated step rules")
	quick := flag.Bool("quick", false, "a CI-sized run: epilepsy and toenail with at most 3000 iterations")
	seed := flag.Uint64("seed", 1, "random seed")
	alpha0 := flag.Float64("alpha0", 0, "Snngm's alpha0 (0: the default)")
	maxIter := flag.Int("max-iter", 0, "iteration limit (0: the default)")
	workers := flag.Int("workers", 0, "goroutines (0: GOMAXPROCS)")
	initFlag := flag.String("init", "mode", "start: mode (the default) or paper")
	window := flag.Int("window", 0, "iterations per convergence window (0: the default)")
	tol := flag.Float64("tol", 0, "convergence tolerance in nats per window (0: the default)")
	flag.Parse()

	dir := datasets.DataDir(*dataDir)
	names := benchio.List(*dsFlag)
	if *quick {
		names = []string{"epilepsy", "toenail"}
		if *maxIter == 0 {
			*maxIter = 3000
		}
	}
	rows := [][]string{{"dataset", "method", "optimizer", "elbo_paper", "elbo", "elbo_se", "iterations", "seconds", "status", "target", "seconds_to_target", "iterations_to_target"}}
	for _, name := range names {
		design, err := paper.Load(name, dir)
		if err != nil {
			log.Fatalf("%s: %v", name, err)
		}
		m := design.Model()
		for _, method := range benchio.List(*methodsFlag) {
			for _, o := range benchio.List(*optsFlag) {
				rule, err := vi.ParseRule(o)
				if err != nil {
					log.Fatal(err)
				}
				if sn, ok := rule.(vi.Snngm); ok {
					sn.Alpha0 = *alpha0
					rule = sn
				}
				// The target is made inside the timing: rvb1s runs the
				// model's start there.
				start := time.Now()
				target, vm, err := targetFor(m, method)
				if err != nil {
					log.Fatal(err)
				}
				set := vi.Settings{Method: vm, Rule: rule, Seed: *seed, MaxIter: *maxIter, Workers: *workers, Window: *window, Tol: *tol}
				if *initFlag == "paper" {
					set.Init = vi.InitPaper
				}
				res, err := vi.Fit(context.Background(), target, set)
				secs := time.Since(start).Seconds()
				if res == nil {
					log.Fatalf("%s %s %s: %v", name, method, o, err)
				}
				tgt := math.NaN()
				if b, ok := best[name][method]; ok {
					tgt = b - allowance(name)
				}
				reached, reachedIter := math.NaN(), -1
				for _, p := range res.Trace {
					if m.PaperELBO(p.LowerBound) >= tgt {
						reached, reachedIter = p.Elapsed.Seconds(), p.Iter
						break
					}
				}
				row := []string{name, method, o, f2(m.PaperELBO(res.LowerBound)), f2(res.LowerBound), f2(res.LowerBoundSE),
					strconv.Itoa(res.Iterations), f3(secs), res.Status.String(), f2(tgt), f3(reached), strconv.Itoa(reachedIter)}
				log.Println(strings.Join(row, " "))
				rows = append(rows, row)
			}
		}
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		log.Fatal(err)
	}
	if err := benchio.WriteCSV(filepath.Join(*outDir, "table11.csv"), rows); err != nil {
		log.Fatal(err)
	}
	if err := writeMarkdown(filepath.Join(*outDir, "table11.md"), rows); err != nil {
		log.Fatal(err)
	}
}

// targetFor returns the target and approximation family of a method name.
func targetFor(m *glmm.Model, method string) (vi.Target, vi.Method, error) {
	switch method {
	case "gva":
		return m, vi.GVA, nil
	case "vb":
		return m, vi.BlockDiag, nil
	}
	return rvbTarget(m, method)
}

func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
func f3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }

func writeMarkdown(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	line := func(w io.Writer, cells []string) {
		fmt.Fprintf(w, "| %s |\n", strings.Join(cells, " | "))
	}
	line(f, rows[0])
	sep := make([]string, len(rows[0]))
	for i := range sep {
		sep[i] = "---"
	}
	line(f, sep)
	for _, r := range rows[1:] {
		line(f, r)
	}
	return f.Close()
}
