// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package prefetch

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"testing/iotest"
	"time"
)

// TestReader checks that the bytes read through a Reader are the source's,
// for buffers smaller, equal to and larger than the source and sources
// that return a few bytes at a time, and that the source's error comes
// after its last bytes.
func TestReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]byte, 100_003)
	for i := range src {
		src[i] = byte(rng.IntN(256))
	}
	for _, c := range []struct {
		name        string
		size, depth int
		r           func() io.Reader
	}{
		{"small buffers", 7, 1, func() io.Reader { return bytes.NewReader(src) }},
		{"exact", len(src), 2, func() io.Reader { return bytes.NewReader(src) }},
		{"large", 1 << 20, 3, func() io.Reader { return bytes.NewReader(src) }},
		{"one byte at a time", 4096, 2, func() io.Reader { return iotest.OneByteReader(bytes.NewReader(src)) }},
		{"half reads", 1000, 2, func() io.Reader { return iotest.HalfReader(bytes.NewReader(src)) }},
	} {
		p := NewReader(c.r(), c.size, c.depth)
		got, err := io.ReadAll(iotest.HalfReader(p))
		p.Close()
		if err != nil || !bytes.Equal(got, src) {
			t.Errorf("%s: read %d bytes (error %v), want the %d of the source", c.name, len(got), err, len(src))
		}
	}
	// A source's io.ErrUnexpectedEOF (a truncated gzip stream) is not
	// taken for the end.
	p0 := NewReader(io.MultiReader(bytes.NewReader(src[:10]), iotest.ErrReader(io.ErrUnexpectedEOF)), 4, 1)
	if got, err := io.ReadAll(p0); err != io.ErrUnexpectedEOF || len(got) != 10 {
		t.Errorf("truncated source: read %d bytes, error %v; want 10, then %v", len(got), err, io.ErrUnexpectedEOF)
	}
	p0.Close()
	bad := errors.New("source failed")
	p := NewReader(io.MultiReader(bytes.NewReader(src[:10]), iotest.ErrReader(bad)), 4, 1)
	got, err := io.ReadAll(p)
	p.Close()
	if !errors.Is(err, bad) || !bytes.Equal(got, src[:10]) {
		t.Errorf("failing source: read %q, error %v; want %q, then %v", got, err, src[:10], bad)
	}
}

// TestCloseStops checks that Close ends the goroutine of a Reader whose
// caller stopped early, while the source still has bytes.
func TestCloseStops(t *testing.T) {
	before := runtime.NumGoroutine()
	for range 20 {
		p := NewReader(bytes.NewReader(make([]byte, 1<<20)), 64, 2)
		var b [10]byte
		if _, err := p.Read(b[:]); err != nil {
			t.Fatal(err)
		}
		p.Close()
	}
	deadline := 1000 // 10 s: a loaded machine may take a while to run the goroutines
	for runtime.NumGoroutine() > before && deadline > 0 {
		time.Sleep(10 * time.Millisecond)
		deadline--
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after closing, %d before", n, before)
	}
}
