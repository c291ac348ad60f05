// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"compress/gzip"
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
// read back, and that its checksums are sectionSums' of the document.
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
}

// TestWriteContent: the training data's content, whose CSV text is made
// on a goroutine of its own while it is compressed, is the base64 of the
// gzip of datasets.WriteCSV's text written in one piece, byte for byte,
// and reads back as the frame; a writer that fails ends it with the error.
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
	zw, _ := gzip.NewWriterLevel(b64, gzip.BestSpeed)
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
	in, err := td.input()
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := in.frame.Column("id"); in.frame.NumRows() != n || c.Str[n-1] != id[n-1] {
		t.Errorf("read back: %d rows, last id %q", in.frame.NumRows(), c.Str[n-1])
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
