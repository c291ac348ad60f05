// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
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
