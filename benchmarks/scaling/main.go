// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command scaling measures how sparsevi's fits scale with the number of
// subjects and of cores (issue 7), and compares it with established GLMM
// software on the simulated logistic data sets they were timed on.
//
// Usage:
//
//	go run ./benchmarks/scaling -out DIR [-quick] [-n 1000,10000,100000,1000000]
//	    [-models bernoulli-ri,poisson-ris] [-methods gva,rvb] [-workers 1,2]
//	    [-seed 1] [-max-iter 0] [-time-limit 0] [-batch 0] [-profile DIR] [-resume] [-reps 1]
//	go run ./benchmarks/scaling -out DIR -logit DATADIR [-quick] [-glmer FILE]
//
// Every fit uses vi's default settings unless the experiment flags -tol,
// -final-draws, -crn-draws (ConvergenceDraws), -alpha0, -refine, -patience or -window (vi.Settings fields of
// the same names) or -max-iter, -time-limit say otherwise; issue 7's numbers
// are those of the defaults.
//
// # Scaling
//
// For each model, number of subjects n, method and worker count, the data are
// simulated with datasets.Simulate (7 observations per subject, a seed fixed
// by the model and n, see simSeed) and fitted with vi.Fit from the default
// start with the default step rule (Snngm) and default settings:
//
//	bernoulli-ri   y ~ 1 + t + x1 + x2 + x3 + (1 | id), Bernoulli, p = 5,
//	               beta = (-1, 0.5, 0.5, -0.5, 1), random-intercept sd 1
//	poisson-ris    y ~ 1 + t + x1 + x2 + (1 + t | id), Poisson, p = 4,
//	               beta = (0.5, -0.5, 0.25, -0.25), sd (0.5, 0.4), corr -0.25
//
// Methods: gva is vi.GVA on the glmm model; rvb is vi.BlockDiag on the rvb target
// of rvb.Default(family) (RVB2 for Bernoulli, RVB1 for Poisson); rvb-start
// is vi.BlockDiag on RVB1 expanded at the model's start (rvb.NewAtStart,
// glmmfit's default for both models), whose start is computed before the
// fit (in sec_setup). With -batch the RVB methods fit by stochastic updates
// over minibatches of subjects (vi.Stochastic).
//
// Every fit runs in a child process (the program re-executes itself with a
// hidden flag) so that the peak resident set size, the child's rusage
// Maxrss, belongs to that fit alone: simulation, model building and the fit.
// The child runs with GOMAXPROCS equal to the number of workers, so that a
// 1-worker fit uses one core also for the start and the garbage collector.
//
// scaling.csv has one row per fit:
//
//	model, family, n, obs, p, r, method (gva, rvb1, rvb2), workers, status,
//	iterations, windows,
//	sec_per_iter      (Elapsed(last window) - Elapsed(first)) / (Iter(last) -
//	                  Iter(first)) from the trace: iterations and the
//	                  convergence test's bound at 8 fixed draws per window
//	cpu_per_iter      the same in CPU seconds of the child (all its threads),
//	                  which other jobs on the machine disturb less
//	sec_start         the start (mode and curvature, factorisation) as the
//	                  first window's elapsed time minus its iterations at
//	                  sec_per_iter: an estimate
//	sec_converge      wall time to convergence, start included: the elapsed
//	                  time of the last window
//	sec_final_bound   the final lower-bound estimate (FinalDraws fresh
//	                  draws) after convergence
//	sec_fit           vi.Fit's wall time: sec_converge + sec_final_bound
//	cpu_fit           the CPU time (user and system) of the child during
//	                  vi.Fit: at most workers x sec_fit; less when other
//	                  jobs share the cores
//	sec_setup         simulating the data and building the model (and
//	                  rvb-start's start)
//	lower_bound, lower_bound_se, max_abs_beta_err (posterior means against
//	the truth), beta_covered (how many of the p 95% intervals cover the
//	truth), peak_rss_mb (the child's Maxrss), setup_rss_mb (the child's peak
//	before vi.Fit), heap_setup_mb (live heap after setup, the frame freed),
//	load1 (the machine's 1-minute load average after the fit: other jobs
//	on the cores slow the fits down)
//
// slopes.csv holds, for each model, method and worker count, the least-squares
// slope of log10(sec_per_iter) on log10(n) over 10^4 <= n <= 10^6 (over all
// n when fewer than two lie in that range), and speedup.csv the speed-ups
// sec_per_iter(1 worker)/sec_per_iter(w) and sec_converge(1)/sec_converge(w).
// The plots are time_per_iter.png (log-log, slopes in the legend),
// time_to_converge.png, speedup.png (speed-up against workers at the largest
// n) and speedup_n.png (speed-up at the most workers against n).
//
// Every run appends a line to DIR/build.txt with the revision the binary
// was built from (git=, when go build stamped it) or else that of the
// working directory (cwd-git=), and the command line.
//
// -quick is the CI run: n = 10^3 and 10^4 with at most 300 iterations (six
// windows) and 100 final draws per fit, under two minutes on two idle cores.
// It exercises every output and measures the time per iteration; the fits
// stop at the iteration limit, so it does not measure convergence.
// -resume keeps the fits already in DIR/scaling.csv and runs the others, so
// that a long run can be continued or extended (say by -n 1000000 -methods
// gva) and the summaries and plots cover all of them.
// -reps K runs every fit K times, the worker counts taking turns, and keeps
// the run with the median time per iteration: on a shared virtual machine
// single runs of the same fit vary by 20% and more.
// -profile DIR writes a CPU profile and a heap profile (at the end of the fit)
// of every child to DIR.
//
// # Logistic comparison
//
// With -logit DATADIR the program instead fits y ~ x1 + x2 + x3 + (1 | id),
// Bernoulli, to sim_logit_n10000.csv and sim_logit_n100000.csv.gz in DATADIR
// (only the first with -quick), the files other GLMM software was timed on,
// with default settings (GVA, Snngm), each in a child process, and writes
// logit.csv (times: reading, building, the fit to convergence, the final
// bound, the summary, the total; CPU time of the fit, peak memory, load) and logit_beta.csv (posterior
// mean, sd and 95% interval of each beta, whether it covers the truth
// beta = (-1, 0.5, -0.5, 1), and the difference from glmer's estimate in
// the committed glmer_estimates.csv, made by the optional script glmer.R).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"strconv"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
)

