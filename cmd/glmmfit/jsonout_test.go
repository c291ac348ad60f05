// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
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
			if i == 1 && r > 0 {
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
		{2, 0, 0, false}, // no random effects: null lists
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
		// The fit file's compact form is json.Marshal's.
		for _, s := range doc.RandomEffects.Subjects {
			want, err := json.Marshal(&s)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendSubjectCompact(nil, &s); !bytes.Equal(got, want) {
				t.Errorf("%s: appendSubjectCompact = %s, want %s", where, got, want)
			}
		}
		// The document is left as it was.
		if len(doc.RandomEffects.Subjects) != c.subjects || c.corrected > 0 && len(doc.PSISCorrected.RandomEffects) != c.corrected {
			t.Errorf("%s: writeJSON changed the document", where)
		}
	}
}

// TestAppendJSONFloat: appendJSONFloat and appendJSONString write what
// encoding/json writes, on the boundaries of its exponent form, signed
// zeros, subnormals, the extremes, NaN and infinities (null, as jfloat),
// random bits of every exponent, and strings with the characters JSON
// escapes or that are not UTF-8.
func TestAppendJSONFloat(t *testing.T) {
	xs := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 1e-6 * (1 - 1e-16), 9.999999999999999e-7, 1e-7, 1.5e-300,
		1e20, 1e21, 1e21 * (1 - 1e-16), 1e22, -1e-7, 5e-324, math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64,
		123456789.125, 0.30000000000000004, math.NaN(), math.Inf(1), math.Inf(-1)}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100000 {
		xs = append(xs, math.Float64frombits(rng.Uint64()))
	}
	for _, x := range xs {
		want, err := json.Marshal(jfloat(x))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONFloat(nil, x); !bytes.Equal(got, want) {
			t.Errorf("appendJSONFloat(%v) = %s, want %s", x, got, want)
		}
	}
	for _, s := range []string{"", "s000001", "a b", `"q"`, `back\slash`, "<a&b>", "tab\t", "\x01", "ü", "\xff", "\u2028", "~", "\x7f"} {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendJSONString(nil, s); !bytes.Equal(got, want) {
			t.Errorf("appendJSONString(%q) = %s, want %s", s, got, want)
		}
	}
}

// BenchmarkWriteJSON writes the document of 10^5 subjects with two random
// effects each, as -format json does.
func BenchmarkWriteJSON(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	subjects := make([]subjectEffects, 100000)
	for i := range subjects {
		subjects[i] = subjectEffects{Level: fmt.Sprintf("s%07d", i),
			Mean: []jfloat{jfloat(rng.NormFloat64()), jfloat(rng.NormFloat64())},
			SD:   []jfloat{jfloat(rng.Float64()), jfloat(rng.Float64())}}
	}
	doc := &document{SchemaVersion: 2, Status: "converged", RandomEffects: randomEffects{Group: "id", Names: []string{"(Intercept)", "t"}, Subjects: subjects}}
	var out bytes.Buffer
	for b.Loop() {
		out.Reset()
		if err := writeJSON(&out, doc); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(out.Len()))
}
