// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/paper"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// fitJob is a model ready to fit.
type fitJob struct {
	in         *input
	source     string // dataInfo.Source
	f          *formula.Formula
	spec       modelSpec
	design     *formula.Design
	method     string
	expansion  string // RVB's expansion point as fitted; "" for GVA
	methodNote string
	// startSample is the number of subjects of the sample whose start a
	// -batch fit's RVB target is expanded at (rvb.NewAtSampleStart); 0
	// when it is the start of all of them.
	startSample int
	intro       string // lines printed before the text summary, or ""
	// whole is what the processes of a -shard fit report of all their
	// data; nil otherwise.
	whole *wholeData
	// own is the CSV file of a -shard fit that reads its own subjects'
	// rows alone; nil otherwise.
	own *ownFile
}

func runFit(e *env, args []string) error {
	start := time.Now()
	o, err := parseFitFlags(e, args)
	if err != nil {
		return err
	}
	if e.procs != nil && e.procs.Size() > 1 {
		o.procs = e.procs.Size()
		if o.batch > 0 {
			return usageErrorf("fit", "-batch does not run as several processes (mpirun -np %d)", o.procs)
		}
		if o.data == "-" {
			// mpirun passes standard input to the first process alone.
			return usageErrorf("fit", "-data - (standard input) does not run as several processes (mpirun -np %d): only the first receives it; give the data as a file", o.procs)
		}
		if e.procs.Rank() > 0 {
			// The first process shows the progress and writes the
			// results.
			o.quiet = true
		}
	}
	sig := catchInterrupts(e.stderr)
	defer sig.stop()
	// -timeout bounds the whole run, reading included: at the limit
	// whatever phase is running stops as for a signal, and the iterations
	// stop at 80% of what is left after reading (vi's TimeLimit).
	ctx, cancelRun := context.WithCancel(sig.ctx)
	defer cancelRun()
	var (
		timedOut atomic.Bool
		timer    *time.Timer
	)
	if o.timeout > 0 {
		timer = time.AfterFunc(o.timeout, func() {
			timedOut.Store(true)
			cancelRun()
		})
		defer timer.Stop()
	}
	prog := newProgress(e.stderr, o.quiet)
	defer prog.done()
	job, err := prepareFit(ctx, e, o, prog)
	if err != nil {
		switch {
		case timedOut.Load():
			return &exitError{code: exitLimit, msg: fmt.Sprintf("stopped at the time limit (-timeout %v) while reading the data; nothing was written", o.timeout)}
		case ctx.Err() != nil:
			return &exitError{code: sig.exitCode(), msg: "interrupted while reading the data; nothing was written"}
		case errors.Is(err, parallel.ErrProcessStopped):
			// Another process of the MPI job was stopped (readown.go).
			return &exitError{code: sig.exitCode(), msg: "interrupted: another process of the MPI job stopped while reading the data; nothing was written"}
		}
		return err
	}
	readSeconds := time.Since(start).Seconds()
	if job.design.Nested() == nil {
		if err := checkMemory(job.design.Model(), o.maxMemoryBytes); err != nil {
			return err
		}
	}
	iterLimit := time.Duration(0)
	if o.timeout > 0 {
		// The limit keeps back the time that writing what was computed
		// takes (at most half of what is left), so that the run ends
		// within it.
		left := o.timeout - time.Since(start)
		reserve := min(writeTime(job, o), left/2)
		if reserve > 0 && !timedOut.Load() {
			timer.Reset(left - reserve)
		}
		iterLimit = max(time.Millisecond, (left-reserve)*8/10)
	}
	// The model holds what the fit needs: the design's copy of the data
	// goes, and the data themselves unless -out keeps them, before the
	// fit allocates its state (at 10^6 subjects about 1 GB).
	job.design.Compact()
	if o.out == "" {
		job.in.frame = nil
	}
	debug.FreeOSMemory()
	m, nm := job.design.Model(), job.design.Nested()
	if nm == nil {
		if err := checkProcesses(e.procs, m, o); err != nil {
			return err
		}
	}
	rule, _ := vi.ParseRule(o.optimizer)
	set := vi.Settings{
		Rule: rule, Seed: o.seed, Workers: o.threads,
		MaxIter: o.maxIter, TimeLimit: iterLimit, Tol: o.tol,
		Progress: prog.callback(),
	}
	// A -resume file that cannot be read is said before the start.
	if err := setCheckpoints(&set, o, e.procs); err != nil {
		return err
	}
	prog.phase("start: finding the approximate posterior mode")
	fitStart := time.Now() // RVB's start runs in newTarget
	expansion := o.expansion
	shard := sharded(e.procs, o)
	newFitTarget := func(expansion string) (vi.Target, vi.Method, *rvb.Target, error) {
		job.startSample = 0
		switch {
		case nm != nil:
			return newNestedTarget(ctx, o.threads, job.method, expansion, nm)
		case sampleStart(o, job.method, expansion, m.NumSubjects()):
			t, vm, rt, size, err := newSampleTarget(ctx, o.threads, job.method, o.seed, m)
			job.startSample = size
			return t, vm, rt, err
		}
		return newTarget(ctx, e.procs, shard, o.threads, job.method, expansion, m)
	}
	// stoppedBeforeFit is the error of a fit stopped by -timeout (limit)
	// or a signal before its first iteration, seconds into it: there is
	// nothing to write.
	stoppedBeforeFit := func(limit bool, seconds float64) error {
		if limit {
			return &exitError{code: exitLimit, msg: fmt.Sprintf("stopped at the time limit (-timeout %v) before the first iteration, %.2f s into the fit; nothing was written: allow more time", o.timeout, seconds)}
		}
		return &exitError{code: sig.exitCode(), msg: "interrupted before the first iteration; nothing was written"}
	}
	target, vm, rt, err := newFitTarget(expansion)
	if err != nil && ctx.Err() != nil {
		// Stopped while starting: the fallback below, and the fit's own
		// start, would take a pass over the data (a second at 10^6
		// subjects) to say the same.
		return stoppedBeforeFit(timedOut.Load(), time.Since(fitStart).Seconds())
	}
	if err != nil && expansion == expansionStart {
		// The start failed or was stopped: the fit's own start meets the
		// same fate and says so (a cancelled start writes the paper's).
		expansion = expansionJeffreys
		target, vm, rt, err = newFitTarget(expansion)
	}
	if err != nil {
		return err
	}
	set.Method = vm
	if o.batch > 0 {
		if vm != vi.BlockDiag {
			return usageErrorf("fit", "-batch needs an RVB method, and -method %s chose gva for this model (crossed factors, independent blocks or its family)", o.method)
		}
		set.Stochastic.Batch = o.batch
		set.Rule = nil // checkBatch refused -optimizer
	}
	// In an MPI job each process fits its share of the subjects; the
	// first gathers the whole fit and goes on alone. With -shard each
	// holds its share alone, and all of them summarise it together.
	whole := target
	var sh *share
	if shard {
		set.Group = e.procs
	} else if target, sh, err = shareTarget(e.procs, whole, &set); err != nil {
		return err
	}
	res, fitErr := vi.Fit(ctx, target, set)
	if shard && e.procs.Rank() > 0 && res == nil {
		return fmt.Errorf("the fit failed: %v", fitErr)
	}
	if sh != nil {
		target = whole
		if res != nil {
			if res, err = sh.gather(res); err != nil {
				return err
			}
		}
		if e.procs.Rank() > 0 {
			if res == nil {
				return fmt.Errorf("the fit failed: %v", fitErr)
			}
			return nil
		}
	}
	fitSeconds := time.Since(fitStart).Seconds()
	var (
		imp     *posterior.GlobalImportance
		corrDoc *correctionDoc
	)
	switch {
	case res != nil && shard:
		if job.whole, err = shareData(e.procs, m); err != nil {
			return err
		}
		sc, err := shardScope(e.procs, job.whole)
		if err != nil {
			return err
		}
		// Every process corrects its own subjects together; the first
		// says what it takes.
		var stderr io.Writer = e.stderr
		if e.procs.Rank() > 0 {
			stderr = io.Discard
		}
		imp, corrDoc = correct(ctx, m, res, sc, o, prog, stderr)
	case res != nil && nm == nil:
		// The correction does not take nested models yet (checkNested).
		imp, corrDoc = correct(ctx, m, res, aloneScope(m), o, prog, e.stderr)
	}
	prog.phase("summaries: the posterior of every parameter and random effect")
	if res == nil {
		if timedOut.Load() || ctx.Err() != nil {
			return stoppedBeforeFit(timedOut.Load(), fitSeconds)
		}
		if strings.Contains(fitErr.Error(), "initialisation") && strings.Contains(fitErr.Error(), "singular") {
			cause := "predictors that are collinear, or a random effect the data cannot separate from another"
			if job.design.FixedMap() == nil {
				cause = "a predictor far from unit scale (-prior paper fits the raw columns; the default -prior auto centres and scales them), " + cause
			}
			return fmt.Errorf("the fit could not start: the curvature of the posterior at the start is singular: %s (%v)", cause, fitErr)
		}
		if o.resume != "" && strings.Contains(fitErr.Error(), "checkpoint") {
			return fmt.Errorf("-resume %s: %s", checkpointFile(o.resume, e.procs), strings.TrimPrefix(fitErr.Error(), "vi: "))
		}
		return fmt.Errorf("the fit failed: %v", fitErr)
	}
	if timedOut.Load() && res.Status == vi.Cancelled {
		// Stopped by -timeout, not by a signal: the last good state
		// stands, as at vi's own time limit.
		res.Status, res.Err, fitErr = vi.TimeLimit, nil, nil
	}
	if res.Iterations == 0 {
		// The state is the start's, not a fit: its summary (fixed
		// effects at the start's values, sds of the start's curvature)
		// would read like estimates.
		if res.Status == vi.TimeLimit || res.Status == vi.Cancelled {
			return stoppedBeforeFit(res.Status == vi.TimeLimit, fitSeconds)
		}
	}

	if rt == nil {
		expansion = ""
	}
	job.expansion = expansion
	a := &approx{model: m, res: res, target: target}
	if trusted(imp) {
		a.corr = imp
	}
	summaryStart := time.Now()
	summarize := func(ctx context.Context, draws int) (*posterior.Summary, error) {
		if shard {
			levels, _, _ := job.design.PartOf()
			bounds, err := shareBounds(e.procs, len(levels))
			if err != nil {
				return nil, err
			}
			return summarizeShare(ctx, e.procs, res, target, m, levels, bounds, draws, o.seed)
		}
		if nm != nil {
			return nestedSummary(ctx, nm, res, rt, draws, o.seed)
		}
		return posterior.SummarizeFit(ctx, res, target, m, draws, o.seed)
	}
	summary, err := summarize(ctx, o.draws)
	summaryNote := ""
	if err != nil && (ctx.Err() != nil || errors.Is(err, errSummariesStopped)) {
		// Interrupted in the summaries: summarise from as few draws as
		// will do, so that the state is written at once.
		summary, err = summarize(context.Background(), 2)
		cause := "interrupted"
		if timedOut.Load() {
			cause = fmt.Sprintf("at the time limit (-timeout %v)", o.timeout)
		}
		during := "the summaries"
		if corrDoc != nil && corrDoc.Reason == correctionInterrupted {
			during = "the correction, which did not finish"
		}
		drawn := "the random-effect sds, correlations and (rvb1, rvb2) each subject's random effects are"
		if nm != nil {
			drawn = "each level's effect is"
		}
		summaryNote = cause + " during " + during + ": " + drawn + " from 2 draws"
	}
	if err != nil {
		if res.Status == vi.Diverged {
			return &exitError{code: exitDiverged, msg: fmt.Sprintf("%v; no summary of the last good state: %v", fitErr, err)}
		}
		return fmt.Errorf("summarising the fit: %s", withoutPackage(err))
	}
	if shard && e.procs.Rank() > 0 {
		// The first process writes the results.
		return nil
	}
	prog.done()
	toUserScale(job.design, res, summary)
	var warnings []string
	if nm != nil {
		warnings = nestedWarnings(res)
	} else {
		warnings = diagnose(m, res, imp, corrDoc, job.whole)
	}
	if n, _, _ := target.Dims(); o.batch > 0 && n < batchSubjects {
		warnings = append(warnings, fmt.Sprintf("-batch %d on %d subjects: stochastic updates are for %d subjects or more; on fewer they can end far from the full batch (a Poisson random slope on 30,000 subjects ended 0.8-1.1 posterior sd away in sd(t)): drop -batch, which this many subjects do not need", o.batch, n, batchSubjects))
	}
	for _, w := range warnings {
		fmt.Fprintln(e.stderr, "glmmfit: warning: "+oneLine(w))
	}
	var doc *document
	if nm != nil {
		doc = nestedDocument(job, o, nm, res, summary)
	} else {
		doc = newDocument(job, o, res, summary, imp)
	}
	doc.Correction = corrDoc
	doc.Warnings = append(slices.Clone(job.design.Warnings()), warnings...)
	doc.Prior = newPriorInfo(job.design)
	doc.FixedCorrelation = fixedCorrelation(job.design, res)
	doc.Timings.ReadSeconds, doc.Timings.FitSeconds = readSeconds, fitSeconds
	if sh != nil || shard {
		sums, spent := e.procs.Exchanges()
		doc.Timings.Exchanges, doc.Timings.ExchangeSeconds = sums, spent.Seconds()
	}
	doc.Timings.SummarySeconds = time.Since(summaryStart).Seconds()
	doc.Timings.TotalSeconds = time.Since(start).Seconds()
	if summaryNote != "" {
		doc.Message = summaryNote
	}

	written, err := writeFitOutputs(ctx, e, prog, job, o, doc, a)
	notDrawn := ""
	if errors.Is(err, errPlotStopped) {
		notDrawn, err = "; -plot "+o.plot+" was not drawn", nil
	}
	if err != nil {
		return err
	}
	if err := stoppedAfter(ctx, res, o, timedOut.Load(), written, sig.exitCode(), notDrawn); err != nil {
		return err
	}
	err = statusError(res, fitErr, o, written, sig.exitCode())
	if ee, ok := err.(*exitError); ok {
		ee.msg += notDrawn
	}
	return err
}