func main() {
	log.SetFlags(0)
	log.SetPrefix("scaling: ")
	outDir := flag.String("out", ".", "output directory")
	quick := flag.Bool("quick", false, "a CI-sized run: n = 1000 and 10000 (the first logit file only with -logit)")
	nFlag := flag.String("n", "1000,10000,100000,1000000", "comma-separated numbers of subjects")
	modelsFlag := flag.String("models", "bernoulli-ri,poisson-ris", "comma-separated models: bernoulli-ri, poisson-ris")
	methodsFlag := flag.String("methods", "gva,rvb", "comma-separated methods: gva, rvb, rvb-start")
	workersFlag := flag.String("workers", "1,2", "comma-separated worker counts")
	var tune job
	flag.Uint64Var(&tune.Seed, "seed", 1, "seed of the fits")
	flag.IntVar(&tune.MaxIter, "max-iter", 0, "iteration limit of each fit (0: vi's default)")
	flag.DurationVar(&tune.TimeLimit, "time-limit", 0, "time limit of each fit (0: none)")
	flag.Float64Var(&tune.Tol, "tol", 0, "experiment: vi Settings.Tol (0: the default)")
	flag.IntVar(&tune.FinalDraws, "final-draws", 0, "experiment: vi Settings.FinalDraws (0: the default)")
	flag.IntVar(&tune.CRNDraws, "crn-draws", 0, "experiment: vi Settings.ConvergenceDraws (0: the default)")
	flag.Float64Var(&tune.Alpha0, "alpha0", 0, "experiment: vi.Snngm.Alpha0 (0: the default)")
	flag.IntVar(&tune.Refine, "refine", 0, "experiment: vi Settings.Refine (0: the default, negative: none)")
	flag.IntVar(&tune.Patience, "patience", 0, "experiment: vi Settings.Patience (0: the default)")
	flag.IntVar(&tune.Window, "window", 0, "experiment: vi Settings.Window (0: the default)")
	flag.IntVar(&tune.Batch, "batch", 0, "RVB methods: stochastic updates over minibatches of this many subjects (vi.Stochastic; 0: the full batch)")
	profile := flag.String("profile", "", "directory for CPU and heap profiles of every child")
	logitDir := flag.String("logit", "", "run the logistic comparison on the sim_logit files in this directory")
	glmerFile := flag.String("glmer", "", "glmer estimates (default: glmer_estimates.csv next to this program's source, found from the working directory)")
	reps := flag.Int("reps", 1, "runs of every fit; the one with the median time per iteration is kept")
	resume := flag.Bool("resume", false, "keep the fits of an existing scaling.csv in -out and run only the missing ones")
	child := flag.String("child", "", "internal: run one fit described by this JSON and print its result")
	flag.Parse()

	if *child != "" {
		if err := runChild(*child); err != nil {
			log.Fatal(err)
		}
		return
	}
	if err := os.MkdirAll(*outDir, 0o755); err != nil {
		log.Fatal(err)
	}
	if err := noteBuild(*outDir); err != nil {
		log.Fatal(err)
	}
	if *profile != "" {
		if err := os.MkdirAll(*profile, 0o755); err != nil {
			log.Fatal(err)
		}
	}
	if *logitDir != "" {
		if err := runLogit(*logitDir, *outDir, *glmerFile, *quick, tune, *profile); err != nil {
			log.Fatal(err)
		}
		return
	}

	ns, err := ints(*nFlag)
	if err != nil {
		log.Fatalf("-n: %v", err)
	}
	if *quick {
		// CI: per-iteration times and every output, not convergence.
		ns = []int{1000, 10000}
		if tune.MaxIter == 0 {
			tune.MaxIter = quickMaxIter
		}
		if tune.FinalDraws == 0 {
			tune.FinalDraws = quickFinalDraws
		}
	}
	workers, err := ints(*workersFlag)
	if err != nil {
		log.Fatalf("-workers: %v", err)
	}
	var models []model
	for _, name := range benchio.List(*modelsFlag) {
		m, ok := modelByName(name)
		if !ok {
			log.Fatalf("unknown model %q", name)
		}
		models = append(models, m)
	}
	methods := benchio.List(*methodsFlag)
	for _, m := range methods {
		if m != "gva" && m != "rvb" && m != "rvb-start" {
			log.Fatalf("unknown method %q (gva, rvb or rvb-start)", m)
		}
		if m == "gva" && tune.Batch > 0 {
			log.Fatal("-batch needs an RVB method (rvb or rvb-start)")
		}
	}
	cfg := scalingConfig{
		models: models, ns: ns, methods: methods, workers: workers,
		settings: tune, outDir: *outDir, profile: *profile, resume: *resume, reps: *reps,
	}
	if err := runScaling(cfg); err != nil {
		log.Fatal(err)
	}
}

// The iteration limit and final draws of -quick, unless set by flags.
const (
	quickMaxIter    = 300
	quickFinalDraws = 100
)

func ints(s string) ([]int, error) {
	var out []int
	for _, f := range benchio.List(s) {
		v, err := strconv.Atoi(f)
		if err != nil || v < 1 {
			return nil, fmt.Errorf("%q is not a positive integer", f)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	return out, nil
}
