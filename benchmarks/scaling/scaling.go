// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
)

type scalingConfig struct {
	models   []model
	ns       []int
	methods  []string
	workers  []int
	settings job // the settings of every fit
	outDir   string
	profile  string
	// resume keeps the rows of an existing scaling.csv in outDir and
	// runs only the cases it lacks.
	resume bool
	// reps is the number of runs of every fit; the one with the median
	// time per iteration is kept.
	reps int
}

// result is one scaling fit: its CSV row, and what the summaries and plots
// need.
type result struct {
	model   model
	workers int
	o       *outcome
	row     []string
	betas   [][]string // rows of scaling_beta.csv
}

// series is the key of one line of the plots.
type series struct {
	model, method string
	workers       int
}

func (s series) String() string { return fmt.Sprintf("%s %s w=%d", s.model, s.method, s.workers) }

var scalingHeader = []string{"model", "family", "n", "obs", "p", "r", "method", "workers", "status",
	"iterations", "windows", "sec_per_iter", "cpu_per_iter", "sec_start", "sec_converge", "sec_final_bound", "sec_fit", "cpu_fit",
	"sec_setup", "lower_bound", "lower_bound_se", "max_abs_beta_err", "beta_covered", "peak_rss_mb", "setup_rss_mb",
	"heap_setup_mb", "load1"}

func scalingRow(m model, workers int, o *outcome) []string {
	return []string{
		m.Name, m.Family, strconv.Itoa(o.N), strconv.Itoa(o.Obs), strconv.Itoa(o.P), strconv.Itoa(o.R),
		o.Method, strconv.Itoa(workers), o.Status,
		strconv.Itoa(o.Iterations), strconv.Itoa(o.Windows), g4(o.SecPerIter), g4(o.CPUPerIter), f3(o.SecStart), f3(o.SecConv),
		f3(o.SecFinal), f3(o.SecFit), f3(o.CPUFit), f3(o.SecRead + o.SecBuild),
		f2(o.LowerBound), f2(o.LowerSE), f4(maxAbsErr(o.Mean, o.Truth)), strconv.Itoa(covered(o)),
		f1(mb(o.PeakRSSKB)), f1(mb(o.SetupRSSKB)), f1(float64(o.HeapSetup) / (1 << 20)), f1(o.Load),
	}
}

var betaHeader = []string{"model", "n", "method", "workers", "term", "truth", "mean", "sd", "q025", "q975", "covers"}

func betaRows(m model, workers int, o *outcome) [][]string {
	var rows [][]string
	for k, name := range o.Names {
		if k >= len(o.Truth) {
			break
		}
		rows = append(rows, []string{m.Name, strconv.Itoa(o.N), o.Method, strconv.Itoa(workers), name,
			strconv.FormatFloat(o.Truth[k], 'g', -1, 64), f5(o.Mean[k]), f5(o.SD[k]), f5(o.Q025[k]), f5(o.Q975[k]),
			strconv.FormatBool(o.Q025[k] <= o.Truth[k] && o.Truth[k] <= o.Q975[k])})
	}
	return rows
}

// readBetas attaches the rows of an earlier scaling_beta.csv, if there is
// one, to the results they belong to.
func readBetas(path string, results []result) error {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], betaHeader) {
		return fmt.Errorf("%s: not a scaling_beta.csv of this version of the program", path)
	}
	for _, row := range rows[1:] {
		for i := range results {
			r := &results[i]
			if r.model.Name == row[0] && strconv.Itoa(r.o.N) == row[1] && r.o.Method == row[2] && strconv.Itoa(r.workers) == row[3] {
				r.betas = append(r.betas, row)
			}
		}
	}
	return nil
}