// stoppedAfter returns the exit error of a run that the time limit or a
// signal stopped after its fit ended, in the summaries or while writing,
// naming what was written and then what more says; nil otherwise.
func stoppedAfter(ctx context.Context, res *vi.Result, o *fitOptions, timedOut bool, written []string, interrupted int, more string) error {
	if timedOut && res.Status != vi.TimeLimit {
		return &exitError{code: exitLimit, msg: fmt.Sprintf("the fit ended (%v), then the time limit (-timeout %v) came after it; wrote %s%s", res.Status, o.timeout, writtenList(written), more)}
	}
	if ctx.Err() != nil && !timedOut && res.Status != vi.Cancelled {
		// The signal came after the fit.
		return &exitError{code: interrupted, msg: "interrupted after the fit; wrote " + writtenList(written) + more}
	}
	return nil
}

// writtenList names what was written: the summary and the files.
func writtenList(written []string) string {
	return strings.Join(append([]string{"the summary"}, written...), ", ")
}

// writeFitOutputs writes the summary on standard output and the files
// asked for, and returns the names of the files written.
//
// A signal or the time limit while -plot is being drawn leaves the plot
// undrawn (errPlotStopped) and its file untouched; the summary and the fit
// file are written whatever comes, as they hold the state.
func writeFitOutputs(ctx context.Context, e *env, prog *progress, job *fitJob, o *fitOptions, doc *document, a *approx) ([]string, error) {
	w := bufio.NewWriter(e.stdout)
	if o.format == "json" {
		if err := writeJSON(w, doc); err != nil {
			return nil, fmt.Errorf("writing JSON: %v", err)
		}
	} else {
		if job.intro != "" {
			fmt.Fprintln(w, job.intro)
			fmt.Fprintln(w)
		}
		writeText(w, doc)
	}
	if err := w.Flush(); err != nil {
		return nil, fmt.Errorf("writing the summary: %v", err)
	}
	var written []string
	if o.out != "" {
		prog.phase("writing: -out " + o.out)
		st, err := posterior.NewSavedFit(a.res, a.target)
		if err != nil {
			return nil, fmt.Errorf("-out: %v", err)
		}
		if a.corr != nil {
			st.SetCorrection(a.corr)
		}
		if err := saveFit(job, o, doc, st); err != nil {
			return nil, err
		}
		written = append(written, "-out "+o.out)
	}
	if o.trace != "" {
		if err := writeTrace(o.trace, doc.Trace); err != nil {
			return nil, err
		}
		written = append(written, "-trace "+o.trace)
	}
	if o.ranef != "" {
		if err := writeRanef(o.ranef, doc); err != nil {
			return nil, err
		}
		written = append(written, "-ranef "+o.ranef)
	}
	if o.plot != "" {
		prog.phase("writing: drawing -plot " + o.plot)
		if err := writePlot(ctx, o.plot, doc); err != nil {
			if ctx.Err() != nil {
				return written, errPlotStopped
			}
			return nil, err
		}
		written = append(written, "-plot "+o.plot)
	}
	return written, nil
}

