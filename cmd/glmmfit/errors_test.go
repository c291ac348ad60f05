// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestBadInvocations runs glmmfit wrongly in many ways. Each run must exit
// with the documented code and print exactly one line on standard error,
// starting "glmmfit: " and naming what is wrong (the file, line and column,
// the formula token, or the flag), and nothing on standard output.
func TestBadInvocations(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"good.csv":      "y,x,g\n1,0.5,a\n0,0.2,a\n3,0.1,b\n0,0.3,b\n2,0.7,c\n",
		"bern2.csv":     "y,x,g\n1,0.5,a\n2,0.2,a\n1,0.1,b\n0,0.3,b\n",
		"negcount.csv":  "y,x,g\n1,0.5,a\n0,0.2,a\n3,0.1,b\n-2,0.3,b\n",
		"typo.csv":      "y,x,g\n1,0.5,a\n0,abc,a\n3,0.1,b\n0,0.3,b\n",
		"empty.csv":     "",
		"header.csv":    "y,x,g\n",
		"fields.csv":    "y,x,g\n1,0.5,a\n0,0.2\n",
		"nan.csv":       "y,x,g\n1,0.5,a\n0,NaN,a\n",
		"zero.csv":      "y,x,g\n1,0.5,a\n0,0,a\n3,0.1,b\n0,0.3,b\n",
		"missing.csv":   "y,x,g\n1,0.5,a\n0,,a\n3,0.1,b\n",
		"blank.csv":     "y,x,g\n\n1,0.5,a\n\n0,0.2,a\n3,0.1,b\n-1,0.3,b\n",
		"notjson.json":  "{\"schema_version\": 1,",
		"newlevel.csv":  "y,x,f,g\n1,0.5,u,a\n0,0.2,v,a\n3,0.1,u,b\n0,0.3,v,b\n",
		"newlevel2.csv": "x,f,g\n0.5,w,a\n",
		"nocol.csv":     "f,g\nu,a\n",
		"newtypo.csv":   "y,x,f,g\n?,0.5,u,a\n?,0.5O,u,a\n",
		"heavy.csv":     "y,x,g,w\n1,0.5,a,1\n0,0.2,a,1\n3,0.1,b,1e300\n0,0.3,b,1\n",
		"trials.csv":    "s,n,x,g\n1,5,0.5,a\n0,0,0.2,a\n3,5,0.1,b\n2,4,0.3,b\n",
		"runaway.csv":   "y,x,g\n1,0.5,a\n\"0,0.2,a\n" + strings.Repeat("x", 1<<20) + "\n",
	}
	for name, content := range files {
		writeFile(t, dir, name, content)
	}
	// A fit file for the predict cases.
	fit := glmmfit(t, dir, "", nil, "fit", "-data", "newlevel.csv", "-formula", "y ~ x + f + (1 | g)", "-family", "poisson",
		"-method", "gva", "-max-iter", "400", "-out", "fit.json", "-draws", "100")
	if fit.code != 0 && fit.code != exitLimit {
		t.Fatalf("making the fit file: exit %d: %s", fit.code, fit.stderr)
	}

	fitArgs := func(data, formula string, extra ...string) []string {
		return append([]string{"fit", "-data", data, "-formula", formula}, extra...)
	}
	cases := []struct {
		name  string
		args  []string
		stdin string
		code  int
		want  []string // substrings of the message
	}{
		{"missing column", fitArgs("good.csv", "y ~ z + (1 | g)", "-family", "poisson"), "", 1, []string{`"z" at character 5`, "no such column"}},
		{"unknown family", fitArgs("good.csv", "y ~ x + (1 | g)", "-family", "gamma"), "", 2, []string{`unknown family "gamma"`, "gaussian or negbinomial"}},
		{"misspelt flag", fitArgs("good.csv", "y ~ x + (1 | g)", "-famly", "poisson"), "", 2, []string{"not defined: -famly (did you mean -family?)"}},
		{"unknown flag", fitArgs("good.csv", "y ~ x + (1 | g)", "-zzz", "1"), "", 2, []string{"not defined: -zzz (see"}},
		{"bernoulli response 2", fitArgs("bern2.csv", "y ~ x + (1 | g)", "-family", "bernoulli"), "", 1, []string{"bern2.csv: line 3, column 1 (\"y\")", "bernoulli response 2"}},
		{"formula syntax", fitArgs("good.csv", "y ~ x + + (1 | g)", "-family", "poisson"), "", 1, []string{`"+" at character 9`}},
		{"unbalanced parenthesis", fitArgs("good.csv", "y ~ x + (1 | g", "-family", "poisson"), "", 1, []string{`"(" at character 9`, "unmatched"}},
		{"log of 0", fitArgs("zero.csv", "y ~ log(x) + (1 | g)", "-family", "poisson"), "", 1, []string{`zero.csv: line 3, column 2 ("x")`, "log of 0", `("log(x)" at character 5 of the formula)`}},
		{"empty file", fitArgs("empty.csv", "y ~ x + (1 | g)", "-family", "poisson"), "", 1, []string{"empty.csv: line 1", "empty input"}},
		{"header only", fitArgs("header.csv", "y ~ x + (1 | g)", "-family", "poisson"), "", 1, []string{"header.csv: line 2", "no data rows"}},
		{"non-numeric value", fitArgs("typo.csv", "y ~ x + (1 | g)", "-family", "poisson"), "", 1, []string{"typo.csv: line 3, column 2 (\"x\")", `"abc" is not a number`}},
		{"negative count", fitArgs("negcount.csv", "y ~ x + (1 | g)", "-family", "poisson"), "", 1, []string{"negcount.csv: line 5, column 1 (\"y\")", "-2"}},
		{"negative count after blank lines", fitArgs("blank.csv", "y ~ x + (1 | g)", "-family", "poisson"), "", 1, []string{"blank.csv: line 7, column 1 (\"y\")", "-1"}},
		{"wrong field count", fitArgs("fields.csv", "y ~ x + (1 | g)", "-family", "poisson"), "", 1, []string{"fields.csv: line 3", "wrong number of fields"}},
		{"NaN in a numeric column", fitArgs("nan.csv", "y ~ x + (1 | g)", "-family", "poisson"), "", 1, []string{"nan.csv: line 3, column 2", "NaN"}},
		{"missing value", fitArgs("missing.csv", "y ~ x + (1 | g)", "-family", "poisson"), "", 1, []string{"missing.csv: line 3, column 2 (\"x\")", "missing value"}},
		{"huge weight", fitArgs("heavy.csv", "y ~ x + (1 | g)", "-family", "poisson", "-weights", "w"), "", 1, []string{`heavy.csv: line 4, column 4 ("w")`, "weight 1e+300 exceeds"}},
		{"zero trials", fitArgs("trials.csv", "cbind(s, n - s) ~ x + (1 | g)"), "", 1, []string{`trials.csv: line 3, column 2 ("n")`, "number of trials 0"}},
		{"runaway quote", fitArgs("runaway.csv", "y ~ x + (1 | g)", "-family", "poisson"), "", 1, []string{`runaway.csv: line 4, column 1 ("y")`, "record too long", "the quoted field opened on line 3"}},
		{"no random effects", fitArgs("good.csv", "y ~ x", "-family", "poisson"), "", 1, []string{"random-effects term"}},
		{"nonexistent file", fitArgs("no-such.csv", "y ~ x + (1 | g)", "-family", "poisson"), "", 1, []string{"no-such.csv: no such file"}},
		{"empty standard input", fitArgs("-", "y ~ x + (1 | g)", "-family", "poisson"), "", 1, []string{"stdin: line 1", "empty input"}},
		{"weights column absent", fitArgs("good.csv", "y ~ x + (1 | g)", "-family", "poisson", "-weights", "w"), "", 1, []string{"-weights", `no column "w"`}},
		{"numeric response needs family", fitArgs("good.csv", "y ~ x + (1 | g)"), "", 2, []string{"-family is needed", `"y" is numeric`}},
		{"unknown flag", fitArgs("good.csv", "y ~ x + (1 | g)", "-foo"), "", 2, []string{"flag provided but not defined: -foo"}},
		{"conflicting data flags", []string{"fit", "-example", "-data", "good.csv"}, "", 2, []string{"-data and -example cannot be used together"}},
		{"missing formula", []string{"fit", "-data", "good.csv", "-family", "poisson"}, "", 2, []string{"-formula is missing"}},
		{"no data", []string{"fit", "-formula", "y ~ x + (1 | g)"}, "", 2, []string{"no data"}},
		{"unknown method", fitArgs("good.csv", "y ~ x + (1 | g)", "-family", "poisson", "-method", "laplace"), "", 2, []string{`unknown method "laplace"`}},
		{"bad plot extension", fitArgs("good.csv", "y ~ x + (1 | g)", "-family", "poisson", "-plot", "p.jpg"), "", 2, []string{"-plot p.jpg", ".png or .svg"}},
		{"bad max-iter", fitArgs("good.csv", "y ~ x + (1 | g)", "-family", "poisson", "-max-iter", "0"), "", 2, []string{"-max-iter must be positive"}},
		{"bad flag value", fitArgs("good.csv", "y ~ x + (1 | g)", "-family", "poisson", "-seed", "x"), "", 2, []string{`invalid value "x" for flag -seed`}},
		{"stray argument", []string{"fit", "-example", "data.csv"}, "", 2, []string{`unexpected argument "data.csv"`}},
		{"unknown data set", []string{"fit", "-dataset", "iris"}, "", 2, []string{`unknown data set "iris"`}},
		{"unknown command", []string{"fitt"}, "", 2, []string{`unknown command "fitt"`}},
		{"predict without -fit", []string{"predict", "-data", "good.csv"}, "", 2, []string{"-fit is missing"}},
		{"predict with a bad fit file", []string{"predict", "-fit", "notjson.json", "-data", "good.csv"}, "", 1, []string{"notjson.json", "invalid JSON"}},
		{"predict with a new level", []string{"predict", "-fit", "fit.json", "-data", "newlevel2.csv"}, "", 1, []string{"newlevel2.csv: line 2", `"w"`}},
		{"predict with a predictor not a number", []string{"predict", "-fit", "fit.json", "-data", "newtypo.csv"}, "", 1, []string{`newtypo.csv: line 3, column 2 ("x"): the column is categorical ("0.5O" is not a number)`, "numeric in the data the model was built on"}},
		{"predict without a needed column", []string{"predict", "-fit", "fit.json", "-data", "nocol.csv"}, "", 1, []string{"nocol.csv", `"x"`}},
		{"predict with a bad level", []string{"predict", "-fit", "fit.json", "-data", "good.csv", "-level", "95"}, "", 2, []string{"-level must be between 0 and 1"}},
		{"simulate with both covariances", []string{"simulate", "-family", "poisson", "-subjects", "5", "-obs", "2", "-beta", "1", "-re-sd", "1", "-re-cov", "1"}, "", 2, []string{"-re-sd and -re-cov cannot be used together"}},
		{"simulate without family", []string{"simulate", "-subjects", "5", "-obs", "2", "-beta", "1", "-re-sd", "1"}, "", 2, []string{"-family is missing"}},
		{"simulate with a bad covariance", []string{"simulate", "-family", "poisson", "-subjects", "5", "-obs", "2", "-beta", "1", "-re-cov", "1,2;2,1"}, "", 2, []string{"simulate:"}},
	}
	if len(cases) < 15 {
		t.Fatalf("only %d cases", len(cases))
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := glmmfit(t, dir, c.stdin, nil, c.args...)
			if r.code != c.code {
				t.Errorf("exit code %d, want %d (stderr %q)", r.code, c.code, r.stderr)
			}
			if strings.Count(r.stderr, "\n") != 1 || !strings.HasSuffix(r.stderr, "\n") || !strings.HasPrefix(r.stderr, "glmmfit: ") {
				t.Errorf("stderr is not one line starting with glmmfit: %q", r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr %q does not contain %q", r.stderr, w)
				}
			}
			if strings.Contains(r.stderr, "goroutine") || strings.Contains(r.stderr, "panic") {
				t.Errorf("stack trace on stderr: %q", r.stderr)
			}
			if r.stdout != "" {
				t.Errorf("stdout is not empty: %q", r.stdout)
			}
		})
	}
	// No bad run may leave a half-written output file behind.
	if _, err := os.Stat(filepath.Join(dir, "p.jpg")); err == nil {
		t.Error("a refused run wrote its -plot file")
	}
}

