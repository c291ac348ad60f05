// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// Values of -correct.
const (
	correctAuto   = "auto"
	correctAlways = "always"
	correctNever  = "never"
)

// correctionInterrupted is the reason given when a signal or -timeout
// stops the correction.
const correctionInterrupted = "interrupted during the correction"

// autoCorrectIntegrals bounds the subject integrals that -correct auto
// spends: about two seconds on 300 subjects of 7 observations (toenail)
// on two cores.
const autoCorrectIntegrals = 500_000

// checkMaxG is the most fixed effects and variance parameters for which,
// with no ratios over every variable, q's marginal of them is checked by
// default (vi.MinImportanceDraws draws, the random effects integrated
// out, within autoCorrectIntegrals): beyond it a hundred draws say little
// about q, whose marginal k grows with the dimension (1.07 on
// grouseticks' 188).
const checkMaxG = 50

// secondsPerObsIntegral is the time of one subject integral per
// observation of the subject, as measured on toenail (about 4 µs for 7
// observations), by which -correct always foretells a long correction.
const secondsPerObsIntegral = 0.6e-6

// longCorrection is the foretold time beyond which -correct always warns.
const longCorrection = time.Minute

// correctionCost returns the subject integrals of a correction of draws
// draws of the G = g fixed effects and variance parameters, n subjects
// (sc's) at each of them and of the Laplace step's 2G(G+1)
// evaluations (a Hessian by central differences at the start and at the
// mode): what -correct auto weighs. A correction may take up to most,
// three times the draws: its rounds of adaptation, each a quarter of
// them, and a second set where k over the first is 0.5 or more; est is a
// rough time for most.
func correctionCost(sc scope, g, draws int) (integrals, most float64, est time.Duration) {
	n := sc.n
	integrals = float64(n) * float64(draws+2*g*(g+1))
	most = float64(n) * float64(3*draws+2*g*(g+1))
	perSubject := float64(sc.nobs) / float64(max(n, 1))
	return integrals, most, time.Duration(most * perSubject * secondsPerObsIntegral * float64(time.Second))
}

// correctionDoc says how the importance correction of theta_g ran, or why
// it did not.
type correctionDoc struct {
	// Ran reports whether it ran; Reason says why it ran or why not.
	Ran    bool   `json:"ran"`
	Reason string `json:"reason"`
	// Checked reports that, without running, it drew q's marginal of
	// theta_g to check it: QK and Draws are that check's.
	Checked bool `json:"checked,omitempty"`
	// QK is the Pareto k of the ratios of q's marginal of theta_g alone
	// (the random effects integrated out), K that of the proposal used
	// after Rounds rounds of adaptation, from Draws draws of which
	// EffectiveDraws count after smoothing.
	// Mixed reports that the draws are two sets, the second adapted to
	// the first's weights, weighed over the mixture of their proposals.
	QK             jfloat `json:"q_k,omitempty"`
	K              jfloat `json:"k,omitempty"`
	Rounds         int    `json:"rounds,omitempty"`
	Mixed          bool   `json:"mixed,omitempty"`
	Draws          int    `json:"draws,omitempty"`
	EffectiveDraws jfloat `json:"effective_draws,omitempty"`
	// FewestNodes and MostNodes are the Gauss–Hermite nodes per dimension
	// of the subjects' integrals, QuadratureError the estimated error of
	// log p(y | theta_g) at q's mean, in nats.
	FewestNodes     int     `json:"fewest_nodes,omitempty"`
	MostNodes       int     `json:"most_nodes,omitempty"`
	QuadratureError jfloat  `json:"quadrature_error,omitempty"`
	Seconds         float64 `json:"seconds"`
	// checkLogWeights are the check's log ratios, for -plot only.
	checkLogWeights []float64
}

