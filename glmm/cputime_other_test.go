// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !unix

package glmm_test

import "time"

// processCPU is not available here.
func processCPU() (time.Duration, bool) { return 0, false }
