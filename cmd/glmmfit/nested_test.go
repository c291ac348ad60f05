// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/vi"
)

// nestedData is the simulated nested data of benchmarks/nested.
var nestedData = filepath.Join("..", "..", "benchmarks", "nested", "nested_sim.csv")

// TestPeerNested fits (1 | school/class), 300 schools whose blocks hold
// their 3 classes (variable-size local blocks), and compares with lme4's
// glmer and lmer (benchmarks/nested/nested.R): the fixed effects within
// 0.3 of lme4's standard error, the sds of school and school:class (300
// and 900 levels) and sigma within 20%, as TestPeerModels asks of the
// everyday models, each fitted by the default method: Bernoulli by RVB1
// at the start, gaussian by GVA. (Measured: Bernoulli 0.02 and 0.11 se
// off, sds 0.5623 and 0.9693 against glmer's 0.5246 and 0.9587; gaussian
// 0.00 and 0.02 se off, sds 0.5138 and 0.9753 and sigma 0.8021 against
// lmer's 0.5151, 0.9700 and 0.8013.)
func TestPeerNested(t *testing.T) {
	for _, c := range []struct{ tool, family, formula, method string }{
		{"glmer", "bernoulli", "y ~ x + (1 | school/class)", "rvb1"},
		{"lmer", "gaussian", "z ~ x + (1 | school/class)", "gva"},
	} {
		t.Run(c.tool, func(t *testing.T) {
			peer := readPeers(t, filepath.Join("..", "nested", "nested_peers.csv"), "nested_sim", c.tool, c.formula)
			abs, err := filepath.Abs(nestedData)
			if err != nil {
				t.Fatal(err)
			}
			r := glmmfit(t, "", "", nil, "fit", "-data", abs, "-formula", c.formula, "-family", c.family, "-format", "json", "-quiet")
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			doc := readDoc(t, []byte(r.stdout))
			if doc.Options.Method != c.method || doc.Data.Group != "school" || doc.Data.Subjects != 300 || len(doc.Nested) != 1 || doc.Nested[0].Levels != 900 {
				t.Fatalf("method %s, subjects %s (%d), nested %+v", doc.Options.Method, doc.Data.Group, doc.Data.Subjects, doc.Nested)
			}
			for _, f := range doc.Fixed {
				p := peer[[2]string{"fixed", f.Name}]
				d := math.Abs(float64(f.Estimate)-p.estimate) / p.se
				t.Logf("%s: %.4f, %s %.4f ± %.4f (%.2f se)", f.Name, float64(f.Estimate), c.tool, p.estimate, p.se, d)
				if !(d <= 0.3) {
					t.Errorf("%s: %.2f se off", f.Name, d)
				}
			}
			check := func(what string, got float64, p peerFigure) {
				t.Helper()
				t.Logf("%s: %.4f, %s %.4f", what, got, c.tool, p.estimate)
				if !(math.Abs(got/p.estimate-1) <= 0.2) {
					t.Errorf("%s: %.4f, %s %.4f: beyond 20%%", what, got, c.tool, p.estimate)
				}
			}
			// lme4 names the interaction class:school.
			check("sd(school:class)", float64(doc.Nested[0].SD.Estimate), peer[[2]string{"sd", "class:school:(Intercept)"}])
			check("sd(school)", float64(doc.RESD[0].Estimate), peer[[2]string{"sd", "school:(Intercept)"}])
			if doc.Dispersion != nil {
				check("sigma", float64(doc.Dispersion.Estimate), peer[[2]string{"sigma", "Residual"}])
			}
			if len(doc.Nested[0].Effects) != 900 || len(doc.RandomEffects.Subjects) != 300 {
				t.Errorf("%d class effects, %d school effects", len(doc.Nested[0].Effects), len(doc.RandomEffects.Subjects))
			}
		})
	}
}

// TestNestedRefusals: what the fit of nested factors does not do yet is
// an error naming the flag.
func TestNestedRefusals(t *testing.T) {
	abs, err := filepath.Abs(nestedData)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		flags []string
		want  string
	}{
		{[]string{"-batch", "10"}, "-batch"},
		{[]string{"-optimizer", "vogn"}, "-optimizer vogn"},
		{[]string{"-nest", "inner"}, "-nest"},
	} {
		r := glmmfit(t, "", "", nil, append([]string{"fit", "-data", abs, "-formula", "y ~ x + (1 | school/class)", "-family", "bernoulli", "-quiet"}, c.flags...)...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) || (c.flags[0] != "-nest" && !strings.Contains(r.stderr, "nested")) {
			t.Errorf("%v: exit %d, stderr %q", c.flags, r.code, r.stderr)
		}
	}
}

