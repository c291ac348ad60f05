// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command diagnostic fits every shipped data set with its usual model by
// glmmfit's defaults and tabulates what the approximation says of itself:
// the method auto chose, the lower bound, the Pareto k of the importance
// ratios over every variable, and, from the correction of theta_g
// (-correct; run with -correct always where the default does not run it),
// the Pareto k of q's marginal of theta_g and of the proposal it used, the
// estimate of log p(y) and the first random-effect sd corrected, beside
// the Gaussian approximation's. A model glmmfit refuses is
// listed with the first line of its message. A second table gives the
// summaries' time against the fit's on 10^4 and 10^5 simulated subjects.
//
// Usage, from the repository root:
//
//	go run ./benchmarks/diagnostic -data ../shared/datasets -out benchmarks/diagnostic/results.md
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
	"github.com/sparsevi/sparsevi/datasets"
)

// fit is one data set with its usual model (../shared/datasets/README.md):
// glmmfit's arguments after -data or -dataset.
type fit struct {
	name string
	args []string
	// skip, if not empty, says why -correct always is not run.
	skip string
}

var fits = []fit{
	{"epilepsy", []string{"-data", "epilepsy.csv", "-family", "poisson", "-formula", "y ~ lbase*trt + lage + V4 + (1 + V4 | subject)"}, ""},
	{"toenail", []string{"-data", "toenail.csv", "-ref", "outcome=none or mild", "-formula", "outcome ~ treatment*time + (1 | patientID)"}, ""},
	{"hers", []string{"-dataset", "hers"}, ""},
	{"cbpp", []string{"-data", "cbpp.csv", "-formula", "cbind(incidence, size - incidence) ~ factor(period) + (1 | herd)"}, ""},
	{"grouseticks", []string{"-data", "grouseticks.csv", "-family", "poisson", "-formula", "TICKS ~ factor(YEAR) + cHEIGHT + (1 | BROOD)"}, ""},
	{"diabetes", []string{"-dataset", "diabetes"}, ""},
	{"sim_logit_n1000", []string{"-data", "sim_logit_n1000.csv", "-family", "bernoulli", "-formula", "y ~ x1 + x2 + x3 + (1 | id)"}, ""},
	{"sleepstudy", []string{"-data", "sleepstudy.csv", "-family", "gaussian", "-formula", "Reaction ~ Days + (Days | Subject)"}, ""},
	{"penicillin", []string{"-data", "penicillin.csv", "-family", "gaussian", "-formula", "diameter ~ 1 + (1 | plate) + (1 | sample)"}, ""},
	{"verbagg", []string{"-data", "verbagg.csv", "-family", "bernoulli", "-formula", "r2 ~ Anger + Gender + btype + situ + (1 | id) + (1 | item)"}, ""},
	{"salamanders", []string{"-data", "salamanders.csv", "-family", "negbinomial", "-formula", "count ~ spp * mined + (1 | site)"}, ""},
	{"owls", []string{"-data", "owls.csv", "-family", "negbinomial", "-formula", "SiblingNegotiation ~ FoodTreatment * SexParent + offset(logBroodSize) + (1 | Nest)"}, ""},
	{"arabidopsis", []string{"-data", "arabidopsis.csv", "-family", "poisson", "-formula", "total.fruits ~ factor(nutrient) * amd + factor(rack) + status + (1 | popu) + (1 | gen)"}, ""},
	{"insteval", []string{"-data", "insteval.csv", "-family", "gaussian", "-formula", "y ~ service + (1 | s) + (1 | d) + (1 | dept)"},
		"not run: with G = 1148 the adapted proposal's Laplace step alone takes 2G(G+1) = 2.6 million evaluations of log p(y \\| θ_g), each over 2972 students"},
}

// budgetFits are the files of issue 13's summary budget: the summaries
// may take at most a tenth of the fit's time at 10^4 and 10^5 subjects.
var budgetFits = []string{"sim_logit_n10000.csv", "sim_logit_n100000.csv.gz"}

// result is what the table needs of glmmfit's JSON document.
type result struct {
	Timings struct {
		Fit     float64 `json:"fit_seconds"`
		Summary float64 `json:"summary_seconds"`
	} `json:"timings"`
	Options struct {
		Method string `json:"method"`
	} `json:"options"`
	Data struct {
		Subjects int `json:"subjects"`
	} `json:"data"`
	LowerBound struct {
		Value   *float64 `json:"value"`
		ParetoK *struct {
			K     float64 `json:"k"`
			Draws int     `json:"draws"`
		} `json:"pareto_k"`
		LogMarginal *struct {
			Value, SE float64
		} `json:"log_marginal"`
	} `json:"lower_bound"`
	RESD []struct {
		Name     string  `json:"name"`
		Estimate float64 `json:"estimate"`
		EstError float64 `json:"est_error"`
	} `json:"re_sd"`
	Correction *struct {
		Ran     bool    `json:"ran"`
		Reason  string  `json:"reason"`
		QK      float64 `json:"q_k"`
		K       float64 `json:"k"`
		Draws   int     `json:"draws"`
		Seconds float64 `json:"seconds"`
	} `json:"correction"`
	PSISCorrected *struct {
		EffectiveDraws float64 `json:"effective_draws"`
		RESD           []struct {
			Estimate float64 `json:"estimate"`
			EstError float64 `json:"est_error"`
		} `json:"re_sd"`
	} `json:"psis_corrected"`
}

