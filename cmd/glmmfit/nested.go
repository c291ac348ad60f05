// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"context"
	"fmt"
	"math"
	"time"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// checkNested refuses, for a model of nested grouping factors
// (formula.Design.Nested), what its fit does not do yet, naming the flag.
func checkNested(o *fitOptions) error {
	why := "a model of nested grouping factors (each a level's block holds its a:b levels, of variable size)"
	switch {
	case o.method == methodRVB1 || o.method == methodRVB2:
		return usageErrorf("fit", "-method %s: %s is fitted by gva alone; use -method gva or auto", o.method, why)
	case o.procs > 1 || o.shard:
		return usageErrorf("fit", "%s does not run as several processes (mpirun, -shard) yet; run glmmfit alone", why)
	case o.batch > 0:
		return usageErrorf("fit", "-batch needs an RVB method, and %s is fitted by gva", why)
	case o.optimizer == "vogn":
		return usageErrorf("fit", "-optimizer vogn: %s is fitted with the other step rules (snngm, the default)", why)
	case o.checkpoint != "" || o.resume != "":
		return usageErrorf("fit", "-checkpoint and -resume do not take %s yet", why)
	case o.plot != "":
		return usageErrorf("fit", "-plot does not draw %s yet", why)
	case o.correct == "always":
		return usageErrorf("fit", "-correct always: the correction does not take %s yet", why)
	}
	return nil
}

// runNested fits a model of nested grouping factors with GVA on local
// blocks of variable size and writes its summary, as runFit does for the
// others.
func runNested(ctx context.Context, e *env, o *fitOptions, job *fitJob, prog *progress, start time.Time, readSeconds float64, iterLimit time.Duration, exitCode func() int, timedOut func() bool) error {
	m := job.design.Nested()
	rule, _ := vi.ParseRule(o.optimizer)
	set := vi.Settings{Method: vi.GVA, Rule: rule, Seed: o.seed, Workers: o.threads,
		MaxIter: o.maxIter, TimeLimit: iterLimit, Tol: o.tol, Progress: prog.callback()}
	prog.phase("start: finding the approximate posterior mode")
	res, fitErr := vi.Fit(ctx, m, set)
	if res == nil {
		if timedOut() {
			return &exitError{code: exitLimit, msg: fmt.Sprintf("stopped at the time limit (-timeout %v) before the first iteration; nothing was written", o.timeout)}
		}
		if ctx.Err() != nil {
			return &exitError{code: exitCode(), msg: "interrupted before the first iteration; nothing was written"}
		}
		return fmt.Errorf("the fit failed: %v", fitErr)
	}
	if timedOut() && res.Status == vi.Cancelled {
		// Stopped by -timeout, not by a signal, as in runFit.
		res.Status, res.Err, fitErr = vi.TimeLimit, nil, nil
	}
	fitSeconds := res.Elapsed.Seconds()
	prog.phase("summaries: the posterior of every parameter and random effect")
	summaryStart := time.Now()
	s := nestedSummary(m, res)
	toUserScale(job.design, res, s)
	doc := nestedDocument(job, o, m, res, s)
	doc.Prior = newPriorInfo(job.design)
	doc.FixedCorrelation = fixedCorrelation(job.design, res)
	doc.Warnings = append(job.design.Warnings(), nestedWarnings(res)...)
	for _, w := range doc.Warnings[len(job.design.Warnings()):] {
		fmt.Fprintln(e.stderr, "glmmfit: warning: "+oneLine(w))
	}
	doc.Timings.ReadSeconds, doc.Timings.FitSeconds = readSeconds, fitSeconds
	doc.Timings.SummarySeconds = time.Since(summaryStart).Seconds()
	doc.Timings.TotalSeconds = time.Since(start).Seconds()
	prog.done()
	w := bufio.NewWriter(e.stdout)
	if o.format == "json" {
		if err := writeJSON(w, doc); err != nil {
			return fmt.Errorf("writing JSON: %v", err)
		}
	} else {
		writeText(w, doc)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("writing the summary: %v", err)
	}
	written := []string{}
	if o.out != "" {
		prog.phase("writing: -out " + o.out)
		st, err := posterior.NewSavedNested(res, m)
		if err != nil {
			return fmt.Errorf("-out: %v", withoutPackage(err))
		}
		if err := saveFit(job, o, doc, st); err != nil {
			return err
		}
		written = append(written, "-out "+o.out)
	}
	if o.trace != "" {
		if err := writeTrace(o.trace, doc.Trace); err != nil {
			return err
		}
		written = append(written, "-trace "+o.trace)
	}
	return statusError(res, fitErr, o, written, exitCode())
}

