// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io/fs"
	"log"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
)

// logitFormula is the model of the sim_logit files.
const logitFormula = "y ~ x1 + x2 + x3 + (1 | id)"

// logitTruth is the beta the sim_logit files were simulated from (random
// intercept sd 1).
var logitTruth = []float64{-1, 0.5, -0.5, 1}

// logitFile is one of the data files other software was timed on.
type logitFile struct {
	name   string
	n      int
	target float64 // issue 7: seconds to convergence on this machine
	// Seconds of established software on the same file and machine.
	glmer, glmmTMB, advi float64
}

var logitFiles = []logitFile{
	{name: "sim_logit_n10000.csv", n: 10_000, target: 1, glmer: 13.4, glmmTMB: 6.8, advi: 15.2},
	{name: "sim_logit_n100000.csv.gz", n: 100_000, target: 10, glmer: 259, glmmTMB: 95, advi: 163},
}

// glmerTolerance is issue 7's bound on |beta - glmer's beta|.
const glmerTolerance = 0.03

// glmerEstimate is one row of glmer_estimates.csv.
type glmerEstimate struct {
	estimate, se float64
}

// readGlmer reads glmer_estimates.csv: lines starting with # are comments,
// then a header file,term,estimate,se,seconds and one row per coefficient.
// It returns the estimates by file and term, and glmer's seconds by file.
func readGlmer(path string) (map[string]map[string]glmerEstimate, map[string]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) < 2 {
		return nil, nil, fmt.Errorf("%s: no estimates", path)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	for _, h := range []string{"file", "term", "estimate", "se", "seconds"} {
		if _, ok := col[h]; !ok {
			return nil, nil, fmt.Errorf("%s: no column %q", path, h)
		}
	}
	est := map[string]map[string]glmerEstimate{}
	secs := map[string]float64{}
	for k, row := range rows[1:] {
		num := func(h string) (float64, error) {
			v, err := strconv.ParseFloat(row[col[h]], 64)
			if err != nil {
				return 0, fmt.Errorf("%s: row %d, column %s: %w", path, k+2, h, err)
			}
			return v, nil
		}
		e, err := num("estimate")
		if err != nil {
			return nil, nil, err
		}
		se, err := num("se")
		if err != nil {
			return nil, nil, err
		}
		s, err := num("seconds")
		if err != nil {
			return nil, nil, err
		}
		file := row[col["file"]]
		if est[file] == nil {
			est[file] = map[string]glmerEstimate{}
		}
		est[file][row[col["term"]]] = glmerEstimate{e, se}
		secs[file] = s
	}
	return est, secs, nil
}

