// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nestedRow is a row to predict from a nested fit: its school, class and
// x, and which of its levels the fit has seen.
type nestedRow struct {
	school, class string
	x             float64
	knownSchool   bool
	knownClass    bool
}

// TestNestedPredict fits (1 | school/class) on benchmarks/nested's 300
// schools of 3 classes with -out (gaussian by GVA, Bernoulli by RVB1, the
// default, and by -method gva), with -threads 1 and 2, and predicts from
// the fit file: the two fits' states are the same bits, as are the
// predictions with 1 and 2 threads (GOMAXPROCS); the fit file is
// json.Marshal's text with the checksums of its sections; a row of a known
// school and class has the linear predictor's mean x'beta + u_school +
// v_class of the fit's JSON within 4 Monte Carlo standard errors; a new
// class within a known school has the mean x'beta + u_school and the
// class's sd at least; a new school has the mean x'beta and the sd
// sqrt(var(x'beta) + E sd(school)^2 + E sd(school:class)^2), the variance
// that q and the two components imply (from the JSON's fixed effects,
// their correlation and the sds' posterior means and sds), within 5%.
func TestNestedPredict(t *testing.T) {
	data, err := filepath.Abs(nestedData)
	if err != nil {
		t.Fatal(err)
	}
	const draws = 4000
	// By default Bernoulli is fitted by RVB1 at the start, gaussian by
	// GVA (posterior.ChooseNested).
	for _, c := range []struct{ name, family, formula, method string }{
		{"gaussian", "gaussian", "z ~ x + (1 | school/class)", "auto"},
		{"bernoulli", "bernoulli", "y ~ x + (1 | school/class)", "auto"},
		{"bernoulli gva", "bernoulli", "y ~ x + (1 | school/class)", "gva"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			var docs [2]*document
			for k, threads := range []string{"1", "2"} {
				out := "fit" + threads + ".json"
				r := glmmfit(t, dir, "", nil, "fit", "-data", data, "-formula", c.formula, "-family", c.family,
					"-method", c.method, "-threads", threads, "-seed", "1", "-out", out, "-quiet")
				mustSucceed(t, r, "fit -threads "+threads)
				raw, err := os.ReadFile(filepath.Join(dir, out))
				if err != nil {
					t.Fatal(err)
				}
				docs[k] = readDoc(t, raw)
			}
			checkFitFileText(t, c.family, filepath.Join(dir, "fit1.json"))
			s1, _ := json.Marshal(docs[0].State)
			s2, _ := json.Marshal(docs[1].State)
			if !bytes.Equal(s1, s2) {
				t.Errorf("the states of -threads 1 and 2 differ")
			}
			doc := docs[0]
			if st := doc.State; st == nil || len(st.Sizes) != 300 || st.R != 0 || len(doc.Nested) != 1 {
				t.Fatalf("the fit file does not hold a nested state: %+v", doc.State)
			}
			if want := map[string]string{"gaussian": "gva", "bernoulli": "rvb1"}[c.family]; c.method == "auto" && doc.State.Method != want || c.method != "auto" && doc.State.Method != c.method {
				t.Errorf("-method %s: the state's method is %s", c.method, doc.State.Method)
			}

			// Known rows from the fit's own a:b levels, labelled school:class.
			rows := []nestedRow{}
			for k, e := range []int{0, 1, 5, 100, 899} {
				school, class, _ := strings.Cut(doc.Nested[0].Effects[e].Name, ":")
				rows = append(rows, nestedRow{school, class, []float64{0.3, -1.2, 0, 1.5, -0.4}[k], true, true})
			}
			rows = append(rows,
				nestedRow{rows[0].school, "cnew", 0.4, true, false},
				nestedRow{"snew", "c1", -0.7, false, false},
				nestedRow{"snew", "cnew", 0.9, false, false})
			var csv strings.Builder
			csv.WriteString("x,school,class\n")
			for _, r := range rows {
				fmt.Fprintf(&csv, "%v,%s,%s\n", r.x, r.school, r.class)
			}
			writeFile(t, dir, "new.csv", csv.String())
			var preds [2]string
			for k, procs := range []string{"1", "2"} {
				r := glmmfit(t, dir, "", []string{"GOMAXPROCS=" + procs}, "predict", "-fit", "fit1.json", "-data", "new.csv",
					"-draws", fmt.Sprint(draws), "-seed", "7")
				mustSucceed(t, r, "predict")
				preds[k] = r.stdout
			}
			if preds[0] != preds[1] {
				t.Errorf("predictions with 1 and 2 threads differ")
			}
			writeFile(t, dir, "pred.csv", preds[0])
			out := readCSV(t, filepath.Join(dir, "pred.csv"))
			if got := strings.Join(out[0][:3], ","); got != "row,school:class,type" || len(out) != len(rows)+1 {
				t.Fatalf("header %q, %d rows for %d", out[0], len(out)-1, len(rows))
			}
			checkNestedPredictions(t, doc, rows, out[1:], draws)
		})
	}
}

