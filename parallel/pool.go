// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parallel

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// ErrClosed is returned by Run on a Pool that has been closed.
var ErrClosed = errors.New("parallel: pool is closed")

// Pool runs chunked loops on a fixed set of worker goroutines.
//
// A Pool with one worker runs every loop on the calling goroutine. Run must
// not be called concurrently on the same Pool.
type Pool struct {
	workers int
	ctx     context.Context
	group   *errgroup.Group
	cancel  context.CancelFunc

	jobs    []chan job
	done    sync.WaitGroup
	pending atomic.Int32 // helpers still at work on the current loop

	// State of the loop in progress: each worker's share of the chunks,
	// and the chunks' errors.
	segs   []segment
	errs   []error
	closed bool
	poll   bool // a polling pool with a core for every worker (see polling)
	// counted reports a polling pool with helpers, counted in openPools.
	counted bool
}

type job struct {
	fn     func(chunk int) error
	self   int // the worker's segment
	active int // the number of segments
}

// segment is a worker's share of a loop's chunks, the range [front, back)
// packed into one word, so that its owner (taking chunks from the front)
// and the other workers (stealing from the back once their own share is
// done) claim chunks with one compare-and-swap. A worker thus runs long
// runs of adjacent chunks: on the 2-core machine passes over arrays too
// large for the cache scaled 1.6x with two workers that way and not at all
// with chunks dealt out alternately, which restarts every core's memory
// streams at every chunk. Each segment has a cache line of its own.
type segment struct {
	span atomic.Uint64
	_    [56]byte
}

func pack(front, back int) uint64 { return uint64(front)<<32 | uint64(back) }

func unpack(v uint64) (front, back int) { return int(v >> 32), int(v & (1<<32 - 1)) }

// take claims the front chunk of the segment, or its back chunk if back is
// set; ok is false once the segment is empty.
func (s *segment) take(back bool) (k int, ok bool) {
	for {
		v := s.span.Load()
		f, b := unpack(v)
		if f >= b {
			return 0, false
		}
		next := pack(f+1, b)
		k = f
		if back {
			next = pack(f, b-1)
			k = b - 1
		}
		if s.span.CompareAndSwap(v, next) {
			return k, true
		}
	}
}

// NewPool starts a pool of the given number of workers. A value of zero or
// less uses runtime.GOMAXPROCS(0). The pool stops when ctx is cancelled or
// Close is called. Its idle workers block until the next loop.
func NewPool(ctx context.Context, workers int) *Pool {
	return newPool(ctx, workers, false)
}

// NewPollingPool is NewPool with workers that, when idle, watch for the
// next loop for up to 200 microseconds before they block, and with a Run that
// watches its helpers finish rather than sleeping — while the pool has a
// core for every worker and no other polling pool is open, whose workers
// would compete for the cores the polling spends. It pays where loops
// come every few hundred microseconds with short serial steps between
// them, as a fit's iterations do: on 10^4 simulated subjects, two
// workers, an iteration took 1.57-1.58 ms (GVA, Bernoulli) and 1.83-1.85
// ms (GVA, Poisson random slope) in a polling pool against 2.01-2.07 and
// 2.85-2.94 ms in a blocking one (benchmarks/bench BenchmarkIteration, two
// interleaved runs).
func NewPollingPool(ctx context.Context, workers int) *Pool {
	return newPool(ctx, workers, true)
}

func newPool(ctx context.Context, workers int, poll bool) *Pool {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Pool{workers: workers, cancel: cancel, segs: make([]segment, workers)}
	if workers == 1 {
		p.ctx = ctx
		return p
	}
	if poll {
		openPools.Add(1)
		p.counted = true
		p.poll = min(runtime.GOMAXPROCS(0), runtime.NumCPU()) >= workers
	}
	p.group, p.ctx = errgroup.WithContext(ctx)
	p.group.SetLimit(workers - 1)
	// The calling goroutine is a worker too, so workers-1 goroutines suffice.
	p.jobs = make([]chan job, workers-1)
	for w := range p.jobs {
		ch := make(chan job, 1)
		p.jobs[w] = ch
		p.group.Go(func() error {
			for {
				if p.polling() {
					spinWhile(func() bool { return len(ch) == 0 }, pollFor)
				}
				j, ok := <-ch
				if !ok {
					return nil
				}
				p.work(j)
				p.pending.Add(-1)
				p.done.Done()
			}
		})
	}
	return p
}

