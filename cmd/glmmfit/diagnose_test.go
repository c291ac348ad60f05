// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// degenerateCSV writes 40 subjects with 5 rows each: columns id, x
// (standard normal), z (constant within a subject), w and the responses
// y0 (all 0), y1 (all 1), ysep (1 exactly when x > 0) and ycount (Poisson
// counts with a random intercept).
func degenerateCSV(seed uint64) string {
	rng := rand.New(rand.NewPCG(seed, 3))
	var b strings.Builder
	b.WriteString("id,x,z,w,y0,y1,ysep,ycount\n")
	for i := range 40 {
		bi := 0.5 * rng.NormFloat64()
		for range 5 {
			x := rng.NormFloat64()
			sep := 0
			if x > 0 {
				sep = 1
			}
			mu := math.Exp(0.3 + 0.4*x + bi)
			k := 0
			for p := math.Exp(-mu); ; k++ { // Poisson by inversion
				u := rng.Float64()
				if u < p || k > 50 {
					break
				}
				p *= mu / float64(k+1)
			}
			fmt.Fprintf(&b, "s%d,%.4f,%d,0,0,1,%d,%d\n", i, x, i%4, sep, k)
		}
	}
	return b.String()
}

// TestDegenerateDataWarns: data that cannot inform the estimates are
// fitted, and a warning naming the problem goes to standard error and
// into the JSON document's warnings; ordinary data get none.
func TestDegenerateDataWarns(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "d.csv", degenerateCSV(1))
	for _, c := range []struct {
		name string
		args []string
		want string // "" for no warning
	}{
		{"ordinary", []string{"-formula", "ycount ~ x + (1 | id)", "-family", "poisson"}, ""},
		{"all-zero counts, seed 1", []string{"-formula", "y0 ~ x + (1 | id)", "-family", "poisson", "-seed", "1"}, "every response is 0"},
		{"all-zero counts, seed 2", []string{"-formula", "y0 ~ x + (1 | id)", "-family", "poisson", "-seed", "2"}, "every response is 0"},
		{"all-zero counts, seed 3", []string{"-formula", "y0 ~ x + (1 | id)", "-family", "poisson", "-seed", "3"}, "every response is 0"},
		{"all-one bernoulli", []string{"-formula", "y1 ~ x + (1 | id)", "-family", "bernoulli"}, "every response is a success"},
		{"complete separation", []string{"-formula", "ysep ~ x + (1 | id)", "-family", "bernoulli"}, "hardly inform the fixed effects x"},
		{"all weights zero", []string{"-formula", "ycount ~ x + (1 | id)", "-family", "poisson", "-weights", "w"}, "hardly inform the fixed effects (Intercept), x"},
		{"random slope without variation", []string{"-formula", "ycount ~ x + z + (1 + z | id)", "-family", "poisson"}, "random effect z does not vary within any subject"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"fit", "-data", "d.csv", "-quiet", "-format", "json"}, c.args...)
			r := glmmfit(t, dir, "", nil, args...)
			if r.code != exitOK {
				t.Fatalf("exit %d, want %d: %s", r.code, exitOK, r.stderr)
			}
			doc := readDoc(t, []byte(r.stdout))
			if c.want == "" {
				if r.stderr != "" || len(doc.Warnings) != 0 {
					t.Errorf("warnings on ordinary data: %q, %q", r.stderr, doc.Warnings)
				}
				return
			}
			if !strings.Contains(r.stderr, "glmmfit: warning: ") || !strings.Contains(r.stderr, c.want) {
				t.Errorf("standard error %q lacks a warning with %q", r.stderr, c.want)
			}
			if !strings.Contains(strings.Join(doc.Warnings, "\n"), c.want) {
				t.Errorf("JSON warnings %q lack %q", doc.Warnings, c.want)
			}
		})
	}
}

