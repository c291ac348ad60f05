// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parallel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
	"testing"
)

func TestChunkingBounds(t *testing.T) {
	for _, tc := range []struct{ n, size, chunks int }{
		{0, 4, 0}, {1, 4, 1}, {4, 4, 1}, {5, 4, 2}, {17, 3, 6}, {10, 0, 1},
	} {
		c := NewChunking(tc.n, tc.size)
		if c.Len() != tc.chunks {
			t.Errorf("n=%d size=%d: %d chunks, want %d", tc.n, tc.size, c.Len(), tc.chunks)
		}
		next := 0
		for k := range c.Len() {
			lo, hi := c.Bounds(k)
			if lo != next || hi <= lo || hi > tc.n {
				t.Fatalf("n=%d size=%d chunk %d: [%d,%d) after %d", tc.n, tc.size, k, lo, hi, next)
			}
			next = hi
		}
		if next != tc.n {
			t.Errorf("n=%d size=%d: chunks cover %d subjects", tc.n, tc.size, next)
		}
	}
}

// reduce sums noisy terms over chunks in chunk order; the result must not
// depend on the number of workers.
func reduce(t *testing.T, workers int, seed uint64) float64 {
	c := NewChunking(1000, 7)
	p := NewPool(context.Background(), workers)
	defer p.Close()
	st := NewStreams(seed, c.Len())
	partial := make([]float64, c.Len())
	var total float64
	for iter := range uint64(3) {
		err := p.Run(c.Len(), func(k int) error {
			rng := st.At(iter, k)
			lo, hi := c.Bounds(k)
			s := 0.0
			for i := lo; i < hi; i++ {
				s += rng.NormFloat64() * math.Exp(float64(i%13))
			}
			partial[k] = s
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range partial {
			total += s
		}
	}
	return total
}

func TestDeterministicAcrossWorkers(t *testing.T) {
	want := reduce(t, 1, 42)
	for _, w := range []int{2, 3, 8} {
		if got := reduce(t, w, 42); got != want {
			t.Errorf("workers=%d: sum %v, want bit-identical %v", w, got, want)
		}
	}
	if reduce(t, 2, 43) == want {
		t.Error("a different seed gave the same sum")
	}
}

func TestRunVisitsEveryChunkOnce(t *testing.T) {
	for _, w := range []int{1, 2, 5} {
		p := NewPool(context.Background(), w)
		for _, chunks := range []int{0, 1, 3, 100} {
			count := make([]int, chunks)
			if err := p.Run(chunks, func(k int) error { count[k]++; return nil }); err != nil {
				t.Fatal(err)
			}
			for k, c := range count {
				if c != 1 {
					t.Errorf("workers=%d chunks=%d: chunk %d ran %d times", w, chunks, k, c)
				}
			}
		}
		p.Close()
	}
}

func TestRunReturnsLowestChunkError(t *testing.T) {
	for _, w := range []int{1, 2, 4} {
		p := NewPool(context.Background(), w)
		err := p.Run(50, func(k int) error {
			if k == 31 || k == 17 {
				return fmt.Errorf("chunk %d", k)
			}
			return nil
		})
		if err == nil || err.Error() != "chunk 17" {
			t.Errorf("workers=%d: error %v, want chunk 17", w, err)
		}
		// The pool is still usable after a failed loop.
		if err := p.Run(3, func(int) error { return nil }); err != nil {
			t.Errorf("workers=%d: run after failure: %v", w, err)
		}
		p.Close()
		if err := p.Run(1, func(int) error { return nil }); !errors.Is(err, ErrClosed) {
			t.Errorf("workers=%d: run after close: %v", w, err)
		}
	}
}

func TestCancellation(t *testing.T) {
	for _, w := range []int{1, 2} {
		ctx, cancel := context.WithCancel(context.Background())
		p := NewPool(ctx, w)
		var cancelled atomic.Bool
		var late atomic.Int64
		err := p.Run(1000, func(k int) error {
			if cancelled.Load() {
				late.Add(1)
			}
			if k == 5 {
				cancel()
				cancelled.Store(true)
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("workers=%d: error %v, want context.Canceled", w, err)
		}
		// Each other worker may have passed its check just before the
		// cancellation; no chunk may start after that.
		if n := late.Load(); n > int64(w-1) {
			t.Errorf("workers=%d: %d chunks started after cancellation", w, n)
		}
		p.Close()
	}
}

func TestStreamsIndependentOfOrder(t *testing.T) {
	s := NewStreams(7, 4)
	a := s.At(3, 2).Float64()
	s.At(9, 1).Float64()
	if b := s.At(3, 2).Float64(); a != b {
		t.Errorf("stream (3,2) changed after another was used: %v != %v", a, b)
	}
	if c := s.At(3, 1).Float64(); c == a {
		t.Error("chunks 1 and 2 share a stream")
	}
	if c := s.At(4, 2).Float64(); c == a {
		t.Error("iterations 3 and 4 share a stream")
	}
}

func TestRunAllocatesNothing(t *testing.T) {
	p := NewPool(context.Background(), 2)
	defer p.Close()
	st := NewStreams(1, 64)
	out := make([]float64, 64)
	fn := func(k int) error { out[k] = st.At(1, k).NormFloat64(); return nil }
	allocs := testing.AllocsPerRun(100, func() {
		if err := p.Run(64, fn); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("Run allocated %v times per call", allocs)
	}
}

func BenchmarkRun(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(fmt.Sprintf("workers=%d/chunks=400", w), func(b *testing.B) {
			p := NewPool(context.Background(), w)
			defer p.Close()
			out := make([]float64, 400)
			fn := func(k int) error { out[k] = float64(k); return nil }
			b.ReportAllocs()
			for b.Loop() {
				_ = p.Run(400, fn)
			}
		})
	}
}

func ExamplePool() {
	c := NewChunking(10, 4)
	p := NewPool(context.Background(), 2)
	defer p.Close()
	partial := make([]int, c.Len())
	_ = p.Run(c.Len(), func(k int) error {
		lo, hi := c.Bounds(k)
		for i := lo; i < hi; i++ {
			partial[k] += i
		}
		return nil
	})
	total := 0
	for _, s := range partial { // reduce in chunk order
		total += s
	}
	fmt.Println(c.Len(), "chunks, sum", total)
	// Output: 3 chunks, sum 45
}

// TestPolling: only a pool of NewPollingPool polls, and only while it is
// the one polling pool open; blocking pools do not count.
func TestPolling(t *testing.T) {
	if min(runtime.GOMAXPROCS(0), runtime.NumCPU()) < 2 {
		t.Skip("needs two cores")
	}
	ctx := context.Background()
	blocking := NewPool(ctx, 2)
	defer blocking.Close()
	if blocking.polling() {
		t.Error("a pool of NewPool polls")
	}
	a := NewPollingPool(ctx, 2)
	if !a.polling() {
		t.Error("the one polling pool open does not poll, beside a blocking pool")
	}
	b := NewPollingPool(ctx, 2)
	if a.polling() || b.polling() {
		t.Error("two polling pools open poll")
	}
	b.Close()
	if !a.polling() {
		t.Error("the polling pool left open does not poll")
	}
	a.Close()
	if c := NewPollingPool(ctx, 1); c.polling() {
		t.Error("a pool of one worker polls")
	}
}