// saveFit writes the fit file of doc with the state st and the training
// data's used columns to -out.
func saveFit(job *fitJob, o *fitOptions, doc *document, st *posterior.SavedFit) error {
	// The training data are encoded as the file is written.
	td, err := newTrainingData(job.in, job.spec.columns(job.f))
	if err != nil {
		return fmt.Errorf("-out: %v", err)
	}
	full := *doc
	full.State, full.Training = st, td
	return writeFitFile(o.out, &full)
}

// statusError returns the exit error that the fit's status calls for, with
// a line saying what happened; nil when it converged.
func statusError(res *vi.Result, fitErr error, o *fitOptions, written []string, interrupted int) error {
	what := "summary"
	if len(written) > 0 {
		what += ", " + strings.Join(written, ", ")
	}
	switch res.Status {
	case vi.Converged:
		return nil
	case vi.MaxIterations:
		if res.Passes > 0 {
			return &exitError{code: exitLimit, msg: fmt.Sprintf("stopped after %d passes over the data (-batch %d) without converging; wrote the last state (%s)", res.Passes, o.batch, what)}
		}
		return &exitError{code: exitLimit, msg: fmt.Sprintf("stopped at the iteration limit (-max-iter %d) without converging; wrote the last state (%s)", o.maxIter, what)}
	case vi.TimeLimit:
		return &exitError{code: exitLimit, msg: fmt.Sprintf("stopped at the time limit (-timeout %v) after %d iterations without converging; wrote the last state (%s)", o.timeout, res.Iterations, what)}
	case vi.Diverged:
		reason := "diverged"
		var de *vi.DivergedError
		if errors.As(fitErr, &de) {
			reason = fmt.Sprintf("diverged at iteration %d: %s", de.Iter, de.Reason)
			if de.Err != nil {
				reason += ": " + de.Err.Error()
			}
		}
		return &exitError{code: exitDiverged, msg: fmt.Sprintf("%s; wrote the last good state, of iteration %d (%s)", reason, res.Iterations, what)}
	case vi.Cancelled:
		return &exitError{code: interrupted, msg: fmt.Sprintf("interrupted; wrote the last good state, of iteration %d (%s)", res.Iterations, what)}
	}
	return fmt.Errorf("unexpected status %v", res.Status)
}

