// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package benchio

import (
	"math"
	"os"
	"strconv"
	"strings"
)

// LoadAverage returns the 1-minute load average of the machine (Linux), or
// NaN where it is not available. Other jobs on the cores slow timed runs
// down, so every timing is recorded with it.
func LoadAverage() float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return math.NaN()
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return math.NaN()
	}
	return v
}
