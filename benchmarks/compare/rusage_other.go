// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !unix

package main

import (
	"math"
	"os"
)

// maxRSSMB is not available on this system.
func maxRSSMB(*os.ProcessState) float64 { return math.NaN() }
