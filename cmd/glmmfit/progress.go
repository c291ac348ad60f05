// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/sparsevi/sparsevi/vi"
)

// progress draws a progress bar of a fit on standard error: iterations out
// of -max-iter, the windowed lower bound and the elapsed time. It draws
// nothing when standard error is not a terminal or -quiet is set, so logs
// and pipes stay clean.
type progress struct {
	bar *progressbar.ProgressBar
}

// newProgress returns the progress display on stderr when it is a
// terminal: a spinner naming the phase (reading, start, fit, final bound,
// summaries, writing), and during the fit the bound and how near the
// convergence rule is (not a share of the iteration limit, which a
// converging fit never approaches).
func newProgress(stderr *os.File, quiet bool) *progress {
	if quiet || stderr == nil || !term.IsTerminal(int(stderr.Fd())) {
		return &progress{}
	}
	bar := progressbar.NewOptions(-1,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription("reading the data"),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSpinnerType(14),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	bar.RenderBlank()
	return &progress{bar: bar}
}

// reading returns the callback that shows how much of the data file has
// been read, or nil when nothing is displayed.
func (p *progress) reading(path string) func(int64) {
	if p.bar == nil {
		return nil
	}
	name := filepath.Base(path)
	var shown int64
	return func(read int64) {
		if read-shown < 1<<20 {
			return
		}
		shown = read
		p.phase(fmt.Sprintf("reading: %s, %.1f MB", name, float64(read)/1e6))
	}
}

func (p *progress) update(s vi.Progress) {
	if p.bar == nil {
		return
	}
	if s.Final {
		p.bar.Describe(fmt.Sprintf("final bound: after %d iterations, estimating the lower bound from fresh draws", s.Iter))
	} else {
		p.bar.Describe(fmt.Sprintf("fit: iteration %d, ELBO %.2f; flat windows %d/%d, step refinements %d/%d",
			s.Iter, s.LowerBound, s.Flat, s.Patience, s.Refined, s.Refine))
	}
	p.bar.Add(1)
}

// phase names the phase outside the iterations.
func (p *progress) phase(what string) {
	if p.bar == nil {
		return
	}
	p.bar.Describe(what)
	p.bar.Add(1)
}

func (p *progress) callback() func(vi.Progress) {
	if p.bar == nil {
		return nil
	}
	return p.update
}

func (p *progress) done() {
	if p.bar != nil {
		p.bar.Clear()
	}
}
