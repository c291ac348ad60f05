// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command everyday times glmmfit's default run against lme4 and glmmTMB
// on the everyday models of the shipped data sets (gaussian and negative
// binomial families, crossed random effects), as a user meets them: whole
// processes from the CSV file to the printed summary. Each repetition runs
// every tool on every model, the order of the tools rotating from one
// repetition to the next; it records each run's wall time and the load
// average before it, and prints the medians and the ratios of each peer's
// median to glmmfit's. R's runs include its start-up and package loading.
//
// Usage, from the repository root (Rscript with lme4 and glmmTMB installed;
// tools whose program is missing are skipped):
//
//	go run ./benchmarks/everyday -data ../shared/datasets -reps 3 -out benchmarks/everyday/results.md
//
// -models and -tools time some of them: -models insteval -tools
// glmmfit,lme4 times insteval against lmer alone.
package main

import (
	"flag"
	"fmt"
	"log"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
	"github.com/sparsevi/sparsevi/datasets"
)

// model is one everyday model: glmmfit's call and R's.
type model struct {
	data, family, formula string
	// r calls the peers: %s is the data frame; factors lists the columns
	// R must treat as factors.
	lmer, tmb string
	factors   []string
}

var models = []model{
	{"sleepstudy", "gaussian", "Reaction ~ Days + (Days | Subject)",
		"lmer(Reaction ~ Days + (Days | Subject), data = d, REML = FALSE)",
		"glmmTMB(Reaction ~ Days + (Days | Subject), data = d)", []string{"Subject"}},
	{"penicillin", "gaussian", "diameter ~ 1 + (1 | plate) + (1 | sample)",
		"lmer(diameter ~ 1 + (1 | plate) + (1 | sample), data = d, REML = FALSE)",
		"glmmTMB(diameter ~ 1 + (1 | plate) + (1 | sample), data = d)", []string{"plate", "sample"}},
	{"verbagg", "bernoulli", "r2 ~ Anger + Gender + btype + situ + (1 | id) + (1 | item)",
		"glmer(r2 ~ Anger + Gender + btype + situ + (1 | id) + (1 | item), data = d, family = binomial)",
		"glmmTMB(r2 ~ Anger + Gender + btype + situ + (1 | id) + (1 | item), data = d, family = binomial)", []string{"id", "item", "r2"}},
	{"salamanders", "negbinomial", "count ~ spp * mined + (1 | site)",
		"", "glmmTMB(count ~ spp * mined + (1 | site), data = d, family = nbinom2)", []string{"site"}},
	{"owls", "negbinomial", "SiblingNegotiation ~ FoodTreatment * SexParent + offset(logBroodSize) + (1 | Nest)",
		"", "glmmTMB(SiblingNegotiation ~ FoodTreatment * SexParent + offset(logBroodSize) + (1 | Nest), data = d, family = nbinom2)", []string{"Nest"}},
	{"arabidopsis", "poisson", "total.fruits ~ factor(nutrient) * amd + factor(rack) + status + (1 | popu) + (1 | gen)",
		"glmer(total.fruits ~ factor(nutrient) * amd + factor(rack) + status + (1 | popu) + (1 | gen), data = d, family = poisson)",
		"glmmTMB(total.fruits ~ factor(nutrient) * amd + factor(rack) + status + (1 | popu) + (1 | gen), data = d, family = poisson)", []string{"popu", "gen"}},
	// service is 0/1: a number to glmmfit, a factor to R, the same model.
	{"insteval", "gaussian", "y ~ service + (1 | s) + (1 | d) + (1 | dept)",
		"lmer(y ~ service + (1 | s) + (1 | d) + (1 | dept), data = d, REML = FALSE)",
		"glmmTMB(y ~ service + (1 | s) + (1 | d) + (1 | dept), data = d)", []string{"s", "d", "dept", "service"}},
}

