// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"math"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// peerFigure is one figure of benchmarks/peers/models_peers.csv.
type peerFigure struct{ estimate, se float64 }

// readPeers returns the figures of one data set, tool and formula of a
// fixture in benchmarks/peers, keyed by kind and term.
func readPeers(t *testing.T, file, data, tool, formula string) map[[2]string]peerFigure {
	t.Helper()
	rows := readCSV(t, filepath.Join("..", "..", "benchmarks", "peers", file))
	out := map[[2]string]peerFigure{}
	for _, r := range rows[1:] {
		if len(r) < 7 || r[0] != data || r[1] != tool || r[2] != formula {
			continue
		}
		e, _ := strconv.ParseFloat(r[5], 64)
		se, _ := strconv.ParseFloat(r[6], 64) // NA gives NaN's zero: unused
		out[[2]string{r[3], r[4]}] = peerFigure{e, se}
	}
	if len(out) == 0 {
		t.Fatalf("no %s figures for %s in the fixture", tool, data)
	}
	return out
}

// factorName turns glmmfit's factor(x)level into R's xlevel.
var factorName = regexp.MustCompile(`factor\((\w+)\)`)

// TestPeerModels fits the everyday models of the new families and of
// crossed random effects and compares them with lme4 and glmmTMB
// (benchmarks/peers/models.R): every fixed effect within 0.3 of the peer's
// standard error, every random-effect sd of a factor with at least 20
// levels and the residual sd or NB shape within 20%. Sds of factors with
// fewer levels are logged, not checked: with few groups the posterior
// mean of an sd lies above the maximum-likelihood estimate.
func TestPeerModels(t *testing.T) {
	for _, c := range []struct {
		data, tool, family, formula string
		peerFormula                 string   // the fixture's, when it differs
		file                        string   // the fixture; "" is models_peers.csv
		flags                       []string // more glmmfit flags
	}{
		{"sleepstudy", "lmer", "gaussian", "Reaction ~ Days + (Days | Subject)", "", "", nil},
		{"sleepstudy", "lmer", "gaussian", "Reaction ~ Days + (Days || Subject)", "", "", nil},
		{"penicillin", "lmer", "gaussian", "diameter ~ 1 + (1 | plate) + (1 | sample)", "", "", nil},
		{"verbagg", "glmer", "bernoulli", "r2 ~ Anger + Gender + btype + situ + (1 | id) + (1 | item)", "", "", nil},
		{"salamanders", "glmmTMB", "negbinomial", "count ~ spp * mined + (1 | site)", "", "", nil},
		{"owls", "glmmTMB", "negbinomial", "SiblingNegotiation ~ FoodTreatment * SexParent + offset(logBroodSize) + (1 | Nest)", "", "", nil},
		// models.R codes nutrient and rack as factors, as lme4 does.
		{"arabidopsis", "glmer", "poisson", "total.fruits ~ factor(nutrient) * amd + factor(rack) + status + (1 | popu) + (1 | gen)",
			"total.fruits ~ nutrient * amd + rack + status + (1 | popu) + (1 | gen)", "", nil},
		// The links, against benchmarks/peers/links.R.
		{"cbpp", "glmer-probit", "binomial", "cbind(incidence, size - incidence) ~ factor(period) + (1 | herd)",
			"cbind(incidence, size - incidence) ~ period + (1 | herd)", "links_peers.csv", []string{"-link", "probit"}},
		{"cbpp", "glmer-cloglog", "binomial", "cbind(incidence, size - incidence) ~ factor(period) + (1 | herd)",
			"cbind(incidence, size - incidence) ~ period + (1 | herd)", "links_peers.csv", []string{"-link", "cloglog"}},
	} {
		t.Run(c.data, func(t *testing.T) {
			dir := dataDir(t, c.data+".csv")
			pf := c.peerFormula
			if pf == "" {
				pf = c.formula
			}
			file := c.file
			if file == "" {
				file = "models_peers.csv"
			}
			peer := readPeers(t, file, c.data, c.tool, pf)
			args := append([]string{"fit", "-data", filepath.Join(dir, c.data+".csv"), "-formula", c.formula,
				"-family", c.family, "-format", "json", "-quiet"}, c.flags...)
			r := glmmfit(t, "", "", nil, args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			doc := readDoc(t, []byte(r.stdout))
			for _, f := range doc.Fixed {
				name := factorName.ReplaceAllString(f.Name, "$1")
				p, ok := peer[[2]string{"fixed", name}]
				if !ok {
					t.Fatalf("%s has no %s", c.tool, name)
				}
				if d := math.Abs(float64(f.Estimate)-p.estimate) / p.se; !(d <= 0.3) {
					t.Errorf("%s: %.4g, %s %.4g ± %.2g (%.2f se off)", f.Name, float64(f.Estimate), c.tool, p.estimate, p.se, d)
				}
			}
			checkSD := func(term string, got float64, levels int) {
				t.Helper()
				p, ok := peer[[2]string{"sd", term}]
				if !ok {
					t.Fatalf("%s has no sd %s", c.tool, term)
				}
				ratio := got / p.estimate
				t.Logf("sd %s (%d levels): %.4g, %s %.4g (ratio %.3f)", term, levels, got, c.tool, p.estimate, ratio)
				if levels >= 20 && !(math.Abs(ratio-1) <= 0.2) {
					t.Errorf("sd %s: %.4g, %s %.4g: beyond 20%%", term, got, c.tool, p.estimate)
				}
			}
			for _, m := range doc.RESD {
				inner := m.Name[len("sd(") : len(m.Name)-1]
				checkSD(doc.Data.Group+":"+inner, float64(m.Estimate), doc.Data.Subjects)
			}
			for _, cr := range doc.Crossed {
				checkSD(cr.Group+":(Intercept)", float64(cr.SD.Estimate), cr.Levels)
			}
			if d := doc.Dispersion; d != nil {
				kind := d.Name
				term := map[string]string{"sigma": "Residual", "phi": "phi"}[kind]
				p, ok := peer[[2]string{kind, term}]
				if !ok {
					t.Fatalf("%s has no %s", c.tool, kind)
				}
				if ratio := float64(d.Estimate) / p.estimate; !(math.Abs(ratio-1) <= 0.2) {
					t.Errorf("%s: %.4g, %s %.4g", kind, float64(d.Estimate), c.tool, p.estimate)
				}
			}
		})
	}
}

// TestParetoKWarns: the Pareto diagnostic of the importance ratios flags
// toenail, whose skewed posterior the Gaussian approximation misses
// (random-intercept sd 3.6 against 4.0 by 25-point quadrature), and is
// quiet on sleepstudy, whose Gaussian model it fits closely.
func TestParetoKWarns(t *testing.T) {
	dir := dataDir(t, "toenail.csv")
	for _, c := range []struct {
		args []string
		bad  bool
	}{
		{[]string{"-data", filepath.Join(dir, "toenail.csv"), "-formula", "outcome ~ treatment*time + (1 | patientID)", "-ref", "outcome=none or mild"}, true},
		{[]string{"-data", filepath.Join(dir, "sleepstudy.csv"), "-formula", "Reaction ~ Days + (Days | Subject)", "-family", "gaussian"}, false},
	} {
		r := glmmfit(t, "", "", nil, append([]string{"fit", "-format", "json", "-quiet"}, c.args...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, r.code, r.stderr)
		}
		doc := readDoc(t, []byte(r.stdout))
		pk := doc.LowerBound.ParetoK
		if pk == nil || pk.Draws < 100 {
			t.Fatalf("%v: no Pareto diagnostic: %+v", c.args, pk)
		}
		warned := false
		for _, w := range doc.Warnings {
			warned = warned || strings.Contains(w, "Pareto k")
		}
		t.Logf("%s: k = %.2f at %d draws", c.args[1], float64(pk.K), pk.Draws)
		if (float64(pk.K) > 1) != c.bad || warned != c.bad {
			t.Errorf("%v: k = %.2f, warned %v; want bad = %v", c.args, float64(pk.K), warned, c.bad)
		}
		// Importance-corrected summaries only where the weights can be
		// trusted; there, for a model q fits closely, they agree with
		// q's within their Monte Carlo error.
		pc := doc.PSISCorrected
		if (pc == nil) != (float64(pk.K) >= 0.7) {
			t.Errorf("%v: k = %.2f, corrected summaries %v", c.args, float64(pk.K), pc != nil)
		}
		if pc != nil {
			for j, f := range pc.Fixed {
				q := doc.Fixed[j]
				mcse := float64(f.EstError) / math.Sqrt(float64(pc.EffectiveDraws))
				if d := math.Abs(float64(f.Estimate - q.Estimate)); d > 4*mcse+0.1*float64(q.EstError) {
					t.Errorf("%v: %s corrected %v, q's %v (Monte Carlo error %.2g)", c.args, f.Name, f.Estimate, q.Estimate, mcse)
				}
			}
		}
		// log p(y) likewise; where given it is above the lower bound, as
		// log p(y) is (within their Monte Carlo errors), and not far.
		lm := doc.LowerBound.LogMarginal
		if (lm == nil) != (float64(pk.K) >= 0.7) {
			t.Errorf("%v: k = %.2f, log p(y) %+v", c.args, float64(pk.K), lm)
		}
		if lm != nil {
			lb, se := float64(doc.LowerBound.Value), float64(lm.SE)+float64(doc.LowerBound.MCSE)
			t.Logf("%s: log p(y) %.2f ± %.2f, bound %.2f", c.args[1], float64(lm.Value), float64(lm.SE), lb)
			if v := float64(lm.Value); !(v > lb-3*se && v < lb+10) {
				t.Errorf("%v: log p(y) %v ± %v against the bound %v", c.args, v, float64(lm.SE), lb)
			}
		}
	}
}

// dropParetoWarning removes the Pareto diagnostic's warning from a
// program's standard error.
func dropParetoWarning(stderr string) string {
	var keep []string
	for _, l := range strings.SplitAfter(stderr, "\n") {
		if !strings.Contains(l, "warning: the Pareto k") {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "")
}
