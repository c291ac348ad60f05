// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
)

// model is a simulated GLMM of the scaling runs.
type model struct {
	Name   string
	Family string
	Beta   []float64
	RECov  [][]float64
	Index  uint64 // distinguishes the simulation seeds of the models
}

// obsPerSubject is the number of observations of every simulated subject.
const obsPerSubject = 7

var models = []model{
	{
		Name: "bernoulli-ri", Family: "bernoulli",
		Beta:  []float64{-1, 0.5, 0.5, -0.5, 1},
		RECov: [][]float64{{1}},
		Index: 1,
	},
	{
		Name: "poisson-ris", Family: "poisson",
		Beta: []float64{0.5, -0.5, 0.25, -0.25},
		// sd 0.5 and 0.4, correlation -0.25.
		RECov: [][]float64{{0.25, -0.05}, {-0.05, 0.16}},
		Index: 2,
	},
}

func modelByName(name string) (model, bool) {
	for _, m := range models {
		if m.Name == name {
			return m, true
		}
	}
	return model{}, false
}

// simSeed is the simulation seed of a model with n subjects: fixed, and
// different for every model and n.
func simSeed(m model, n int) uint64 { return 1_000_003*m.Index + uint64(n) }

// job is what a child process is asked to do: one scaling fit (Model set)
// or one fit of a logistic data file (File set).
type job struct {
	Model     string        `json:"model,omitempty"`
	N         int           `json:"n,omitempty"`
	Method    string        `json:"method,omitempty"` // gva, rvb or rvb-start
	File      string        `json:"file,omitempty"`
	Workers   int           `json:"workers"`
	Seed      uint64        `json:"seed"`
	MaxIter   int           `json:"max_iter,omitempty"`
	TimeLimit time.Duration `json:"time_limit,omitempty"`
	// Non-default settings for experiments; zero values are vi's defaults.
	Tol        float64 `json:"tol,omitempty"`
	FinalDraws int     `json:"final_draws,omitempty"`
	CRNDraws   int     `json:"crn_draws,omitempty"`
	Alpha0     float64 `json:"alpha0,omitempty"`
	Refine     int     `json:"refine,omitempty"`
	Patience   int     `json:"patience,omitempty"`
	Window     int     `json:"window,omitempty"`
	// Batch, when not zero, fits an RVB method by stochastic updates over
	// minibatches of Batch subjects (vi.Stochastic).
	Batch int `json:"batch,omitempty"`
	// Profile is the path prefix of the child's CPU and heap profiles, or
	// "" for none.
	Profile string `json:"profile,omitempty"`
}

// outcome is what a child reports back.
type outcome struct {
	Method     string  `json:"method"` // gva, rvb1, rvb2 or rvb1-start, with -batchN for stochastic updates
	N          int     `json:"n"`
	P          int     `json:"p"`
	R          int     `json:"r"`
	Obs        int     `json:"obs"`
	Status     string  `json:"status"`
	Err        string  `json:"err,omitempty"`
	Iterations int     `json:"iterations"`
	Windows    int     `json:"windows"`
	SecPerIter float64 `json:"sec_per_iter"`
	SecStart   float64 `json:"sec_start"`
	SecConv    float64 `json:"sec_converge"`
	SecFinal   float64 `json:"sec_final_bound"`
	SecFit     float64 `json:"sec_fit"`
	CPUFit     float64 `json:"cpu_fit"` // CPU seconds of the process during vi.Fit
	CPUPerIter float64 `json:"cpu_per_iter"`
	Load       float64 `json:"load"`      // 1-minute load average after vi.Fit
	SecRead    float64 `json:"sec_read"`  // logit: reading the file; scaling: simulating
	SecBuild   float64 `json:"sec_build"` // formula and model
	SecSummary float64 `json:"sec_summary"`
	LowerBound float64 `json:"lower_bound"`
	LowerSE    float64 `json:"lower_bound_se"`
	// Names, Mean and SD of beta (Gaussian marginals of q); Q025 and Q975
	// are the 95% interval.
	Names      []string  `json:"names"`
	Mean       []float64 `json:"mean"`
	SD         []float64 `json:"sd"`
	Q025       []float64 `json:"q025"`
	Q975       []float64 `json:"q975"`
	Truth      []float64 `json:"truth"`
	SetupRSSKB int64     `json:"setup_rss_kb"` // peak RSS before vi.Fit
	HeapSetup  uint64    `json:"heap_setup"`   // live heap before vi.Fit, bytes
	PeakRSSKB  int64     `json:"-"`            // filled in by the parent
	// Trace is the fit's trace: iteration, windowed bound, gain at the
	// common draws, step norm, elapsed seconds, CPU seconds of the process
	// since vi.Fit began.
	Trace [][6]float64 `json:"trace"`
	// GlobalMean and GlobalSD are the means and sds of the whole global
	// block under q (beta, then the random effects' parameters), at full
	// precision, for comparing fits.
	GlobalMean []float64 `json:"global_mean,omitempty"`
	GlobalSD   []float64 `json:"global_sd,omitempty"`
}

