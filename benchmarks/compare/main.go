// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command compare times glmmfit against glmer and glmmTMB as a user meets
// them: whole processes, from the CSV file to the printed summary, with
// every tool's defaults.
//
// It builds glmmfit once, then runs every tool on every file in turn, the
// order of the tools rotating from one repetition to the next so that a
// burst of load on the shared machine falls on each of them alike, and
// records each run's wall time, peak memory and the load average before
// it. The model is the Bernoulli random-intercept model of the simulated
// files, y ~ x1 + x2 + x3 + (1 | id). R's runs include its start-up and
// package loading, as a user waits for them.
//
// Usage, from the repository root:
//
//	go run ./benchmarks/compare -out results -reps 3
//	go run ./benchmarks/compare -quick -out /tmp/compare
//
// It writes runs.csv (every run) and summary.md (medians and the ratios of
// each peer's median to glmmfit's default, then what each glmmfit method
// reached: the lower bound and the random-intercept sd with its posterior
// sd, the evidence behind -method auto). Tools whose program is missing
// (Rscript, or an R package) are skipped with a printed line.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
)

// formula is the model of the simulated files, as glmmfit reads it.
const formula = "y ~ x1 + x2 + x3 + (1 | id)"

// tool is one way of fitting the model, run as a whole process.
type tool struct {
	name string
	// args returns the command line for the data file or the named data set.
	args func(bin, file, dataset string) []string
	// peer marks R tools, which run only on files, not named data sets.
	peer bool
}

func glmmfitTool(name string, extra ...string) tool {
	return tool{name: name, args: func(bin, file, dataset string) []string {
		a := []string{bin, "fit", "-format", "json"}
		if dataset != "" {
			a = append(a, "-dataset", dataset)
		} else {
			a = append(a, "-data", file, "-formula", formula, "-family", "bernoulli")
		}
		return append(a, extra...)
	}}
}