// nestedWarnings returns the warnings of a nested fit that say how its
// results may mislead: its lower bound's (boundWarnings), and q far from
// the posterior by the Pareto k of the ratios over every variable, which
// no correction follows for a nested model yet.
func nestedWarnings(res *vi.Result) []string {
	w := boundWarnings(res, res.N)
	if k, _, err := posterior.ParetoK(res.LogWeights); err == nil && k > posterior.ParetoKWarn && res.Status != vi.Cancelled {
		w = append(w, fmt.Sprintf("the Pareto k of the importance ratios p/q is %.2f, above %g: the Gaussian approximation misses part of the posterior (often the spread of the random-effect sds, which it understates, and which centred nested effects understate the more); the correction does not run on nested models yet: -nest crossed fits a with at most %d levels with it, or check against MCMC before relying on intervals", k, float64(posterior.ParetoKWarn), glmm.MaxCrossedLevels))
	}
	return w
}

// nestedSummary summarises a fit of m: beta Gaussian, the sds and the
// dispersion log-normal (exact marginals under q), a's effects as the
// subjects' and a:b's as a crossed factor's, Gaussian.
func nestedSummary(m *glmm.Nested, res *vi.Result) *posterior.Summary {
	p := m.NumFixed()
	nr := len(res.Mu) - res.G
	muG := res.Mu[nr:]
	cov := res.GlobalCov()
	sdOf := func(k int) float64 { return math.Sqrt(cov.At(k, k)) }
	outer, inner := m.FactorNames()
	s := &posterior.Summary{}
	for j, name := range m.FixedNames() {
		s.Fixed = append(s.Fixed, posterior.GaussianMarginal(name, muG[j], sdOf(j)))
	}
	s.Omega = []posterior.Marginal{
		posterior.GaussianMarginal("omega("+outer+")", muG[p], sdOf(p)),
		posterior.GaussianMarginal("omega("+inner+")", muG[p+1], sdOf(p+1)),
	}
	s.SD = []posterior.Marginal{posterior.LogNormalMarginal("sd((Intercept))", -muG[p], sdOf(p))}
	if f := m.Family(); f.HasDispersion() {
		d := posterior.LogNormalMarginal(f.DispersionName(), muG[p+2], sdOf(p+2))
		s.Dispersion = &d
	}
	local := res.LocalCov()
	sizes := m.BlockSizes()
	ab := posterior.CrossedEffects{Name: inner, SD: posterior.LogNormalMarginal("sd("+inner+")", -muG[p+1], sdOf(p+1))}
	_, innerLevels := m.Levels()
	ab.Effects = make([]posterior.Marginal, max(len(innerLevels), nr-len(sizes)))
	off, co := 0, 0
	for i, r := range sizes {
		s.Subjects = append(s.Subjects, posterior.SubjectEffects{Level: m.SubjectLevel(i),
			Mean: []float64{res.Mu[off]}, SD: []float64{math.Sqrt(local[co])}})
		for q := 1; q < r; q++ {
			b := m.InnerLevel(i, q)
			ab.Effects[b] = posterior.GaussianMarginal(m.InnerLabel(b), res.Mu[off+q], math.Sqrt(local[co+q*r+q]))
		}
		off += r
		co += r * r
	}
	s.Crossed = []posterior.CrossedEffects{ab}
	return s
}

// nestedDocument assembles the JSON document of a fit of m, as
// newDocument does for the others; a:b is its Nested entry.
func nestedDocument(job *fitJob, o *fitOptions, m *glmm.Nested, res *vi.Result, s *posterior.Summary) *document {
	n, _, _ := m.Dims()
	outer, _ := m.FactorNames()
	jac := job.design.ResponseLogJacobian()
	doc := &document{
		SchemaVersion: schemaVersion,
		Software:      currentSoftware(),
		Options: callInfo{
			modelSpec: job.spec, Method: job.method, MethodRequested: o.method, MethodNote: job.methodNote,
			Optimizer: o.optimizer, Seed: o.seed, MaxIter: o.maxIter, Tol: o.tol,
			TimeoutSeconds: o.timeout.Seconds(), Draws: o.draws,
		},
		Data: dataInfo{
			Source: job.source, Name: job.in.name, Observations: m.NumObs(), Subjects: n,
			Group: outer, FixedNames: m.FixedNames(), RandomNames: []string{"(Intercept)"},
		},
		Status:     res.Status.String(),
		Iterations: res.Iterations,
		Backoffs:   res.Backoffs,
		LowerBound: lowerBound{
			Value: jfloat(res.LowerBound + jac), MCSE: jfloat(res.LowerBoundSE), Constants: constantsNote,
			PaperConvention: jfloat(m.PaperELBO(res.LowerBound) + jac),
		},
		Fixed: marginals(s.Fixed),
		RESD:  marginals(s.SD),
		RECor: []marginal{},
		Omega: marginals(s.Omega),
		RandomEffects: randomEffects{
			Group: outer, Names: []string{"(Intercept)"}, Subjects: subjects(s.Subjects),
		},
		Nested:  crossedDocs(s.Crossed),
		Trace:   trace(res.Trace, jac),
		Timings: timing{FitSeconds: res.Elapsed.Seconds(), Threads: res.Workers, Processes: o.procs},
	}
	if s.Dispersion != nil {
		doc.Dispersion = &marginals([]posterior.Marginal{*s.Dispersion})[0]
	}
	doc.setParetoK(res, jac)
	doc.setMessage(res)
	return doc
}