// TestHelp checks that -h prints the usage on standard output and exits 0,
// and that no arguments at all is a usage error.
func TestHelp(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-h"}, mainUsage},
		{[]string{"help", "predict"}, predictUsage},
		{[]string{"fit", "-h"}, fitUsage},
		{[]string{"predict", "-help"}, predictUsage},
		{[]string{"simulate", "-h"}, simulateUsage},
	} {
		r := glmmfit(t, "", "", nil, c.args...)
		if r.code != 0 || r.stdout != c.want || r.stderr != "" {
			t.Errorf("glmmfit %s: exit %d, stderr %q, stdout %.60q...", strings.Join(c.args, " "), r.code, r.stderr, r.stdout)
		}
	}
	r := glmmfit(t, "", "", nil)
	if r.code != exitUsage || !strings.Contains(r.stderr, "Usage:") {
		t.Errorf("glmmfit with no arguments: exit %d, stderr %.60q", r.code, r.stderr)
	}
}

// TestUsageDocumentsEveryFlag checks the hand-written usage texts against
// the flag sets.
func TestUsageDocumentsEveryFlag(t *testing.T) {
	for cmd, c := range map[string]struct {
		usage string
		fs    *flag.FlagSet
	}{
		"fit":      {fitUsage, (&fitOptions{spec: modelSpec{Reference: map[string]string{}}}).flagSet()},
		"predict":  {predictUsage, (&predictOptions{}).flagSet()},
		"simulate": {simulateUsage, (&simulateOptions{}).flagSet()},
	} {
		n := 0
		c.fs.VisitAll(func(f *flag.Flag) {
			n++
			if !strings.Contains(c.usage, "\n  -"+f.Name+" ") {
				t.Errorf("glmmfit %s -h does not document -%s", cmd, f.Name)
			}
		})
		if n == 0 {
			t.Errorf("%s has no flags", cmd)
		}
	}
}

