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

// maxRSSKB returns the peak resident set size of an exited child in KiB,
// or -1 if the system does not report it.
func maxRSSKB(ps *os.ProcessState) int64 {
	if ps == nil {
		return -1
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return -1
	}
	return rssKB(int64(ru.Maxrss))
}

// selfMaxRSSKB returns this process's peak resident set size so far in KiB,
// or -1.
func selfMaxRSSKB() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return -1
	}
	return rssKB(int64(ru.Maxrss))
}

// rssKB converts ru_maxrss to KiB: Linux and the BSDs report KiB, Darwin
// bytes.
func rssKB(v int64) int64 {
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return v / 1024
	}
	return v
}

// selfCPUSeconds returns the user and system CPU time of this process so
// far, or NaN.
func selfCPUSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return math.NaN()
	}
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}