// nanSentinel stands for a non-finite float in the JSON between child and
// parent: encoding/json rejects NaN.
const nanSentinel = -1e300

// scalars returns the float fields of o that may be non-finite.
func (o *outcome) scalars() []*float64 {
	return []*float64{&o.SecPerIter, &o.SecStart, &o.SecConv, &o.SecFinal, &o.SecFit, &o.CPUFit, &o.CPUPerIter, &o.Load, &o.LowerBound, &o.LowerSE}
}

// spawn runs j in a child process with GOMAXPROCS set to gomaxprocs (0:
// inherited) and returns its outcome with the child's peak RSS.
func spawn(j job, gomaxprocs int) (*outcome, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, err
	}
	spec, err := json.Marshal(j)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(exe, "-child", string(spec))
	cmd.Env = os.Environ()
	if gomaxprocs > 0 {
		cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(gomaxprocs))
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("child %s: %w", spec, err)
	}
	var o outcome
	if err := json.Unmarshal(out.Bytes(), &o); err != nil {
		return nil, fmt.Errorf("child %s: reading its result: %w", spec, err)
	}
	for _, x := range o.scalars() {
		if *x == nanSentinel {
			*x = math.NaN()
		}
	}
	o.PeakRSSKB = maxRSSKB(cmd.ProcessState)
	return &o, nil
}

// runChild runs the job described by spec and prints its outcome as JSON.
func runChild(spec string) error {
	var j job
	if err := json.Unmarshal([]byte(spec), &j); err != nil {
		return fmt.Errorf("-child: %w", err)
	}
	var o *outcome
	var err error
	if j.File != "" {
		o, err = logitChild(j)
	} else {
		o, err = scalingChild(j)
	}
	if err != nil {
		return err
	}
	for _, x := range o.scalars() {
		if math.IsNaN(*x) || math.IsInf(*x, 0) {
			*x = nanSentinel
		}
	}
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	_, err = os.Stdout.Write(append(b, '\n'))
	return err
}

// scalingChild simulates the data of one scaling case and fits them.
func scalingChild(j job) (*outcome, error) {
	m, ok := modelByName(j.Model)
	if !ok {
		return nil, fmt.Errorf("unknown model %q", j.Model)
	}
	o := &outcome{Truth: m.Beta}
	t0 := time.Now()
	fr, truth, err := datasets.Simulate(datasets.SimSpec{
		Family: m.Family, Subjects: j.N, Obs: obsPerSubject,
		Beta: m.Beta, RECov: m.RECov, Seed: simSeed(m, j.N),
	})
	if err != nil {
		return nil, err
	}
	o.SecRead = time.Since(t0).Seconds()
	fam, err := glmm.ParseFamily(m.Family)
	if err != nil {
		return nil, err
	}
	mod, secBuild, err := build(truth.Formula, fr, fam)
	if err != nil {
		return nil, err
	}
	o.SecBuild = secBuild
	fr = nil
	if err := fit(j, mod, o, false); err != nil {
		return nil, err
	}
	return o, nil
}

// build makes the glmm model of formula src on fr.
func build(src string, fr *datasets.Frame, fam glmm.Family) (*glmm.Model, float64, error) {
	t0 := time.Now()
	f, err := formula.Parse(src)
	if err != nil {
		return nil, 0, err
	}
	// As glmmfit: the design takes the frame's covariates, frees the rest
	// of the data as it codes them, and drops its own copy of the data
	// once the model is made.
	d, err := formula.Build(f, fr, formula.Options{Family: fam, Release: true})
	if err != nil {
		return nil, 0, err
	}
	d.Compact()
	return d.Model(), time.Since(t0).Seconds(), nil
}

