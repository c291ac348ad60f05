// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
)

// plotDoc returns a document with k fixed effects and n subjects of r
// random effects; subject i's first effect has mean sin(i) and the ids are
// "s<i>".
func plotDoc(k, n, r int) *document {
	doc := &document{}
	for j := range k {
		doc.Fixed = append(doc.Fixed, marginal{Name: fmt.Sprintf("effect %d", j), Estimate: jfloat(j) / 10, Q025: jfloat(j)/10 - 1, Q975: jfloat(j)/10 + 1})
	}
	doc.RandomEffects.Group = "id"
	for a := range r {
		doc.RandomEffects.Names = append(doc.RandomEffects.Names, fmt.Sprintf("re%d", a))
	}
	for i := range n {
		s := subjectEffects{Level: fmt.Sprintf("s%d", i)}
		for a := range r {
			s.Mean = append(s.Mean, jfloat(math.Sin(float64(i+a))))
			s.SD = append(s.SD, 0.3)
		}
		doc.RandomEffects.Subjects = append(doc.RandomEffects.Subjects, s)
	}
	for it := 50; it <= 500; it += 50 {
		doc.Trace = append(doc.Trace, tracePoint{Iter: it, LowerBound: jfloat(-100 - 1000/float64(it))})
	}
	return doc
}

// TestPlotLayout: the image grows with the number of fixed effects so that
// each keeps its row; a caterpillar of many subjects draws a sample of
// error bars (and those at both ends) and names the subjects at the ends
// by their ids; few subjects are all named on the axis.
func TestPlotLayout(t *testing.T) {
	for _, c := range []struct{ k, n, r int }{{4, 15, 1}, {46, 1000, 2}, {3, 100000, 1}} {
		doc := plotDoc(c.k, c.n, c.r)
		dir := t.TempDir()
		path := filepath.Join(dir, "p.png")
		if err := writePlot(context.Background(), path, doc); err != nil {
			t.Fatal(err)
		}
		f, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(f))
		if err != nil {
			t.Fatal(err)
		}
		wantH := int(math.Round(float64(plotHeight(c.k)) / float64(vg.Inch) * 96))
		if b := img.Bounds(); b.Dx() != 1152 || b.Dy() != wantH {
			t.Errorf("k=%d: image %v, want 1152×%d", c.k, b, wantH)
		}
		if c.k > 40 && plotHeight(c.k) <= plotMinHeight {
			t.Errorf("k=%d: the image does not grow", c.k)
		}
		if rows := (plotHeight(c.k) - 1.6*vg.Inch) / vg.Length(c.k); rows < forestRow {
			t.Errorf("k=%d: %v per fixed effect, want at least %v", c.k, rows, forestRow)
		}
		cp, err := caterpillarPlot(doc, 0)
		if err != nil {
			t.Fatal(err)
		}
		ranks, step := caterpillarSample(c.n)
		if len(ranks) > caterpillarBars+2*caterpillarNamed || ranks[0] != 0 || ranks[len(ranks)-1] != c.n-1 {
			t.Errorf("n=%d: %d error bars from rank %d to %d", c.n, len(ranks), ranks[0], ranks[len(ranks)-1])
		}
		for j := 1; j < len(ranks); j++ {
			if gap := ranks[j] - ranks[j-1]; gap < 1 || gap > step {
				t.Fatalf("n=%d: ranks %d and %d drawn, %d apart with step %d", c.n, ranks[j-1], ranks[j], gap, step)
			}
		}
		if c.n > caterpillarBars && len(ranks) > caterpillarSampleBars+2*caterpillarNamed {
			t.Errorf("n=%d: %d error bars, want at most %d", c.n, len(ranks), caterpillarSampleBars+2*caterpillarNamed)
		}
		if c.n <= caterpillarBars && len(ranks) != c.n {
			t.Errorf("n=%d: %d error bars, want every subject's", c.n, len(ranks))
		}
		// The extremes by id, found independently.
		lo, hi := 0, 0
		for i, s := range doc.RandomEffects.Subjects {
			if s.Mean[0] < doc.RandomEffects.Subjects[lo].Mean[0] {
				lo = i
			}
			if s.Mean[0] > doc.RandomEffects.Subjects[hi].Mean[0] {
				hi = i
			}
		}
		if c.n > caterpillarNamedAll {
			label := cp.X.Label.Text
			if !strings.Contains(label, fmt.Sprintf("lowest s%d,", lo)) || !strings.Contains(label, fmt.Sprintf("highest s%d,", hi)) {
				t.Errorf("n=%d: axis label %q does not name s%d and s%d at the ends", c.n, label, lo, hi)
			}
		}
	}
}

