// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package reliability_test

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
)

var (
	glmmfitOnce sync.Once
	glmmfitBin  string
	glmmfitErr  error
)

// glmmfitBinary builds cmd/glmmfit once for the end-to-end catalogue.
func glmmfitBinary(t *testing.T) string {
	t.Helper()
	glmmfitOnce.Do(func() {
		dir, err := os.MkdirTemp("", "reliability-glmmfit")
		if err != nil {
			glmmfitErr = err
			return
		}
		glmmfitBin = filepath.Join(dir, "glmmfit")
		out, err := exec.Command("go", "build", "-o", glmmfitBin, "../cmd/glmmfit").CombinedOutput()
		if err != nil {
			glmmfitErr = fmt.Errorf("building glmmfit: %v\n%s", err, out)
		}
	})
	if glmmfitErr != nil {
		t.Fatal(glmmfitErr)
	}
	return glmmfitBin
}

// catalogueCSV writes the data files of the catalogue into dir.
func catalogueCSV(t *testing.T, dir string) {
	t.Helper()
	var ok, zero, ones, sep bytes.Buffer
	ok.WriteString("id,y,x,w,z,w0,c,tiny\n")
	zero.WriteString("id,y,x\n")
	ones.WriteString("id,y,x\n")
	sep.WriteString("id,y,x\n")
	for i := range 40 {
		for j := range 5 {
			x := float64((i*7+j*3)%11)/5 - 1
			y := (i + j) % 3
			xs := fmt.Sprintf("%.2f", x)
			fmt.Fprintf(&ok, "s%d,%d,%s,1,%d,0,%d,%se-300\n", i, y, xs, i%4, i%3, xs)
			fmt.Fprintf(&zero, "s%d,0,%.2f\n", i, x)
			fmt.Fprintf(&ones, "s%d,1,%.2f\n", i, x)
			b := 0
			if x > 0 {
				b = 1
			}
			fmt.Fprintf(&sep, "s%d,%d,%.2f\n", i, b, x)
		}
	}
	files := map[string]string{
		"ok.csv": ok.String(), "zero.csv": zero.String(), "ones.csv": ones.String(), "sep.csv": sep.String(),
		"semicolon.csv": strings.ReplaceAll(ok.String(), ",", ";"),
		"tab.csv":       strings.ReplaceAll(ok.String(), ",", "\t"),
		"cr.csv":        strings.ReplaceAll(ok.String(), "\n", "\r"),
		"huge.csv":      "id,y,x\na,1,0\na,1e300,1\nb,0,0\nb,2,1\n",
		"spaced.csv":    "id,y,my x\na,1,0\na,2,1\nb,0,0\nb,2,1\nc,1,0\nc,3,1\n",
		"far.csv":       "id,x\ns1,1e300\n",
		"truth.csv":     "keep me\n",
		"tête.csv":      "id,y,âge\na,1,0\na,2,1\nb,0,0\nb,2,1\nc,1,0\nc,3,1\n",
	}
	var u16 bytes.Buffer
	u16.Write([]byte{0xff, 0xfe})
	for _, c := range []byte(ok.String()) {
		u16.Write([]byte{c, 0})
	}
	files["utf16.csv"] = u16.String()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// run runs the built glmmfit in dir and returns its standard output,
// standard error and exit code.
func run(t *testing.T, bin, dir string, args ...string) (stdout []byte, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	return runCmd(t, cmd)
}

// runCmd runs cmd and returns its standard output, standard error and
// exit code.
func runCmd(t *testing.T, cmd *exec.Cmd) (stdout []byte, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.Bytes(), errb.String(), code
}

// fixedMeans returns the posterior means of the fixed effects in a JSON
// summary, by name, and their sds.
func fixedMeans(t *testing.T, doc []byte) (mean, sd map[string]float64) {
	t.Helper()
	var d struct {
		Fixed []struct {
			Name     string  `json:"name"`
			Estimate float64 `json:"estimate"`
			EstError float64 `json:"est_error"`
		} `json:"fixed"`
	}
	if err := json.Unmarshal(doc, &d); err != nil {
		t.Fatalf("the JSON summary does not parse: %v", err)
	}
	if len(d.Fixed) == 0 {
		t.Fatalf("no fixed effects in the JSON summary")
	}
	mean, sd = map[string]float64{}, map[string]float64{}
	for _, f := range d.Fixed {
		if f.EstError <= 0 {
			t.Fatalf("%s: Est.Error %v", f.Name, f.EstError)
		}
		mean[f.Name], sd[f.Name] = f.Estimate, f.EstError
	}
	return mean, sd
}

// TestGlmmfitCatalogue runs the built glmmfit on the cases of issue 12 as a
// user would meet them: each ends with a result and the right exit code,
// or exit 1 and a message naming the row, column, flag or token; nothing
// panics, and no file is lost. The cases run in order in one directory
// (later ones use the fit files of earlier ones). Signals and the progress
// display, which need a terminal, are tested in cmd/glmmfit
// (signal_linux_test.go), as is -timeout against an untimed run.
func TestGlmmfitCatalogue(t *testing.T) {
	bin := glmmfitBinary(t)
	dir := t.TempDir()
	catalogueCSV(t, dir)
	if err := os.Symlink("ok.csv", filepath.Join(dir, "link.csv")); err != nil {
		t.Fatal(err)
	}
	abs := func(name string) string { return filepath.Join(dir, name) }
	fit := func(data, fml, fam string, extra ...string) []string {
		return append([]string{"fit", "-data", data, "-formula", fml, "-family", fam, "-quiet", "-max-iter", "400"}, extra...)
	}
	for _, c := range []struct {
		name  string
		setup func(t *testing.T)
		args  []string // glmmfit's arguments, or a shell command after "sh"
		code  []int    // acceptable exit codes
		want  []string // substrings of stderr
		check func(t *testing.T, stdout []byte)
	}{
		{name: "ordinary fit", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-max-iter", "20000", "-out", "fit.json"), code: []int{0}},
		{name: "-out is -data", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-out", "ok.csv"), code: []int{1}, want: []string{"-out ok.csv", "-data ok.csv"}},
		{name: "-out is -data by its absolute path", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-out", abs("ok.csv")), code: []int{1}, want: []string{"same file as -data ok.csv"}},
		{name: "-out is a link to -data", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-out", "link.csv"), code: []int{1}, want: []string{"-out link.csv", "same file"}},
		{name: "-out is -trace", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-out", "a.json", "-trace", "./a.json"), code: []int{1}, want: []string{"-trace ./a.json"}},
		{name: "-out is a directory", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-out", "."), code: []int{1}, want: []string{"-out .", "is a directory"}},
		{name: "-plot in a missing directory", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-plot", "no/p.png"), code: []int{1}, want: []string{"-plot no/p.png", "does not exist"}},
		{name: "predict -out is -fit", args: []string{"predict", "-fit", "fit.json", "-data", "ok.csv", "-out", "fit.json"}, code: []int{1}, want: []string{"-out fit.json", "-fit fit.json"}},
		{name: "simulate -out is -truth", args: []string{"simulate", "-family", "poisson", "-subjects", "5", "-obs", "2", "-beta", "0.1,0.2", "-re-sd", "0.5", "-out", "truth.csv", "-truth", "./truth.csv"}, code: []int{1}, want: []string{"-truth ./truth.csv"}},
		{name: "a write cut short by ulimit -f keeps the old fit file", args: []string{"sh", "ulimit -f 8; exec \"$GLMMFIT\" fit -data ok.csv -formula 'y ~ x + (1 | id)' -family poisson -quiet -out fit.json"}, code: []int{1, 153},
			check: func(t *testing.T, _ []byte) {
				if _, _, code := run(t, bin, dir, "predict", "-fit", "fit.json", "-data", "ok.csv"); code != 0 {
					t.Errorf("the fit file no longer loads after a write cut short (predict exit %d)", code)
				}
			}},
		{name: "-ref misspelt", args: fit("ok.csv", "y ~ z + (1 | id)", "poisson", "-ref", "zz=1"), code: []int{1}, want: []string{"-ref zz=1", `did you mean "z"`}},
		{name: "-ref on a numeric column", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-ref", "x=1"), code: []int{1}, want: []string{"-ref x=1", "numeric"}},
		{name: "-weights misspelt", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-weights", "ww"), code: []int{1}, want: []string{"-weights", `did you mean "w"`}},
		{name: "-offset misspelt", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-offset", "zz"), code: []int{1}, want: []string{"-offset", `did you mean "z"`}},
		{name: "-weights on an id column", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-weights", "id"), code: []int{1}, want: []string{"-weights", `"id"`}},
		{name: "binomial 0/1 fits as bernoulli", args: fit("sep.csv", "y ~ x + (1 | id)", "binomial", "-format", "json"), code: []int{0, 3},
			check: func(t *testing.T, stdout []byte) {
				b, _, _ := run(t, bin, dir, fit("sep.csv", "y ~ x + (1 | id)", "bernoulli", "-format", "json")...)
				got, _ := fixedMeans(t, stdout)
				want, _ := fixedMeans(t, b)
				for k, v := range want {
					if got[k] != v {
						t.Errorf("%s: binomial %v, bernoulli %v", k, got[k], v)
					}
				}
			}},
		{name: "all-zero counts", args: fit("zero.csv", "y ~ x + (1 | id)", "poisson", "-max-iter", "20000"), code: []int{0}, want: []string{"warning", "every response is 0"}},
		{name: "all-zero counts, another seed", args: fit("zero.csv", "y ~ x + (1 | id)", "poisson", "-max-iter", "20000", "-seed", "2"), code: []int{0}, want: []string{"warning", "every response is 0"}},
		{name: "all-one bernoulli", args: fit("ones.csv", "y ~ x + (1 | id)", "bernoulli"), code: []int{0, 3}, want: []string{"warning", "every response is a success"}},
		{name: "separation", args: fit("sep.csv", "y ~ x + (1 | id)", "bernoulli", "-max-iter", "20000"), code: []int{0, 3}, want: []string{"warning", "hardly inform the fixed effects x"}},
		{name: "all weights zero", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-weights", "w0"), code: []int{0, 3}, want: []string{"warning", "hardly inform"}},
		{name: "a random slope constant within subjects", args: fit("ok.csv", "y ~ x + (1 + c | id)", "poisson"), code: []int{0, 3}, want: []string{"warning", "c does not vary within any subject"}},
		{name: "a covariate of 1e-300 fits as the covariate", args: fit("ok.csv", "y ~ tiny + (1 | id)", "poisson", "-format", "json"), code: []int{0, 3},
			check: func(t *testing.T, stdout []byte) {
				b, _, _ := run(t, bin, dir, fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-format", "json")...)
				got, gotSD := fixedMeans(t, stdout)
				want, sd := fixedMeans(t, b)
				if d := math.Abs(got["tiny"]*1e-300 - want["x"]); !(d <= 0.02*sd["x"]) || math.Abs(gotSD["tiny"]*1e-300/sd["x"]-1) > 0.02 {
					t.Errorf("tiny: %v ± %v, want x's %v ± %v times 1e300", got["tiny"], gotSD["tiny"], want["x"], sd["x"])
				}
			}},
		{name: "a fit stopped at -max-iter", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-max-iter", "3", "-out", "capped.json"), code: []int{3}, want: []string{"-max-iter 3"}},
		{name: "predict from a fit that did not converge", args: []string{"predict", "-fit", "capped.json", "-data", "ok.csv"}, code: []int{0}, want: []string{"warning", "status is max-iterations"}},
		{name: "predict far outside the data", args: []string{"predict", "-fit", "fit.json", "-data", "far.csv"}, code: []int{0}, want: []string{"warning", "line 2", "extrapolates far beyond the data"}},
		{name: "an edited fit file", setup: func(t *testing.T) {
			b, err := os.ReadFile(abs("fit.json"))
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			doc["status"] = "edited"
			b, _ = json.Marshal(doc)
			if err := os.WriteFile(abs("edited.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}, args: []string{"predict", "-fit", "edited.json", "-data", "ok.csv"}, code: []int{1}, want: []string{"edited.json", "status"}},
		{name: "semicolon-separated", args: fit("semicolon.csv", "y ~ x + (1 | id)", "poisson"), code: []int{1}, want: []string{"semicolon.csv", "semicolon-separated"}},
		{name: "tab-separated", args: fit("tab.csv", "y ~ x + (1 | id)", "poisson"), code: []int{1}, want: []string{"tab.csv", "tab-separated"}},
		{name: "UTF-16", args: fit("utf16.csv", "y ~ x + (1 | id)", "poisson"), code: []int{1}, want: []string{"utf16.csv", "UTF-16"}},
		{name: "CR line ends", args: fit("cr.csv", "y ~ x + (1 | id)", "poisson"), code: []int{0, 3}},
		{name: "non-ASCII names", args: fit("tête.csv", "y ~ âge + (1 | id)", "poisson"), code: []int{0, 3}},
		{name: "a count of 1e300", args: fit("huge.csv", "y ~ x + (1 | id)", "poisson"), code: []int{1}, want: []string{"line 3", "1e+300"}},
		{name: "a name with a space", args: fit("spaced.csv", "y ~ my x + (1 | id)", "poisson"), code: []int{1}, want: []string{"`my x`"}},
		{name: "-prior-sd 1e-300", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-prior-sd", "1e-300"), code: []int{2}, want: []string{"-prior-sd"}},
		{name: "-prior-sd 1e300", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-prior-sd", "1e300"), code: []int{2}, want: []string{"-prior-sd"}},
		{name: "missing-value advice speaks flags", args: []string{"fit", "-data", "huge.csv", "-formula", "y ~ q + (1 | id)", "-family", "poisson"}, code: []int{1}, want: []string{`"q"`}},
		{name: "-max-memory too small", args: fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-max-memory", "1MB"), code: []int{1}, want: []string{"needs about", "-max-memory"}},
		{name: "-timeout on a long fit", setup: func(t *testing.T) {
			if _, msg, code := run(t, bin, dir, "simulate", "-family", "bernoulli", "-subjects", "3000", "-obs", "6",
				"-beta", "-0.5,0.8,0.4", "-re-sd", "1", "-seed", "9", "-out", "long.csv"); code != 0 {
				t.Fatalf("simulate: exit %d: %s", code, msg)
			}
		}, args: fit("long.csv", "y ~ t + x1 + (1 | id)", "bernoulli", "-method", "rvb2", "-tol", "1e-9", "-max-iter", "100000", "-timeout", "1s", "-out", "long.json"),
			code: []int{3}, want: []string{"time limit (-timeout 1s)", "-out long.json"}},
		{name: "a predictor coded far from zero (grouseticks' YEAR)", setup: func(t *testing.T) {
			data, err := filepath.Abs(datasets.DataDir(""))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(data, "grouseticks.csv")); err != nil {
				t.Skipf("grouseticks.csv not found in %s (set SPARSEVI_DATA)", data)
			}
			if err := os.Symlink(filepath.Join(data, "grouseticks.csv"), abs("grouseticks.csv")); err != nil {
				t.Fatal(err)
			}
		}, args: fit("grouseticks.csv", "TICKS ~ YEAR + cHEIGHT + (1 | BROOD)", "poisson", "-max-iter", "20000", "-format", "json"), code: []int{0},
			check: func(t *testing.T, stdout []byte) {
				// glmer's YEAR: -0.4821737 ± 0.1611223
				// (benchmarks/peers/grouseticks_glmer.csv).
				got, _ := fixedMeans(t, stdout)
				if d := math.Abs(got["YEAR"] - -0.4821737); d > 0.3*0.1611223 {
					t.Errorf("YEAR %v, glmer -0.482 ± 0.161", got["YEAR"])
				}
			}},
		{name: "a gzip file of 100 MB of CSV with -max-memory 100MB", setup: func(t *testing.T) {
			f, err := os.Create(abs("bomb.csv.gz"))
			if err != nil {
				t.Fatal(err)
			}
			zw, _ := gzip.NewWriterLevel(f, gzip.BestSpeed)
			zw.Write([]byte("id,y,x\n"))
			row := bytes.Repeat([]byte("s1,1,0.5\n"), 1<<16)
			for range 100e6 / len(row) {
				zw.Write(row)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			f.Close()
		}, args: fit("bomb.csv.gz", "y ~ x + (1 | id)", "poisson", "-max-memory", "100MB"), code: []int{1}, want: []string{"bomb.csv.gz", "-max-memory", "reading already needs"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.setup != nil {
				c.setup(t)
			}
			var (
				stdout []byte
				msg    string
				code   int
			)
			if c.args[0] == "sh" {
				cmd := exec.Command("sh", "-c", c.args[1])
				cmd.Dir = dir
				cmd.Env = append(os.Environ(), "GLMMFIT="+bin)
				stdout, msg, code = runCmd(t, cmd)
			} else {
				stdout, msg, code = run(t, bin, dir, c.args...)
			}
			if !slices.Contains(c.code, code) {
				t.Errorf("exit %d, want one of %v; stderr %q", code, c.code, msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr %q lacks %q", msg, w)
				}
			}
			for _, bad := range []string{"panic", "goroutine ", "Options.", "runtime error"} {
				if strings.Contains(msg, bad) {
					t.Errorf("stderr holds %q: %s", bad, msg)
				}
			}
			if c.check != nil {
				c.check(t, stdout)
			}
		})
	}
	// No data file was touched.
	if b, err := os.ReadFile(filepath.Join(dir, "ok.csv")); err != nil || !strings.HasPrefix(string(b), "id,y,x,w,z,w0,c,tiny\n") {
		t.Errorf("ok.csv changed or lost: %v", err)
	}
}
