// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"os"
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

func newProgress(stderr *os.File, quiet bool, maxIter int) *progress {
	if quiet || stderr == nil || !term.IsTerminal(int(stderr.Fd())) {
		return &progress{}
	}
	bar := progressbar.NewOptions(maxIter,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription("starting"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionSetPredictTime(false),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
	bar.RenderBlank()
	return &progress{bar: bar}
}

// update is the vi.Settings.Progress callback, called once per window.
func (p *progress) update(s vi.Progress) {
	if p.bar == nil {
		return
	}
	p.bar.Describe(fmt.Sprintf("ELBO %.2f", s.LowerBound))
	p.bar.Set(s.Iter)
}

// callback returns update, or nil when there is no bar.
func (p *progress) callback() func(vi.Progress) {
	if p.bar == nil {
		return nil
	}
	return p.update
}

// done erases the bar, so that the summary starts on a clean line.
func (p *progress) done() {
	if p.bar != nil {
		p.bar.Clear()
	}
}
