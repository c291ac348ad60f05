// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"context"
	"math"
	"slices"
	"strconv"
	"testing"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/longtest"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/vi"
)

// TestStartFromSample: Start's start from a sample of the subjects (the
// rule of many subjects, SampleStartSubjects) ends within a fraction of
// a posterior sd of the fixed point of Start's rounds over all the
// subjects, where the sample's own start is several sds off; the
// subjects' means are within 0.02 sds of StartAt's there; its
// precision is positive definite, and 1 and 2 workers give the same
// bits.
func TestStartFromSample(t *testing.T) {
	for _, c := range []struct {
		family string
		cov    [][]float64
		beta   []float64
		disp   float64
		n      int
		size   int
		long   bool // a long check (SPARSEVI_LONG)
	}{
		{"bernoulli", [][]float64{{1}}, []float64{-1, 0.5, 0.5, -0.5, 1}, 0, 20000, 2000, false},
		{"poisson", [][]float64{{0.5, 0.1}, {0.1, 0.3}}, []float64{0.5, 0.3, -0.2, 0.2, 0.4}, 0, 20000, 4000, true},
		{"gaussian", [][]float64{{1}}, []float64{1, 0.5, 0.5, -0.5, 1}, 0.5, 10000, 1000, true},
	} {
		t.Run(c.family, func(t *testing.T) {
			if c.long {
				longtest.Require(t, "starts and fits "+strconv.Itoa(c.n)+" subjects")
			}
			m := simulatedDisp(t, c.family, c.cov, c.beta, c.disp, c.n, 11)
			n, r, g := m.Dims()
			run := func(workers int) (theta, prec []float64) {
				theta, prec = make([]float64, n*r+g), make([]float64, arrowhead.Len(n, r, g))
				pool := parallel.NewPool(context.Background(), workers)
				defer pool.Close()
				if err := m.StartFromSample(pool, c.size, 3, theta, prec); err != nil {
					t.Fatal(err)
				}
				return theta, prec
			}
			theta, prec := run(2)
			checkPositiveDefinite(t, n, r, g, prec)
			// Each subject's Gaussian, one Gaussian variational step from
			// the round at theta_s, is near StartAt's at theta_g (the
			// subject's Laplace mode there moved by two steps), in sds of
			// b_i given the rest.
			ref := make([]float64, n*r+g)
			refPool := parallel.NewPool(context.Background(), 2)
			if err := m.StartAt(refPool, theta[n*r:], ref, make([]float64, arrowhead.Len(n, r, g))); err != nil {
				t.Fatal(err)
			}
			refPool.Close()
			ps := arrowhead.WrapSym(n, r, g, prec)
			var worstB float64
			for i := range n {
				loc := ps.Local(i)
				for a := range r {
					sd := 1 / math.Sqrt(loc[a*(a+1)/2+a])
					worstB = max(worstB, math.Abs(theta[i*r+a]-ref[i*r+a])/sd)
				}
			}
			t.Logf("subjects' means: at most %.4f sd from StartAt's", worstB)
			if worstB > 0.02 {
				t.Errorf("a subject's mean is %.3f sds from StartAt's at theta_g", worstB)
			}
			if one, onePrec := run(1); !slices.Equal(one, theta) || !slices.Equal(onePrec, prec) {
				t.Error("1 and 2 workers give different starts")
			}
			// The fixed point of the rounds over all the subjects, from
			// the whole start.
			pool := parallel.NewPool(context.Background(), 0)
			defer pool.Close()
			whole := make([]float64, n*r+g)
			if err := m.StartWhole(pool, whole, make([]float64, arrowhead.Len(n, r, g))); err != nil {
				t.Fatal(err)
			}
			fixed, err := m.StartRoundsAt(pool, whole[n*r:], 40, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The sample's own start, and the posterior sds of a GVA fit.
			sub, err := m.Sample(c.size, 3)
			if err != nil {
				t.Fatal(err)
			}
			ns, _, _ := sub.Dims()
			own := make([]float64, ns*r+g)
			if err := sub.StartWhole(pool, own, make([]float64, arrowhead.Len(ns, r, g))); err != nil {
				t.Fatal(err)
			}
			res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 1, MaxIter: 200})
			if err != nil {
				t.Fatal(err)
			}
			cov := res.GlobalCov()
			var worstOwn float64
			for k := range g {
				if k >= m.P() && k < g-1 && !m.OmegaFree(k-m.P()) {
					continue
				}
				sd := math.Sqrt(cov.At(k, k))
				d := (theta[n*r+k] - fixed[k]) / sd
				dOwn := (own[ns*r+k] - fixed[k]) / sd
				worstOwn = max(worstOwn, math.Abs(dOwn))
				t.Logf("theta_g[%d]: %.3f sd from the fixed point (the sample's own start %.3f)", k, d, dOwn)
				if math.Abs(d) > 0.3 {
					t.Errorf("theta_g[%d] = %v is %.2f posterior sds from the rounds' fixed point %v", k, theta[n*r+k], d, fixed[k])
				}
			}
			if worstOwn < 1 {
				t.Errorf("the sample's own start is within %.2f sds of the fixed point: the test shows nothing", worstOwn)
			}
		})
	}
}

var _ = glmm.SampleStartSubjects