// readScaling reads the results of an earlier run from scaling.csv: the
// rows as they are, and the fields the summaries and plots use.
func readScaling(path string) ([]result, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 || !slices.Equal(rows[0], scalingHeader) {
		return nil, fmt.Errorf("%s: not a scaling.csv of this version of the program", path)
	}
	col := map[string]int{}
	for i, h := range scalingHeader {
		col[h] = i
	}
	var out []result
	for k, row := range rows[1:] {
		m, ok := modelByName(row[col["model"]])
		if !ok {
			return nil, fmt.Errorf("%s: row %d: unknown model %q", path, k+2, row[col["model"]])
		}
		var bad error
		num := func(h string) float64 {
			v, err := strconv.ParseFloat(row[col[h]], 64)
			if err != nil && bad == nil {
				bad = fmt.Errorf("%s: row %d, column %s: %w", path, k+2, h, err)
			}
			return v
		}
		o := &outcome{N: int(num("n")), Method: row[col["method"]], Status: row[col["status"]],
			SecPerIter: num("sec_per_iter"), CPUPerIter: num("cpu_per_iter"), SecConv: num("sec_converge")}
		w := int(num("workers"))
		if bad != nil {
			return nil, bad
		}
		out = append(out, result{model: m, workers: w, o: o, row: row})
	}
	return out, nil
}

// sameCase reports whether r is the fit of model m, n subjects, method
// (gva, rvb or rvb-start; the fit's own name says which RVB), minibatch
// size batch (0 for the full batch) and w workers.
func sameCase(r result, m model, n int, method string, batch, w int) bool {
	rm, rb, _ := strings.Cut(r.o.Method, "-batch")
	if (batch == 0 && rb != "") || (batch > 0 && rb != strconv.Itoa(batch)) {
		return false
	}
	switch {
	case strings.HasPrefix(rm, "rvb1-start"):
		rm = "rvb-start"
	case strings.HasPrefix(rm, "rvb"):
		rm = "rvb"
	}
	return r.model.Name == m.Name && r.o.N == n && rm == method && r.workers == w
}

// sortResults orders results by model, n, method and workers.
func sortResults(rs []result) {
	slices.SortStableFunc(rs, func(a, b result) int {
		return cmp.Or(cmp.Compare(a.model.Index, b.model.Index), cmp.Compare(a.o.N, b.o.N),
			cmp.Compare(a.o.Method, b.o.Method), cmp.Compare(a.workers, b.workers))
	})
}

