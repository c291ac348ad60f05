// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"flag"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// The range of -prior-sd: the prior's precision, 1/sd^2, must be far from
// overflow and from underflow next to the data's curvature.
const (
	minPriorSD = 1e-4
	maxPriorSD = 1e6
)

// fitOptions are the flags of 'glmmfit fit'.
type fitOptions struct {
	checkpoint      string // -checkpoint: where the fit's state is kept
	checkpointEvery int
	resume          string  // -resume: a checkpoint to resume from
	procs           int     // processes of the MPI job sharing the fit; 0 for one
	shard           bool    // -shard: each process keeps its own subjects' rows alone
	maxMemory       string  // -max-memory as given
	maxMemoryBytes  float64 // and in bytes; 0 for none
	spec            modelSpec
	data            string
	example         bool
	dataset         string
	dataDir         string

	method    string
	expansion string // RVB's expansion point: start or jeffreys
	optimizer string
	batch     int // -batch: subjects per stochastic iteration; 0 for the full batch
	seed      uint64
	maxIter   int
	tol       float64
	timeout   time.Duration
	threads   int
	draws     int
	correct   string
	corrDraws int

	format string
	out    string
	trace  string
	ranef  string
	plot   string
	quiet  bool
}

// Defaults of the fit flags; the usage text repeats them.
const (
	defaultMaxIter = 20000
	defaultTol     = vi.DefaultTol
	defaultDraws   = 4000
)

func parseFitFlags(e *env, args []string) (*fitOptions, error) {
	o := &fitOptions{spec: modelSpec{Reference: map[string]string{}}}
	fs := o.flagSet()
	if err := parseFlags(e, fs, fitUsage, args); err != nil {
		return nil, err
	}
	if len(o.spec.Reference) == 0 {
		o.spec.Reference = nil
	}
	return o, o.check(fs)
}

// flagSet returns the flags of 'glmmfit fit', bound to o.
func (o *fitOptions) flagSet() *flag.FlagSet {
	fs := newFlagSet("fit")
	fs.StringVar(&o.data, "data", "", "")
	fs.StringVar(&o.spec.Formula, "formula", "", "")
	fs.StringVar(&o.spec.Family, "family", "", "")
	fs.BoolVar(&o.example, "example", false, "")
	fs.StringVar(&o.dataset, "dataset", "", "")
	fs.StringVar(&o.dataDir, "data-dir", "", "")
	fs.StringVar(&o.spec.Weights, "weights", "", "")
	fs.StringVar(&o.spec.Offset, "offset", "", "")
	fs.Var(refFlag(o.spec.Reference), "ref", "")
	fs.StringVar(&o.spec.Missing, "missing", missingReject, "")
	fs.Float64Var(&o.spec.PriorSD, "prior-sd", glmm.DefaultPriorSD, "")
	fs.StringVar(&o.spec.Prior, "prior", formula.PriorAuto.String(), "")
	fs.StringVar(&o.spec.DoubleBar, "double-bar", doubleBarIndependent, "")
	fs.StringVar(&o.spec.LocalFactor, "local-factor", "", "")
	fs.StringVar(&o.spec.Nest, "nest", nestAuto, "")
	fs.StringVar(&o.spec.Link, "link", "", "")
	fs.StringVar(&o.method, "method", methodAuto, "")
	fs.StringVar(&o.expansion, "expansion", expansionStart, "")
	fs.StringVar(&o.optimizer, "optimizer", "snngm", "")
	fs.IntVar(&o.batch, "batch", 0, "")
	fs.Uint64Var(&o.seed, "seed", 0, "")
	fs.IntVar(&o.maxIter, "max-iter", defaultMaxIter, "")
	fs.Float64Var(&o.tol, "tol", defaultTol, "")
	fs.DurationVar(&o.timeout, "timeout", 0, "")
	fs.IntVar(&o.threads, "threads", 0, "")
	fs.IntVar(&o.draws, "draws", defaultDraws, "")
	fs.StringVar(&o.correct, "correct", correctAuto, "")
	fs.IntVar(&o.corrDraws, "correct-draws", 0, "")
	fs.StringVar(&o.format, "format", "text", "")
	fs.StringVar(&o.out, "out", "", "")
	fs.StringVar(&o.trace, "trace", "", "")
	fs.StringVar(&o.ranef, "ranef", "", "")
	fs.StringVar(&o.plot, "plot", "", "")
	fs.BoolVar(&o.quiet, "quiet", false, "")
	fs.StringVar(&o.maxMemory, "max-memory", "", "")
	fs.StringVar(&o.checkpoint, "checkpoint", "", "")
	fs.IntVar(&o.checkpointEvery, "checkpoint-every", defaultCheckpointEvery, "")
	fs.StringVar(&o.resume, "resume", "", "")
	fs.BoolVar(&o.shard, "shard", false, "")
	return fs
}