// correct runs posterior.ImportanceGlobal on the fit when -correct asks
// for it: always, or (auto) when q's Pareto k over every variable, or that
// of q's marginal of theta_g where checkMarginal checks it, is above
// posterior.ParetoKBad and the model is small enough for it to take a
// second or two (correctionCost's subject integrals at most
// autoCorrectIntegrals). It returns the draws (nil if
// it did not run) and what to report.
func correct(ctx context.Context, m *glmm.Model, res *vi.Result, sc scope, o *fitOptions, prog *progress, stderr io.Writer) (*posterior.GlobalImportance, *correctionDoc) {
	doc := &correctionDoc{}
	_, _, g := m.Dims()
	n := sc.n
	draws := o.corrDraws
	if draws == 0 {
		draws = posterior.DefaultImportanceDraws
	}
	k, _, kerr := posterior.ParetoK(res.LogWeights)
	integrals, most, est := correctionCost(sc, g, draws)
	// q's marginal of theta_g is checked where the ratios over every
	// variable do not settle it and a hundred draws cost little.
	cheapCheck := g <= checkMaxG && o.correct == correctAuto && n*vi.MinImportanceDraws <= autoCorrectIntegrals
	switch {
	case o.correct == correctNever:
		return nil, nil
	case res.Status == vi.Cancelled || res.Status == vi.Diverged:
		doc.Reason = "not run: the fit did not end normally"
		return nil, doc
	case o.correct == correctAlways:
		doc.Reason = "-correct always"
		if est > longCorrection && ctx.Err() == nil {
			fmt.Fprintf(stderr, "glmmfit: warning: -correct always: the correction integrates out each of the %d subjects up to %s times (up to 3 × %d draws and 2G(G+1) = %s evaluations in the Laplace step, with G = %d fixed effects, variance parameters and crossed levels), %s subject integrals that may take %s; Ctrl-C, SIGTERM or -timeout stops it and keeps q's summaries\n",
				n, roughCount(most/float64(n)), draws, roughCount(float64(2*g*(g+1))), g, roughCount(most), roughDuration(est))
		}
	case res.LogWeights == nil && n > posterior.MaxSubjectIntegrals/vi.MinImportanceDraws:
		doc.Reason = fmt.Sprintf("not run, and q not checked: with %d subjects neither the importance ratios over every variable nor the correction's (at most %d subjects) are drawn", n, posterior.MaxSubjectIntegrals/vi.MinImportanceDraws)
		return nil, doc
	case res.LogWeights == nil && cheapCheck:
		// No ratios over every variable, but few enough subjects to check
		// q's marginal of theta_g cheaply: on HERS (2031 subjects) it had
		// k 0.82 and an sd 1.6 posterior sd short of HMC's.
		why := fmt.Sprintf("with %d subjects the importance ratios over every variable were not drawn", n)
		doc = checkMarginal(ctx, m, res, sc, o, prog, draws, why)
		if !correctAfterCheck(doc, why, g, integrals) {
			return nil, doc
		}
	case res.LogWeights == nil:
		// Too many variables (or subjects) for ratios over every
		// variable: say that nothing checked q, and how to check it.
		doc.Reason = fmt.Sprintf("not run, and q not checked: with %d subjects the importance ratios over every variable say little and were not drawn; -correct always checks and corrects the fixed effects and variance parameters (their Pareto k with the random effects integrated out: %d subjects at each of %d draws)", n, n, draws)
		return nil, doc
	case kerr != nil:
		return nil, nil
	case k > posterior.ParetoKGood && !(k > posterior.ParetoKBad) && cheapCheck:
		// Usable ratios over every variable can hide a marginal of
		// theta_g that is off: on epilepsy (k 0.61 over every variable)
		// q's marginal had k 1.31, and the random slope's sd was 0.35
		// posterior sd above HMC's, unflagged.
		why := fmt.Sprintf("q's Pareto k over every variable is %.2f, usable", k)
		doc = checkMarginal(ctx, m, res, sc, o, prog, draws, why)
		if !correctAfterCheck(doc, why, g, integrals) {
			return nil, doc
		}
	case !(k > posterior.ParetoKBad):
		return nil, nil
	case integrals > autoCorrectIntegrals:
		doc.Reason = fmt.Sprintf("not run: q's Pareto k is %.2f, but with %d subjects and %d %s the correction could take %s (%s subject integrals); -correct always runs it", k, n, g, globalsOf(m), upTo(est), roughCount(most))
		return nil, doc
	default:
		doc.Reason = fmt.Sprintf("q's Pareto k over every variable is %.2f, above %g", k, posterior.ParetoKBad)
	}
	start := time.Now()
	imp, err := posterior.ImportanceGlobal(ctx, res, m, posterior.ImportanceSettings{Draws: o.corrDraws, Seed: o.seed, Workers: o.threads, Group: sc.grp,
		Progress: func(round, done, total int) {
			from := "q's marginal"
			if round > 0 {
				from = fmt.Sprintf("proposal %d", round)
			}
			if done == 0 && round > 0 {
				prog.phase(fmt.Sprintf("correction: building proposal %d (the Laplace approximation of the fixed effects and variance parameters)", round))
				return
			}
			prog.phase(fmt.Sprintf("correction: fixed effects and variance parameters from %s, %d of %d draws", from, done, total))
		}})
	doc.Seconds = time.Since(start).Seconds()
	switch {
	case err != nil && (ctx.Err() != nil || errors.Is(err, vi.ErrGroupStopped)):
		doc.Reason = correctionInterrupted
		return nil, doc
	case errors.Is(err, posterior.ErrTooManySubjects):
		doc.Reason = fmt.Sprintf("not run: %d subjects leave fewer than %d draws of the fixed effects and variance parameters", n, vi.MinImportanceDraws)
		return nil, doc
	case err != nil:
		doc.Reason = "failed: " + withoutPackage(err)
		return nil, doc
	}
	w, _, _ := posterior.PSIS(imp.LogWeights)
	doc.Ran = true
	doc.QK, doc.K, doc.Rounds, doc.Mixed, doc.Draws = jfloat(imp.QK), jfloat(imp.K), imp.Rounds, imp.Mixed, len(imp.LogWeights)
	doc.EffectiveDraws = jfloat(posterior.EffectiveDraws(w))
	doc.FewestNodes, doc.MostNodes, doc.QuadratureError = imp.FewestNodes, imp.MostNodes, jfloat(imp.QuadratureError)
	if sc.grp != nil && imp.LocalMean != nil {
		// The first process reports every subject's corrected moments.
		if err := sc.gather(imp, m.R()); err != nil {
			doc.Ran, doc.Reason = false, "failed: gathering the corrected random effects from the processes: "+err.Error()
			return nil, doc
		}
	}
	return imp, doc
}

