//go:build !unix

package glmm_test

import "time"

// processCPU is not available here.
func processCPU() (time.Duration, bool) { return 0, false }