// prepareFit reads the data and builds the model.
func prepareFit(ctx context.Context, e *env, o *fitOptions, prog *progress) (*fitJob, error) {
	job := &fitJob{spec: o.spec}
	var err error
	switch {
	case o.example:
		job.source = "example"
		job.in, err = parseInput(exampleCSV, exampleName, "", nil)
		if err != nil {
			return nil, fmt.Errorf("the built-in example: %v", err)
		}
		if job.spec.Formula == "" {
			job.spec.Formula = exampleFormula
			if job.spec.Family == "" {
				job.spec.Family = exampleFamily
			}
		}
	case o.dataset != "":
		job.source = "dataset:" + strings.ToLower(o.dataset)
		bs, err := lookupBenchmark(o.dataset)
		if err != nil {
			return nil, err
		}
		dir := datasets.DataDir(o.dataDir)
		fr, err := bs.load(dir)
		if err != nil {
			return nil, fmt.Errorf("data set %s: %v", bs.name, pathError(err))
		}
		job.in = &input{frame: fr, name: "data set " + bs.name, path: dir}
		if job.spec.Formula == "" {
			job.spec.Formula, _ = paper.Formula(bs.name)
			if job.spec.Family == "" {
				job.spec.Family = bs.family
			}
		}
	case sharded(e.procs, o) && readsOwnRows(o.data):
		// Each process reads the rows of its own subjects alone
		// (readown.go): first the columns' kinds.
		job.source = o.data
		job.in, job.own, err = readKinds(ctx, o.data, prog, e.procs)
		if err != nil {
			return nil, err
		}
	default:
		job.source = o.data
		ro := readOptions{maxMemory: o.maxMemoryBytes, limitName: "-max-memory", progress: prog.reading(o.data)}
		if ro.maxMemory == 0 {
			ro.maxMemory, ro.limitName = availableMemory(), "the machine's available memory"
		}
		job.in, err = readInput(ctx, o.data, e.stdin, ro)
		if err != nil {
			return nil, err
		}
	}
	job.f, err = parseFormula(job.spec.Formula)
	if err != nil {
		if hint := backtickHint(job.spec.Formula, job.in.frame.Names()); hint != "" {
			return nil, fmt.Errorf("%v; %s", err, hint)
		}
		return nil, err
	}
	if err := job.spec.resolveFamily("fit", job.f, job.in.frame); err != nil {
		return nil, err
	}
	var part func(n int) (lo, hi int, err error)
	if sharded(e.procs, o) {
		part = partOf(e.procs)
	}
	// The data are dropped after building unless -out saves them
	// (runFit): their columns can go while the model is built.
	if job.own != nil {
		job.design, job.in, err = buildOwnDesign(e.procs, job.own, &job.spec, job.f, o.out == "")
	} else if part == nil {
		// Not under -shard, whose processes pass each other their
		// bounds as they build.
		job.design, err = untilDone(ctx, func() (*formula.Design, error) {
			return buildDesign(&job.spec, job.f, job.in, part, o.out == "")
		})
	} else {
		job.design, err = buildDesign(&job.spec, job.f, job.in, part, o.out == "")
	}
	if err != nil {
		return nil, err
	}
	// The model is fitted as asked; what looks wrong is said, not refused,
	// by the first process of an MPI job.
	for _, w := range job.design.Warnings() {
		if e.procs == nil || e.procs.Rank() == 0 {
			fmt.Fprintln(e.stderr, "glmmfit: warning: "+oneLine(w))
		}
	}
	fam := job.design.Family()
	// -family binomial with one 0/1 outcome per row is fitted as bernoulli
	// (formula.Options.Family); say what was fitted.
	job.spec.Family = fam.String()
	if job.design.Nested() != nil {
		if err := checkNested(o, fam); err != nil {
			return nil, err
		}
		job.method, job.methodNote = resolveNested(o.method, job.design.Nested())
		return job, nil
	}
	job.method, job.methodNote = resolveMethod(o.method, job.design.Model())
	if o.example {
		n, _, _ := job.design.Model().Dims()
		job.intro = fmt.Sprintf("Example: %d simulated %s observations of %d subjects (%s, built in; datasets.Simulate seed %d)\nFitting:  -formula '%s' -family %s",
			job.design.Model().NumObs(), fam, n, exampleName, exampleSpec.Seed, job.spec.Formula, job.spec.Family)
	}
	return job, nil
}

