// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command memory measures the peak resident memory of glmmfit's phases on
// simulated Bernoulli data with a random intercept (7 observations per
// subject, p = 5, as issue 16's design), phase by phase in one process, as
// glmmfit runs them: reading the CSV file, building the model, the start
// that RVB's target is built on, the fit (with GVA's start and the final
// bound) and the summaries. Before each phase it returns what it can to
// the operating system and resets the peak (Linux: /proc/self/clear_refs),
// so each figure is the phase's own peak with what the earlier phases
// left, divided by the number of subjects. The data are simulated with a
// fixed seed into a temporary file.
//
//	go run ./benchmarks/memory -subjects 100000 -methods gva,default
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

func main() {
	subjects := flag.Int("subjects", 100_000, "number of simulated subjects")
	methods := flag.String("methods", "gva,default", "methods to measure: gva and default (glmmfit's: RVB1 expanded at the start)")
	flag.Parse()
	if _, err := os.Stat("/proc/self/clear_refs"); err != nil {
		fmt.Println("memory: skipped: it needs Linux's /proc/self/clear_refs to reset the peak")
		return
	}
	dir, err := os.MkdirTemp("", "sparsevi-memory")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "data.csv")
	form, err := simulate(path, *subjects)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("Peak resident memory per subject by phase, %d Bernoulli subjects of 7 observations, p = 5 (`go run ./benchmarks/memory -subjects %d`):\n\n", *subjects, *subjects)
	fmt.Println("| method | reading | building | RVB's start | fit | summaries | whole run |")
	fmt.Println("|---|---|---|---|---|---|---|")
	for _, method := range strings.Split(*methods, ",") {
		row, err := measure(path, form, *subjects, method)
		if err != nil {
			log.Fatalf("%s: %v", method, err)
		}
		fmt.Println(row)
	}
}

// simulate writes the simulated data to path and returns their model's
// formula.
func simulate(path string, n int) (string, error) {
	fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: "bernoulli", Subjects: n, Obs: 7,
		Beta: []float64{-1, 0.5, 0.5, -0.5, 1}, RECov: [][]float64{{1}}, Seed: 16})
	if err != nil {
		return "", err
	}
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	if err := datasets.WriteCSV(f, fr); err != nil {
		f.Close()
		return "", err
	}
	return truth.Formula, f.Close()
}

// measure runs the phases of one method and returns its table row.
func measure(path, form string, n int, method string) (string, error) {
	var peaks []int64
	var whole int64
	phase := func(run func() error) error {
		debug.FreeOSMemory()
		if err := resetPeak(); err != nil {
			return err
		}
		if err := run(); err != nil {
			return err
		}
		p, err := benchio.PeakKB()
		if err != nil {
			return err
		}
		peaks = append(peaks, p)
		whole = max(whole, p)
		return nil
	}
	var (
		fr  *datasets.Frame
		m   *glmm.Model
		t   vi.Target
		set vi.Settings
		res *vi.Result
	)
	if err := phase(func() (err error) { fr, err = datasets.ReadFile(path); return err }); err != nil {
		return "", err
	}
	if err := phase(func() error {
		f, err := formula.Parse(form)
		if err != nil {
			return err
		}
		d, err := formula.Build(f, fr, formula.Options{Family: glmm.Bernoulli, Prior: formula.PriorAuto, Release: true})
		if err != nil {
			return err
		}
		// As glmmfit: the design's copy of the data goes, and the data.
		d.Compact()
		fr = nil
		m = d.Model()
		return nil
	}); err != nil {
		return "", err
	}
	if err := phase(func() error {
		name, expansion := posterior.GVA, ""
		if method == "default" {
			name, expansion, _ = posterior.Choose(m)
		} else if method != "gva" {
			return fmt.Errorf("unknown method %q (want gva or default)", method)
		}
		pool := parallel.NewPollingPool(context.Background(), set.WorkersFor(m))
		defer pool.Close()
		var meth vi.Method
		var err error
		t, meth, err = posterior.NewTarget(pool, m, name, expansion)
		set.Method = meth
		return err
	}); err != nil {
		return "", err
	}
	if err := phase(func() (err error) { res, err = vi.Fit(context.Background(), t, set); return err }); err != nil {
		return "", err
	}
	if err := phase(func() error {
		_, err := posterior.SummarizeFit(context.Background(), res, t, m, 4000, 0)
		return err
	}); err != nil {
		return "", err
	}
	runtime.KeepAlive(m)
	per := func(kb int64) string { return fmt.Sprintf("%.0f B", float64(kb)*1024/float64(n)) }
	row := "| " + method
	for _, p := range peaks {
		row += " | " + per(p)
	}
	return row + " | " + per(whole) + fmt.Sprintf(" (%.0f MB) |", float64(whole)/1024), nil
}

// resetPeak resets the process's peak resident set size to its current
// size.
func resetPeak() error {
	return os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}