// defaultCheckpointEvery is -checkpoint-every's default, in iterations.
const defaultCheckpointEvery = 500

// check validates the flags alone, before any file is read.
func (o *fitOptions) check(fs *flag.FlagSet) error {
	bad := func(format string, args ...any) error { return usageErrorf("fit", format, args...) }
	if err := conflict(fs, "data", "example", "dataset"); err != nil {
		return err
	}
	if o.data == "" && !o.example && o.dataset == "" {
		return bad("no data: give -data FILE.csv (- for standard input), -example or -dataset NAME")
	}
	if o.data != "" && o.spec.Formula == "" {
		return bad("-formula is missing: give the model, e.g. -formula 'y ~ x + (1 | id)'")
	}
	if setFlags(fs)["data-dir"] && o.dataset == "" {
		return bad("-data-dir is only used with -dataset")
	}
	if o.spec.Family != "" {
		f, err := glmm.ParseFamily(o.spec.Family)
		if err != nil {
			return bad("unknown family %q (want poisson, bernoulli, binomial, gaussian or negbinomial)", o.spec.Family)
		}
		o.spec.Family = f.String()
	}
	switch o.spec.Missing {
	case missingReject, missingDrop:
	default:
		return bad("-missing %q: want reject or drop", o.spec.Missing)
	}
	switch o.spec.Nest {
	case nestAuto, nestLocal, nestCrossed:
	default:
		return bad("-nest %q: want auto, local or crossed", o.spec.Nest)
	}
	if l, err := glmm.ParseLink(o.spec.Link); err != nil {
		return bad("-link %q: want logit (the default for bernoulli and binomial), probit or cloglog", o.spec.Link)
	} else if l != glmm.CanonicalLink && o.spec.Family != "" && o.spec.Family != "bernoulli" && o.spec.Family != "binomial" {
		return bad("-link %s is for -family bernoulli and binomial, not %s", o.spec.Link, o.spec.Family)
	}
	switch o.spec.DoubleBar {
	case doubleBarIndependent, doubleBarReject, doubleBarCorrelated:
	default:
		return bad("-double-bar %q: want independent (the default), correlated or reject", o.spec.DoubleBar)
	}
	if _, err := formula.ParsePrior(o.spec.Prior); err != nil {
		return bad("-prior %q: want auto (the default) or paper", o.spec.Prior)
	}
	if !(o.spec.PriorSD > 0) || math.IsInf(o.spec.PriorSD, 0) {
		return bad("-prior-sd must be a positive number, not %v", o.spec.PriorSD)
	}
	if o.spec.PriorSD < minPriorSD || o.spec.PriorSD > maxPriorSD {
		return bad("-prior-sd %v is outside [%g, %g]: a prior that narrow pins every coefficient to 0, and one that wide is no prior at all, so that the posterior of a weakly identified model is improper and the fit cannot settle; the default is %v", o.spec.PriorSD, minPriorSD, maxPriorSD, glmm.DefaultPriorSD)
	}
	switch o.correct {
	case correctAuto, correctAlways, correctNever:
	default:
		return bad("-correct %q: want auto (the default), always or never", o.correct)
	}
	if o.corrDraws != 0 && o.corrDraws < vi.MinImportanceDraws {
		return bad("-correct-draws must be at least %d, not %d", vi.MinImportanceDraws, o.corrDraws)
	}
	o.method = strings.ToLower(o.method)
	switch o.method {
	case methodAuto, methodGVA, methodRVB1, methodRVB2:
	default:
		return bad("unknown method %q (want auto, gva, rvb1 or rvb2)", o.method)
	}
	o.expansion = strings.ToLower(o.expansion)
	if o.expansion != expansionStart && o.expansion != expansionJeffreys {
		return bad("-expansion %q: want start (the default) or jeffreys", o.expansion)
	}
	rule, err := vi.ParseRule(o.optimizer)
	if err != nil {
		return bad("unknown optimizer %q (want snngm, adam, nadam, pga, nagm or vogn)", o.optimizer)
	}
	o.optimizer = rule.String()
	if o.maxIter <= 0 {
		return bad("-max-iter must be positive, not %d", o.maxIter)
	}
	if err := o.checkBatch(fs); err != nil {
		return err
	}
	if !(o.tol > 0) || math.IsInf(o.tol, 0) {
		return bad("-tol must be a positive number, not %v", o.tol)
	}
	if o.timeout < 0 {
		return bad("-timeout must not be negative")
	}
	if o.maxMemory != "" {
		v, err := parseBytes(o.maxMemory)
		if err != nil {
			return bad("-max-memory: %v", err)
		}
		o.maxMemoryBytes = v
	}
	if o.threads < 0 {
		return bad("-threads must not be negative, not %d", o.threads)
	}
	if o.draws < 100 {
		return bad("-draws must be at least 100, not %d", o.draws)
	}
	switch o.format {
	case "text", "json":
	default:
		return bad("-format %q: want text or json", o.format)
	}
	if o.plot != "" {
		switch strings.ToLower(filepath.Ext(o.plot)) {
		case ".png", ".svg":
		default:
			return bad("-plot %s: the file name must end in .png or .svg", o.plot)
		}
	}
	if o.checkpointEvery < 1 {
		return bad("-checkpoint-every must be positive, not %d", o.checkpointEvery)
	}
	if (o.checkpoint != "" || o.resume != "") && o.optimizer == "vogn" {
		return bad("-checkpoint and -resume do not work with -optimizer vogn")
	}
	if o.shard && o.out != "" {
		return bad("-out saves the fit with its training data, which -shard leaves spread over the processes; drop one of them")
	}
	return checkFiles([]fileFlag{{"-data", o.data}, {"-resume", o.resume}},
		[]fileFlag{{"-out", o.out}, {"-trace", o.trace}, {"-ranef", o.ranef}, {"-plot", o.plot}, {"-checkpoint", o.checkpoint}})
}