// fit fits mod by the job's method with default settings and fills in o.
// With summarize it computes the beta marginals with posterior.Summarize (GVA
// only), as a user would, and times it.
func fit(j job, mod *glmm.Model, o *outcome, summarize bool) error {
	n, r, g := mod.Dims()
	p := g - glmm.NumOmega(r)
	o.N, o.P, o.R, o.Obs = n, p, r, mod.NumObs()
	var target vi.Target = mod
	set := vi.Settings{Seed: j.Seed, Workers: j.Workers, MaxIter: j.MaxIter, TimeLimit: j.TimeLimit,
		Tol: j.Tol, FinalDraws: j.FinalDraws, ConvergenceDraws: j.CRNDraws, Rule: vi.Snngm{Alpha0: j.Alpha0}, Refine: j.Refine, Patience: j.Patience, Window: j.Window}
	o.Method = "gva"
	tTarget := time.Now()
	switch j.Method {
	case "rvb":
		rm := rvb.Default(mod.Family())
		t, err := rvb.New(mod, rm)
		if err != nil {
			return err
		}
		target, set.Method, o.Method = t, vi.BlockDiag, rm.String()
	case "rvb-start":
		// glmmfit's default for these models: RVB1 expanded about the
		// linear predictor at the model's start, computed on the fit's
		// workers.
		pool := parallel.NewPollingPool(context.Background(), set.WorkersFor(mod))
		t, err := rvb.NewAtStart(pool, mod, rvb.RVB1)
		pool.Close()
		if err != nil {
			return err
		}
		target, set.Method, o.Method = t, vi.BlockDiag, "rvb1-start"
	}
	// rvb-start's start is part of the setup.
	o.SecBuild += time.Since(tTarget).Seconds()
	if j.Batch > 0 {
		// Stochastic updates over minibatches of subjects, with their own
		// step schedule (no step rule).
		set.Stochastic.Batch, set.Rule = j.Batch, nil
		o.Method += "-batch" + strconv.Itoa(j.Batch)
	}
	// The frame and the formula's design are garbage now: measure what the
	// fit starts from, what is free returned to the operating system as
	// glmmfit does.
	debug.FreeOSMemory()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	o.HeapSetup = ms.HeapAlloc
	o.SetupRSSKB = selfMaxRSSKB()

	stop, err := startProfile(j.Profile)
	if err != nil {
		return err
	}
	cpu0 := selfCPUSeconds()
	// The CPU time at the end of every window, for the CPU time per
	// iteration, which other jobs on the machine disturb less than the wall
	// time.
	var cpuAt []float64
	set.Progress = func(p vi.Progress) {
		if p.Final {
			// The final bound's report closes no window.
			return
		}
		cpuAt = append(cpuAt, selfCPUSeconds()-cpu0)
		if len(cpuAt)%progressEvery == 0 {
			fmt.Fprintf(os.Stderr, "scaling: child n=%d %s w=%d: iteration %d, bound %.2f, %.1f s\n", n, o.Method, j.Workers, p.Iter, p.LowerBound, p.Elapsed.Seconds())
		}
	}
	res, err := vi.Fit(context.Background(), target, set)
	o.CPUFit = selfCPUSeconds() - cpu0
	o.Load = benchio.LoadAverage()
	if perr := stop(); perr != nil && err == nil {
		err = perr
	}
	if res == nil {
		return err
	}
	if err != nil {
		o.Err = err.Error()
	}
	o.Status = res.Status.String()
	o.Iterations = res.Iterations
	o.Windows = len(res.Trace)
	o.SecFit = res.Elapsed.Seconds()
	o.LowerBound, o.LowerSE = res.LowerBound, res.LowerBoundSE
	o.SecPerIter, o.SecStart, o.SecConv, o.CPUPerIter = math.NaN(), math.NaN(), math.NaN(), math.NaN()
	if len(cpuAt) != len(res.Trace) {
		// A restart after a back-off is not in the trace: no CPU times.
		cpuAt = nil
	}
	if k := len(res.Trace); k > 0 {
		first, last := res.Trace[0], res.Trace[k-1]
		o.SecConv = last.Elapsed.Seconds()
		if k > 1 {
			o.SecPerIter = (last.Elapsed - first.Elapsed).Seconds() / float64(last.Iter-first.Iter)
			o.SecStart = first.Elapsed.Seconds() - float64(first.Iter)*o.SecPerIter
			if cpuAt != nil {
				o.CPUPerIter = (cpuAt[k-1] - cpuAt[0]) / float64(last.Iter-first.Iter)
			}
		}
	}
	o.SecFinal = o.SecFit - o.SecConv
	for k, t := range res.Trace {
		cpu := math.NaN()
		if cpuAt != nil {
			cpu = cpuAt[k]
		}
		row := [6]float64{float64(t.Iter), t.LowerBound, t.Gain, t.StepNorm, t.Elapsed.Seconds(), cpu}
		for k, x := range row {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				row[k] = nanSentinel
			}
		}
		o.Trace = append(o.Trace, row)
	}

	names := mod.FixedNames()
	o.Names = append([]string(nil), names...)
	o.Mean, o.SD = make([]float64, p), make([]float64, p)
	o.Q025, o.Q975 = make([]float64, p), make([]float64, p)
	if summarize && set.Method == vi.GVA {
		t0 := time.Now()
		// posterior.Summarize needs at least 2 draws: pass glmmfit's default -draws.
		s, err := posterior.Summarize(res, mod, summaryDraws, j.Seed)
		if err != nil {
			return err
		}
		o.SecSummary = time.Since(t0).Seconds()
		for k, f := range s.Fixed {
			o.Mean[k], o.SD[k], o.Q025[k], o.Q975[k] = f.Mean, f.SD, f.Q025, f.Q975
		}
		return nil
	}
	// beta is the start of the global block; its marginals under q are
	// Gaussian for both methods (RVB leaves theta_g alone).
	t0 := time.Now()
	cov := res.GlobalCov()
	for k := range p {
		o.Mean[k] = res.Mu[n*r+k]
		o.SD[k] = math.Sqrt(cov.At(k, k))
		o.Q025[k] = o.Mean[k] - z975*o.SD[k]
		o.Q975[k] = o.Mean[k] + z975*o.SD[k]
	}
	for k := range g {
		o.GlobalMean = append(o.GlobalMean, res.Mu[n*r+k])
		o.GlobalSD = append(o.GlobalSD, math.Sqrt(cov.At(k, k)))
	}
	o.SecSummary = time.Since(t0).Seconds()
	return nil
}