// TestWarnings: a model that can be fitted but looks wrong is fitted, with
// one "glmmfit: warning:" line on standard error per problem.
func TestWarnings(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("y,x,big,g\n")
	for i := range 40 {
		x := float64((i*7)%11)/4 - 1
		g := strconv.Itoa(i % 8)
		if i == 13 {
			g = "5O"
		}
		fmt.Fprintf(&b, "%d,%g,%g,%s\n", (i*5)%4, x, 2e6*x+float64(i), g)
	}
	writeFile(t, dir, "data.csv", b.String())
	for _, c := range []struct {
		name    string
		formula string
		want    [][]string // substrings of each warning line, in order
	}{
		// Under the default prior the fit standardizes the fixed-effect
		// columns: only -prior paper fits the raw scale and warns.
		{"large covariate, -prior paper", "y ~ big + (1 | g)", [][]string{{"5O"}, {`fixed-effect column "big"`, "consider rescaling"}}},
		{"large covariate", "y ~ big + (1 | g)", [][]string{{"5O"}}},
		{"typo in the grouping factor", "y ~ x + (1 | g)", [][]string{{`data.csv: line 15, column 4 ("g")`, `"5O" is not a number`, "categorical"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"fit", "-data", "data.csv", "-formula", c.formula, "-family", "poisson",
				"-max-iter", "100", "-draws", "100", "-correct", "never", "-quiet"}
			if strings.HasSuffix(c.name, "-prior paper") {
				args = append(args, "-prior", "paper")
			}
			r := glmmfit(t, dir, "", nil, args...)
			if r.code != exitOK && r.code != exitLimit {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			if r.stdout == "" {
				t.Error("no summary on standard output")
			}
			var warns []string
			for _, l := range strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n") {
				if strings.HasPrefix(l, "glmmfit: warning: ") {
					warns = append(warns, l)
				}
			}
			if len(warns) != len(c.want) {
				t.Fatalf("%d warning lines, want %d: %q", len(warns), len(c.want), r.stderr)
			}
			for k, want := range c.want {
				for _, s := range want {
					if !strings.Contains(warns[k], s) {
						t.Errorf("warning %q does not contain %q", warns[k], s)
					}
				}
			}
		})
	}
}
