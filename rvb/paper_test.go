// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/paper"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// dataDir returns the benchmark data directory, skipping the test (with a
// message) when it is absent.
func dataDir(t testing.TB) string {
	t.Helper()
	dir := datasets.DataDir("")
	if _, err := os.Stat(filepath.Join(dir, "epilepsy.csv")); err != nil {
		t.Skipf("benchmark data not found in %q (set SPARSEVI_DATA): %v", dir, err)
	}
	return dir
}

// paperModel loads one of the models of the paper's Table 11.
func paperModel(t testing.TB, name string) *glmm.Model {
	t.Helper()
	d, err := paper.Load(name, dataDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return d.Model()
}

// fitPaper fits the named model with the method and returns the result
// and the bound in the paper's convention.
func fitPaper(t testing.TB, m *glmm.Model, method Method, set vi.Settings) (*vi.Result, float64, time.Duration) {
	t.Helper()
	tg, err := New(m, method)
	if err != nil {
		t.Fatal(err)
	}
	set.Method = vi.BlockDiag
	start := time.Now()
	res, err := vi.Fit(context.Background(), tg, set)
	el := time.Since(start)
	if err != nil {
		t.Fatalf("%v: %v", method, err)
	}
	return res, m.PaperELBO(res.LowerBound), el
}

// table11 holds the paper's lower bounds (Table 11 of seed 003, Snngm
// column) and runtimes in seconds of Tan's Julia code, for RVB1 and RVB2.
var table11 = map[string]struct {
	bound   [2]float64
	seconds [2]float64
}{
	"epilepsy": {[2]float64{3139.6, 3139.7}, [2]float64{2.4, 5.9}},
	"toenail":  {[2]float64{-645.3, -644.3}, [2]float64{7.5, 25.1}},
	"hers":     {[2]float64{-5040.5, -5040.1}, [2]float64{23.1, 79.6}},
	"diabetes": {[2]float64{-22599, -22599}, [2]float64{435, 1062}},
}

// reachTime returns the wall time at the end of the first window whose
// average bound (paper convention) reached target, or -1.
func reachTime(m *glmm.Model, res *vi.Result, target float64) time.Duration {
	for _, tp := range res.Trace {
		if m.PaperELBO(tp.LowerBound) >= target {
			return tp.Elapsed
		}
	}
	return -1
}

// TestTable11Measure fits the models of Table 11 named in RVB_TABLE11
// (comma-separated, or "all") with both methods and the settings of
// RVB_ALPHA0 and RVB_INIT ("paper"), and logs the bounds and timings. It
// is a measurement, not part of the default tests.
func TestTable11Measure(t *testing.T) {
	names := os.Getenv("RVB_TABLE11")
	if names == "" {
		t.Skip("set RVB_TABLE11=epilepsy,toenail,hers,diabetes (or all) to measure Table 11")
	}
	if names == "all" {
		names = "epilepsy,toenail,hers,diabetes"
	}
	set := vi.Settings{}
	if a := os.Getenv("RVB_ALPHA0"); a != "" {
		v, err := strconv.ParseFloat(a, 64)
		if err != nil {
			t.Fatal(err)
		}
		set.Rule = vi.Snngm{Alpha0: v}
	}
	if os.Getenv("RVB_INIT") == "paper" {
		set.Init = vi.InitPaper
	}
	methods := []Method{RVB1, RVB2}
	switch os.Getenv("RVB_METHOD") {
	case "rvb1":
		methods = methods[:1]
	case "rvb2":
		methods = methods[1:]
	}
	if v := os.Getenv("RVB_MAXITER"); v != "" {
		set.MaxIter, _ = strconv.Atoi(v)
	}
	for _, name := range strings.Split(names, ",") {
		m := paperModel(t, name)
		want := table11[name]
		for _, method := range methods {
			k := int(method) - 1
			res, pe, el := fitPaper(t, m, method, set)
			reach := reachTime(m, res, want.bound[k]-1)
			t.Logf("%-9s %v: bound %.2f (paper %.1f), full %.2f ± %.2f, %v after %d iterations in %.2fs (paper %.1fs: %.1fx); paper-1 reached after %.2fs (%.0fx)",
				name, method, pe, want.bound[k], res.LowerBound, res.LowerBoundSE, res.Status, res.Iterations,
				el.Seconds(), want.seconds[k], want.seconds[k]/el.Seconds(), reach.Seconds(), want.seconds[k]/reach.Seconds())
			if os.Getenv("RVB_TRACE") != "" {
				for _, tp := range res.Trace {
					t.Logf("  %6d %10.2f gain %8.3f %6.2fs", tp.Iter, m.PaperELBO(tp.LowerBound), tp.Gain, tp.Elapsed.Seconds())
				}
			}
		}
	}
}

// logPY holds log p(y) of the paper's models with every constant,
// computed independently by quadrature and importance sampling
// (ALGORITHMS.md): no lower bound may exceed it.
var logPY = map[string]float64{
	"epilepsy": -692.02,
	"toenail":  -647.22,
}

// TestTable11 fits Epilepsy and Toenail with RVB1 and RVB2 and the default
// settings (Snngm, vi's default step and start) and requires the bound to
// reach the paper's Table 11 value minus 1 nat, and to stay below log p(y).
// The paper's start is checked too, with a smaller step than the default
// (see the package documentation). From that start the climb is long and
// slow, and its gains at the fixed draws are smaller than the rises and
// falls vi's default tolerance takes for jitter (Toenail RVB1 stops 2.5 nats
// short), so those fits use the absolute tolerance alone.
func TestTable11(t *testing.T) {
	cases := []struct {
		name string
		set  vi.Settings
	}{
		{"epilepsy", vi.Settings{}},
		{"toenail", vi.Settings{}},
		{"epilepsy", vi.Settings{Init: vi.InitPaper, Rule: vi.Snngm{Alpha0: 0.001}, RelTol: -1, Jitter: -1}},
		{"toenail", vi.Settings{Init: vi.InitPaper, Rule: vi.Snngm{Alpha0: 0.001}, RelTol: -1, Jitter: -1}},
	}
	for _, tc := range cases {
		m := paperModel(t, tc.name)
		want := table11[tc.name]
		for k, method := range []Method{RVB1, RVB2} {
			t.Run(fmt.Sprintf("%s/%v/init=%d", tc.name, method, tc.set.Init), func(t *testing.T) {
				res, pe, el := fitPaper(t, m, method, tc.set)
				t.Logf("bound %.2f (paper %.1f), full %.2f ± %.2f, %v after %d iterations, %.2fs",
					pe, want.bound[k], res.LowerBound, res.LowerBoundSE, res.Status, res.Iterations, el.Seconds())
				if pe < want.bound[k]-1 {
					t.Errorf("bound %.2f below the paper's %.1f minus 1", pe, want.bound[k])
				}
				if res.LowerBound > logPY[tc.name] {
					t.Errorf("bound %.2f with all constants exceeds log p(y) = %.2f", res.LowerBound, logPY[tc.name])
				}
			})
		}
	}
}

// TestFitDeterministic: a fit is bit-identical for any number of workers,
// RVB2's warm-start modes included.
func TestFitDeterministic(t *testing.T) {
	m := paperModel(t, "epilepsy")
	for _, method := range []Method{RVB1, RVB2} {
		var ref *vi.Result
		for _, workers := range []int{1, 2, 3} {
			res, _, _ := fitPaper(t, m, method, vi.Settings{Workers: workers, ChunkSize: 7, MaxIter: 600, Seed: 3})
			if ref == nil {
				ref = res
				continue
			}
			for j := range ref.Mu {
				if res.Mu[j] != ref.Mu[j] {
					t.Fatalf("%v: mean %d differs with %d workers: %v vs %v", method, j, workers, res.Mu[j], ref.Mu[j])
				}
			}
			for j := range ref.Factor {
				if res.Factor[j] != ref.Factor[j] {
					t.Fatalf("%v: factor %d differs with %d workers", method, j, workers)
				}
			}
			if res.LowerBound != ref.LowerBound {
				t.Fatalf("%v: bound differs with %d workers", method, workers)
			}
		}
	}
}