// glmerPath finds glmer_estimates.csv: the flag's value, else next to this
// source file (go run), else under the working directory.
func glmerPath(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	var cands []string
	if _, src, _, ok := runtime.Caller(0); ok {
		cands = append(cands, filepath.Join(filepath.Dir(src), "glmer_estimates.csv"))
	}
	cands = append(cands, filepath.Join("benchmarks", "scaling", "glmer_estimates.csv"), "glmer_estimates.csv")
	for _, c := range cands {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	return ""
}

// logitChild reads, builds and fits one logistic file with default
// settings and summarises beta with posterior.Summarize.
func logitChild(j job) (*outcome, error) {
	o := &outcome{Truth: logitTruth}
	t0 := time.Now()
	fr, err := datasets.ReadFile(j.File)
	if err != nil {
		return nil, err
	}
	o.SecRead = time.Since(t0).Seconds()
	mod, secBuild, err := build(logitFormula, fr, glmm.Bernoulli)
	if err != nil {
		return nil, err
	}
	o.SecBuild = secBuild
	fr = nil
	if err := fit(j, mod, o, true); err != nil {
		return nil, err
	}
	return o, nil
}

func runLogit(dataDir, outDir, glmerFlag string, quick bool, settings job, profile string) error {
	files := logitFiles
	if quick {
		files = files[:1]
	}
	var glmer map[string]map[string]glmerEstimate
	var glmerSecs map[string]float64
	if path := glmerPath(glmerFlag); path != "" {
		var err error
		if glmer, glmerSecs, err = readGlmer(path); err != nil {
			return err
		}
		log.Printf("glmer estimates from %s", path)
	} else {
		log.Printf("glmer_estimates.csv not found: no comparison with glmer")
	}
	summary := [][]string{{"file", "n", "obs", "status", "iterations", "sec_read", "sec_build", "sec_converge", "sec_final_bound",
		"sec_fit", "cpu_fit", "sec_summary", "sec_total", "sec_total_without_final_bound", "target_sec", "meets_target",
		"lower_bound", "lower_bound_se", "covered", "max_abs_err_truth", "max_abs_diff_glmer", "within_glmer_tol",
		"peak_rss_mb", "load1", "glmer_sec_here", "glmer_sec_ref", "glmmTMB_sec_ref", "stan_advi_sec_ref"}}
	betas := [][]string{{"file", "term", "truth", "mean", "sd", "q025", "q975", "covers", "glmer_estimate", "glmer_se", "diff_glmer"}}
	if err := os.MkdirAll(filepath.Join(outDir, "traces"), 0o755); err != nil {
		return err
	}
	for _, lf := range files {
		path := filepath.Join(dataDir, lf.name)
		if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s not found (the shared sim_logit files; -logit names their directory)", path)
		}
		j := settings
		j.File, j.Method, j.Profile = path, "gva", profilePrefix(profile, strings.SplitN(lf.name, ".", 2)[0])
		o, err := spawn(j, 0)
		if err != nil {
			return err
		}
		if err := writeTrace(filepath.Join(outDir, "traces", "logit_n"+strconv.Itoa(lf.n)+".csv"), o.Trace); err != nil {
			return err
		}
		total := o.SecRead + o.SecBuild + o.SecFit + o.SecSummary
		totalConv := total - o.SecFinal
		maxDiff := math.NaN()
		ge := glmer[lf.name]
		cov := 0
		for k, name := range o.Names {
			g, ok := ge[name]
			gEst, gSE, diff := math.NaN(), math.NaN(), math.NaN()
			if ok {
				gEst, gSE, diff = g.estimate, g.se, o.Mean[k]-g.estimate
				if math.IsNaN(maxDiff) {
					maxDiff = 0
				}
				maxDiff = max(maxDiff, math.Abs(diff))
			}
			covers := o.Q025[k] <= logitTruth[k] && logitTruth[k] <= o.Q975[k]
			if covers {
				cov++
			}
			betas = append(betas, []string{lf.name, name, f2(logitTruth[k]), f4(o.Mean[k]), f4(o.SD[k]), f4(o.Q025[k]), f4(o.Q975[k]),
				strconv.FormatBool(covers), f4(gEst), f4(gSE), f4(diff)})
		}
		gs, ok := glmerSecs[lf.name]
		if !ok {
			gs = math.NaN()
		}
		summary = append(summary, []string{lf.name, strconv.Itoa(o.N), strconv.Itoa(o.Obs), o.Status, strconv.Itoa(o.Iterations),
			f3(o.SecRead), f3(o.SecBuild), f3(o.SecConv), f3(o.SecFinal), f3(o.SecFit), f3(o.CPUFit), f3(o.SecSummary), f3(total), f3(totalConv),
			f1(lf.target), strconv.FormatBool(totalConv <= lf.target), f2(o.LowerBound), f2(o.LowerSE),
			fmt.Sprintf("%d/%d", cov, len(o.Names)), f4(maxAbsErr(o.Mean, logitTruth)), f4(maxDiff),
			strconv.FormatBool(maxDiff <= glmerTolerance), f1(mb(o.PeakRSSKB)), f1(o.Load), f1(gs), f1(lf.glmer), f1(lf.glmmTMB), f1(lf.advi)})
		log.Printf("%s: %s after %d iterations; read %.3f s, build %.3f s, fit to convergence %.3f s (start included), final bound %.3f s, summary %.3f s: total %.3f s (%.3f s without the final bound; target %.0f s); %d/%d intervals cover the truth; max |beta - glmer| %.4f; peak RSS %.0f MB",
			lf.name, o.Status, o.Iterations, o.SecRead, o.SecBuild, o.SecConv, o.SecFinal, o.SecSummary, total, totalConv, lf.target,
			cov, len(o.Names), maxDiff, mb(o.PeakRSSKB))
	}
	if err := benchio.WriteCSV(filepath.Join(outDir, "logit.csv"), summary); err != nil {
		return err
	}
	return benchio.WriteCSV(filepath.Join(outDir, "logit_beta.csv"), betas)
}
