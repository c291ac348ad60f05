// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// exitTerminated is the exit code after SIGTERM, as a shell reports a
// process that SIGTERM killed (128 + 15); batch schedulers send it.
const exitTerminated = 143

// interrupts turns the first SIGINT or SIGTERM into the cancellation of a
// context, so that the running phase stops and what was computed is
// written; a second signal exits at once.
type interrupts struct {
	ctx    context.Context
	cancel context.CancelFunc
	ch     chan os.Signal

	mu   sync.Mutex
	code int // exit code of the first signal, 0 before one
}

// catchInterrupts starts watching for SIGINT and SIGTERM; stop undoes it.
// The notice of the first signal goes to w.
func catchInterrupts(w io.Writer) *interrupts {
	in := &interrupts{ch: make(chan os.Signal, 2)}
	in.ctx, in.cancel = context.WithCancel(context.Background())
	signal.Notify(in.ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		for s := range in.ch {
			code := exitInterrupted
			if s == syscall.SIGTERM {
				code = exitTerminated
			}
			in.mu.Lock()
			first := in.code == 0
			if first {
				in.code = code
			}
			in.mu.Unlock()
			if !first {
				fmt.Fprintln(w, "\nglmmfit: second signal: stopping at once; nothing more is written")
				os.Exit(code)
			}
			fmt.Fprintln(w, "\nglmmfit: stopping: finishing the current step and writing what was computed (signal again to stop at once)")
			in.cancel()
		}
	}()
	return in
}

// exitCode returns the exit code of the signal that cancelled the context:
// 130 for SIGINT, 143 for SIGTERM, and 130 when the context was cancelled
// otherwise.
func (in *interrupts) exitCode() int {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.code == 0 {
		return exitInterrupted
	}
	return in.code
}

// stop stops watching for signals.
func (in *interrupts) stop() {
	signal.Stop(in.ch)
	close(in.ch)
	in.cancel()
}

// untilDone returns f's result, or ctx's error as soon as ctx ends while
// f runs on a goroutine of its own. It is for steps that do not look at
// ctx (building the model: at 10^6 subjects a signal took 2.5-4.3 s to
// stop the fit there), whose result nothing uses after a signal: the
// program stops, and f is left to finish or not as it exits.
func untilDone[T any](ctx context.Context, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	done := make(chan result, 1)
	go func() {
		v, err := f()
		done <- result{v, err}
	}()
	select {
	case r := <-done:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	}
}
