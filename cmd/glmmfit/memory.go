// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/sparsevi/sparsevi/glmm"
)

// The memory model of a fit: bytes per observation and per subject's
// local variable, from whole runs on simulated Bernoulli data (7
// observations a subject, a random intercept) after the memory diet of
// reading and building. At 10^6 subjects and p = 5 the peak RSS was
// 0.97 GB (text) and 1.83 GB with -format json, whose document is built in
// memory, and the model says 2.13 GB; on sim_logit_n100000, 131 MB and
// 157 MB against 242 MB; on Diabetes (p = 46), 161 MB against 247 MB.
// The constants before the diet (450 and 800) said 5.25 GB at 10^6 and
// refused 10^7 subjects on a 24 GB machine. The covariance terms grow with
// r^2. Since the end of vi.Fit copies nothing (2026-11-27) the peaks are
// lower still, and the constants stay: benchmarks/memory's whole run at
// 10^6 peaked at 0.70 GB by GVA and 0.85 GB by the default, and
// benchmarks/scaling at 10^7 at 7.28 GB by GVA and 8.59 GB by the default
// (simulated data, no JSON document), where the model says 20.7 GB.
const (
	bytesPerObs     = 100
	bytesPerSubject = 700
	bytesFixed      = 64 << 20 // the runtime, the binary and small tables
)

// fitMemory estimates the peak memory of fitting m.
func fitMemory(m *glmm.Model) float64 {
	n, r, g := m.Dims()
	per := float64(bytesPerSubject) * float64(max(r, 1)*max(r, 1)+g*max(r, 1)) / float64(1+3)
	return bytesFixed + bytesPerObs*float64(m.NumObs())*float64(max(r, 1)+m.P())/float64(1+4) + per*float64(n)
}

// availableMemory returns the machine's available memory in bytes
// (MemAvailable of /proc/meminfo), or 0 when it is not known.
func availableMemory() float64 { return procKB("/proc/meminfo", "MemAvailable:") }

// residentMemory returns this process's resident memory in bytes (VmRSS
// of /proc/self/status), or 0 when it is not known.
func residentMemory() float64 { return procKB("/proc/self/status", "VmRSS:") }

// procKB returns in bytes the value in kB of the line of file that begins
// with key, or 0 when there is none.
func procKB(file, key string) float64 {
	f, err := os.Open(file)
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == key {
			kb, err := strconv.ParseFloat(fields[1], 64)
			if err == nil {
				return kb * 1024
			}
		}
	}
	return 0
}

// parseBytes reads a size such as 512MB, 4GB, 2GiB or 1e9 (bytes).
func parseBytes(s string) (float64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	mult := 1.0
	for _, u := range []struct {
		suffix string
		m      float64
	}{{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30}, {"TIB", 1 << 40}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1}} {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.m
			break
		}
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v > 0) || v*mult > 1e18 {
		return 0, fmt.Errorf("want a positive size such as 512MB or 4GB, not %q", s)
	}
	return v * mult, nil
}

// The machine's available memory and this process's resident memory,
// variables so that the tests set them.
var (
	memAvailable = availableMemory
	memResident  = residentMemory
)

// checkMemory refuses a fit whose estimated memory exceeds the limit:
// -max-memory if given, else the machine's available memory and what
// this run already holds. The estimate is the whole run's peak, the data
// read so far included, which the machine's available memory no longer
// counts: at 10^7 Bernoulli subjects (7 rows each) the run held about 10 GB
// after reading, the machine had 14.7 GB more, and the fit, estimated at
// 20.7 GB, was refused on a 24 GB machine.
func checkMemory(m *glmm.Model, limit float64) error {
	need := fitMemory(m)
	what := "-max-memory"
	if limit == 0 {
		if avail := memAvailable(); avail > 0 {
			held := memResident()
			limit = avail + held
			what = fmt.Sprintf("the machine's available memory and the %.3g GB this run holds", held/1e9)
		}
	}
	if limit > 0 && need > limit {
		n, r, _ := m.Dims()
		return fmt.Errorf("the fit needs about %.3g GB (%d observations, %d subjects, %d random effects each), more than %s (%.3g GB): use a machine with more memory, or fit a subset", need/1e9, m.NumObs(), n, r, what, limit/1e9)
	}
	return nil
}
