// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/posterior"
)

// methodDescriptions say in a few words what each method is.
var methodDescriptions = map[string]string{
	methodGVA:  "Gaussian approximation with a sparse precision Cholesky factor",
	methodRVB1: "reparametrised VB, random effects centred by a fixed expansion",
	methodRVB2: "reparametrised VB, random effects centred at their conditional mode",
}

// expansionNames say what RVB1's expansion point is.
var expansionNames = map[string]string{
	expansionStart:    "the start's mode",
	expansionJeffreys: "the paper's data-based point",
	"":                "the paper's data-based point",
}

var linkNames = map[string]string{"poisson": "log", "bernoulli": "logit", "binomial": "logit", "gaussian": "identity", "negbinomial": "log"}

// dispersionNotes say what a family's dispersion parameter is.
var dispersionNotes = map[string]string{
	"gaussian":    "sigma is the residual standard deviation",
	"negbinomial": "phi is the shape: variance mu + mu^2/phi (glmmTMB's nbinom2)",
}

// writeText writes the summary of a fit in the manner of lme4 and brms.
func writeText(w io.Writer, doc *document) {
	c := doc.Options
	d := doc.Data
	line := func(label, format string, args ...any) {
		fmt.Fprintf(w, "%10s %s\n", label, fmt.Sprintf(format, args...))
	}
	// wrapped writes text under label in lines of at most 72 columns.
	wrapped := func(label, text string) {
		for k, l := range wrapWords(text, 72) {
			if k > 0 {
				label = ""
			}
			line(label, "%s", l)
		}
	}
	fmt.Fprintf(w, "Generalized linear mixed model fitted by variational Bayes (glmmfit %s)\n", doc.Software.Version)
	link := linkNames[c.Family]
	if l, err := glmm.ParseLink(c.Link); err == nil && l != glmm.CanonicalLink {
		link = l.String()
	}
	line("Family:", "%s (%s link)", c.Family, link)
	line("Formula:", "%s", c.Formula)
	extra := ""
	if c.Weights != "" {
		extra += "; weights " + c.Weights
	}
	if c.Offset != "" {
		extra += "; offset " + c.Offset
	}
	if d.RowsLeftOut > 0 {
		extra += "; " + rowsWithMissing(d.RowsLeftOut) + " left out"
	}
	line("Data:", "%s (Number of observations: %d%s)", d.Name, d.Observations, extra)
	groups := fmt.Sprintf("%s (Number of levels: %d)", d.Group, d.Subjects)
	for _, cr := range doc.Crossed {
		groups += fmt.Sprintf("; %s, crossed (Number of levels: %d)", cr.Group, cr.Levels)
	}
	for _, nd := range doc.Nested {
		groups += fmt.Sprintf("; %s, nested in %s (Number of levels: %d)", nd.Group, d.Group, nd.Levels)
	}
	line("Groups:", "%s", groups)
	what := methodDescriptions[c.Method]
	if c.Method == methodRVB1 {
		what = "reparametrised VB, random effects centred by an expansion about " + expansionNames[c.Expansion]
	}
	method := fmt.Sprintf("%s (%s)", c.Method, what)
	if c.MethodNote != "" {
		method += "; " + c.MethodNote
	}
	line("Method:", "%s", method)
	if c.Batch > 0 {
		start := ""
		if c.StartSample > 0 {
			start = fmt.Sprintf("; started from a sample of %d of the %d subjects", c.StartSample, d.Subjects)
		}
		line("Step rule:", "stochastic updates over subjects, %d a step (Robbins–Monro schedule)%s; seed %d", c.Batch, start, c.Seed)
	} else {
		line("Step rule:", "%s; seed %d; tol %g", c.Optimizer, c.Seed, c.Tol)
	}
	if p := doc.Timings.Processes; p > 1 {
		line("Fit:", "%s (%.2f s wall time on %d processes)", statusText(doc), doc.Timings.FitSeconds, p)
	} else {
		line("Fit:", "%s (%.2f s wall time)", statusText(doc), doc.Timings.FitSeconds)
	}
	lb := doc.LowerBound
	switch v := float64(lb.Value); {
	case math.IsNaN(v):
		line("Bound:", "not estimated (the fit was interrupted)")
	case lb.Cut != "":
		// Models whose bounds differ by a few s.e. cannot be told
		// apart, and the user should see why it is large.
		wrapped("Bound:", fmt.Sprintf("ELBO %.2f ± %.2f (Monte Carlo s.e. from %d draws, %s); %s", v, float64(lb.MCSE), lb.Draws, lb.Cut, constantsNote))
	default:
		line("Bound:", "ELBO %.2f ± %.2f (Monte Carlo s.e.); %s", v, float64(lb.MCSE), constantsNote)
	}
	if pk := lb.ParetoK; pk != nil {
		verdict := "q is close to the posterior in its tails"
		switch k := float64(pk.K); {
		case k > posterior.ParetoKWarn:
			verdict = "q misses part of the posterior: see the warning"
		case k > posterior.ParetoKBad:
			verdict = "q is far from the posterior in its tails"
		case k > posterior.ParetoKGood:
			verdict = "q is somewhat lighter-tailed than the posterior"
		}
		line("Pareto k:", "%.2f of the importance ratios p/q at %d draws: %s", float64(pk.K), pk.Draws, verdict)
	}
	cr := doc.Correction
	if cr != nil && cr.Ran {
		wrapped("Correction:", cr.Reason+";")
		line("", "the fixed effects and variance parameters drawn from q's marginal (Pareto k %.2f)", float64(cr.QK))
		if cr.Rounds == 0 {
			line("", "alone (k %.2f at all %d draws), the random effects integrated out", float64(cr.K), cr.Draws)
		} else {
			if cr.Mixed {
				if cr.Rounds > 1 {
					line("", "then from a t distribution adapted in %s,", roundsText(cr.Rounds-1))
				}
				line("", "then as many again from a t distribution adapted to their weights,")
				line("", "the two weighed over their mixture (k %.2f, %d draws),", float64(cr.K), cr.Draws)
			} else {
				line("", "then from a t distribution adapted in %s (k %.2f, %d draws),", roundsText(cr.Rounds), float64(cr.K), cr.Draws)
			}
			line("", "the random effects integrated out")
		}
		line("", "by Gauss-Hermite quadrature (%d to %d nodes; %.2f s)", cr.FewestNodes, cr.MostNodes, cr.Seconds)
	} else if cr != nil {
		wrapped("Correction:", cr.Reason)
	}
	if lm := doc.LowerBound.LogMarginal; lm != nil {
		from := "q"
		if cr.trusted() {
			from = "the correction's draws"
		}
		line("log p(y):", "%.2f ± %.2f (importance sampling from %s; all constants included: compare models by it)", float64(lm.Value), float64(lm.SE), from)
	}
	if pr := doc.Prior; pr != nil && pr.Name == "auto" {
		line("Priors:", "N(0, %g^2) on each coefficient per standard deviation of its", pr.SD)
		line("", "predictor and on the intercept at the predictors' means (-prior auto);")
		var parts []string
		for _, f := range pr.Fixed {
			parts = append(parts, fmt.Sprintf("%s ~ N(%.4g, %.3g^2)", f.Name, f.Mean, f.SD))
		}
		for k := 0; k < len(parts); k += 3 {
			sep := ","
			if k+3 >= len(parts) {
				sep = ""
			}
			lead := ""
			if k == 0 {
				lead = "on the data's scale: "
			}
			line("", "%s%s%s", lead, strings.Join(parts[k:min(k+3, len(parts))], ", "), sep)
		}
		line("", "omega ~ N(0, %g^2), the log-diagonal and the lower triangle of the", pr.SD)
		line("", "Cholesky factor of the random-effect precision")
		if pr.Dispersion != "" {
			line("", "%s", pr.Dispersion)
		}
	} else {
		line("Priors:", "beta, omega ~ N(0, %g^2); omega holds the log-diagonal and the lower", c.PriorSD)
		line("", "triangle of the Cholesky factor of the random-effect precision")
		if pr := doc.Prior; pr != nil && pr.Dispersion != "" {
			line("", "%s", pr.Dispersion)
		}
	}

	// lme4 lists the inner factor of a nesting first: a:b, then a.
	for _, nd := range doc.Nested {
		fmt.Fprintf(w, "\nRandom effects: ~%s, nested in %s (Number of levels: %d)\n", nd.Group, d.Group, nd.Levels)
		sd := nd.SD
		sd.Name = "sd(Intercept)"
		writeTable(w, []marginal{sd})
	}
	fmt.Fprintf(w, "\nRandom effects: ~%s (Number of levels: %d)\n", d.Group, d.Subjects)
	re := append(append([]marginal(nil), doc.RESD...), doc.RECor...)
	for k := range re {
		re[k].Name = componentName(re[k].Name)
	}
	writeTable(w, re)
	writeDrawNote(w, re)
	for _, cr := range doc.Crossed {
		fmt.Fprintf(w, "\nRandom effects: ~%s (Number of levels: %d)\n", cr.Group, cr.Levels)
		sd := cr.SD
		sd.Name = "sd(Intercept)"
		writeTable(w, []marginal{sd})
	}
	if doc.Dispersion != nil {
		fmt.Fprintf(w, "\nFamily-specific parameter: %s\n", dispersionNotes[c.Family])
		writeTable(w, []marginal{*doc.Dispersion})
	}
	fmt.Fprintf(w, "\nFixed effects:\n")
	writeTable(w, doc.Fixed)
	writeCorrelation(w, doc.Fixed, doc.FixedCorrelation)
	if pc := doc.PSISCorrected; pc != nil {
		from := "q"
		if cr.trusted() {
			from = "the correction"
		}
		fmt.Fprintf(w, "\nImportance-corrected (PSIS: k = %.2f, %.0f effective of %d draws from %s):\n", float64(pc.K), float64(pc.EffectiveDraws), pc.Draws, from)
		re := slices.Concat(pc.RESD, pc.RECor)
		for k := range re {
			re[k].Name = componentName(re[k].Name)
		}
		crossed := slices.Clone(pc.CrossedSD)
		if len(crossed) > 0 {
			// One table holds the components of several factors:
			// each is named with its factor, as brms names them
			// (sd_plate__Intercept).
			for k := range re {
				re[k].Name = groupComponent(re[k].Name, d.Group)
			}
			for k := range crossed {
				crossed[k].Name = groupComponent("sd(Intercept)", strings.TrimSuffix(strings.TrimPrefix(crossed[k].Name, "sd("), ")"))
			}
		}
		rows := slices.Concat(pc.Fixed, re)
		if pc.Dispersion != nil {
			rows = append(rows, *pc.Dispersion)
		}
		rows = append(rows, crossed...)
		writeTable(w, rows)
		writeDrawNote(w, rows)
		if pc.RandomEffects != nil {
			fmt.Fprintf(w, "(each subject's random effects, corrected, are in -format json's psis_corrected: their\nmoments given the fixed effects and variance parameters, averaged over %d of their draws)\n", pc.LocalDraws)
		}
	}
	fmt.Fprintf(w, "\nEstimate and Est.Error are the posterior mean and standard deviation under the\n")
	fmt.Fprintf(w, "Gaussian approximation; 2.5%% and 97.5%% are the bounds of the 95%% credible interval.\n")
}