func runScaling(cfg scalingConfig) error {
	var results []result
	csvPath := filepath.Join(cfg.outDir, "scaling.csv")
	if cfg.resume {
		old, err := readScaling(csvPath)
		switch {
		case errors.Is(err, fs.ErrNotExist):
		case err != nil:
			return err
		default:
			results = old
			if err := readBetas(filepath.Join(cfg.outDir, "scaling_beta.csv"), results); err != nil {
				return err
			}
			log.Printf("resuming: %d fits from %s", len(old), csvPath)
		}
	}
	if err := os.MkdirAll(filepath.Join(cfg.outDir, "traces"), 0o755); err != nil {
		return err
	}
	for _, m := range cfg.models {
		for _, n := range cfg.ns {
			for _, method := range cfg.methods {
				var todo []int
				for _, w := range cfg.workers {
					if !slices.ContainsFunc(results, func(r result) bool { return sameCase(r, m, n, method, cfg.settings.Batch, w) }) {
						todo = append(todo, w)
					}
				}
				// The worker counts take turns, so that a slow spell of
				// the machine does not fall on one of them only.
				runs := make(map[int][]*outcome)
				for rep := range max(1, cfg.reps) {
					for _, w := range todo {
						name := fmt.Sprintf("%s_n%d_%s_w%d", m.Name, n, method, w)
						j := cfg.settings
						j.Model, j.N, j.Method, j.Workers, j.Profile = m.Name, n, method, w, profilePrefix(cfg.profile, name)
						t0 := time.Now()
						o, err := spawn(j, w)
						if err != nil {
							return err
						}
						runs[w] = append(runs[w], o)
						log.Printf("%s (run %d of %d): %s after %d iterations, %.4g s/iter (%.4g CPU s/iter), last window at %.3g s (fit %.3g s, setup %.3g s, child %.3g s), bound %.2f, max|beta-truth| %.4f, peak RSS %.0f MB, load %.1f",
							name, rep+1, max(1, cfg.reps), o.Status, o.Iterations, o.SecPerIter, o.CPUPerIter, o.SecConv, o.SecFit, o.SecRead+o.SecBuild,
							time.Since(t0).Seconds(), o.LowerBound, maxAbsErr(o.Mean, o.Truth), mb(o.PeakRSSKB), o.Load)
					}
				}
				for _, w := range todo {
					name := fmt.Sprintf("%s_n%d_%s_w%d", m.Name, n, method, w)
					o := medianRun(runs[w])
					if err := writeTrace(filepath.Join(cfg.outDir, "traces", name+".csv"), o.Trace); err != nil {
						return err
					}
					if len(o.GlobalMean) > 0 {
						if err := writeGlobal(filepath.Join(cfg.outDir, "traces", name+"_global.csv"), o.GlobalMean, o.GlobalSD); err != nil {
							return err
						}
					}
					results = append(results, result{model: m, workers: w, o: o, row: scalingRow(m, w, o), betas: betaRows(m, w, o)})
				}
				sortResults(results)
				rows, brows := [][]string{scalingHeader}, [][]string{betaHeader}
				for _, r := range results {
					rows = append(rows, r.row)
					brows = append(brows, r.betas...)
				}
				if err := benchio.WriteCSV(csvPath, rows); err != nil {
					return err
				}
				if err := benchio.WriteCSV(filepath.Join(cfg.outDir, "scaling_beta.csv"), brows); err != nil {
					return err
				}
			}
		}
	}
	slopes := fitSlopes(results)
	rows := [][]string{{"model", "method", "workers", "slope", "intercept", "n_min", "n_max", "points"}}
	for _, s := range slopes {
		rows = append(rows, []string{s.key.model, s.key.method, strconv.Itoa(s.key.workers), f4(s.slope), f4(s.intercept),
			strconv.Itoa(s.nMin), strconv.Itoa(s.nMax), strconv.Itoa(s.points)})
		log.Printf("slope of log10(sec/iter) on log10(n), %s: %.3f (n %d..%d)", s.key, s.slope, s.nMin, s.nMax)
	}
	if err := benchio.WriteCSV(filepath.Join(cfg.outDir, "slopes.csv"), rows); err != nil {
		return err
	}
	sp := speedups(results)
	rows = [][]string{{"model", "method", "n", "workers", "speedup_per_iter", "speedup_converge", "efficiency_per_iter"}}
	for _, s := range sp {
		rows = append(rows, []string{s.model, s.method, strconv.Itoa(s.n), strconv.Itoa(s.workers),
			f3(s.perIter), f3(s.conv), f3(s.perIter * float64(s.base) / float64(s.workers))})
	}
	if err := benchio.WriteCSV(filepath.Join(cfg.outDir, "speedup.csv"), rows); err != nil {
		return err
	}
	return plotAll(cfg.outDir, results, slopes, sp)
}

// medianRun returns the run with the median time per iteration (the lower
// of the two middle ones for an even number).
func medianRun(runs []*outcome) *outcome {
	sorted := slices.Clone(runs)
	slices.SortStableFunc(sorted, func(a, b *outcome) int { return cmp.Compare(a.SecPerIter, b.SecPerIter) })
	return sorted[(len(sorted)-1)/2]
}

// slope is a least-squares fit of log10(sec per iteration) on log10(n).
type slope struct {
	key              series
	slope, intercept float64
	nMin, nMax       int
	points           int
	allN             bool // fewer than two points in [1e4, 1e6]: fitted on all
}