func rTool(name, script string) tool {
	return tool{name: name, peer: true, args: func(_, file, _ string) []string {
		return []string{"Rscript", script, name, file}
	}}
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

func run() error {
	dataDir := flag.String("data-dir", defaultDataDir(), "directory of the data sets")
	out := flag.String("out", "results", "output directory")
	files := flag.String("files", "sim_logit_n1000.csv,sim_logit_n10000.csv,sim_logit_n100000.csv.gz", "simulated files to fit (comma-separated)")
	datasets := flag.String("datasets", "toenail,epilepsy,cbpp,hers", "the paper's data sets to fit with glmmfit's defaults (comma-separated)")
	tools := flag.String("tools", "default,gva,rvb1,rvb1-jeffreys,rvb2,glmer,glmmtmb", "tools to time: default, gva, rvb1, rvb1-jeffreys, rvb2 (glmmfit's methods), glmer, glmmtmb")
	reps := flag.Int("reps", 3, "repetitions of every run")
	timeout := flag.Duration("timeout", 30*time.Minute, "time limit of one run")
	quick := flag.Bool("quick", false, "CI-sized: the smallest file, one repetition, glmmfit only")
	flag.Parse()
	if *quick {
		*files, *datasets, *tools, *reps = "sim_logit_n1000.csv", "toenail", "default,gva", 1
	}
	if *reps < 1 {
		return fmt.Errorf("-reps %d: want at least 1", *reps)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}

	all := map[string]tool{
		"default":       glmmfitTool("default"),
		"gva":           glmmfitTool("gva", "-method", "gva"),
		"rvb1":          glmmfitTool("rvb1", "-method", "rvb1"),
		"rvb1-jeffreys": glmmfitTool("rvb1-jeffreys", "-method", "rvb1", "-expansion", "jeffreys"),
		"rvb2":          glmmfitTool("rvb2", "-method", "rvb2"),
		"glmer":         rTool("glmer", filepath.Join("benchmarks", "compare", "peers.R")),
		"glmmtmb":       rTool("glmmtmb", filepath.Join("benchmarks", "compare", "peers.R")),
	}
	var use []tool
	for _, name := range benchio.List(*tools) {
		t, ok := all[name]
		if !ok {
			return fmt.Errorf("-tools: unknown tool %q (want default, gva, rvb1, rvb1-jeffreys, rvb2, glmer or glmmtmb)", name)
		}
		if t.peer && !rPackageAvailable(name) {
			fmt.Printf("skipping %s: Rscript or its R package is not installed\n", name)
			continue
		}
		use = append(use, t)
	}

	bin, cleanup, err := benchio.BuildGlmmfit()
	if err != nil {
		return err
	}
	defer cleanup()

	type job struct{ label, file, dataset string }
	var jobs []job
	for _, f := range benchio.List(*files) {
		path := filepath.Join(*dataDir, f)
		if _, err := os.Stat(path); err != nil {
			return fmt.Errorf("-files: %v", err)
		}
		jobs = append(jobs, job{label: f, file: path})
	}
	for _, d := range benchio.List(*datasets) {
		jobs = append(jobs, job{label: d, dataset: d})
	}

	rows := [][]string{{"rep", "data", "tool", "seconds", "max_rss_mb", "exit", "load1_before"}}
	times := map[[2]string][]float64{}
	fits := map[[2]string]fitSummary{}
	for rep := 0; rep < *reps; rep++ {
		for _, j := range jobs {
			for k := range use {
				t := use[(k+rep)%len(use)]
				if t.peer && j.file == "" {
					continue
				}
				argv := t.args(bin, j.file, j.dataset)
				if j.dataset != "" {
					argv = append(argv, "-data-dir", *dataDir)
				}
				load := benchio.LoadAverage()
				r := runOne(argv, *timeout)
				fmt.Printf("rep %d  %-26s %-8s %8.2f s  %6.0f MB  exit %d  load %.2f\n",
					rep+1, j.label, t.name, r.seconds, r.maxRSSMB, r.exit, load)
				if r.exit != 0 && r.exit != 3 {
					fmt.Printf("  %s\n", strings.TrimSpace(r.stderr))
				}
				rows = append(rows, []string{strconv.Itoa(rep + 1), j.label, t.name,
					fmt.Sprintf("%.3f", r.seconds), fmt.Sprintf("%.0f", r.maxRSSMB),
					strconv.Itoa(r.exit), fmt.Sprintf("%.2f", load)})
				if r.exit == 0 {
					times[[2]string{j.label, t.name}] = append(times[[2]string{j.label, t.name}], r.seconds)
				}
				if !t.peer && (r.exit == 0 || r.exit == 3) {
					fs, err := readFit(r.stdout)
					if err != nil {
						return fmt.Errorf("%s %s: %v", j.label, t.name, err)
					}
					fits[[2]string{j.label, t.name}] = fs
				}
			}
		}
	}
	if err := benchio.WriteCSV(filepath.Join(*out, "runs.csv"), rows); err != nil {
		return err
	}

	var md bytes.Buffer
	fmt.Fprintf(&md, "Whole-process wall time, median of %d runs (seconds); in brackets a peer's median over glmmfit's default.\n\n", *reps)
	fmt.Fprintf(&md, "| data |")
	for _, t := range use {
		fmt.Fprintf(&md, " %s |", t.name)
	}
	fmt.Fprintf(&md, "\n|---|%s\n", strings.Repeat("---|", len(use)))
	for _, j := range jobs {
		fmt.Fprintf(&md, "| %s |", j.label)
		def := median(times[[2]string{j.label, "default"}])
		for _, t := range use {
			m := median(times[[2]string{j.label, t.name}])
			switch {
			case math.IsNaN(m):
				fmt.Fprintf(&md, " — |")
			case t.peer && !math.IsNaN(def):
				fmt.Fprintf(&md, " %.2f (%.1fx) |", m, m/def)
			default:
				fmt.Fprintf(&md, " %.2f |", m)
			}
		}
		fmt.Fprintln(&md)
	}
	fmt.Fprintf(&md, "\nLoad average (1 min) before the runs: %s.\n", loadRange(rows))
	fmt.Fprintf(&md, "\nWhat glmmfit's methods reached: the lower bound (all constants included; higher is closer to the posterior) and the posterior mean ± sd of the first random-effect sd.\n\n")
	fmt.Fprintf(&md, "| data | tool | method | bound | %s |\n|---|---|---|---|---|\n", "random-effect sd")
	for _, j := range jobs {
		for _, t := range use {
			fs, ok := fits[[2]string{j.label, t.name}]
			if !ok {
				continue
			}
			fmt.Fprintf(&md, "| %s | %s | %s | %.2f | %s %.4f ± %.4f |\n", j.label, t.name, fs.method, fs.bound, fs.sdName, fs.sd, fs.sdError)
		}
	}
	if err := benchio.WriteFile(filepath.Join(*out, "summary.md"), md.Bytes()); err != nil {
		return err
	}
	fmt.Print("\n", md.String())
	return nil
}

// result is what one timed process did.
type result struct {
	seconds  float64
	maxRSSMB float64
	exit     int
	stdout   []byte
	stderr   string
}

// fitSummary is what a glmmfit run reached, from its JSON document.
type fitSummary struct {
	method      string
	bound       float64
	sdName      string
	sd, sdError float64
}

// readFit reads the figures of fitSummary from glmmfit's JSON output.
func readFit(out []byte) (fitSummary, error) {
	var doc struct {
		Options struct {
			Method string `json:"method"`
		} `json:"options"`
		LowerBound struct {
			Value float64 `json:"value"`
		} `json:"lower_bound"`
		RESD []struct {
			Name     string  `json:"name"`
			Estimate float64 `json:"estimate"`
			EstError float64 `json:"est_error"`
		} `json:"re_sd"`
	}
	if err := json.Unmarshal(out, &doc); err != nil {
		return fitSummary{}, fmt.Errorf("reading glmmfit's JSON: %v", err)
	}
	if len(doc.RESD) == 0 {
		return fitSummary{}, errors.New("glmmfit's JSON has no random-effect sd")
	}
	sd := doc.RESD[0]
	return fitSummary{method: doc.Options.Method, bound: doc.LowerBound.Value, sdName: sd.Name, sd: sd.Estimate, sdError: sd.EstError}, nil
}

func runOne(argv []string, timeout time.Duration) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err := cmd.Run()
	r := result{seconds: time.Since(start).Seconds(), maxRSSMB: maxRSSMB(cmd.ProcessState), stdout: stdout.Bytes(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		r.exit = ee.ExitCode()
	default:
		r.exit = -1
		r.stderr = err.Error()
	}
	return r
}

// rPackageAvailable reports whether Rscript runs and loads the tool's package.
func rPackageAvailable(tool string) bool {
	pkg := map[string]string{"glmer": "lme4", "glmmtmb": "glmmTMB"}[tool]
	return exec.Command("Rscript", "-e", fmt.Sprintf("quit(status = !requireNamespace(%q, quietly = TRUE))", pkg)).Run() == nil
}

func median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

func loadRange(rows [][]string) string {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[len(r)-1], 64)
		if err == nil && !math.IsNaN(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	if math.IsInf(lo, 1) {
		return "not available"
	}
	return fmt.Sprintf("%.2f to %.2f", lo, hi)
}

func defaultDataDir() string {
	if d := os.Getenv("SPARSEVI_DATA"); d != "" {
		return d
	}
	return filepath.Join("..", "shared", "datasets")
}
