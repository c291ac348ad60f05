// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior_test

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// TestSaveLoad: a fit saved and loaded for the same model gives the same
// summaries, bit for bit, for GVA and for RVB at either expansion, the
// start of a sample's (rvb.NewAtSampleStart) included, whose expansion
// only the saved start gives back; without it (a fit saved before it was
// kept) Load computes the model's start, and the fit from NewAtStart
// loads the same. Loading for another model, or a file of another
// version, is an error.
func TestSaveLoad(t *testing.T) {
	ctx := context.Background()
	m, other := simModel(t, 40, 1), simModel(t, 40, 2)
	for _, c := range []struct {
		name string
		make func() (vi.Target, vi.Method)
	}{
		{"gva", func() (vi.Target, vi.Method) { return m, vi.GVA }},
		{"rvb1 at the start", func() (vi.Target, vi.Method) {
			pool := parallel.NewPool(ctx, 0)
			defer pool.Close()
			tg, err := rvb.NewAtStart(pool, m, rvb.RVB1)
			if err != nil {
				t.Fatal(err)
			}
			return tg, vi.BlockDiag
		}},
		{"rvb1 at a sample's start", func() (vi.Target, vi.Method) {
			pool := parallel.NewPool(ctx, 0)
			defer pool.Close()
			tg, err := rvb.NewAtSampleStart(pool, m, rvb.RVB1, 20, 4)
			if err != nil {
				t.Fatal(err)
			}
			return tg, vi.BlockDiag
		}},
		{"rvb2 jeffreys", func() (vi.Target, vi.Method) {
			tg, err := rvb.New(m, rvb.RVB2)
			if err != nil {
				t.Fatal(err)
			}
			return tg, vi.BlockDiag
		}},
	} {
		target, method := c.make()
		res, err := vi.Fit(ctx, target, vi.Settings{Method: method, Seed: 3, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := posterior.Save(&buf, res, target); err != nil {
			t.Fatal(err)
		}
		saved := buf.String()
		got, gotTarget, err := posterior.Load(ctx, strings.NewReader(saved), m)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if got.Status != res.Status || got.Iterations != res.Iterations || got.LowerBound != res.LowerBound || !reflect.DeepEqual(got.LogWeights, res.LogWeights) {
			t.Errorf("%s: loaded %v after %d iterations, bound %v; saved %v, %d, %v", c.name, got.Status, got.Iterations, got.LowerBound, res.Status, res.Iterations, res.LowerBound)
		}
		if method == vi.GVA {
			want, err := posterior.Summarize(res, m, 200, 5)
			if err != nil {
				t.Fatal(err)
			}
			have, err := posterior.Summarize(got, m, 200, 5)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, have) {
				t.Errorf("%s: the loaded fit's summary differs", c.name)
			}
		} else {
			want, err := posterior.SummarizeRVB(ctx, res, target.(*rvb.Target), 200, 5)
			if err != nil {
				t.Fatal(err)
			}
			have, err := posterior.SummarizeRVB(ctx, got, gotTarget.(*rvb.Target), 200, 5)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, have) {
				t.Errorf("%s: the loaded fit's summary differs", c.name)
			}
			var sf posterior.SavedFit
			if err := json.Unmarshal([]byte(saved), &sf); err != nil {
				t.Fatal(err)
			}
			atStart := target.(*rvb.Target).ExpandedAtStart()
			if (sf.Start != nil) != atStart {
				t.Errorf("%s: saved start of %d values, expanded at the start %v", c.name, len(sf.Start), atStart)
			}
			if atStart {
				// Saved without the start, the fit loads at the model's
				// start: the same fit for NewAtStart's, another for the
				// sample's.
				sf.Start = nil
				got, gotTarget, err := sf.Load(ctx, m)
				if err != nil {
					t.Fatal(err)
				}
				have, err := posterior.SummarizeRVB(ctx, got, gotTarget.(*rvb.Target), 200, 5)
				if err != nil {
					t.Fatal(err)
				}
				if same, sample := reflect.DeepEqual(want, have), strings.Contains(c.name, "sample"); same == sample {
					t.Errorf("%s: loaded without its start, the summary is the same: %v", c.name, same)
				}
			}
		}
		if _, _, err := posterior.Load(ctx, strings.NewReader(saved), other); err == nil || !strings.Contains(err.Error(), "another model") {
			t.Errorf("%s: loaded for another model: %v", c.name, err)
		}
		bad := strings.Replace(saved, `"method":"`, `"method":"laplace-`, 1)
		if _, _, err := posterior.Load(ctx, strings.NewReader(bad), m); err == nil || !strings.Contains(err.Error(), "saved fit: unknown method") {
			t.Errorf("%s: loaded a fit of an unknown method: %v", c.name, err)
		}
		if method == vi.BlockDiag {
			bad = strings.Replace(saved, `"expansion":"`, `"expansion":"mid-`, 1)
			if _, _, err := posterior.Load(ctx, strings.NewReader(bad), m); err == nil || !strings.Contains(err.Error(), "saved fit: unknown expansion") {
				t.Errorf("%s: loaded a fit of an unknown expansion: %v", c.name, err)
			}
		}
		bad = strings.Replace(saved, `"version":1`, `"version":2`, 1)
		if _, _, err := posterior.Load(ctx, strings.NewReader(bad), m); err == nil || !strings.Contains(err.Error(), "version 2") {
			t.Errorf("%s: loaded a file of version 2: %v", c.name, err)
		}
	}
}

// TestNewTargetRefuses: unknown methods and, for RVB, unknown expansions
// are errors naming the value and the choices; GVA ignores the expansion.
func TestNewTargetRefuses(t *testing.T) {
	pool := parallel.NewPool(context.Background(), 0)
	defer pool.Close()
	m := simModel(t, 20, 1)
	for _, c := range []struct {
		method, expansion, msg string
	}{
		{"laplace", "", `unknown method "laplace" (want "gva", "rvb1" or "rvb2")`},
		{posterior.RVB1, "", `unknown expansion "" (want "start" or "jeffreys")`},
		{posterior.RVB2, "mode", `unknown expansion "mode"`},
		{posterior.GVA, "mode", ""},
		{posterior.RVB2, posterior.Jeffreys, ""},
	} {
		_, _, err := posterior.NewTarget(pool, m, c.method, c.expansion)
		switch {
		case c.msg == "" && err != nil:
			t.Errorf("NewTarget(%q, %q): %v", c.method, c.expansion, err)
		case c.msg != "" && (err == nil || !strings.Contains(err.Error(), c.msg)):
			t.Errorf("NewTarget(%q, %q): %v, want an error containing %s", c.method, c.expansion, err, c.msg)
		}
	}
}
