// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"os"
	"runtime/pprof"
)

// profiler writes a CPU profile of the first fit it is started and
// stopped around (-cpuprofile): the first stochastic fit's vi.Fit,
// without its target's build. A nil profiler does nothing.
type profiler struct {
	path    string
	file    *os.File
	running bool
}

// start starts the profile, unless it has run already.
func (p *profiler) start() error {
	if p == nil || p.file != nil {
		return nil
	}
	f, err := os.Create(p.path)
	if err != nil {
		return err
	}
	p.file, p.running = f, true
	return pprof.StartCPUProfile(f)
}

// stop ends the profile if it runs.
func (p *profiler) stop() {
	if p != nil && p.running {
		pprof.StopCPUProfile()
		p.running = false
	}
}

// close closes the profile's file.
func (p *profiler) close() {
	if p != nil && p.file != nil {
		p.file.Close()
	}
}