// TestBoundDropWarns: a fit whose final bound lies far below its best
// window is said to have lost its way; one that ends at its best, less
// noise, is not. The fit is a real one; its trace is then edited.
func TestBoundDropWarns(t *testing.T) {
	fr := mustFrame(t, degenerateCSV(5))
	d := mustDesign(t, fr, "ycount ~ x + (1 | id)", glmm.Poisson)
	res, err := vi.Fit(context.Background(), d.Model(), vi.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	has := func(ws []string) bool {
		for _, w := range ws {
			if strings.Contains(w, "lower bound fell") {
				return true
			}
		}
		return false
	}
	if w := diagnose(d.Model(), res, nil, nil, nil); has(w) {
		t.Errorf("a converged fit warns: %q", w)
	}
	n, _, _ := d.Model().Dims()
	res.Trace = append(res.Trace, vi.TracePoint{LowerBound: res.LowerBound + boundDropWarn + 3*res.LowerBoundSE + boundDropPerSubject*float64(n) + 1})
	if w := diagnose(d.Model(), res, nil, nil, nil); !has(w) {
		t.Errorf("no warning for a bound %v below its best window: %q", boundDropWarn, w)
	}
	// With many subjects the iterates' jitter is allowed for: the fall of
	// glmmfit's default fit of 10^6 Bernoulli subjects (19 nats, SE 2.3)
	// does not warn, one of 100 nats does.
	for _, c := range []struct {
		drop float64
		warn bool
	}{{19, false}, {100, true}} {
		big := &vi.Result{Status: vi.Converged, LowerBound: -3817559.7, LowerBoundSE: 2.3,
			Trace: []vi.TracePoint{{LowerBound: -3817559.7 + c.drop}, {LowerBound: -3817556}}}
		if got := has(boundWarnings(big, 1_000_000)); got != c.warn {
			t.Errorf("10^6 subjects, a fall of %v nats: warns %t, want %t", c.drop, got, c.warn)
		}
	}
}

// mustFrame reads a CSV document.
func mustFrame(t *testing.T, csv string) *datasets.Frame {
	t.Helper()
	fr, err := datasets.ReadCSV(strings.NewReader(csv))
	if err != nil {
		t.Fatal(err)
	}
	return fr
}

// mustDesign builds the formula on fr with the default prior.
func mustDesign(t *testing.T, fr *datasets.Frame, fml string, fam glmm.Family) *formula.Design {
	t.Helper()
	f, err := formula.Parse(fml)
	if err != nil {
		t.Fatal(err)
	}
	d, err := formula.Build(f, fr, formula.Options{Family: fam, Prior: formula.PriorAuto})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestCorrectAlwaysForetellsItsCost: -correct always warns before a
// correction its own estimate puts beyond a minute, saying how many
// subject integrals and how to stop it, and stays quiet on one of a few
// seconds.
func TestCorrectAlwaysForetellsItsCost(t *testing.T) {
	dir := dataDir(t, "toenail.csv")
	args := []string{"fit", "-format", "json", "-quiet", "-correct", "always", "-data", filepath.Join(dir, "toenail.csv"),
		"-formula", "outcome ~ treatment*time + (1 | patientID)", "-ref", "outcome=none or mild"}
	for _, tc := range []struct {
		name  string
		extra []string
		warns bool
	}{
		// 294 subjects of 6.5 rows: 1000 draws are about a second.
		{"default draws", nil, false},
		// 200,000 draws are minutes; -timeout stops them.
		{"many draws", []string{"-correct-draws", "200000", "-timeout", "3s"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := glmmfit(t, "", "", nil, append(args, tc.extra...)...)
			got := strings.Contains(r.stderr, "warning: -correct always: the correction integrates out each of the 294 subjects")
			if got != tc.warns {
				t.Fatalf("warned %v, want %v; exit %d, stderr:\n%s", got, tc.warns, r.code, r.stderr)
			}
			if tc.warns {
				for _, want := range []string{"200000 draws", "subject integrals that may take about", "Ctrl-C, SIGTERM or -timeout stops it"} {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("the warning does not say %q:\n%s", want, r.stderr)
					}
				}
				if r.code != exitLimit {
					t.Errorf("exit %d, want %d (-timeout)", r.code, exitLimit)
				}
			}
		})
	}
}

// TestBoundSEWarningSaysWhy: a final bound with a large Monte Carlo error
// from draws cut for the number of subjects, or by a stochastic fit, does
// not warn but says why in its line (drawsCut), and one from the full
// number of draws blames heavy tails. The fit is a real one; its error and
// draws are then edited.
func TestBoundSEWarningSaysWhy(t *testing.T) {
	fr := mustFrame(t, degenerateCSV(5))
	d := mustDesign(t, fr, "ycount ~ x + (1 | id)", glmm.Poisson)
	res, err := vi.Fit(context.Background(), d.Model(), vi.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.LowerBoundDraws < 20 || res.LowerBoundDraws > vi.DefaultFinalDraws {
		t.Fatalf("the final bound took %d draws", res.LowerBoundDraws)
	}
	find := func(ws []string) string {
		for _, w := range ws {
			if strings.Contains(w, "Monte Carlo standard error") {
				return w
			}
		}
		return ""
	}
	if w := find(diagnose(d.Model(), res, nil, nil, nil)); w != "" && res.LowerBoundSE <= boundSEWarn {
		t.Errorf("a bound of s.e. %v warns: %q", res.LowerBoundSE, w)
	}
	for _, c := range []struct {
		se            float64
		draws, passes int
		warn, cut     string
	}{
		{2.5, 20, 0, "", "fewer for 5 subjects"},
		{2.5, 6, 2, "", "stochastic fit (-batch)"},
		{2.5, vi.DefaultFinalDraws, 0, "heavy tails", ""},
		{0.2, 20, 0, "", ""}, // stopped early or small: nothing to explain
		{0.9, 6, 2, "", ""},
	} {
		res.LowerBoundSE, res.LowerBoundDraws, res.Passes = c.se, c.draws, c.passes
		w := find(diagnose(d.Model(), res, nil, nil, nil))
		if (c.warn == "") != (w == "") || !strings.Contains(w, c.warn) {
			t.Errorf("s.e. %v from %d draws: warning %q, want %q", c.se, c.draws, w, c.warn)
		}
		if cut := drawsCut(res, 5); (c.cut == "") != (cut == "") || !strings.Contains(cut, c.cut) {
			t.Errorf("s.e. %v from %d draws: reason %q, want %q", c.se, c.draws, cut, c.cut)
		}
	}
}