// resolveMethod turns -method into the method to fit and a note saying why
// when it was chosen automatically.
func resolveMethod(method string, m *glmm.Model) (string, string) {
	if method != methodAuto {
		return method, ""
	}
	method, _, why := posterior.Choose(m)
	return method, "chosen by -method auto: " + why
}

// newCallInfo returns the options of a fit's document: the model, the
// method fitted and why, and the settings of the run.
func newCallInfo(job *fitJob, o *fitOptions) callInfo {
	return callInfo{
		modelSpec: job.spec, Method: job.method, Expansion: job.expansion, MethodRequested: o.method, MethodNote: job.methodNote,
		Optimizer: o.optimizer, Batch: o.batch, StartSample: job.startSample, Seed: o.seed, MaxIter: o.maxIter, Tol: o.tol,
		TimeoutSeconds: o.timeout.Seconds(), Draws: o.draws,
	}
}

// newDocument assembles the JSON document of a fit.
func newDocument(job *fitJob, o *fitOptions, res *vi.Result, s *posterior.Summary, imp *posterior.GlobalImportance) *document {
	m := job.design.Model()
	n, _, _ := m.Dims()
	nobs, paperELBO := m.NumObs(), m.PaperELBO(res.LowerBound)
	if w := job.whole; w != nil {
		// A -shard fit: the counts and constants of all the processes.
		n, nobs = w.subjects, w.observations
		paperELBO = res.LowerBound - (w.dataConstant + m.PriorConstant())
	}
	// Bounds of a standardised gaussian response are on the data's scale.
	jac := job.design.ResponseLogJacobian()
	doc := &document{
		SchemaVersion: schemaVersion,
		Software:      currentSoftware(),
		Options:       newCallInfo(job, o),
		Data: dataInfo{
			Source: job.source, Name: job.in.name, Observations: nobs, RowsLeftOut: job.design.LeftOut(), Subjects: n,
			Group: m.GroupName(), FixedNames: m.FixedNames(), RandomNames: m.RandomNames(),
		},
		Status:     res.Status.String(),
		Iterations: res.Iterations,
		Passes:     res.Passes,
		Backoffs:   res.Backoffs,
		LowerBound: lowerBound{
			Value: jfloat(res.LowerBound + jac), MCSE: jfloat(res.LowerBoundSE), Draws: res.LowerBoundDraws, Cut: drawsCut(res, n), Constants: constantsNote,
			PaperConvention: jfloat(paperELBO + jac),
		},
		Fixed: marginals(s.Fixed),
		RESD:  marginals(s.SD),
		RECor: marginals(s.Corr),
		Omega: marginals(s.Omega),
		RandomEffects: randomEffects{
			Group: m.GroupName(), Names: m.RandomNames(), Subjects: subjects(s.Subjects),
		},
		Trace:   trace(res.Trace, jac),
		Timings: timing{FitSeconds: res.Elapsed.Seconds(), Threads: res.Workers, Processes: o.procs},
	}
	if s.Dispersion != nil {
		doc.Dispersion = &marginals([]posterior.Marginal{*s.Dispersion})[0]
	}
	doc.setParetoK(res, jac)
	doc.Crossed = crossedDocs(s.Crossed)
	logw, draws := res.LogWeights, res.ImportanceGlobal
	if imp != nil {
		doc.corrLogWeights = imp.LogWeights
	}
	if trusted(imp) {
		// The correction's ratios are over theta_g alone, the random
		// effects integrated out: where they can be trusted they replace
		// the ratios over every variable.
		if lp, se, err := posterior.LogMarginal(imp.LogWeights); err == nil {
			doc.LowerBound.LogMarginal = &logMarginal{Value: jfloat(lp + jac), SE: jfloat(se)}
		}
		logw, draws = imp.LogWeights, imp.Global
	} else {
		imp = nil
	}
	doc.PSISCorrected = psisCorrect(job.design, logw, draws, imp)
	doc.setMessage(res)
	return doc
}

