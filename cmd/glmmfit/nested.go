// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"fmt"
	"math"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// checkNested refuses, for a model of nested grouping factors
// (formula.Design.Nested) of family fam, what its fit does not do yet,
// naming the flag.
func checkNested(o *fitOptions, fam glmm.Family) error {
	why := "a model of nested grouping factors (each a level's block holds its a:b levels, of variable size)"
	switch {
	case (o.method == methodRVB1 || o.method == methodRVB2) && fam.HasDispersion():
		return usageErrorf("fit", "-method %s: RVB does not fit the %s family (its dispersion parameter %s), nested or not; use -method gva or auto", o.method, fam, fam.DispersionName())
	case o.procs > 1 || o.shard:
		return usageErrorf("fit", "%s does not run as several processes (mpirun, -shard) yet; run glmmfit alone", why)
	case o.batch > 0:
		return usageErrorf("fit", "-batch does not take %s yet: its fit visits every subject at every iteration", why)
	case o.optimizer == "vogn":
		return usageErrorf("fit", "-optimizer vogn: %s is fitted with the other step rules (snngm, the default)", why)
	case o.correct == "always":
		return usageErrorf("fit", "-correct always: the correction does not take %s yet", why)
	}
	return nil
}

// resolveNested is resolveMethod for a model of nested grouping factors
// (posterior.ChooseNested).
func resolveNested(method string, m *glmm.Nested) (string, string) {
	if method != methodAuto {
		return method, ""
	}
	method, _, why := posterior.ChooseNested(m)
	return method, "chosen by -method auto: " + why
}

// newNestedTarget returns the vi target and vi method of the named method
// for m, RVB expanded about the named point (posterior.NewNestedTarget),
// and the RVB target (nil for GVA); an error says that the fit failed.
// RVB's start runs on as many workers as the fit will, and ctx stops it.
func newNestedTarget(ctx context.Context, threads int, method, expansion string, m *glmm.Nested) (vi.Target, vi.Method, *rvb.Target, error) {
	pool := parallel.NewPollingPool(ctx, vi.Settings{Workers: threads}.WorkersFor(m))
	t, vm, err := posterior.NewNestedTarget(pool, m, method, expansion)
	pool.Close()
	if err != nil {
		return nil, 0, nil, fmt.Errorf("the fit failed: %s", withoutPackage(err))
	}
	rt, _ := t.(*rvb.Target)
	return t, vm, rt, nil
}

// nestedWarnings returns the warnings of a nested fit that say how its
// results may mislead: its lower bound's (boundWarnings), and q far from
// the posterior by the Pareto k of the ratios over every variable, which
// no correction follows for a nested model yet.
func nestedWarnings(res *vi.Result) []string {
	w := boundWarnings(res, res.N)
	if k, _, err := posterior.ParetoK(res.LogWeights); err == nil && k > posterior.ParetoKWarn && res.Status != vi.Cancelled {
		centred := ""
		if res.Method == vi.GVA {
			centred = ", and which centred nested effects (-method gva) understate the more"
		}
		w = append(w, fmt.Sprintf("the Pareto k of the importance ratios p/q is %.2f, above %g: the Gaussian approximation misses part of the posterior (often the spread of the random-effect sds, which it understates%s); the correction does not run on nested models yet: -nest crossed fits a with at most %d levels with it, or check against MCMC before relying on intervals", k, float64(posterior.ParetoKWarn), centred, glmm.MaxCrossedLevels))
	}
	return w
}

// nestedSummary summarises a fit of m (by rt, its RVB reparametrisation,
// or with rt nil by GVA): beta Gaussian, the sds and the dispersion
// log-normal (exact marginals under q), a's effects as the subjects' and
// a:b's as a crossed factor's, Gaussian with q's moments (for RVB mapped
// back from at most draws draws of theta_g, posterior.SummarizeRVB).
func nestedSummary(ctx context.Context, m *glmm.Nested, res *vi.Result, rt *rvb.Target, draws int, seed uint64) (*posterior.Summary, error) {
	p := m.NumFixed()
	nr := len(res.Mu) - res.G
	muG := res.Mu[nr:]
	cov := res.GlobalCov()
	sdOf := func(k int) float64 { return math.Sqrt(cov.At(k, k)) }
	mean, sd := res.LocalMoments()
	if rt != nil {
		rs, err := posterior.SummarizeRVB(ctx, res, rt, draws, seed)
		if err != nil {
			return nil, err
		}
		mean, sd = rs.LocalMean, rs.LocalSD
	}
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
	sizes := m.BlockSizes()
	ab := posterior.CrossedEffects{Name: inner, SD: posterior.LogNormalMarginal("sd("+inner+")", -muG[p+1], sdOf(p+1))}
	_, innerLevels := m.Levels()
	ab.Effects = make([]posterior.Marginal, max(len(innerLevels), nr-len(sizes)))
	off := 0
	for i, r := range sizes {
		s.Subjects = append(s.Subjects, posterior.SubjectEffects{Level: m.SubjectLevel(i),
			Mean: []float64{mean[off]}, SD: []float64{sd[off]}})
		for q := 1; q < r; q++ {
			b := m.InnerLevel(i, q)
			ab.Effects[b] = posterior.GaussianMarginal(m.InnerLabel(b), mean[off+q], sd[off+q])
		}
		off += r
	}
	s.Crossed = []posterior.CrossedEffects{ab}
	return s, nil
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
		Options:       newCallInfo(job, o),
		Data: dataInfo{
			Source: job.source, Name: job.in.name, Observations: m.NumObs(), RowsLeftOut: job.design.LeftOut(), Subjects: n,
			Group: outer, FixedNames: m.FixedNames(), RandomNames: []string{"(Intercept)"},
		},
		Status:     res.Status.String(),
		Iterations: res.Iterations,
		Backoffs:   res.Backoffs,
		LowerBound: lowerBound{
			Value: jfloat(res.LowerBound + jac), MCSE: jfloat(res.LowerBoundSE), Draws: res.LowerBoundDraws, Cut: drawsCut(res, res.N), Constants: constantsNote,
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
