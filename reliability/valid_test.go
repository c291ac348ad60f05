// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package reliability_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/vi"
)

// quickFit are settings for fits whose only purpose is to show the data
// went through: short, but long enough to pass the start and a few
// windows.
var quickFit = vi.Settings{MaxIter: 200, FinalDraws: 50, Seed: 3}

// TestUnusualButValidCSV: files that differ from the plain base table only
// in their encoding (byte order mark, CRLF, quoting, spacing, blank lines)
// must read to the same data and give a bit-identical fit.
func TestUnusualButValidCSV(t *testing.T) {
	base := baseTable()
	ref := pipeline(t, base.csv(), pois, "poisson", nil, quickFit, true)
	if ref.err != nil {
		t.Fatalf("base table: %v at stage %v", ref.err, ref.stage)
	}
	checkResult(t, "base table", ref.res, nil, vi.Converged, vi.MaxIterations)

	quoteAll := func(tb table) string {
		var b strings.Builder
		for _, r := range tb {
			for j, f := range r {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`"` + f + `"`)
			}
			b.WriteByte('\n')
		}
		return b.String()
	}
	lf := base.csv()
	cases := []struct{ name, csv string }{
		{"byte order mark", "\xef\xbb\xbf" + lf},
		{"CRLF line ends", strings.ReplaceAll(lf, "\n", "\r\n")},
		{"mixed CRLF and LF", strings.Replace(lf, "\n", "\r\n", 7)},
		{"no final line end", strings.TrimSuffix(lf, "\n")},
		{"blank lines between rows", strings.Replace(strings.Replace(lf, "\n", "\n\n", 3), "\n", "\r\n\r\n", 1)},
		{"spaces and tabs around fields", strings.ReplaceAll(lf, ",", " ,\t")},
		{"every field quoted", quoteAll(base)},
		{"byte order mark, CRLF and quotes", "\xef\xbb\xbf" + strings.ReplaceAll(quoteAll(base), "\n", "\r\n")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := pipeline(t, c.csv, pois, "poisson", nil, quickFit, true)
			if out.err != nil {
				t.Fatalf("stage %v: %v", out.stage, out.err)
			}
			if got, want := out.frame.Names(), ref.frame.Names(); !slices.Equal(got, want) {
				t.Errorf("columns %q, want %q", got, want)
			}
			if out.frame.NumRows() != ref.frame.NumRows() {
				t.Errorf("%d rows, want %d", out.frame.NumRows(), ref.frame.NumRows())
			}
			if !slices.Equal(out.design.GroupLevels(), ref.design.GroupLevels()) {
				t.Errorf("subjects %q, want %q", out.design.GroupLevels(), ref.design.GroupLevels())
			}
			if !slices.Equal(out.res.Mu, ref.res.Mu) || !slices.Equal(out.res.Factor, ref.res.Factor) || out.res.LowerBound != ref.res.LowerBound {
				t.Errorf("fit differs from the plain file's")
			}
		})
	}
}

// TestQuotedCommasAndLineEnds: labels holding commas, quotes and line ends
// are read verbatim and become the subjects' labels.
func TestQuotedCommasAndLineEnds(t *testing.T) {
	names := map[string]string{
		"s1": `"Smith, J."`, "s2": `"O""Brien, K"`, "s3": "\"two\nlines\"",
		"s4": `"a,b,c"`, "s5": `""""`, "s6": `"  padded  "`,
	}
	want := []string{"  padded  ", "\"", "O\"Brien, K", "Smith, J.", "a,b,c", "two\nlines"}
	tb := baseTable().setAll("id", func(_ int, old string) string { return names[old] })
	out := pipeline(t, tb.csv(), pois, "poisson", nil, quickFit, true)
	if out.err != nil {
		t.Fatalf("stage %v: %v", out.stage, out.err)
	}
	if got := out.design.GroupLevels(); !slices.Equal(got, want) {
		t.Errorf("subjects %q, want %q", got, want)
	}
	checkResult(t, "quoted labels", out.res, nil, vi.Converged, vi.MaxIterations)
}

