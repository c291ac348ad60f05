// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// schemaVersion is the version of the JSON document of a fit. It changes
// when a field changes meaning or is removed; added fields keep it.
const schemaVersion = 2

// document is the JSON result of 'glmmfit fit -format json' and, with State
// and Training set, the fit file written by -out and read by predict.
//
// Everything in it is a function of the data, the options and the seed,
// except the fields about time: timings and the trace's elapsed_seconds
// (and timings.threads, which does not change the numbers).
type document struct {
	SchemaVersion int      `json:"schema_version"`
	Software      software `json:"software"`
	Options       callInfo `json:"options"`
	Data          dataInfo `json:"data"`
	Status        string   `json:"status"`
	Message       string   `json:"message,omitempty"`
	// Warnings say how the results may mislead: what the data and the
	// fit look like, not errors (the same lines go to standard error).
	Warnings   []string `json:"warnings,omitempty"`
	Iterations int      `json:"iterations"`
	// Passes is the number of passes over the data of a stochastic fit
	// (-batch).
	Passes     int        `json:"passes,omitempty"`
	Backoffs   int        `json:"backoffs"`
	LowerBound lowerBound `json:"lower_bound"`
	Prior      *priorInfo `json:"prior,omitempty"`
	Fixed      []marginal `json:"fixed"`
	// FixedCorrelation is the posterior correlation matrix of the fixed
	// effects on the data's scale, row-major, as summary(glmer) prints it.
	FixedCorrelation [][]float64 `json:"fixed_correlation,omitempty"`
	RESD             []marginal  `json:"re_sd"`
	RECor            []marginal  `json:"re_cor"`
	// Dispersion is the family's dispersion parameter on the data's
	// scale: sigma, the residual sd, for gaussian; phi, the shape of
	// nbinom2 (variance mu + mu^2/phi), for negbinomial.
	Dispersion *marginal `json:"dispersion,omitempty"`
	// Crossed holds the grouping factors crossed with the subjects: the
	// sd of each one's random intercepts and the effect of every level.
	Crossed []crossedDoc `json:"crossed,omitempty"`
	// Nested holds a grouping factor nested in the subjects' (a:b of
	// (1 | a/b), the subjects the levels of a): the sd of its random
	// intercepts and the effect of every level.
	Nested []crossedDoc `json:"nested,omitempty"`
	// PSISCorrected holds the global parameters' summaries reweighted
	// towards the posterior by Pareto smoothed importance sampling, when
	// the Pareto k is below 0.7.
	PSISCorrected *corrected `json:"psis_corrected,omitempty"`
	// Correction says how the draws behind PSISCorrected were made when
	// theta_g was sampled with the random effects integrated out
	// (-correct), or why that did not run.
	Correction *correctionDoc `json:"correction,omitempty"`
	// Omega summarises the parameters omega = vech(W*) of the Cholesky
	// factor W of the random-effect precision W W', on which the prior is.
	Omega         []marginal    `json:"omega"`
	RandomEffects randomEffects `json:"random_effects"`
	Trace         []tracePoint  `json:"trace"`
	Timings       timing        `json:"timings"`

	// logWeights are the fit's log importance ratios, for -plot only.
	logWeights []float64
	// corrLogWeights are the correction's log ratios, for -plot only.
	corrLogWeights []float64

	// State and Training are written to fit files only.
	State    *posterior.SavedFit `json:"state,omitempty"`
	Training *trainingData       `json:"training_data,omitempty"`
	// Checksums holds, in a fit file, the SHA-256 of each section as
	// written, so that an edited file is recognised (see checkedSections):
	// last, so that writeFitFile takes them as it writes the sections.
	Checksums map[string]string `json:"checksums,omitempty"`
}

// callInfo records how the fit was asked for: the model and the options.
type callInfo struct {
	modelSpec
	Method string `json:"method"`
	// Expansion is RVB's expansion point: start or jeffreys.
	Expansion       string `json:"expansion,omitempty"`
	MethodRequested string `json:"method_requested"`
	MethodNote      string `json:"method_note,omitempty"`
	Optimizer       string `json:"optimizer"`
	// Batch is -batch: the subjects of each stochastic iteration, 0 for
	// the full batch (then Optimizer and Tol apply).
	Batch int `json:"batch,omitempty"`
	// StartSample is the number of subjects of the sample from whose
	// start a -batch fit's RVB expansion point and start were computed
	// (the model's start on a sample, corrected over all the subjects:
	// rvb.NewAtSampleStart); 0 when every subject's start was computed.
	StartSample    int     `json:"start_sample,omitempty"`
	Seed           uint64  `json:"seed"`
	MaxIter        int     `json:"max_iter"`
	Tol            float64 `json:"tol"`
	TimeoutSeconds float64 `json:"timeout_seconds"`
	Draws          int     `json:"draws"`
}