// seriesOf groups results by model, method and workers, in order of first
// appearance, each sorted by n.
func seriesOf(results []result) ([]series, map[series][]result) {
	var keys []series
	by := map[series][]result{}
	for _, r := range results {
		k := series{r.model.Name, r.o.Method, r.workers}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	for _, k := range keys {
		slices.SortStableFunc(by[k], func(a, b result) int { return a.o.N - b.o.N })
	}
	return keys, by
}

func fitSlopes(results []result) []slope {
	keys, by := seriesOf(results)
	var out []slope
	for _, k := range keys {
		pick := func(lo, hi int) (xs, ys []float64, nMin, nMax int) {
			for _, r := range by[k] {
				if r.o.N < lo || r.o.N > hi || !(r.o.SecPerIter > 0) {
					continue
				}
				if nMin == 0 {
					nMin = r.o.N
				}
				nMax = r.o.N
				xs = append(xs, math.Log10(float64(r.o.N)))
				ys = append(ys, math.Log10(r.o.SecPerIter))
			}
			return
		}
		xs, ys, nMin, nMax := pick(10_000, 1_000_000)
		all := false
		if len(xs) < 2 {
			xs, ys, nMin, nMax = pick(0, math.MaxInt)
			all = true
		}
		if len(xs) < 2 {
			continue
		}
		b, a := leastSquares(xs, ys)
		out = append(out, slope{key: k, slope: b, intercept: a, nMin: nMin, nMax: nMax, points: len(xs), allN: all})
	}
	return out
}

// leastSquares returns the slope and intercept of the least-squares line.
func leastSquares(xs, ys []float64) (b, a float64) {
	var mx, my float64
	for i := range xs {
		mx += xs[i]
		my += ys[i]
	}
	mx /= float64(len(xs))
	my /= float64(len(xs))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	b = sxy / sxx
	return b, my - b*mx
}

// speedup compares a fit with w workers with the one with the fewest
// workers (base, normally 1) on the same model, method and n.
type speedup struct {
	model, method   string
	n               int
	workers, base   int
	perIter, conv   float64
	baseSecPerIter  float64
	baseSecConverge float64
}

func speedups(results []result) []speedup {
	type key struct {
		model, method string
		n             int
	}
	var keys []key
	by := map[key][]result{}
	for _, r := range results {
		k := key{r.model.Name, r.o.Method, r.o.N}
		if _, ok := by[k]; !ok {
			keys = append(keys, k)
		}
		by[k] = append(by[k], r)
	}
	var out []speedup
	for _, k := range keys {
		rs := by[k]
		slices.SortStableFunc(rs, func(a, b result) int { return a.workers - b.workers })
		base := rs[0]
		for _, r := range rs {
			out = append(out, speedup{model: k.model, method: k.method, n: k.n, workers: r.workers, base: base.workers,
				perIter: base.o.SecPerIter / r.o.SecPerIter, conv: base.o.SecConv / r.o.SecConv,
				baseSecPerIter: base.o.SecPerIter, baseSecConverge: base.o.SecConv})
		}
	}
	return out
}

func maxAbsErr(est, truth []float64) float64 {
	if len(est) != len(truth) {
		return math.NaN()
	}
	m := 0.0
	for i := range est {
		m = max(m, math.Abs(est[i]-truth[i]))
	}
	return m
}

// covered counts the 95% intervals that hold the truth.
func covered(o *outcome) int {
	c := 0
	for i := range o.Truth {
		if i < len(o.Q025) && o.Q025[i] <= o.Truth[i] && o.Truth[i] <= o.Q975[i] {
			c++
		}
	}
	return c
}

func mb(kb int64) float64 {
	if kb < 0 {
		return math.NaN()
	}
	return float64(kb) / 1024
}

func f1(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
func f2(x float64) string { return strconv.FormatFloat(x, 'f', 2, 64) }
func f3(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
func f4(x float64) string { return strconv.FormatFloat(x, 'f', 4, 64) }
func f5(x float64) string { return strconv.FormatFloat(x, 'f', 5, 64) }
func g4(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }
