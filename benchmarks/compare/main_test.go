// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"math"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{[]float64{3}, 3},
		{[]float64{5, 1, 3}, 3},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		x := append([]float64(nil), c.x...)
		if got := median(c.x); got != c.want {
			t.Errorf("median(%v) = %v, want %v", x, got, c.want)
		}
		for i := range x {
			if x[i] != c.x[i] {
				t.Errorf("median reordered its argument: %v, was %v", c.x, x)
			}
		}
	}
	if !math.IsNaN(median(nil)) {
		t.Error("median of nothing is not NaN")
	}
}

func TestLoadRange(t *testing.T) {
	rows := [][]string{{"load1_before"}, {"1.50"}, {"NaN"}, {"0.25"}}
	if got, want := loadRange(rows), "0.25 to 1.50"; got != want {
		t.Errorf("loadRange = %q, want %q", got, want)
	}
	if got, want := loadRange(rows[:1]), "not available"; got != want {
		t.Errorf("loadRange of no runs = %q, want %q", got, want)
	}
}

func TestReadFit(t *testing.T) {
	out := []byte(`{"options": {"method": "rvb2"}, "lower_bound": {"value": -3677.5},
		"re_sd": [{"name": "sd((Intercept))", "estimate": 0.97, "est_error": 0.05}]}`)
	got, err := readFit(out)
	if err != nil {
		t.Fatal(err)
	}
	want := fitSummary{method: "rvb2", bound: -3677.5, sdName: "sd((Intercept))", sd: 0.97, sdError: 0.05}
	if got != want {
		t.Errorf("readFit = %+v, want %+v", got, want)
	}
	for _, bad := range []string{`not json`, `{"re_sd": []}`} {
		if _, err := readFit([]byte(bad)); err == nil {
			t.Errorf("readFit(%q) accepted", bad)
		}
	}
}