// pollFor is how long an idle worker watches its channel before it blocks
// on it. A fitting loop calls Run every few hundred microseconds with short
// serial steps in between, and waking a blocked worker's thread took
// 100-200 microseconds on the 2-core virtual machine.
const pollFor = 200 * time.Microsecond

// openPools counts the polling pools with helpers that are not closed.
var openPools atomic.Int32

// polling reports whether idle workers poll for the next loop and Run
// watches its helpers rather than sleeping: only in a polling pool with a
// core for every worker and no other polling pool open.
func (p *Pool) polling() bool { return p.poll && openPools.Load() == 1 }

// spinWhile spins while cond holds, for at most limit (0: no limit),
// yielding its thread every yieldEvery so that other goroutines are not
// kept waiting for preemption.
func spinWhile(cond func() bool, limit time.Duration) {
	start := time.Now()
	yield := yieldEvery
	for i := 0; cond(); i++ {
		if i%64 != 63 {
			continue
		}
		el := time.Since(start)
		if limit > 0 && el > limit {
			return
		}
		if el > yield {
			runtime.Gosched()
			yield = el + yieldEvery
		}
	}
}

const yieldEvery = 20 * time.Microsecond

// Workers returns the number of workers of the pool.
func (p *Pool) Workers() int { return p.workers }

// Context returns the context the pool's loops observe.
func (p *Pool) Context() context.Context { return p.ctx }

// Run calls fn(k) once for every chunk k in [0, chunks), spread over the
// workers, and waits for all of them. Each worker starts on a contiguous
// share of the chunks and, when it is done, helps with the others'. It
// returns the error of the lowest-numbered chunk that failed, so the error
// too does not depend on the scheduling. If the pool's context is cancelled, chunks not yet started are
// skipped and Run returns the context's error.
//
// Run itself allocates nothing; fn should be created once and reused.
func (p *Pool) Run(chunks int, fn func(chunk int) error) error {
	if p.closed {
		return ErrClosed
	}
	if err := p.ctx.Err(); err != nil {
		return err
	}
	if chunks >= 1<<31 {
		panic("parallel: too many chunks")
	}
	if cap(p.errs) < chunks {
		p.errs = make([]error, chunks)
	}
	p.errs = p.errs[:chunks]
	clear(p.errs)
	helpers := max(0, min(len(p.jobs), chunks-1))
	active := helpers + 1
	for w := range active {
		p.segs[w].span.Store(pack(w*chunks/active, (w+1)*chunks/active))
	}
	p.done.Add(helpers)
	p.pending.Store(int32(helpers))
	for w := range helpers {
		p.jobs[w] <- job{fn: fn, self: w + 1, active: active}
	}
	p.work(job{fn: fn, active: active})
	if p.polling() {
		// The helpers are at work: watch them rather than sleep, as a
		// helper waking this goroutine puts it on its own thread's queue,
		// where it waits while the helper polls. Only for pollFor: by then
		// every chunk has been claimed, so a helper still at work has been
		// descheduled (another process shares the cores), and watching it
		// would take its core. Two test binaries at once, one sharing the
		// cores with the other, ran 8-11% faster so, and BenchmarkIteration
		// at 10^4 subjects on 2 workers, load 3-4, was no slower.
		spinWhile(func() bool { return p.pending.Load() > 0 }, pollFor)
	}
	p.done.Wait()
	for _, err := range p.errs {
		if err != nil {
			return err
		}
	}
	return p.ctx.Err()
}

func (p *Pool) work(j job) {
	for {
		k, ok := p.segs[j.self].take(false)
		for i := 1; !ok && i < j.active; i++ {
			k, ok = p.segs[(j.self+i)%j.active].take(true)
		}
		if !ok {
			return
		}
		if p.ctx.Err() != nil {
			return
		}
		p.errs[k] = j.fn(k)
	}
}

// Close stops the workers and waits for them to exit.
func (p *Pool) Close() error {
	if p.closed {
		return nil
	}
	p.closed = true
	if p.counted {
		openPools.Add(-1)
	}
	for _, ch := range p.jobs {
		close(ch)
	}
	var err error
	if p.group != nil {
		err = p.group.Wait()
	}
	p.cancel()
	return err
}

// For runs fn over the chunks of n subjects with at most workers goroutines.
// It is a one-shot convenience for work outside hot loops; it allocates.
func For(ctx context.Context, workers int, c Chunking, fn func(chunk, lo, hi int) error) error {
	p := NewPool(ctx, workers)
	defer p.Close()
	return p.Run(c.Len(), func(k int) error {
		lo, hi := c.Bounds(k)
		return fn(k, lo, hi)
	})
}