// checkMarginal draws q's marginal of theta_g vi.MinImportanceDraws times,
// the random effects integrated out, and reports its Pareto k (QK, with
// Checked) and what a correction of draws draws would cost; why says why
// the correction did not run.
func checkMarginal(ctx context.Context, m *glmm.Model, res *vi.Result, sc scope, o *fitOptions, prog *progress, draws int, why string) *correctionDoc {
	_, _, g := m.Dims()
	n := sc.n
	doc := &correctionDoc{Checked: true}
	nd := checkDraws(n)
	prog.phase(fmt.Sprintf("checking q: the fixed effects and variance parameters from q's marginal, %d draws", nd))
	start := time.Now()
	imp, err := posterior.ImportanceGlobal(ctx, res, m, posterior.ImportanceSettings{Draws: nd, Rounds: -1, LocalDraws: -1, Seed: o.seed, Workers: o.threads, Group: sc.grp})
	doc.Seconds = time.Since(start).Seconds()
	if err != nil {
		doc.Checked = false
		if ctx.Err() != nil || errors.Is(err, vi.ErrGroupStopped) {
			doc.Reason = correctionInterrupted
		} else {
			doc.Reason = "not run, and the check of q failed: " + withoutPackage(err)
		}
		return doc
	}
	_, _, est := correctionCost(sc, g, draws)
	doc.QK, doc.Draws = jfloat(imp.K), len(imp.LogWeights) // every draw is from q
	doc.checkLogWeights = imp.LogWeights
	doc.FewestNodes, doc.MostNodes, doc.QuadratureError = imp.FewestNodes, imp.MostNodes, jfloat(imp.QuadratureError)
	verdict := "q's marginal looks close to the posterior"
	switch {
	case imp.K > posterior.ParetoKBad:
		verdict = "q's marginal misses part of the posterior"
	case imp.K > posterior.ParetoKGood:
		verdict = "q's marginal is usable, somewhat lighter-tailed than the posterior"
	}
	doc.Reason = fmt.Sprintf("not run: %s; q's marginal of the %d %s, checked at %d draws with the random effects integrated out, has Pareto k %.2f (%s); -correct always corrects them (could take %s)", why, g, globalsOf(m), doc.Draws, imp.K, verdict, upTo(est))
	return doc
}

