// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
)

// TestEncodeFitFile: the fit file that writeFitFile streams is
// json.Marshal's bytes of its document, byte for byte, and its checksums
// are sectionSums' of the document: for toenail's default fit, corrected
// (its subjects' corrected effects and the correction's draws are in the
// file), epilepsy's by RVB2 with a random slope, and a fit with neither
// subjects' corrected effects nor a correction (GVA, -correct never).
func TestEncodeFitFile(t *testing.T) {
	dir := dataDir(t, "toenail.csv")
	for _, args := range [][]string{
		{"-data", filepath.Join(dir, "toenail.csv"), "-formula", "outcome ~ treatment*time + (1 | patientID)", "-ref", "outcome=none or mild"},
		{"-dataset", "epilepsy", "-data-dir", dir, "-method", "rvb2"},
		{"-dataset", "cbpp", "-data-dir", dir, "-method", "gva", "-correct", "never"},
	} {
		work := t.TempDir()
		r := glmmfit(t, work, "", nil, append([]string{"fit", "-quiet", "-out", "fit.json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		checkFitFileText(t, fmt.Sprint(args), filepath.Join(work, "fit.json"))
	}
}

// checkFitFileText checks that the fit file at path is json.Marshal's bytes
// of its document, that encodeFitFile writes them again from the document
// read back, that its checksums are sectionSums' of the document, and that
// decodeWritten reads it as json.Unmarshal does but for the subjects'
// effects and the training data's text, which it leaves in place, and
// leaves it to json.Unmarshal once reformatted or with a byte changed.
func checkFitFileText(t *testing.T, what, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc document
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	written := doc.Checksums
	want, err := json.Marshal(&doc)
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, '\n')
	if !bytes.Equal(raw, want) {
		t.Errorf("%s: the fit file is not json.Marshal's text of its document", what)
	}
	var b bytes.Buffer
	if err := encodeFitFile(&b, &doc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.Bytes(), want) {
		t.Errorf("%s: encodeFitFile's text of the document read back differs from json.Marshal's", what)
	}
	sums, err := sectionSums(&doc)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(written, sums) || !maps.Equal(doc.Checksums, sums) || len(sums) != len(checkedSections) {
		t.Errorf("%s: checksums %v as written, %v encoded again, %v by sectionSums", what, written, doc.Checksums, sums)
	}
	// And they are the hashes of json.Marshal's bytes of each section.
	for name := range checkedSections {
		b, err := json.Marshal(sectionValue(&doc, name))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != sums[name] {
			t.Errorf("%s: the checksum of %s is not the hash of json.Marshal's bytes of it", what, name)
		}
	}

	var fast document
	if !decodeWritten(raw, &fast) {
		t.Fatalf("%s: decodeWritten did not read the fit file as written", what)
	}
	var full document
	if err := json.Unmarshal(raw, &full); err != nil {
		t.Fatal(err)
	}
	if string(fast.Training.text) != full.Training.Content || fast.Training.Content != "" || !reflect.DeepEqual(fast.RandomEffects, randomEffects{}) {
		t.Errorf("%s: decodeWritten's training data text (%d bytes) or random effects are not as written", what, len(fast.Training.text))
	}
	fast.Training.text, fast.Training.Content = nil, full.Training.Content
	fast.RandomEffects = full.RandomEffects
	if !reflect.DeepEqual(fast, full) {
		t.Errorf("%s: decodeWritten's document differs from json.Unmarshal's", what)
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, raw, "", "  "); err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(raw, []byte(`"random_effects":{`), []byte(`"random_effects":{ `), 1)
	for _, c := range []struct {
		name string
		text []byte
	}{
		{"indented", indented.Bytes()},
		{"a space added to the random effects", edited},
		{"a member twice", append(bytes.TrimSuffix(bytes.TrimSpace(raw), []byte("}")), []byte(`,"status":"converged"}`)...)},
		{"cut short", raw[:len(raw)/2]},
	} {
		var doc document
		if decodeWritten(c.text, &doc) {
			t.Errorf("%s: decodeWritten read a fit file %s", what, c.name)
		}
	}
}

// TestTopMembers: topMembers finds the values of an object's members,
// strings with escaped quotes and brackets and nested values included, and
// refuses what is not one object.
func TestTopMembers(t *testing.T) {
	for _, c := range []struct {
		text string
		want map[string]string // nil: refused
	}{
		{`{}`, map[string]string{}},
		{` { "a" : 1 , "b":"x\"}y" ,"c":[1,{"d":"]"}],"e":{"f":"\\"}, "g":null} ` + "\n", map[string]string{
			"a": "1", "b": `"x\"}y"`, "c": `[1,{"d":"]"}]`, "e": `{"f":"\\"}`, "g": "null"}},
		{`{"a\u0062":true}`, map[string]string{"ab": "true"}},
		{`{"a":1,"a":2}`, nil},
		{`{"a":1}x`, nil},
		{`{"a":1,}`, nil},
		{`{"a":"1}`, nil},
		{`{"a":[1,2}`, nil},
		{`{"a":}`, nil},
		{`[1]`, nil},
		{``, nil},
	} {
		got, ok := topMembers([]byte(c.text))
		if (c.want != nil) != ok || !ok {
			if (c.want != nil) != ok {
				t.Errorf("%q: ok %v", c.text, ok)
			}
			continue
		}
		for name, v := range c.want {
			span, ok := got[name]
			if !ok || c.text[span[0]:span[1]] != v {
				t.Errorf("%q: member %q is %v, want %q", c.text, name, span, v)
			}
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: %d members, want %d", c.text, len(got), len(c.want))
		}
	}
}

// TestWriteContent: the training data's content, whose CSV text is made
// on a goroutine of its own while it is compressed, is the base64 of the
// gzip of datasets.WriteCSV's text written in one piece, byte for byte,
// and reads back as the frame, but not once its context has ended; a
// writer that fails ends it with the error.
func TestWriteContent(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	n := 50000 // several times the pipe's buffer
	x, id := make([]float64, n), make([]string, n)
	miss := make([]bool, n)
	for i := range n {
		x[i] = rng.NormFloat64()
		id[i] = fmt.Sprintf("s%d, \"q\"", i/7)
		if i%1000 == 3 {
			x[i], miss[i] = math.NaN(), true
		}
	}
	fr, err := datasets.NewFrame(&datasets.Column{Name: "x", Kind: datasets.Numeric, Num: x, Missing: miss},
		&datasets.Column{Name: "id", Kind: datasets.Categorical, Str: id, Missing: make([]bool, n)})
	if err != nil {
		t.Fatal(err)
	}
	td, err := newTrainingData(&input{frame: fr, name: "d.csv"}, []string{"x", "id"})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if err := td.writeContent(&got); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	b64 := base64.NewEncoder(base64.StdEncoding, &want)
	zw, _ := gzip.NewWriterLevel(b64, gzip.HuffmanOnly)
	var text bytes.Buffer
	if err := datasets.WriteCSV(&text, fr); err != nil {
		t.Fatal(err)
	}
	zw.Write(text.Bytes())
	zw.Close()
	b64.Close()
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("content of %d bytes differs from the one-piece encoding's %d", got.Len(), want.Len())
	}
	td.Content, td.frame = got.String(), nil
	in, err := td.input(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := in.frame.Column("id"); in.frame.NumRows() != n || c.Str[n-1] != id[n-1] {
		t.Errorf("read back: %d rows, last id %q", in.frame.NumRows(), c.Str[n-1])
	}
	// Reading back stops when its context ends (a signal).
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := td.input(ctx); err == nil || !strings.Contains(err.Error(), context.Canceled.Error()) {
		t.Errorf("read back after a signal: error %v, want %v", err, context.Canceled)
	}
	// A failing writer: its error, and no goroutine left writing.
	td.frame = fr
	if err := td.writeContent(&failAfter{1000}); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("failing writer: error %v, want disk full", err)
	}
}

// failAfter is a writer that fails with "disk full" once n bytes were
// written.
type failAfter struct{ n int }

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}
