// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/longtest"
)

// TestBatch: -batch fits by stochastic updates over subjects with the RVB
// methods, auto included, to the full batch's fixed effects within a tenth
// of their posterior sds and their sds within 10%, on 2000 simulated
// Bernoulli subjects; and it is refused, naming the flags, where it does
// not apply.
func TestBatch(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "bernoulli", "-subjects", "2000", "-obs", "7",
		"-beta", "-1,0.5,0.5", "-re-sd", "1", "-seed", "5", "-out", "b.csv"))
	fit := func(args ...string) *document {
		args = append([]string{"fit", "-data", "b.csv", "-formula", "y ~ t + x1 + (1 | id)", "-family", "bernoulli", "-format", "json", "-quiet"}, args...)
		r := glmmfit(t, dir, "", nil, args...)
		if r.code != exitOK {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		return readDoc(t, []byte(r.stdout))
	}
	for _, method := range []string{"auto", "rvb2"} {
		ref := fit("-method", method)
		doc := fit("-method", method, "-batch", "200")
		if doc.Status != "converged" || doc.Passes == 0 || doc.Options.Batch != 200 {
			t.Errorf("-method %s -batch 200: status %s after %d passes, batch %d", method, doc.Status, doc.Passes, doc.Options.Batch)
		}
		// 2000 subjects: the warning that -batch is for many more.
		warned := func(d *document) bool {
			return slices.ContainsFunc(d.Warnings, func(w string) bool { return strings.Contains(w, "-batch 200 on 2000 subjects") })
		}
		if !warned(doc) || warned(ref) {
			t.Errorf("-method %s: warnings with -batch %q, without %q: want the few subjects' warning with -batch alone", method, doc.Warnings, ref.Warnings)
		}
		for k, f := range doc.Fixed {
			want := ref.Fixed[k]
			if d := float64(f.Estimate-want.Estimate) / float64(want.EstError); d > 0.1 || d < -0.1 {
				t.Errorf("-method %s -batch 200: %s: estimate %.4f, full batch %.4f ± %.4f", method, f.Name, float64(f.Estimate), float64(want.Estimate), float64(want.EstError))
			}
			if d := float64(f.EstError/want.EstError) - 1; d > 0.1 || d < -0.1 {
				t.Errorf("-method %s -batch 200: %s: error %.4f, full batch's %.4f", method, f.Name, float64(f.EstError), float64(want.EstError))
			}
		}
	}
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"-method", "gva"}, "-batch cannot be used with -method gva"},
		{[]string{"-optimizer", "adam"}, "-batch cannot be used with -optimizer"},
		{[]string{"-max-iter", "10"}, "-batch cannot be used with -max-iter"},
		{[]string{"-tol", "0.1"}, "-batch cannot be used with -tol"},
	} {
		args := append([]string{"fit", "-example", "-batch", "20"}, tc.args...)
		r := glmmfit(t, t.TempDir(), "", nil, args...)
		if r.code != exitUsage || !strings.Contains(r.stderr, tc.says) {
			t.Errorf("%s: exit %d, %q; want a usage error saying %q", strings.Join(tc.args, " "), r.code, r.stderr, tc.says)
		}
	}
	if r := glmmfit(t, t.TempDir(), "", nil, "fit", "-example", "-batch", "-3"); r.code != exitUsage || !strings.Contains(r.stderr, "-batch must be positive") {
		t.Errorf("-batch -3: exit %d, %q", r.code, r.stderr)
	}
}

// TestBatchSampleStart: with more subjects than glmm.MinSample, -batch
// builds RVB's target at the start of a sample of them
// (rvb.NewAtSampleStart) and says so (JSON options.start_sample, the text
// summary); -threads 1 and 2 give the same JSON bit for bit. Its fixed
// effects and random-effect sd are within 0.02 posterior sd and 1% in
// their sds of the -batch fit that starts from all the subjects (as with
// -out, whose fit file records that start), and within 0.15 sd and 10%
// of the full batch's: at 25000 subjects the stochastic fit from the full
// start is itself 0.096 sd from the full batch in the random-effect sd
// (issue 16's 0.1 sd is for 10^6 subjects and more, benchmarks/svi).
func TestBatchSampleStart(t *testing.T) {
	longtest.Require(t, "fits 25000 subjects five times")
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "bernoulli", "-subjects", "25000", "-obs", "7",
		"-beta", "-1,0.5,0.5", "-re-sd", "1", "-seed", "5", "-out", "b.csv"), "simulate")
	base := []string{"fit", "-data", "b.csv", "-formula", "y ~ t + x1 + (1 | id)", "-family", "bernoulli", "-quiet"}
	run := func(args ...string) result {
		args = append(append([]string{}, base...), args...)
		r := glmmfit(t, dir, "", nil, args...)
		if r.code != exitOK {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), r.code, r.stderr)
		}
		return r
	}
	full := readDoc(t, []byte(run("-format", "json").stdout))
	var outs [2][]byte
	var doc *document
	for k, threads := range []string{"1", "2"} {
		r := run("-format", "json", "-batch", "2500", "-threads", threads)
		outs[k] = withoutTiming(t, []byte(r.stdout))
		doc = readDoc(t, []byte(r.stdout))
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Error("-batch 2500: -threads 1 and -threads 2 give different JSON")
	}
	want := glmm.DefaultSampleSize(25000)
	if doc.Options.StartSample != want || full.Options.StartSample != 0 {
		t.Errorf("start_sample %d (full batch %d); want %d (0)", doc.Options.StartSample, full.Options.StartSample, want)
	}
	if doc.Status != "converged" || doc.Passes == 0 {
		t.Errorf("-batch 2500: status %s after %d passes", doc.Status, doc.Passes)
	}
	allStart := readDoc(t, []byte(run("-format", "json", "-batch", "2500", "-out", "fit.json").stdout))
	if allStart.Options.StartSample != 0 {
		t.Errorf("-batch 2500 -out: start_sample %d; want 0 (the fit file's start is of all the subjects)", allStart.Options.StartSample)
	}
	check := func(ref *document, what string, tolMean, tolSD float64) {
		for _, p := range []struct {
			got, want []marginal
		}{{doc.Fixed, ref.Fixed}, {doc.RESD, ref.RESD}} {
			if len(p.got) != len(p.want) || len(p.got) == 0 {
				t.Fatalf("%d entries, %s %d", len(p.got), what, len(p.want))
			}
			for k, f := range p.got {
				w := p.want[k]
				if d := float64(f.Estimate-w.Estimate) / float64(w.EstError); d > tolMean || d < -tolMean {
					t.Errorf("%s: estimate %.5f, %s %.5f ± %.5f", f.Name, float64(f.Estimate), what, float64(w.Estimate), float64(w.EstError))
				}
				if d := float64(f.EstError/w.EstError) - 1; d > tolSD || d < -tolSD {
					t.Errorf("%s: error %.5f, %s's %.5f", f.Name, float64(f.EstError), what, float64(w.EstError))
				}
			}
		}
	}
	check(allStart, "the -batch fit from all the subjects' start", 0.02, 0.01)
	check(full, "the full batch", 0.15, 0.1)
	text := run("-batch", "2500").stdout
	if say := fmt.Sprintf("started from a sample of %d of the 25000 subjects", want); !strings.Contains(text, say) {
		t.Errorf("the text summary does not say %q:\n%s", say, text)
	}
}