// correctAfterCheck reports whether -correct auto goes on to the
// correction after checkMarginal's doc (made for the reason why): when the
// check found q's marginal of the g fixed effects and variance parameters
// off (Pareto k above posterior.ParetoKBad) and the correction's integrals
// are within autoCorrectIntegrals. Then it says so in doc, whose check
// gives way to the correction's own draws. A k from the check's few draws
// is rough: on the built-in example 0.81 at 250 draws, 0.64 at the
// correction's 1000; on epilepsy with -seed 4, 0.87 and 0.85.
func correctAfterCheck(doc *correctionDoc, why string, g int, integrals float64) bool {
	if !doc.Checked || !(float64(doc.QK) > posterior.ParetoKBad) || integrals > autoCorrectIntegrals {
		return false
	}
	doc.Reason = fmt.Sprintf("%s, but q's marginal of the %d fixed effects and variance parameters, checked at %d draws with the random effects integrated out, has Pareto k %.2f, above %g", why, g, doc.Draws, float64(doc.QK), posterior.ParetoKBad)
	doc.Checked, doc.QK, doc.Draws, doc.checkLogWeights = false, 0, 0, nil
	return true
}

// checkIntegrals is the subject integrals that the check of q's marginal
// spends beyond its first vi.MinImportanceDraws draws: a k from 100 draws
// ranged from 0.08 to 0.91 over five seeds on epilepsy (59 subjects),
// where 250 cost a few hundredths of a second.
const checkIntegrals = 50_000

// checkDraws returns the draws of the check of q's marginal on n
// subjects: vi.MinImportanceDraws, and up to a quarter of the default
// correction's as checkIntegrals allows.
func checkDraws(n int) int {
	return max(vi.MinImportanceDraws, min(posterior.DefaultImportanceDraws/4, checkIntegrals/max(n, 1)))
}

// roughCount says x to two significant digits in words beyond a million:
// "2.6 million", "7.8 billion".
func roughCount(x float64) string {
	switch {
	case x >= 1e9:
		return fmt.Sprintf("%.2g billion", x/1e9)
	case x >= 1e6:
		return fmt.Sprintf("%.2g million", x/1e6)
	}
	return fmt.Sprintf("%.0f", x)
}

// globalsOf names the global parameters of m as the correction's messages
// count them: the crossed factors' levels are among them.
func globalsOf(m *glmm.Model) string {
	if m.NumCrossed() > 0 {
		return "fixed effects, variance parameters and crossed levels"
	}
	return "fixed effects and variance parameters"
}

// upTo says that something takes at most d: "up to about 40 seconds",
// "under a second".
func upTo(d time.Duration) string {
	if d < time.Second {
		return roughDuration(d)
	}
	return "up to " + roughDuration(d)
}

// roughDuration says d to one significant unit: "about 40 seconds", "about
// 3 hours".
func roughDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return "under a second"
	case d < 1500*time.Millisecond:
		return "about a second"
	case d < 2*time.Minute:
		return fmt.Sprintf("about %.0f seconds", d.Seconds())
	case d < 2*time.Hour:
		return fmt.Sprintf("about %.0f minutes", d.Minutes())
	case d < 48*time.Hour:
		return fmt.Sprintf("about %.0f hours", d.Hours())
	}
	return fmt.Sprintf("about %.0f days", d.Hours()/24)
}

// trusted reports whether the correction's draws can be trusted (their
// Pareto k below posterior.ParetoKBad), so that they, not the draws over
// every variable, give the corrected summaries and log p(y).
func trusted(imp *posterior.GlobalImportance) bool {
	return imp != nil && imp.K < posterior.ParetoKBad
}

// trusted reports, of a document read back as well, what trusted reports
// of the correction it describes.
func (c *correctionDoc) trusted() bool {
	return c != nil && c.Ran && float64(c.K) < posterior.ParetoKBad
}

// withoutPackage returns err's message without the library's package
// name in front ("posterior: ", and "glmm: " from a subject's density
// below it, "rvb: " from RVB's summaries, or "vi: " from another process
// of a -shard correction), which means nothing to a user of the command.
func withoutPackage(err error) string {
	s := err.Error()
	for _, pkg := range []string{"posterior: ", "glmm: ", "rvb: ", "vi: "} {
		s = strings.TrimPrefix(s, pkg)
	}
	return s
}
