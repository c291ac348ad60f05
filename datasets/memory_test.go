// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync/atomic"
	"testing"
	"time"
)

// TestReadMemory: reading a CSV file of numbers in one pass holds little
// more than the columns it makes: the peak of the live heap while reading,
// sampled with the collector made eager, stays within 1.3 times the final
// columns when the reader knows the input's size (SizeHint; measured 1.16),
// and within 2 times when its columns grow as they are read (measured
// 1.4). Holding the fields' text until the end, as the reader did before,
// took 1.9, and a string per field 3.8.
func TestReadMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("allocates tens of megabytes")
	}
	if raceEnabled {
		t.Skip("the race detector's memory")
	}
	const rows = 200_000
	rng := rand.New(rand.NewPCG(1, 2))
	var b bytes.Buffer
	b.WriteString("id,y,x1,x2,x3\n")
	for i := range rows {
		fmt.Fprintf(&b, "%d,%d,%.6f,%.6f,%.6f\n", i/7, rng.IntN(2), rng.NormFloat64(), rng.NormFloat64(), rng.NormFloat64())
	}
	input := b.Bytes()
	defer debug.SetGCPercent(debug.SetGCPercent(5))
	for _, c := range []struct {
		hint  int64
		bound float64
	}{{int64(len(input)), 1.3}, {0, 2}} {
		runtime.GC()
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		metrics.Read(sample)
		base := sample[0].Value.Uint64()
		var peak atomic.Uint64
		done := make(chan struct{})
		go func() {
			s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
			for {
				select {
				case <-done:
					return
				default:
				}
				metrics.Read(s)
				if v := s[0].Value.Uint64(); v > peak.Load() {
					peak.Store(v)
				}
				time.Sleep(100 * time.Microsecond)
			}
		}()
		r := NewReader(bytes.NewReader(input))
		r.SizeHint = c.hint
		fr, err := r.Read()
		close(done)
		if err != nil {
			t.Fatal(err)
		}
		final := uint64(0)
		for _, c := range fr.cols {
			final += uint64(len(c.Num))*8 + uint64(len(c.Missing))
		}
		grown := peak.Load() - min(base, peak.Load())
		t.Logf("size hint %d: input %d bytes, final columns %d bytes, peak growth of the live heap %d bytes (%.2fx)", c.hint, len(input), final, grown, float64(grown)/float64(final))
		if float64(grown) > c.bound*float64(final) {
			t.Errorf("size hint %d: reading grew the heap by %d bytes, %.1f times the %d bytes of the columns", c.hint, grown, float64(grown)/float64(final), final)
		}
	}
	runtime.KeepAlive(input)
}
