package vi

import (
	"context"
	"fmt"
	"math"

	"github.com/sparsevi/sparsevi/parallel"
)

// Starter is implemented by targets that can find a good starting point
// cheaply, such as an approximate posterior mode and the curvature there.
// Fit uses it for InitMode; targets without it start as with InitPaper.
type Starter interface {
	// Start writes a starting mean (length d = n*r + G, laid out as theta)
	// into theta and positive precisions, the diagonal of the negative
	// Hessian of log p at theta or an approximation of it, into prec.
	Start(ctx context.Context, theta, prec []float64) error
}

// initMode starts the mean and the factor's diagonal from the target's
// Starter, if it has one.
func initMode(ctx context.Context, b *base, setDiag func(prec []float64)) error {
	s, ok := b.target.(Starter)
	if !ok {
		return nil
	}
	prec := make([]float64, b.d)
	if err := s.Start(ctx, b.lam[:b.d], prec); err != nil {
		return fmt.Errorf("vi: initialisation: %w", err)
	}
	for j, p := range prec {
		if !(p > 0) || math.IsInf(p, 0) || math.IsNaN(b.lam[j]) || math.IsInf(b.lam[j], 0) {
			return fmt.Errorf("vi: initialisation: entry %d of the start has mean %v and precision %v", j, b.lam[j], p)
		}
	}
	setDiag(prec)
	return nil
}

// newFamily returns the approximation family of the settings.
func newFamily(t Target, set Settings, pool *parallel.Pool) (family, error) {
	switch set.Method {
	case GVA:
		return newGVA(t, set, pool), nil
	case RVB:
		return newRVB(t, set, pool), nil
	}
	return nil, fmt.Errorf("vi: unknown method %v", set.Method)
}