func main() {
	dir := flag.String("data", "", "data directory (default $SPARSEVI_DATA or ../shared/datasets)")
	out := flag.String("out", "", "write the table (Markdown) there as well")
	flag.Parse()
	data, err := filepath.Abs(datasets.DataDir(*dir))
	if err != nil {
		log.Fatal(err)
	}
	bin, cleanup, err := benchio.BuildGlmmfit()
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	var md strings.Builder
	fmt.Fprintf(&md, "| data | method | lower bound | Pareto k (draws) | theta_g: k of q, corrected (draws) | log p(y) | first sd: q | first sd: corrected | seconds | correction (s) |\n")
	fmt.Fprintf(&md, "|---|---|---|---|---|---|---|---|---|---|\n")
	for _, f := range fits {
		args := []string{"fit", "-format", "json", "-quiet"}
		for i := 0; i < len(f.args); i++ {
			switch a := f.args[i]; a {
			case "-data":
				i++
				args = append(args, "-data", filepath.Join(data, f.args[i]))
			case "-dataset":
				args = append(args, "-data-dir", data, a)
			default:
				args = append(args, a)
			}
		}
		if _, err := os.Stat(filepath.Join(data, f.name+".csv")); err != nil && !strings.HasPrefix(f.args[0], "-dataset") {
			fmt.Fprintf(&md, "| %s | (data not found) | | | | | | | | |\n", f.name)
			continue
		}
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		start := time.Now()
		err := cmd.Run()
		secs := time.Since(start).Seconds()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 3) {
			msg, _, _ := strings.Cut(strings.TrimPrefix(stderr.String(), "glmmfit: "), "\n")
			if len(msg) > 120 {
				msg = msg[:120] + "…"
			}
			fmt.Fprintf(&md, "| %s | refused: %s | | | | | | | %.2f | |\n", f.name, strings.ReplaceAll(msg, "|", "\\|"), secs)
			continue
		}
		var r result
		if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
			log.Fatalf("%s: %v", f.name, err)
		}
		// The correction of theta_g by importance sampling, run whether
		// or not the default runs it.
		c := r
		if (r.Correction == nil || !r.Correction.Ran) && f.skip == "" {
			out, err := exec.Command(bin, append(args, "-correct", "always")...).Output()
			if err != nil {
				log.Fatalf("%s -correct always: %v", f.name, err)
			}
			c = result{}
			if err := json.Unmarshal(out, &c); err != nil {
				log.Fatalf("%s: %v", f.name, err)
			}
		}
		bound, k, kg, lp, sdQ, sdC, cs := "–", "–", "–", "–", "–", "–", "–"
		if v := r.LowerBound.Value; v != nil {
			bound = fmt.Sprintf("%.2f", *v)
		}
		if pk := r.LowerBound.ParetoK; pk != nil {
			k = fmt.Sprintf("%.2f (%d)", pk.K, pk.Draws)
		}
		if cr := c.Correction; cr != nil && cr.Ran {
			kg = fmt.Sprintf("%.2f, %.2f (%d)", cr.QK, cr.K, cr.Draws)
			cs = fmt.Sprintf("%.2f", cr.Seconds)
		} else if f.skip != "" {
			kg = f.skip
		} else if cr != nil {
			kg = cr.Reason
		}
		if m := c.LowerBound.LogMarginal; m != nil {
			lp = fmt.Sprintf("%.2f ± %.2f", m.Value, m.SE)
		}
		if len(r.RESD) > 0 {
			sdQ = fmt.Sprintf("%s %.3f ± %.3f", r.RESD[0].Name, r.RESD[0].Estimate, r.RESD[0].EstError)
		}
		if pc := c.PSISCorrected; pc != nil && len(pc.RESD) > 0 {
			sdC = fmt.Sprintf("%.3f ± %.3f (%.0f effective)", pc.RESD[0].Estimate, pc.RESD[0].EstError, math.Round(pc.EffectiveDraws))
		}
		fmt.Fprintf(&md, "| %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %s |\n", f.name, r.Options.Method, bound, k, kg, lp, sdQ, sdC, secs, cs)
	}
	// The summaries' share of the time, by the default, by RVB2 (issue
	// 13's default then) and by GVA.
	fmt.Fprintf(&md, "\n| data | method | fit (s) | summaries (s) | summaries / fit |\n|---|---|---|---|---|\n")
	for _, name := range budgetFits {
		for _, method := range []string{"auto", "rvb2", "gva"} {
			cmd := exec.Command(bin, "fit", "-format", "json", "-quiet", "-method", method, "-data", filepath.Join(data, name),
				"-family", "bernoulli", "-formula", "y ~ x1 + x2 + x3 + (1 | id)")
			out, err := cmd.Output()
			if err != nil {
				log.Fatalf("%s %s: %v", name, method, err)
			}
			var r result
			if err := json.Unmarshal(out, &r); err != nil {
				log.Fatalf("%s: %v", name, err)
			}
			fmt.Fprintf(&md, "| %s | %s | %.2f | %.3f | %.1f%% |\n", name, r.Options.Method, r.Timings.Fit, r.Timings.Summary, 100*r.Timings.Summary/r.Timings.Fit)
		}
	}
	fmt.Print(md.String())
	if *out != "" {
		if err := os.WriteFile(*out, []byte(md.String()), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
