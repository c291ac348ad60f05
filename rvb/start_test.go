// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"context"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/vi"
)

// TestStartIsRVBs checks that Start's global block is RVB's own: the mean
// and the marginal sds of theta_g that its precision gives agree with those
// of a converged fit (a long one, its step refined twice) within a quarter
// of a posterior sd and 10%, where the model's start, GVA-like, gives the
// random-effect parameters sds too small by more than 20%.
func TestStartIsRVBs(t *testing.T) {
	if testing.Short() {
		t.Skip("converged fits")
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []struct {
		fam  glmm.Family
		n, r int
		meth Method
	}{
		{glmm.Bernoulli, 1500, 1, RVB1}, {glmm.Bernoulli, 1500, 1, RVB2}, {glmm.Poisson, 400, 2, RVB1}, {glmm.Binomial, 600, 1, RVB1},
	} {
		m := randomModel(t, rng, c.fam, c.n, 3, c.r, false)
		n, r, g := m.Dims()
		p := m.P()
		ctx := context.Background()
		tg, err := NewAtStart(testPool(t), m, c.meth)
		if err != nil {
			t.Fatal(err)
		}
		theta := make([]float64, n*r+g)
		prec := make([]float64, n*(r*(r+1)/2+g*r)+g*(g+1)/2)
		if err := tg.Start(testPool(t), theta, prec); err != nil {
			t.Fatal(err)
		}
		startSD := globalSDs(prec[len(prec)-g*(g+1)/2:], g)

		res, err := vi.Fit(ctx, tg, vi.Settings{Method: vi.BlockDiag, Seed: 3, Refine: 2, Window: 100, FinalDraws: 2})
		if err != nil {
			t.Fatal(err)
		}
		cov := res.GlobalCov()
		for k := range g {
			sd := math.Sqrt(cov.At(k, k))
			mean := res.Mu[n*r+k]
			if d := math.Abs(theta[n*r+k] - mean); d > 0.25*sd {
				t.Errorf("%v %v r=%d: start's theta_g[%d] %.4f, the fit's %.4f ± %.4f", c.fam, c.meth, r, k, theta[n*r+k], mean, sd)
			}
			if q := startSD[k] / sd; q < 0.9 || q > 1.1 {
				t.Errorf("%v %v r=%d: start's sd of theta_g[%d] %.4f, the fit's %.4f (ratio %.3f)", c.fam, c.meth, r, k, startSD[k], sd, q)
			}
		}
		if c.fam == glmm.Bernoulli {
			mprec := make([]float64, len(prec))
			if err := m.Start(testPool(t), make([]float64, len(theta)), mprec); err != nil {
				t.Fatal(err)
			}
			// The Schur complement of the model's precision.
			schur := schurSDs(mprec, n, r, g)
			if q := schur[p] / math.Sqrt(cov.At(p, p)); q > 0.8 {
				t.Errorf("%v %v: the model's start gives omega sd %.4f, the fit %.4f: the test no longer tells the starts apart", c.fam, c.meth, schur[p], math.Sqrt(cov.At(p, p)))
			}
		}
	}
}

// TestStartDeterministic checks that Start gives the same bits with one
// and with two threads.
func TestStartDeterministic(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	m := randomModel(t, rng, glmm.Bernoulli, 700, 3, 2, false)
	n, r, g := m.Dims()
	run := func(procs int) ([]float64, []float64) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		tg, err := New(m, RVB2)
		if err != nil {
			t.Fatal(err)
		}
		theta := make([]float64, n*r+g)
		prec := make([]float64, n*(r*(r+1)/2+g*r)+g*(g+1)/2)
		if err := tg.Start(testPool(t), theta, prec); err != nil {
			t.Fatal(err)
		}
		return theta, prec
	}
	th1, pr1 := run(1)
	th2, pr2 := run(2)
	for k := range th1 {
		if th1[k] != th2[k] {
			t.Fatalf("theta[%d]: %v with one thread, %v with two", k, th1[k], th2[k])
		}
	}
	for k := range pr1 {
		if pr1[k] != pr2[k] {
			t.Fatalf("precision[%d]: %v with one thread, %v with two", k, pr1[k], pr2[k])
		}
	}
}

// globalSDs returns the marginal sds of the packed g×g precision sg.
func globalSDs(sg []float64, g int) []float64 {
	s := mat.NewSymDense(g, nil)
	for c := range g {
		for e := 0; e <= c; e++ {
			s.SetSym(c, e, sg[c*(c+1)/2+e])
		}
	}
	return lastSDs(s, g)
}

// schurSDs returns the marginal sds of theta_g under the arrowhead
// precision prec (dense reference: the whole matrix inverted).
func schurSDs(prec []float64, n, r, g int) []float64 {
	// The compressed precision has a factor's layout; its lower triangle
	// read densely and mirrored is the precision.
	tri := arrowhead.Wrap(n, r, g, prec).ToTriDense()
	d := n*r + g
	s := mat.NewSymDense(d, nil)
	for i := range d {
		for j := 0; j <= i; j++ {
			s.SetSym(i, j, tri.At(i, j))
		}
	}
	return lastSDs(s, g)
}

// lastSDs returns the sds of the last k variables under the precision s.
func lastSDs(s *mat.SymDense, k int) []float64 {
	var ch mat.Cholesky
	if !ch.Factorize(s) {
		panic("precision not positive definite")
	}
	var cov mat.SymDense
	if err := ch.InverseTo(&cov); err != nil {
		panic(err)
	}
	d := s.SymmetricDim()
	sd := make([]float64, k)
	for j := range sd {
		sd[j] = math.Sqrt(cov.At(d-k+j, d-k+j))
	}
	return sd
}

// testPool returns a pool of GOMAXPROCS workers that lives until the test
// ends.
func testPool(tb testing.TB) *parallel.Pool {
	p := parallel.NewPool(tb.Context(), 0)
	tb.Cleanup(func() { p.Close() })
	return p
}
