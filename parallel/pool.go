package parallel

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

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

	jobs []chan job
	done sync.WaitGroup

	// State of the loop in progress.
	next   atomic.Int64
	errs   []error
	closed bool
}

type job struct {
	fn     func(chunk int) error
	chunks int
}

// NewPool starts a pool of the given number of workers. A value of zero or
// less uses runtime.GOMAXPROCS(0). The pool stops when ctx is cancelled or
// Close is called.
func NewPool(ctx context.Context, workers int) *Pool {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &Pool{workers: workers, cancel: cancel}
	if workers == 1 {
		p.ctx = ctx
		return p
	}
	p.group, p.ctx = errgroup.WithContext(ctx)
	p.group.SetLimit(workers - 1)
	// The calling goroutine is a worker too, so workers-1 goroutines suffice.
	p.jobs = make([]chan job, workers-1)
	for w := range p.jobs {
		ch := make(chan job, 1)
		p.jobs[w] = ch
		p.group.Go(func() error {
			for j := range ch {
				p.work(j)
				p.done.Done()
			}
			return nil
		})
	}
	return p
}

// Workers returns the number of workers of the pool.
func (p *Pool) Workers() int { return p.workers }

// Context returns the context the pool's loops observe.
func (p *Pool) Context() context.Context { return p.ctx }

// Run calls fn(k) once for every chunk k in [0, chunks), spread over the
// workers, and waits for all of them. It returns the error of the
// lowest-numbered chunk that failed, so the error too does not depend on the
// scheduling. If the pool's context is cancelled, chunks not yet started are
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
	if cap(p.errs) < chunks {
		p.errs = make([]error, chunks)
	}
	p.errs = p.errs[:chunks]
	clear(p.errs)
	p.next.Store(0)
	j := job{fn: fn, chunks: chunks}
	helpers := max(0, min(len(p.jobs), chunks-1))
	p.done.Add(helpers)
	for w := range helpers {
		p.jobs[w] <- j
	}
	p.work(j)
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
		k := int(p.next.Add(1) - 1)
		if k >= j.chunks {
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