// progressEvery is the number of windows between progress lines of a child.
const progressEvery = 20

// summaryDraws is glmmfit fit's default -draws.
const summaryDraws = 4000

// z975 is the 97.5% quantile of the standard normal distribution.
const z975 = 1.959963984540054

// startProfile starts a CPU profile at prefix.cpu.pprof; the returned
// function stops it and writes a heap profile to prefix.heap.pprof.
func startProfile(prefix string) (func() error, error) {
	if prefix == "" {
		return func() error { return nil }, nil
	}
	cf, err := os.Create(prefix + ".cpu.pprof")
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(cf); err != nil {
		cf.Close()
		return nil, err
	}
	return func() error {
		pprof.StopCPUProfile()
		err := cf.Close()
		hf, herr := os.Create(prefix + ".heap.pprof")
		if herr != nil {
			return errors.Join(err, herr)
		}
		herr = pprof.Lookup("heap").WriteTo(hf, 0)
		return errors.Join(err, herr, hf.Close())
	}, nil
}

// writeGlobal writes the means and sds of a fit's global block as CSV.
func writeGlobal(path string, mean, sd []float64) error {
	rows := [][]string{{"k", "mean", "sd"}}
	for k := range mean {
		rows = append(rows, []string{strconv.Itoa(k), strconv.FormatFloat(mean[k], 'g', 12, 64), strconv.FormatFloat(sd[k], 'g', 12, 64)})
	}
	return benchio.WriteCSV(path, rows)
}

// writeTrace writes a fit's trace as CSV.
func writeTrace(path string, trace [][6]float64) error {
	rows := [][]string{{"iter", "lower_bound", "gain", "step_norm", "elapsed_sec", "cpu_sec"}}
	for _, t := range trace {
		row := make([]string, len(t))
		for k, x := range t {
			if x == nanSentinel {
				x = math.NaN()
			}
			row[k] = strconv.FormatFloat(x, 'g', 8, 64)
		}
		rows = append(rows, row)
	}
	return benchio.WriteCSV(path, rows)
}

// profilePrefix is the profile path prefix of a case, or "".
func profilePrefix(dir, name string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, name)
}

// noteBuild appends a line to DIR/build.txt naming the time, the Go version,
// the system, the revision the binary was built from and the command line,
// so that the measurements of every run (and of each -resume) can be traced
// to the code they measured.
func noteBuild(dir string) error {
	line := fmt.Sprintf("%s %s %s/%s cpus=%d %s args=%q\n", time.Now().UTC().Format(time.RFC3339),
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), buildRevision(), os.Args[1:])
	f, err := os.OpenFile(filepath.Join(dir, "build.txt"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(line); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// buildRevision names the code that was measured: git=REV (with -dirty for
// uncommitted changes) from the binary's own build information when go
// build stamped it, else cwd-git=REV from git describe in the working
// directory (go run stamps nothing, and then runs from the source's
// checkout), else git=unknown.
func buildRevision() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", ""
		for _, kv := range bi.Settings {
			switch {
			case kv.Key == "vcs.revision":
				rev = kv.Value
			case kv.Key == "vcs.modified" && kv.Value == "true":
				dirty = "-dirty"
			}
		}
		if rev != "" {
			return "git=" + rev + dirty
		}
	}
	if out, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		return "cwd-git=" + strings.TrimSpace(string(out))
	}
	return "git=unknown"
}