func main() {
	dir := flag.String("data", "", "data directory (default $SPARSEVI_DATA or ../shared/datasets)")
	reps := flag.Int("reps", 3, "repetitions")
	out := flag.String("out", "", "write the summary (Markdown) there as well")
	only := flag.String("models", "", "fit only these data sets' models (comma-separated; default all)")
	toolList := flag.String("tools", "glmmfit,lme4,glmmTMB", "tools to time (comma-separated)")
	flag.Parse()
	if *only != "" {
		keep := strings.Split(*only, ",")
		models = slices.DeleteFunc(models, func(m model) bool { return !slices.Contains(keep, m.data) })
		if len(models) == 0 {
			log.Fatalf("no model of data set %s", *only)
		}
	}
	data := datasets.DataDir(*dir)
	bin, cleanup, err := benchio.BuildGlmmfit()
	if err != nil {
		log.Fatal(err)
	}
	defer cleanup()
	_, rErr := exec.LookPath("Rscript")
	type run struct {
		model, tool string
		secs, load  float64
	}
	var runs []run
	tools := strings.Split(*toolList, ",")
	for rep := range *reps {
		for _, m := range models {
			order := slices.Clone(tools)
			for range rep % len(order) {
				order = append(order[1:], order[0])
			}
			for _, tl := range order {
				cmd := command(tl, m, bin, data)
				if cmd == nil || (tl != "glmmfit" && rErr != nil) {
					continue
				}
				load := benchio.LoadAverage()
				start := time.Now()
				if b, err := cmd.CombinedOutput(); err != nil {
					log.Fatalf("%s on %s: %v\n%s", tl, m.data, err, b)
				}
				runs = append(runs, run{m.data, tl, time.Since(start).Seconds(), load})
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Whole processes, CSV to printed summary, medians of %d repetitions (load average %.2f to %.2f).\n\n", *reps, minOf(runs, func(r run) float64 { return r.load }), maxOf(runs, func(r run) float64 { return r.load }))
	b.WriteString("| data | glmmfit | lme4 | glmmTMB | lme4 / glmmfit | glmmTMB / glmmfit |\n|---|---|---|---|---|---|\n")
	for _, m := range models {
		med := map[string]float64{}
		for _, tl := range tools {
			var s []float64
			for _, r := range runs {
				if r.model == m.data && r.tool == tl {
					s = append(s, r.secs)
				}
			}
			if len(s) > 0 {
				slices.Sort(s)
				med[tl] = s[len(s)/2]
			}
		}
		cell := func(tl string) string {
			if v, ok := med[tl]; ok {
				return fmt.Sprintf("%.2f s", v)
			}
			return "–"
		}
		ratio := func(tl string) string {
			if v, ok := med[tl]; ok && med["glmmfit"] > 0 {
				return fmt.Sprintf("%.1f×", v/med["glmmfit"])
			}
			return "–"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", m.data, cell("glmmfit"), cell("lme4"), cell("glmmTMB"), ratio("lme4"), ratio("glmmTMB"))
	}
	fmt.Print(b.String())
	if *out != "" {
		if err := benchio.WriteFile(*out, []byte(b.String())); err != nil {
			log.Fatal(err)
		}
	}
}

// command returns the process that fits m with tool, or nil if the tool
// does not fit m.
func command(tool string, m model, bin, data string) *exec.Cmd {
	file := filepath.Join(data, m.data+".csv")
	switch tool {
	case "glmmfit":
		return exec.Command(bin, "fit", "-data", file, "-formula", m.formula, "-family", m.family)
	case "lme4", "glmmTMB":
		call := m.lmer
		lib := "lme4"
		if tool == "glmmTMB" {
			call, lib = m.tmb, "glmmTMB"
		}
		if call == "" {
			return nil
		}
		var f strings.Builder
		for _, c := range m.factors {
			fmt.Fprintf(&f, "d$%s <- factor(d$%s); ", c, c)
		}
		script := fmt.Sprintf("suppressPackageStartupMessages(library(%s)); d <- read.csv(%q); %sprint(summary(%s))", lib, file, f.String(), call)
		return exec.Command("Rscript", "-e", script)
	}
	return nil
}

func minOf[T any](xs []T, f func(T) float64) float64 {
	v := f(xs[0])
	for _, x := range xs {
		v = min(v, f(x))
	}
	return v
}

func maxOf[T any](xs []T, f func(T) float64) float64 {
	v := f(xs[0])
	for _, x := range xs {
		v = max(v, f(x))
	}
	return v
}