// dataInfo describes the data the model was fitted to.
type dataInfo struct {
	// Source is the -data path ("-" for standard input), "example" or
	// "dataset:NAME".
	Source       string `json:"source"`
	Name         string `json:"name"`
	Observations int    `json:"observations"`
	// RowsLeftOut is the number of the data's rows left out for a
	// missing value in a column the model uses (-missing drop).
	RowsLeftOut int      `json:"rows_left_out"`
	Subjects    int      `json:"subjects"`
	Group       string   `json:"group"`
	FixedNames  []string `json:"fixed_names"`
	RandomNames []string `json:"random_names"`
}

// lowerBound is the final estimate of the evidence lower bound.
type lowerBound struct {
	// Value includes every constant of the likelihood and the prior: it is
	// a lower bound on log p(y).
	Value jfloat `json:"value"`
	MCSE  jfloat `json:"mc_se"`
	// Draws is the number of fresh draws Value averages: fewer than vi's
	// default for many subjects or a stochastic fit, or once MCSE is
	// small.
	Draws int `json:"draws"`
	// Cut says why Draws is below vi.DefaultFinalDraws when MCSE is above
	// a nat (drawsCut); empty otherwise.
	Cut string `json:"draws_cut,omitempty"`
	// Constants says so in words.
	Constants string `json:"constants"`
	// PaperConvention is Value without the constants that Tan's paper
	// leaves out (glmm.Model.PaperELBO), for comparison with its tables.
	PaperConvention jfloat `json:"paper_convention"`
	// ParetoK is the Pareto shape of the importance ratios p/q at Draws
	// fresh draws (posterior.ParetoK): below 0.5 q is close to the
	// posterior in its tails, above 0.7 it is far from it somewhere.
	// Absent when the draws were too few (very many subjects).
	ParetoK *paretoK `json:"pareto_k,omitempty"`
	// LogMarginal is the importance-sampling estimate of log p(y)
	// (posterior.LogMarginal) from the same ratios, present when their
	// Pareto k is below 0.7: the number to compare models by.
	LogMarginal *logMarginal `json:"log_marginal,omitempty"`
}

// logMarginal is an estimate of log p(y) with its standard error.
type logMarginal struct {
	Value jfloat `json:"value"`
	SE    jfloat `json:"se"`
}

// paretoK is the Pareto diagnostic of a fit.
type paretoK struct {
	K     jfloat `json:"k"`
	Draws int    `json:"draws"`
	Tail  int    `json:"tail"`
}

const constantsNote = "all constants included: a lower bound on log p(y)"

// marginal summarises the approximate posterior of one scalar.
type marginal struct {
	Name     string `json:"name"`
	Estimate jfloat `json:"estimate"`
	EstError jfloat `json:"est_error"`
	Q025     jfloat `json:"q2.5"`
	Q50      jfloat `json:"q50"`
	Q975     jfloat `json:"q97.5"`
	// MCSE holds the Monte Carlo standard errors of the figures above
	// when they come from draws; absent for exact marginals.
	MCSE *mcse `json:"mcse,omitempty"`
}

// mcse holds the Monte Carlo standard errors of a marginal's figures.
type mcse struct {
	Estimate jfloat `json:"estimate"`
	EstError jfloat `json:"est_error"`
	Q025     jfloat `json:"q2.5"`
	Q50      jfloat `json:"q50"`
	Q975     jfloat `json:"q97.5"`
}

// largest returns the largest of the errors.
func (e *mcse) largest() float64 {
	if e == nil {
		return 0
	}
	return max(float64(e.Estimate), float64(e.EstError), float64(e.Q025), float64(e.Q50), float64(e.Q975))
}

// crossedDoc summarises a crossed grouping factor.
type crossedDoc struct {
	Group   string     `json:"group"`
	Levels  int        `json:"levels"`
	SD      marginal   `json:"sd"`
	Effects []marginal `json:"effects"`
}

func crossedDocs(cs []posterior.CrossedEffects) []crossedDoc {
	var out []crossedDoc
	for _, c := range cs {
		out = append(out, crossedDoc{Group: c.Name, Levels: len(c.Effects), SD: marginals([]posterior.Marginal{c.SD})[0], Effects: marginals(c.Effects)})
	}
	return out
}

