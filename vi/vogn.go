package vi

import (
	"context"
	"time"
)

// vognFamily is implemented by the families that support VOGN.
type vognFamily interface {
	family
	vognStep(iter uint64, alpha float64) (h float64, err error)
}

// runVOGN is the loop of variational online Gauss-Newton.
func runVOGN(ctx context.Context, f vognFamily, set Settings, res *Result, start time.Time, good []float64, goodIter *int) (error, *DivergedError) {
	panic("vi: VOGN is not implemented yet")
}
