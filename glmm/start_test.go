package glmm_test

import (
	"context"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
)

func simulated(t *testing.T, family string, cov [][]float64, beta []float64, n int, seed uint64) *glmm.Model {
	t.Helper()
	fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: family, Subjects: n, Obs: 7, Beta: beta, RECov: cov, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	f, err := formula.Parse(truth.Formula)
	if err != nil {
		t.Fatal(err)
	}
	fam, _ := glmm.ParseFamily(family)
	d, err := formula.Build(f, fr, formula.Options{Family: fam})
	if err != nil {
		t.Fatal(err)
	}
	return d.Model()
}

// TestStart: the start is the conditional mode in (b, beta) given omega
// (gradient zero), its local precision blocks are the negative Hessians
// there, the arrowhead precision is positive definite, and beta is near
// the truth on a large simulation.
func TestStart(t *testing.T) {
	for _, tc := range []struct {
		family string
		cov    [][]float64
	}{
		{"bernoulli", [][]float64{{1}}},
		{"poisson", [][]float64{{0.5, 0.1}, {0.1, 0.3}}},
		{"binomial", [][]float64{{0.8, 0.1, 0}, {0.1, 0.4, 0}, {0, 0, 0.2}}},
	} {
		t.Run(tc.family, func(t *testing.T) {
			beta := []float64{-0.5, 0.5, 0.3}
			m := simulated(t, tc.family, tc.cov, beta, 2000, 11)
			n, r, g := m.Dims()
			p := m.P()
			theta := make([]float64, n*r+g)
			prec := make([]float64, arrowhead.Len(n, r, g))
			if err := m.Start(context.Background(), theta, prec); err != nil {
				t.Fatal(err)
			}
			thetaG := theta[n*r:]
			ws := m.NewWorkspace()
			gl := make([]float64, n*r)
			gg := make([]float64, g)
			if _, err := m.Local(ws, 0, n, thetaG, theta[:n*r], gl, gg); err != nil {
				t.Fatal(err)
			}
			m.Global(thetaG, gg)
			var worst float64
			for _, x := range gl {
				worst = math.Max(worst, math.Abs(x))
			}
			for _, x := range gg[:p] {
				worst = math.Max(worst, math.Abs(x)/float64(n))
			}
			if worst > 1e-4 {
				t.Errorf("gradient in (b, beta) at the start: %g, want ~0", worst)
			}
			// S_i against the negative Hessian.
			tri := r * (r + 1) / 2
			stride := tri + g*r
			h := make([]float64, r*r)
			for _, i := range []int{0, n / 2, n - 1} {
				m.LocalHessian(ws, i, thetaG, theta[i*r:(i+1)*r], h)
				for a := range r {
					for b := 0; b <= a; b++ {
						got, want := prec[i*stride+a*(a+1)/2+b], -h[a*r+b]
						if math.Abs(got-want) > 1e-8*math.Max(1, math.Abs(want)) {
							t.Errorf("subject %d: S_i(%d,%d) = %v, want %v", i, a, b, got, want)
						}
					}
				}
			}
			tf := arrowhead.Wrap(n, r, g, append([]float64(nil), prec...))
			sum := make([]float64, g*(g+1)/2)
			if err := tf.CholRange(0, n, tf.Data(), sum); err != nil {
				t.Fatal(err)
			}
			if err := tf.CholGlobal(tf.Data(), sum); err != nil {
				t.Fatal(err)
			}
			for k, b := range beta {
				if d := math.Abs(thetaG[k] - b); d > 0.15 {
					t.Errorf("beta[%d] = %.3f at the start, truth %.3f", k, thetaG[k], b)
				}
			}
		})
	}
}
