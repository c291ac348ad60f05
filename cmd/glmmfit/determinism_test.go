// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestThreadsDeterministic runs the same fit with -threads 1 and -threads 2:
// the JSON documents must be byte-identical once the timing fields are
// removed.
func TestThreadsDeterministic(t *testing.T) {
	for _, method := range []string{"auto", "gva"} {
		var outs [2][]byte
		for k, threads := range []string{"1", "2"} {
			r := glmmfit(t, "", "", nil, "fit", "-example", "-method", method, "-format", "json", "-threads", threads, "-seed", "5")
			mustSucceed(t, r, "fit -example -threads "+threads)
			outs[k] = withoutTiming(t, []byte(r.stdout))
		}
		if !bytes.Equal(outs[0], outs[1]) {
			t.Errorf("-method %s: -threads 1 and -threads 2 give different JSON", method)
		}
		if !bytes.Contains(outs[0], []byte(`"random_effects"`)) {
			t.Errorf("-method %s: the compared document lacks random_effects", method)
		}
	}
}

// withoutTiming removes timings, the correction's seconds and the trace's
// elapsed_seconds from a JSON document, keeping the text of every other field as written.
func withoutTiming(t *testing.T, b []byte) []byte {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if _, ok := doc["timings"]; !ok {
		t.Fatal("no timings field")
	}
	delete(doc, "timings")
	var tr []map[string]json.RawMessage
	if err := json.Unmarshal(doc["trace"], &tr); err != nil {
		t.Fatal(err)
	}
	for _, p := range tr {
		if _, ok := p["elapsed_seconds"]; !ok {
			t.Fatal("trace point without elapsed_seconds")
		}
		delete(p, "elapsed_seconds")
	}
	var err error
	if c, ok := doc["correction"]; ok {
		// The correction, or the check of q, records its own seconds.
		var cr map[string]json.RawMessage
		if err := json.Unmarshal(c, &cr); err != nil {
			t.Fatal(err)
		}
		delete(cr, "seconds")
		if doc["correction"], err = json.Marshal(cr); err != nil {
			t.Fatal(err)
		}
	}
	if doc["trace"], err = json.Marshal(tr); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