// TestOrdinal: English ordinals, as the caterpillar plot's title uses them.
func TestOrdinal(t *testing.T) {
	for n, want := range map[int]string{1: "1st", 2: "2nd", 3: "3rd", 4: "4th", 11: "11th", 12: "12th", 13: "13th", 21: "21st", 82: "82nd", 103: "103rd", 111: "111th"} {
		if got := ordinal(n); got != want {
			t.Errorf("ordinal(%d) = %q, want %q", n, got, want)
		}
	}
}

// TestForestPlotCorrected: with the correction, the forest plot's range
// holds the corrected intervals as well as q's; without it, q's alone.
func TestForestPlotCorrected(t *testing.T) {
	doc := &document{
		Fixed:         []marginal{{Name: "a", Estimate: 0, Q025: -1, Q975: 1}, {Name: "b", Estimate: 1, Q025: 0.5, Q975: 1.5}},
		Correction:    &correctionDoc{Ran: true, K: 0.3},
		PSISCorrected: &corrected{Fixed: []marginal{{Name: "a", Estimate: -0.5, Q025: -3, Q975: 2}, {Name: "b", Estimate: 1.2, Q025: 0.4, Q975: 4}}},
	}
	p, err := forestPlot(doc)
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Min > -3 || p.X.Max < 4 {
		t.Errorf("x range [%v, %v] does not hold the corrected intervals [-3, 4]", p.X.Min, p.X.Max)
	}
	doc.Correction = nil
	q, err := forestPlot(doc)
	if err != nil {
		t.Fatal(err)
	}
	if q.X.Min < -1.5 || q.X.Max > 2 {
		t.Errorf("without the correction the x range [%v, %v] is wider than q's intervals", q.X.Min, q.X.Max)
	}
}

// TestParetoPlotSource: the diagnostic's panel draws the ratios over every
// variable where the fit drew them, else the check of q's marginal of the
// fixed effects and variance parameters (HERS), else says that neither was
// drawn.
func TestParetoPlotSource(t *testing.T) {
	ratios := func(scale float64) []float64 {
		lw := make([]float64, 400)
		for s := range lw {
			// Ratios whose tail is a Pareto's of shape scale.
			lw[s] = scale * -math.Log(1-(float64(s)+0.5)/float64(len(lw)))
		}
		return lw
	}
	for _, c := range []struct {
		name     string
		every    []float64
		check    []float64
		contains string
	}{
		{"every variable", ratios(0.3), nil, "Pareto k = 0.3"},
		{"check", nil, ratios(0.8), "(q's marginal, 400 draws): Pareto k = 0.7"},
		{"neither", nil, nil, "not computed"},
	} {
		doc := plotDoc(2, 10, 1)
		if c.every != nil {
			doc.logWeights = c.every
			doc.LowerBound.ParetoK = &paretoK{K: 0.3, Draws: len(c.every), Tail: 60}
		}
		if c.check != nil {
			doc.Correction = &correctionDoc{Checked: true, checkLogWeights: c.check}
		}
		p, err := paretoPlot(doc)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(p.Title.Text, c.contains) {
			t.Errorf("%s: title %q, want %q in it", c.name, p.Title.Text, c.contains)
		}
	}
}
