// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build unix

package main

import (
	"math"
	"os"
	"runtime"
	"syscall"
)

// maxRSSMB returns the peak resident set size of an exited process in MB,
// or NaN where the system does not report it.
func maxRSSMB(ps *os.ProcessState) float64 {
	if ps == nil {
		return math.NaN()
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return math.NaN()
	}
	if runtime.GOOS == "darwin" { // bytes there, KiB elsewhere
		return float64(ru.Maxrss) / 1e6
	}
	return float64(ru.Maxrss) * 1024 / 1e6
}