// TestNestedMethod: -method auto fits a nested model by RVB1 expanded at
// the start for the families without a dispersion parameter and by GVA
// for the others, saying why in the JSON; an explicit method and
// expansion are fitted as asked, and RVB for gaussian is refused naming
// -method and the family.
func TestNestedMethod(t *testing.T) {
	abs, err := filepath.Abs(nestedData)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		family, response string
		flags            []string
		method, expand   string
		note             string // in the JSON's method_note, "" for none
		refused          string // in the error of a refused fit
	}{
		{"bernoulli", "y", nil, "rvb1", "start", "chosen by -method auto: for nested bernoulli effects, RVB1 expanded at the start", ""},
		{"poisson", "y", nil, "rvb1", "start", "chosen by -method auto: for nested poisson effects, RVB1", ""},
		{"gaussian", "z", nil, "gva", "", "chosen by -method auto: RVB is not available for the gaussian family", ""},
		{"bernoulli", "y", []string{"-method", "gva"}, "gva", "", "", ""},
		{"bernoulli", "y", []string{"-method", "rvb2", "-expansion", "jeffreys"}, "rvb2", "jeffreys", "", ""},
		{"gaussian", "z", []string{"-method", "rvb1"}, "", "", "", "-method rvb1: RVB does not fit the gaussian family"},
	} {
		args := append([]string{"fit", "-data", abs, "-formula", c.response + " ~ x + (1 | school/class)", "-family", c.family,
			"-format", "json", "-quiet", "-max-iter", "100"}, c.flags...)
		r := glmmfit(t, "", "", nil, args...)
		if c.refused != "" {
			if r.code != exitUsage || !strings.Contains(r.stderr, c.refused) {
				t.Errorf("%s %v: exit %d, stderr %q; want exit %d saying %q", c.family, c.flags, r.code, r.stderr, exitUsage, c.refused)
			}
			continue
		}
		if r.code != 0 && r.code != exitLimit {
			t.Fatalf("%s %v: exit %d: %s", c.family, c.flags, r.code, r.stderr)
		}
		doc := readDoc(t, []byte(r.stdout))
		o := doc.Options
		if o.Method != c.method || o.Expansion != c.expand || !strings.HasPrefix(o.MethodNote, c.note) || (c.note == "") != (o.MethodNote == "") {
			t.Errorf("%s %v: method %q, expansion %q, note %q; want %q, %q, %q", c.family, c.flags, o.Method, o.Expansion, o.MethodNote, c.method, c.expand, c.note)
		}
	}
}

// TestNestedTimeout: -timeout stops a nested fit as it stops the others,
// with the time limit's exit code, not an interruption's.
func TestNestedTimeout(t *testing.T) {
	abs, err := filepath.Abs(nestedData)
	if err != nil {
		t.Fatal(err)
	}
	r := glmmfit(t, "", "", nil, "fit", "-data", abs, "-formula", "y ~ x + (1 | school/class)", "-family", "bernoulli", "-quiet", "-timeout", "300ms")
	if r.code != exitLimit || !strings.Contains(r.stderr, "time limit") {
		t.Fatalf("exit %d, stderr %q; want %d at the time limit", r.code, r.stderr, exitLimit)
	}
}

// TestNestedWarnings: a nested fit whose importance ratios have a heavy
// tail (Pareto k about 2) is warned about, naming -nest crossed, and one
// with light-tailed ratios is not.
func TestNestedWarnings(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	for _, c := range []struct {
		heavy bool
		want  string
	}{
		{true, "-nest crossed"},
		{false, ""},
	} {
		logw := make([]float64, 1000)
		for i := range logw {
			if c.heavy {
				logw[i] = -2 * math.Log(rnd.Float64()) // Pareto, tail index 1/2
			} else {
				logw[i] = 0.1 * rnd.NormFloat64()
			}
		}
		res := &vi.Result{Status: vi.Converged, LogWeights: logw, N: 10}
		w := strings.Join(nestedWarnings(res), "\n")
		if c.want == "" && w != "" || !strings.Contains(w, c.want) {
			t.Errorf("heavy %v: warnings %q, want %q", c.heavy, w, c.want)
		}
	}
}

// TestNestedPlot: -plot draws a nested fit as it draws the others: the
// file is well-formed SVG whose panels include the bound, the Pareto k of
// the ratios and the caterpillar of the levels of a.
func TestNestedPlot(t *testing.T) {
	abs, err := filepath.Abs(nestedData)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r := glmmfit(t, dir, "", nil, "fit", "-data", abs, "-formula", "y ~ x + (1 | school/class)", "-family", "bernoulli", "-quiet", "-plot", "fit.svg")
	mustSucceed(t, r, "fit -plot fit.svg of a nested model")
	_, text := readSVG(t, filepath.Join(dir, "fit.svg"))
	for _, want := range []string{"Lower bound", "Pareto k", "by school", "300 levels of school"} {
		if !strings.Contains(text, want) {
			t.Errorf("the plot's text lacks %q", want)
		}
	}
}