// checkNestedPredictions checks the predictions out of rows against the
// fit's JSON doc (see TestNestedPredict).
func checkNestedPredictions(t *testing.T, doc *document, rows []nestedRow, out [][]string, draws int) {
	t.Helper()
	school := map[string]float64{}
	schoolSD := map[string]float64{}
	for _, s := range doc.RandomEffects.Subjects {
		school[s.Level], schoolSD[s.Level] = float64(s.Mean[0]), float64(s.SD[0])
	}
	class := map[string]float64{}
	for _, e := range doc.Nested[0].Effects {
		class[e.Name] = float64(e.Estimate)
	}
	b0, b1 := doc.Fixed[0], doc.Fixed[1]
	corr := doc.FixedCorrelation[0][1]
	// E sd^2 = (E sd)^2 + var(sd), from each sd's posterior mean and sd.
	moment2 := func(m marginal) float64 {
		return float64(m.Estimate)*float64(m.Estimate) + float64(m.EstError)*float64(m.EstError)
	}
	sdClass := math.Sqrt(moment2(doc.Nested[0].SD))
	sdSchool := math.Sqrt(moment2(doc.RESD[0]))
	for k, r := range rows {
		row := out[k]
		v := floats(t, row[3:5])
		eta, etaSD := v[0], v[1]
		if row[1] != r.school+":"+r.class {
			t.Errorf("row %d: group %q, want %s:%s", k+1, row[1], r.school, r.class)
		}
		if want := map[bool]string{true: "conditional", false: "marginal"}[r.knownClass]; row[2] != want {
			t.Errorf("row %d (%s:%s): type %s, want %s", k+1, r.school, r.class, row[2], want)
		}
		fixed := float64(b0.Estimate) + r.x*float64(b1.Estimate)
		s0, s1 := float64(b0.EstError), r.x*float64(b1.EstError)
		varFixed := s0*s0 + s1*s1 + 2*corr*s0*s1
		mean := fixed
		if r.knownSchool {
			mean += school[r.school]
		}
		if r.knownClass {
			mean += class[r.school+":"+r.class]
		}
		mcse := etaSD / math.Sqrt(float64(draws))
		t.Logf("%s:%s x=%v: eta %.4f ± %.4f, from the JSON %.4f (%.1f Monte Carlo se)", r.school, r.class, r.x, eta, etaSD, mean, math.Abs(eta-mean)/mcse)
		if !(math.Abs(eta-mean) <= 4*mcse) {
			t.Errorf("row %d (%s:%s): mean of eta %.5f, the fit's effects give %.5f: beyond 4 Monte Carlo se (%.2g)", k+1, r.school, r.class, eta, mean, mcse)
		}
		switch {
		case !r.knownSchool:
			want := math.Sqrt(varFixed + sdSchool*sdSchool + sdClass*sdClass)
			t.Logf("  sd of eta %.4f, implied %.4f", etaSD, want)
			if !(math.Abs(etaSD/want-1) <= 0.05) {
				t.Errorf("row %d (new school): sd of eta %.4f, q and the components imply %.4f", k+1, etaSD, want)
			}
		case !r.knownClass:
			// var(x'beta + u) lies below (sd(x'beta) + sd(u))^2.
			lo := sdClass
			hi := math.Hypot(math.Sqrt(varFixed)+schoolSD[r.school], sdClass)
			if !(etaSD >= 0.95*lo && etaSD <= 1.05*hi) {
				t.Errorf("row %d (new class): sd of eta %.4f, want between %.4f and %.4f", k+1, etaSD, lo, hi)
			}
		}
	}
}

// TestNestedFitFileRefused: a nested fit file edited, or of another shape
// than the model it rebuilds (checksums removed, so that the loader's own
// checks answer), is refused with an error naming the file.
func TestNestedFitFileRefused(t *testing.T) {
	data, err := filepath.Abs(nestedData)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "fit", "-data", data, "-formula", "z ~ x + (1 | school/class)", "-family", "gaussian",
		"-out", "fit.json", "-quiet"), "fit")
	raw, err := os.ReadFile(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "new.csv", "x,school,class\n0.5,s1,c1\n")
	for _, c := range []struct {
		name  string
		keep  bool // the checksums
		edit  func(doc, state map[string]any)
		wants []string
	}{
		{"edited mean", true, func(_, st map[string]any) { st["mu"].([]any)[0] = 5.0 }, []string{"edited", "state"}},
		{"block sizes", false, func(_, st map[string]any) {
			s := st["sizes"].([]any)
			s[0], s[1] = s[0].(float64)+1, s[1].(float64)-1
		}, []string{"block sizes differ", "(school s1)"}},
		{"short mean", false, func(_, st map[string]any) {
			mu := st["mu"].([]any)
			st["mu"] = mu[:len(mu)-1]
		}, []string{"mean and factor of lengths"}},
		{"no block sizes", false, func(_, st map[string]any) { delete(st, "sizes") }, []string{"not a fit of a nested model"}},
		{"refitted as crossed", false, func(doc, _ map[string]any) { doc["options"].(map[string]any)["nest"] = "crossed" }, []string{"does not match the saved state"}},
		{"another model", false, func(_, st map[string]any) { st["model"] = strings.Repeat("0", 64) }, []string{"another model"}},
	} {
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		c.edit(doc, doc["state"].(map[string]any))
		if !c.keep {
			delete(doc, "checksums")
		}
		b, _ := json.Marshal(doc)
		name := strings.ReplaceAll(c.name, " ", "_") + ".json"
		writeFile(t, dir, name, string(b))
		r := glmmfit(t, dir, "", nil, "predict", "-fit", name, "-data", "new.csv")
		t.Logf("%s: %s", c.name, strings.TrimSpace(r.stderr))
		ok := r.code == exitFail && strings.Contains(r.stderr, name)
		for _, w := range c.wants {
			ok = ok && strings.Contains(r.stderr, w)
		}
		if !ok {
			t.Errorf("%s: exit %d, message %q; want exit %d naming %s and saying %q", c.name, r.code, r.stderr, exitFail, name, c.wants)
		}
	}
}
