// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
)

var update = flag.Bool("update", false, "rewrite example.csv from the simulator")

// TestExampleData checks that the committed example.csv is what the
// simulator makes from exampleSpec, byte for byte, and that the formula
// fitted by -example is the generating model.
func TestExampleData(t *testing.T) {
	fr, truth, err := datasets.Simulate(exampleSpec)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := datasets.WriteCSV(&buf, fr); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile("example.csv", buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Log("rewrote example.csv; rebuild to embed it")
	}
	if !bytes.Equal(buf.Bytes(), exampleCSV) {
		t.Fatalf("example.csv (%d bytes) differs from the simulator's output (%d bytes); if the simulator changed on purpose, run go test -run TestExampleData -update", len(exampleCSV), buf.Len())
	}
	want, err := formula.Parse(truth.Formula)
	if err != nil {
		t.Fatal(err)
	}
	got, err := formula.Parse(exampleFormula)
	if err != nil {
		t.Fatal(err)
	}
	if got.String() != want.String() || exampleFamily != exampleSpec.Family {
		t.Errorf("example fits %s (%s); the data come from %s (%s)", got, exampleFamily, want, exampleSpec.Family)
	}
}

// TestSimulateMakesExample checks the command in example.go's comment.
func TestSimulateMakesExample(t *testing.T) {
	r := glmmfit(t, "", "", nil, "simulate", "-family", "poisson", "-subjects", "80", "-obs", "6",
		"-beta", "0.6,-0.5,0.3", "-re-cov", "0.36,0.06;0.06,0.16", "-seed", "2026")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if r.stdout != string(exampleCSV) {
		t.Errorf("glmmfit simulate does not reproduce example.csv")
	}
	if !strings.Contains(r.stderr, "y ~ 1 + t + x1 + (1 + t | id)") || strings.Count(r.stderr, "\n") != 1 {
		t.Errorf("stderr should be one line naming the generating formula, got %q", r.stderr)
	}
}

// TestExampleFit runs 'glmmfit fit -example' as on a fresh machine: in an
// empty directory with SPARSEVI_DATA pointing to an empty directory.
func TestExampleFit(t *testing.T) {
	dir := t.TempDir()
	empty := t.TempDir()
	r := glmmfit(t, dir, "", []string{"SPARSEVI_DATA=" + empty}, "fit", "-example", "-out", "fit.json")
	mustSucceed(t, r, "fit", "-example")
	// Its time is a benchmark's business (benchmarks/compare), not a
	// deadline that a loaded machine would miss.
	t.Logf("fit -example took %v", r.elapsed)
	for _, want := range []string{
		"-formula '" + exampleFormula + "'", "-family poisson", "example.csv, built in",
		"Formula: " + exampleFormula, "Family: poisson (log link)", "Number of observations: 480",
		"Number of levels: 80", "Method: rvb1", "converged after", "all constants included",
		"Random effects:", "sd(Intercept)", "sd(t)", "cor(Intercept,t)",
		"Fixed effects:", "Estimate  Est.Error", "2.5%", "97.5%",
	} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, r.stdout)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	doc := readDoc(t, b)
	// The data are simulated with known fixed effects: their 95% intervals
	// should hold them (deterministically so, for this seed).
	for k, m := range doc.Fixed {
		truth := exampleSpec.Beta[k]
		if float64(m.Q025) > truth || float64(m.Q975) < truth {
			t.Errorf("%s: 95%% interval [%.3f, %.3f] misses the true %.3f", m.Name, float64(m.Q025), float64(m.Q975), truth)
		}
	}
	for k, m := range doc.RESD {
		truth := []float64{0.6, 0.4}[k]
		if float64(m.Q025) > truth || float64(m.Q975) < truth {
			t.Errorf("%s: 95%% interval [%.3f, %.3f] misses the true %.3f", m.Name, float64(m.Q025), float64(m.Q975), truth)
		}
	}
}

// TestSVGPlot checks that -plot FILE.svg writes well-formed SVG.
func TestSVGPlot(t *testing.T) {
	dir := t.TempDir()
	r := glmmfit(t, dir, "", nil, "fit", "-example", "-plot", "fit.svg")
	mustSucceed(t, r, "fit -example -plot fit.svg")
	if root, _ := readSVG(t, filepath.Join(dir, "fit.svg")); root != "svg" {
		t.Errorf("root element %q, want svg", root)
	}
}

// readSVG parses the XML file at path, failing t if it is not
// well-formed, and returns its root element's name and its text.
func readSVG(t *testing.T, path string) (root, text string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dec := xml.NewDecoder(f)
	var b strings.Builder
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s is not well-formed XML: %v", filepath.Base(path), err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
		case xml.CharData:
			b.Write(tok)
		}
	}
	return root, b.String()
}

// TestVOGNWithEveryMethod: -optimizer vogn runs with every -method, auto
// and the explicit ones alike (the block-diagonal family has VOGN's step
// too; explicit rvb1 and rvb2 were refused while auto ran RVB1 with it).
func TestVOGNWithEveryMethod(t *testing.T) {
	for _, method := range []string{"auto", "gva", "rvb1", "rvb2"} {
		r := glmmfit(t, t.TempDir(), "", nil, "fit", "-example", "-optimizer", "vogn", "-method", method, "-format", "json", "-quiet", "-correct", "never")
		if r.code != exitOK {
			t.Errorf("-method %s -optimizer vogn: exit %d: %s", method, r.code, r.stderr)
			continue
		}
		doc := readDoc(t, []byte(r.stdout))
		if doc.Status != "converged" {
			t.Errorf("-method %s -optimizer vogn: status %s", method, doc.Status)
		}
	}
}