func marginals(ms []posterior.Marginal) []marginal {
	out := make([]marginal, len(ms))
	for k, m := range ms {
		out[k] = marginal{Name: m.Name, Estimate: jfloat(m.Mean), EstError: jfloat(m.SD), Q025: jfloat(m.Q025), Q50: jfloat(m.Q50), Q975: jfloat(m.Q975)}
		if e := m.MCSE; e != (posterior.MonteCarloError{}) {
			out[k].MCSE = &mcse{jfloat(e.Mean), jfloat(e.SD), jfloat(e.Q025), jfloat(e.Q50), jfloat(e.Q975)}
		}
	}
	return out
}

// randomEffects holds the posterior mean and standard deviation of every
// subject's random effects, in the order of Names.
type randomEffects struct {
	Group    string           `json:"group"`
	Names    []string         `json:"names"`
	Subjects []subjectEffects `json:"subjects"`
}

type subjectEffects struct {
	Level string   `json:"level"`
	Mean  []jfloat `json:"mean"`
	SD    []jfloat `json:"sd"`
}

// subjects returns the subjects' effects for the document, each one's
// figures views of two arrays (one allocation per subject would cost more
// than the figures at many subjects).
func subjects(ss []posterior.SubjectEffects) []subjectEffects {
	out := make([]subjectEffects, len(ss))
	size := 0
	for _, s := range ss {
		size += len(s.Mean)
	}
	means, sds := make([]jfloat, 0, size), make([]jfloat, 0, size)
	for k, s := range ss {
		lo := len(means)
		for a := range s.Mean {
			means, sds = append(means, jfloat(s.Mean[a])), append(sds, jfloat(s.SD[a]))
		}
		hi := len(means)
		out[k] = subjectEffects{Level: s.Level, Mean: means[lo:hi:hi], SD: sds[lo:hi:hi]}
	}
	return out
}

// tracePoint is one window of the fit.
type tracePoint struct {
	Iter           int     `json:"iter"`
	LowerBound     jfloat  `json:"lower_bound"`
	Gain           jfloat  `json:"gain"`
	StepNorm       jfloat  `json:"step_norm"`
	ElapsedSeconds float64 `json:"elapsed_seconds"`
}

// trace returns the trace with its bounds on the data's scale: jac is the
// log Jacobian of a standardised response (formula.ResponseLogJacobian).
func trace(tr []vi.TracePoint, jac float64) []tracePoint {
	out := make([]tracePoint, len(tr))
	for k, t := range tr {
		out[k] = tracePoint{Iter: t.Iter, LowerBound: jfloat(t.LowerBound + jac), Gain: jfloat(t.Gain), StepNorm: jfloat(t.StepNorm), ElapsedSeconds: t.Elapsed.Seconds()}
	}
	return out
}

// timing holds what varies from run to run.
type timing struct {
	// ReadSeconds is reading the data and building the model;
	// FitSeconds the start, the iterations, the final bound and the
	// importance draws; SummarySeconds the summaries and the diagnostics;
	// TotalSeconds all of it, before the outputs are written.
	ReadSeconds    float64 `json:"read_seconds"`
	FitSeconds     float64 `json:"fit_seconds"`
	SummarySeconds float64 `json:"summary_seconds"`
	TotalSeconds   float64 `json:"total_seconds"`
	Threads        int     `json:"threads"`
	// Processes is the number of processes of an MPI job, each fitting
	// its share of the subjects on Threads workers; absent for one.
	Processes int `json:"processes,omitempty"`
	// Exchanges is the number of sums over the processes in the fit, and
	// ExchangeSeconds the first process's time in them, waiting for the
	// others included.
	Exchanges       int     `json:"exchanges,omitempty"`
	ExchangeSeconds float64 `json:"exchange_seconds,omitempty"`
}

// jfloat is a float64 that encodes NaN and infinities as JSON null, as
// the lower bound of an interrupted fit is.
type jfloat float64

func (f jfloat) MarshalJSON() ([]byte, error) {
	v := float64(f)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(v)
}

func (f *jfloat) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = jfloat(math.NaN())
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	*f = jfloat(v)
	return err
}

func jfloats(x []float64) []jfloat {
	out := make([]jfloat, len(x))
	for k, v := range x {
		out[k] = jfloat(v)
	}
	return out
}
