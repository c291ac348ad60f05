// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNotConverged checks exit code 3 at the iteration limit: the summary
// and the files are still written, and standard error says so in one
// line. (The time limit: TestTimeoutBoundsTheRun, and
// TestTimeoutBeforeFirstIteration when it comes before any iteration.)
func TestNotConverged(t *testing.T) {
	for _, c := range []struct {
		limit []string
		want  string
	}{
		{[]string{"-max-iter", "400"}, "stopped at the iteration limit (-max-iter 400) without converging"},
	} {
		dir := t.TempDir()
		args := append([]string{"fit", "-example", "-method", "gva", "-out", "fit.json", "-trace", "trace.csv"}, c.limit...)
		r := glmmfit(t, dir, "", nil, args...)
		if r.code != exitLimit {
			t.Errorf("%v: exit %d, want %d", c.limit, r.code, exitLimit)
		}
		// A fit stopped early may be far from the posterior, and the
		// Pareto diagnostic may say so.
		r.stderr = dropDiagnosticWarnings(r.stderr)
		if strings.Count(r.stderr, "\n") != 1 || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, "-out fit.json, -trace trace.csv") {
			t.Errorf("%v: stderr %q", c.limit, r.stderr)
		}
		if !strings.Contains(r.stdout, "NOT converged") || !strings.Contains(r.stdout, "Fixed effects:") {
			t.Errorf("%v: the summary does not say the fit did not converge:\n%s", c.limit, r.stdout)
		}
		b, err := os.ReadFile(filepath.Join(dir, "fit.json"))
		if err != nil {
			t.Fatal(err)
		}
		doc := readDoc(t, b)
		if doc.Status != "max-iterations" && doc.Status != "time-limit" || len(doc.Fixed) != 3 {
			t.Errorf("%v: status %q", c.limit, doc.Status)
		}
		if _, err := os.Stat(filepath.Join(dir, "trace.csv")); err != nil {
			t.Errorf("%v: no trace: %v", c.limit, err)
		}
	}
}

// TestOffsetAndWeights checks that an offset given by -offset equals the
// same offset written in the formula, and that -weights changes the fit.
func TestOffsetAndWeights(t *testing.T) {
	dir := t.TempDir()
	// The column loge is written with Go's math.Log, which the formula's
	// log() uses, so that both offsets are the same numbers.
	rows := []struct {
		y, x, e, w float64
		g          string
	}{
		{3, 0.1, 2, 1, "a"}, {1, -0.4, 1, 2, "a"}, {6, 0.8, 3, 1, "a"},
		{0, -1.2, 1, 1, "b"}, {2, 0.3, 2, 2, "b"}, {1, 0.5, 1, 1, "b"},
		{4, 0.9, 2, 1, "c"}, {2, 0.2, 2, 1, "c"}, {5, 1.1, 3, 2, "c"},
	}
	data := "y,x,e,loge,w,g\n"
	for _, r := range rows {
		data += fmt.Sprintf("%v,%v,%v,%s,%v,%s\n", r.y, r.x, r.e, strconv.FormatFloat(math.Log(r.e), 'g', -1, 64), r.w, r.g)
	}
	writeFile(t, dir, "d.csv", data)
	run := func(extra ...string) *document {
		args := append([]string{"fit", "-data", "d.csv", "-family", "poisson", "-method", "gva", "-format", "json"}, extra...)
		r := glmmfit(t, dir, "", nil, args...)
		// Nine rows of three groups: warnings (the Pareto k of so
		// small a model) are expected, errors are not.
		if r.code != 0 {
			t.Fatalf("glmmfit %v: exit %d, stderr %q", args, r.code, r.stderr)
		}
		return readDoc(t, []byte(r.stdout))
	}
	inFormula := run("-formula", "y ~ x + offset(log(e)) + (1 | g)")
	asFlag := run("-formula", "y ~ x + (1 | g)", "-offset", "loge")
	plain := run("-formula", "y ~ x + (1 | g)")
	weighted := run("-formula", "y ~ x + (1 | g)", "-weights", "w")
	for k := range inFormula.Fixed {
		if inFormula.Fixed[k].Estimate != asFlag.Fixed[k].Estimate {
			t.Errorf("%s: offset(log(e)) gives %v, -offset loge %v", inFormula.Fixed[k].Name, inFormula.Fixed[k].Estimate, asFlag.Fixed[k].Estimate)
		}
	}
	if asFlag.Options.Offset != "loge" || weighted.Options.Weights != "w" {
		t.Errorf("options do not record -offset and -weights: %+v, %+v", asFlag.Options, weighted.Options)
	}
	if plain.Fixed[0].Estimate == inFormula.Fixed[0].Estimate || plain.Fixed[1].Estimate == weighted.Fixed[1].Estimate {
		t.Error("the offset or the weights did not change the fit")
	}
}
