// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !unix

package main

import (
	"math"
	"os"
)

// maxRSSKB is not available on this system.
func maxRSSKB(*os.ProcessState) int64 { return -1 }

// selfMaxRSSKB is not available on this system.
func selfMaxRSSKB() int64 { return -1 }

// selfCPUSeconds is not available on this system.
func selfCPUSeconds() float64 { return math.NaN() }
