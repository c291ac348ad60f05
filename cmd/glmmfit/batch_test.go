// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"strings"
	"testing"
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