// statusText says how the fit ended.
func statusText(doc *document) string {
	// A stochastic fit (-batch) counts passes over the data, whose limit
	// is its own.
	done, limit := fmt.Sprintf("%d iterations", doc.Iterations), "the iteration limit"
	if doc.Passes > 0 {
		done, limit = fmt.Sprintf("%d passes over the data", doc.Passes), "the limit of passes"
	}
	switch doc.Status {
	case "converged":
		return "converged after " + done
	case "max-iterations":
		return "NOT converged: stopped at " + limit + ", " + done
	case "time-limit":
		return "NOT converged: stopped at the time limit after " + done
	case "diverged":
		return "DIVERGED; last good state after " + done
	case "cancelled":
		return "INTERRUPTED; last good state after " + done
	}
	return doc.Status
}

// writeDrawNote says how large the Monte Carlo error of the figures from
// draws among ms is, if there are any.
func writeDrawNote(w io.Writer, ms []marginal) {
	var worst float64
	for _, m := range ms {
		worst = max(worst, m.MCSE.largest())
	}
	if worst > 0 {
		fmt.Fprintf(w, "(figures from draws: Monte Carlo standard error at most %s)\n", num(jfloat(worst)))
	}
}

// writeTable writes marginals as a table with the columns Estimate,
// Est.Error, 2.5% and 97.5%.
func writeTable(w io.Writer, ms []marginal) {
	if len(ms) == 0 {
		fmt.Fprintln(w, "(none)")
		return
	}
	header := []string{"", "Estimate", "Est.Error", "2.5%", "97.5%"}
	rows := [][]string{header}
	for _, m := range ms {
		rows = append(rows, []string{m.Name, num(m.Estimate), num(m.EstError), num(m.Q025), num(m.Q975)})
	}
	width := make([]int, len(header))
	for _, r := range rows {
		for j, s := range r {
			width[j] = max(width[j], len(s))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		fmt.Fprintf(&b, "%-*s", width[0], r[0])
		for j := 1; j < len(r); j++ {
			fmt.Fprintf(&b, "  %*s", width[j], r[j])
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

// num formats a table entry with four decimals, or in exponent form when
// that would hide its digits.
func num(f jfloat) string {
	v := float64(f)
	switch a := math.Abs(v); {
	case math.IsNaN(v):
		return "NA"
	case a != 0 && (a < 1e-3 || a >= 1e6):
		return fmt.Sprintf("%.3e", v)
	}
	return fmt.Sprintf("%.4f", v)
}

// writeCorrelation prints the lower triangle of the fixed effects'
// correlation matrix with abbreviated names, as summary(glmer) does;
// nothing for fewer than two fixed effects or more than 12.
func writeCorrelation(w io.Writer, fixed []marginal, corr [][]float64) {
	p := len(corr)
	if p < 2 || p > 12 || len(fixed) != p {
		return
	}
	names := make([]string, p-1)
	for j := range names {
		names[j] = strings.ReplaceAll(fixed[j].Name, "(Intercept)", "(Intr)")
	}
	heads := abbreviate(names, 6)
	col := 6
	for _, h := range heads {
		col = max(col, len(h))
	}
	width := 0
	for _, f := range fixed[1:] {
		width = max(width, len(f.Name))
	}
	fmt.Fprintf(w, "\nCorrelation of Fixed Effects:\n%*s", width, "")
	for _, h := range heads {
		fmt.Fprintf(w, " %-*s", col, h)
	}
	fmt.Fprintln(w)
	for i := 1; i < p; i++ {
		fmt.Fprintf(w, "%-*s", width, fixed[i].Name)
		for j := range i {
			fmt.Fprintf(w, " %*.3f", col, corr[i][j])
		}
		fmt.Fprintln(w)
	}
}

// abbreviate returns the prefixes of at least n bytes of names, each
// long enough to tell its name from the others' (as summary(glmer)'s
// headers do, where btypescold and btypeshout would both be btypes).
func abbreviate(names []string, n int) []string {
	out := make([]string, len(names))
	for i, s := range names {
		l := min(n, len(s))
		for _, t := range names {
			if t == s {
				continue
			}
			// The first byte where s and t differ must be in.
			k := 0
			for k < len(s) && k < len(t) && s[k] == t[k] {
				k++
			}
			if k >= l && k < len(s) {
				l = k + 1
			}
		}
		out[i] = s[:l]
	}
	return out
}

// componentName writes the name of a variance component as lme4 and brms
// print it, sd(Intercept) for sd((Intercept)) and cor(Intercept,Days) for
// cor((Intercept),Days); other names, a fixed effect's (Intercept) among
// them, are left as they are.
func componentName(name string) string {
	if strings.HasPrefix(name, "sd(") || strings.HasPrefix(name, "cor(") {
		return strings.ReplaceAll(name, "(Intercept)", "Intercept")
	}
	return name
}

// groupComponent names a random-effect component, sd(Days) or
// cor(Intercept,Days), with its grouping factor: sd(g:Days),
// cor(g:Intercept,Days).
func groupComponent(name, group string) string {
	open := strings.IndexByte(name, '(')
	if open < 0 {
		return name
	}
	return name[:open+1] + group + ":" + name[open+1:]
}

// wrapWords breaks s into lines of at most width bytes at spaces (a longer
// word gets a line of its own).
func wrapWords(s string, width int) []string {
	var lines []string
	cur := ""
	for _, w := range strings.Fields(s) {
		switch {
		case cur == "":
			cur = w
		case len(cur)+1+len(w) <= width:
			cur += " " + w
		default:
			lines = append(lines, cur)
			cur = w
		}
	}
	if cur != "" {
		lines = append(lines, cur)
	}
	return lines
}

// roundsText says n rounds of adaptation.
func roundsText(n int) string {
	if n == 1 {
		return "1 round"
	}
	return fmt.Sprintf("%d rounds", n)
}

// rowsWithMissing says how many rows have a missing value: "1 row with a
// missing value", "3 rows with missing values".
func rowsWithMissing(n int) string {
	if n == 1 {
		return "1 row with a missing value"
	}
	return fmt.Sprintf("%d rows with missing values", n)
}