// batchSubjects is the fewest subjects for which -batch fits without a
// warning: below it the full batch is cheap, and the stochastic fit of a
// Poisson random slope on 3·10^4 subjects ended 0.84 posterior sd from the
// full batch in sd(t) (1.08 from the full start; benchmarks/svi/results.md).
const batchSubjects = 100_000

// checkBatch refuses what stochastic updates (-batch) do not support: they
// step each subject's block apart from the global block, which GVA's
// factor ties together, and have a step schedule of their own.
func (o *fitOptions) checkBatch(fs *flag.FlagSet) error {
	if o.batch < 0 {
		return usageErrorf("fit", "-batch must be positive (or 0 for the full batch), not %d", o.batch)
	}
	if o.batch == 0 {
		return nil
	}
	set := setFlags(fs)
	for _, c := range []struct {
		bad  bool
		what string
	}{
		{o.method == methodGVA, "-method gva: stochastic updates need an RVB method (rvb1 or rvb2), whose subjects' blocks are apart from the global block"},
		{set["optimizer"], "-optimizer: stochastic updates have their own step schedule"},
		{set["max-iter"], "-max-iter: stochastic updates stop after at most 100 passes over the data"},
		{set["tol"], "-tol: stochastic updates judge convergence by how far the global posterior moves over a pass"},
		{o.checkpoint != "" || o.resume != "", "-checkpoint and -resume"},
		{o.shard, "-shard"},
	} {
		if c.bad {
			return usageErrorf("fit", "-batch cannot be used with %s", c.what)
		}
	}
	return nil
}
