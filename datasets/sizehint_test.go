// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestSizeHint checks that a Reader given a size hint, right or wrong,
// reads the same Frame as one without, and that with the file's own size
// (TextSize of the plain and of the gzip-compressed file) it allocates
// less than half of what growing the columns as it reads does.
func TestSizeHint(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var b bytes.Buffer
	b.WriteString("id,y,x1,g\n")
	for i := range 20_000 {
		fmt.Fprintf(&b, "%d,%d,%.6f,%s\n", i/7, rng.IntN(2), rng.NormFloat64(), []string{"a", "bb", "", "ccc"}[rng.IntN(4)])
	}
	input := b.Bytes()
	dir := t.TempDir()
	plain := filepath.Join(dir, "d.csv")
	if err := os.WriteFile(plain, input, 0o644); err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(input)
	zw.Close()
	packed := filepath.Join(dir, "d.csv.gz")
	if err := os.WriteFile(packed, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{plain, packed} {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		got := TextSize(f)
		f.Close()
		if got != int64(len(input)) {
			t.Errorf("TextSize(%s) = %d, want %d", filepath.Base(path), got, len(input))
		}
	}

	read := func(hint int64) (*Frame, uint64) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		r := NewReader(bytes.NewReader(input))
		r.SizeHint = hint
		fr, err := r.Read()
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return fr, after.TotalAlloc - before.TotalAlloc
	}
	want, grown := read(0)
	n := int64(len(input))
	for _, hint := range []int64{n, n / 10, 10 * n, 1} {
		got, alloc := read(hint)
		if d := framesEqual(got, want); d != "" {
			t.Errorf("hint %d: %s", hint, d)
		}
		if hint == n && 2*alloc > grown && !raceEnabled {
			t.Errorf("hint %d: read allocated %d bytes, %d without a hint", hint, alloc, grown)
		}
		t.Logf("hint %d: %d bytes allocated, %d without", hint, alloc, grown)
	}
}