// TestMissingValues: missing values in a column the model does not use are
// ignored; in used columns the default rejects the first such row (see the
// catalogue) and DropMissing leaves the rows out.
func TestMissingValues(t *testing.T) {
	base := baseTable()

	// An unused column full of missing values does not matter.
	unused := base.addCol("note", func(k int, _ []string) string { return []string{"", "NA", "?"}[k%3] })
	out := pipeline(t, unused.csv(), pois, "poisson", nil, quickFit, false)
	if out.err != nil {
		t.Fatalf("missing values in an unused column: stage %v: %v", out.stage, out.err)
	}
	if c, _ := out.frame.Column("note"); c.NumMissing() != 24 {
		t.Errorf("unused column has %d missing values, want 24", c.NumMissing())
	}

	// Missing response on row 5, covariate on row 9, subject on row 2 and
	// a missing value in the unused column b on row 20.
	holes := base.set(5, "y", "NA").set(9, "x", "").set(2, "id", "?").set(20, "b", "NA")
	drop := func(o *formula.Options) { o.Missing = formula.DropMissing }
	out = pipeline(t, holes.csv(), pois, "poisson", drop, quickFit, true)
	if out.err != nil {
		t.Fatalf("DropMissing: stage %v: %v", out.stage, out.err)
	}
	var wantRows []int
	for k := range 24 {
		if k != 4 && k != 8 && k != 1 {
			wantRows = append(wantRows, k)
		}
	}
	if got := out.design.Rows(); !slices.Equal(got, wantRows) {
		t.Errorf("rows used %v, want %v", got, wantRows)
	}
	if got := out.design.Model().NumObs(); got != 21 {
		t.Errorf("model has %d observations, want 21", got)
	}
	checkResult(t, "DropMissing", out.res, nil, vi.Converged, vi.MaxIterations)

	// Dropping every row of a subject removes the subject.
	gone := base.setAll("y", func(k int, old string) string {
		if k <= 4 {
			return "NA"
		}
		return old
	})
	out = pipeline(t, gone.csv(), pois, "poisson", drop, quickFit, false)
	if out.err != nil {
		t.Fatalf("DropMissing of a whole subject: stage %v: %v", out.stage, out.err)
	}
	if got := out.design.GroupLevels(); slices.Contains(got, "s1") || len(got) != 5 {
		t.Errorf("subjects %q, want s2..s6", got)
	}
}

// TestReadFileNamesTheFile: ReadFile's errors carry the file's base name,
// and a gzip-compressed file reads like the plain one.
func TestReadFileNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "visits.csv")
	if err := os.WriteFile(bad, []byte(baseTable().set(3, "x", "inf").csv()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := datasets.ReadFile(bad)
	var pe *datasets.ParseError
	if !errors.As(err, &pe) || pe.File != "visits.csv" || pe.Line != 4 || pe.Name != "x" {
		t.Fatalf("error %v, want a *ParseError for visits.csv line 4 column x", err)
	}
	if !strings.HasPrefix(err.Error(), `visits.csv: line 4, column 3 ("x")`) {
		t.Errorf("message %q does not start with the file and place", err)
	}

	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte(baseTable().csv()))
	zw.Close()
	gz := filepath.Join(dir, "visits.csv.gz")
	if err := os.WriteFile(gz, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	fr, err := datasets.ReadFile(gz)
	if err != nil {
		t.Fatalf("gzip file: %v", err)
	}
	if fr.NumRows() != 24 || fr.NumCols() != 7 {
		t.Errorf("gzip file read as %d x %d, want 24 x 7", fr.NumRows(), fr.NumCols())
	}

	// A truncated gzip stream is an error, not a panic or a short frame.
	trunc := filepath.Join(dir, "cut.csv.gz")
	if err := os.WriteFile(trunc, buf.Bytes()[:buf.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	if fr, err := datasets.ReadFile(trunc); err == nil {
		t.Errorf("truncated gzip file read without error as %d rows", fr.NumRows())
	}
}

// TestNumericTypoMakesAFactor documents a hazard rather than an error: a
// single non-numeric field in a numeric covariate makes the whole column
// categorical (as R's read.csv does), and Build then codes it as a factor
// with one dummy per distinct value. Nothing fails: the fit goes through
// with a fixed effect per distinct value of x.
func TestNumericTypoMakesAFactor(t *testing.T) {
	tb := baseTable().set(7, "x", "0.5.1")
	out := pipeline(t, tb.csv(), pois, "poisson", nil, quickFit, true)
	if out.err != nil {
		t.Fatalf("stage %v: %v", out.stage, out.err)
	}
	c, _ := out.frame.Column("x")
	if c.Kind != datasets.Categorical {
		t.Fatalf("x is %v, want categorical", c.Kind)
	}
	nlev := len(c.Levels())
	names := out.design.FixedNames()
	if len(names) != 2+nlev-1 || !slices.Contains(names, "x0.5.1") {
		t.Errorf("fixed effects %q: want the intercept, t and %d dummies of x including x0.5.1", names, nlev-1)
	}
	checkResult(t, "typo", out.res, nil, vi.Converged, vi.MaxIterations)
	t.Logf("one typo in x: %d fixed effects %q, status %v", len(names), names, out.res.Status)
}