// setParetoK sets the Pareto k of q's importance ratios over every
// variable and, where it allows, log p(y) from them; jac is the response's
// log Jacobian.
func (doc *document) setParetoK(res *vi.Result, jac float64) {
	if k, tail, err := posterior.ParetoK(res.LogWeights); err == nil {
		doc.LowerBound.ParetoK = &paretoK{K: jfloat(k), Draws: len(res.LogWeights), Tail: tail}
		doc.logWeights = res.LogWeights
		if lp, se, err := posterior.LogMarginal(res.LogWeights); err == nil && k < posterior.ParetoKBad {
			doc.LowerBound.LogMarginal = &logMarginal{Value: jfloat(lp + jac), SE: jfloat(se)}
		}
	}
}

// setMessage says how an unfinished fit ended.
func (doc *document) setMessage(res *vi.Result) {
	switch {
	case res.Status == vi.Cancelled:
		doc.Message = "interrupted: the state is the last good one"
	case res.Err != nil:
		doc.Message = res.Err.Error()
	}
}

// writeTime estimates the time it takes to write the summary and the fit
// file of job, from runs on 10^5 subjects of sim_logit_n100000 (0.4 s
// for the summary, 1.3 s for -out at a load of 2), with room to spare.
func writeTime(job *fitJob, o *fitOptions) time.Duration {
	var n, r int
	if m := job.design.Nested(); m != nil {
		n, r = m.NumObs(), 1
	} else {
		n, r, _ = job.design.Model().Dims()
	}
	t := 10 * time.Microsecond * time.Duration(n*max(r, 1))
	if o.out != "" {
		t += 300 * time.Nanosecond * time.Duration(job.in.frame.NumRows()*len(job.in.frame.Names()))
	}
	return t
}
