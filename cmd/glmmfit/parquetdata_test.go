// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestParquetData fits and predicts from a Parquet file written by DuckDB,
// and from a directory holding it, and checks that the output equals that
// from the same data as CSV bit for bit (the JSON prints every number in
// full); only the file's name and the timings differ. Bad values, damaged
// and missing files are named in the errors.
func TestParquetData(t *testing.T) {
	dir := t.TempDir()
	testdata := filepath.Join("..", "..", "datasets", "parquet", "testdata")
	for _, c := range []struct{ from, to string }{
		{"sim100.csv", "data.csv"},
		{"sim100.parquet", "data.parquet"},
		{"sim100.parquet", filepath.Join("parts", "part-0.parquet")},
	} {
		b, err := os.ReadFile(filepath.Join(testdata, c.from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(c.to)), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, c.to, string(b))
	}
	timing := regexp.MustCompile(`(?m)^.*"[a-z_]*seconds": .*$`)
	normal := func(s, name string) string {
		return timing.ReplaceAllString(strings.ReplaceAll(s, `"`+name+`"`, `"DATA"`), "")
	}
	fit := func(data string) string {
		args := []string{"fit", "-data", data, "-formula", "y ~ x1 + x2 + x3 + (1 | id)", "-family", "bernoulli",
			"-format", "json", "-quiet", "-seed", "1", "-out", data + ".fit.json"}
		r := glmmfit(t, dir, "", nil, args...)
		mustSucceed(t, r, args...)
		return normal(r.stdout, data)
	}
	predict := func(fitData, data string) string {
		args := []string{"predict", "-fit", fitData + ".fit.json", "-data", data}
		r := glmmfit(t, dir, "", nil, args...)
		mustSucceed(t, r, args...)
		return r.stdout
	}
	want := fit("data.csv")
	wantPred := predict("data.csv", "data.csv")
	for _, data := range []string{"data.parquet", "parts"} {
		if got := fit(data); got != want {
			t.Errorf("fit -data %s differs from fit -data data.csv:\n%s", data, firstDiff(got, want))
		}
		if got := predict(data, data); got != wantPred {
			t.Errorf("predict from %s differs from predict from data.csv:\n%s", data, firstDiff(got, wantPred))
		}
	}

	// A bad value is named by file, row and column, as the CSV's by line.
	for data, where := range map[string]string{"data.parquet": "row 1", "data.csv": "line 2"} {
		r := glmmfit(t, dir, "", nil, "fit", "-data", data, "-formula", "x1 ~ 1 + (1 | id)", "-family", "poisson")
		if want := data + ": " + where + `, column 3 ("x1"): poisson family: impossible response`; r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Errorf("a non-integer count in %s: exit %d, stderr %q, want %q", data, r.code, r.stderr, want)
		}
	}

	// A damaged file is named in the error.
	writeFile(t, dir, "bad.parquet", "id,y\n1,0\n")
	r := glmmfit(t, dir, "", nil, "fit", "-data", "bad.parquet", "-formula", "y ~ 1 + (1 | id)", "-family", "bernoulli")
	if r.code == 0 || !strings.Contains(r.stderr, "bad.parquet: malformed Parquet file") {
		t.Errorf("damaged file: exit %d, stderr %q", r.code, r.stderr)
	}
	r = glmmfit(t, dir, "", nil, "fit", "-data", "none.parquet", "-formula", "y ~ 1 + (1 | id)", "-family", "bernoulli")
	if r.code == 0 || !strings.Contains(r.stderr, "cannot read data file: none.parquet: no such file or directory") {
		t.Errorf("missing file: exit %d, stderr %q", r.code, r.stderr)
	}
}

// firstDiff returns the first line where a and b differ.
func firstDiff(a, b string) string {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return "line " + la[i] + "\nwant " + lb[i]
		}
	}
	return "lengths differ"
}
