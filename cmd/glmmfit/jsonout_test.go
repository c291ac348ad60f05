// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"testing"
)

// TestWriteJSON: writeJSON's text is json.Encoder's with two spaces of
// indent, byte for byte, with no subject, one or three, with and without
// corrected random effects, levels that JSON escapes (HTML, quotes,
// control characters), NaN and infinite figures (null), and crossed
// factors' levels before the subjects.
func TestWriteJSON(t *testing.T) {
	levels := []string{"s1", `<a&b> "q"`, "tab\tü\x01"}
	list := func(n, r int, shift float64) []subjectEffects {
		var out []subjectEffects
		for i := range n {
			s := subjectEffects{Level: levels[i%len(levels)]}
			for a := range r {
				s.Mean = append(s.Mean, jfloat(float64(i)-0.5*float64(a)+shift))
				s.SD = append(s.SD, jfloat(1/float64(i+a+1)))
			}
			if i == 1 {
				s.Mean[0] = jfloat(math.NaN())
				s.SD[r-1] = jfloat(math.Inf(1))
			}
			out = append(out, s)
		}
		return out
	}
	for _, c := range []struct {
		subjects, corrected, r int
		crossed                bool
	}{
		{0, 0, 1, false},
		{1, 0, 1, false},
		{3, 0, 2, false},
		{3, 3, 1, false},
		{0, 2, 2, true},
		{3, 3, 2, true},
	} {
		doc := &document{SchemaVersion: 2, Status: "converged", Warnings: []string{"<warning>"},
			Fixed:         []marginal{{Name: "(Intercept)", Estimate: 0.25, EstError: 0.1}},
			RandomEffects: randomEffects{Group: "id", Names: []string{"(Intercept)", "t"}[:c.r], Subjects: list(c.subjects, c.r, 0)},
			Trace:         []tracePoint{{Iter: 25, LowerBound: jfloat(math.NaN())}},
		}
		if c.corrected > 0 {
			doc.PSISCorrected = &corrected{K: 0.3, Draws: 1000, RandomEffects: list(c.corrected, c.r, 0.125), LocalDraws: 200}
		}
		if c.crossed {
			doc.Crossed = []crossedDoc{{Group: "item", Levels: 2, Effects: []marginal{{Name: `"level": "x"`}, {Name: "b"}}}}
		}
		var want, got bytes.Buffer
		enc := json.NewEncoder(&want)
		enc.SetIndent("", "  ")
		if err := enc.Encode(doc); err != nil {
			t.Fatal(err)
		}
		if err := writeJSON(&got, doc); err != nil {
			t.Fatal(err)
		}
		where := fmt.Sprintf("%d subjects, %d corrected, r %d, crossed %v", c.subjects, c.corrected, c.r, c.crossed)
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("%s: writeJSON's text differs from json.Encoder's:\n%s\nwant\n%s", where, got.Bytes(), want.Bytes())
		}
		// The document is left as it was.
		if len(doc.RandomEffects.Subjects) != c.subjects || c.corrected > 0 && len(doc.PSISCorrected.RandomEffects) != c.corrected {
			t.Errorf("%s: writeJSON changed the document", where)
		}
	}
}
