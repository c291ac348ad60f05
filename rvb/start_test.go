// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/small"
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
// and with two threads, with its default start and with the one from
// startWideSubjects on.
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
	compare(t, th1, th2, pr1, pr2)
	// The start from startWideSubjects on: a sample's curvature, both
	// draws of a pair in one pass.
	prev := startWideSubjects
	startWideSubjects = 100
	defer func() { startWideSubjects = prev }()
	th1, pr1 = run(1)
	th2, pr2 = run(2)
	compare(t, th1, th2, pr1, pr2)
}

// compare fails unless th1 and pr1 are th2 and pr2 bit for bit.
func compare(t *testing.T, th1, th2, pr1, pr2 []float64) {
	t.Helper()
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

// TestStartKept checks StartKept on 20,000 subjects, with its default
// start and with the one from startWideSubjects on (lowered here), whose
// curvature comes from a sample of the subjects, whose gradient takes
// both draws of a pair in one pass, and whose contributions, when it
// steps after its last gradient, are shifted to the sum the step
// predicts: the start is Start's, to rounding, or within 0.05 posterior
// sd of it (0.025 on the Bernoulli model's omega, from a sample of 2048
// subjects); each subject's contribution has the expectation of its
// gradient in theta_g over draws from its start's block (brute force, 16
// antithetic pairs a subject): over the subjects their differences have
// mean zero within 4 standard errors in every coordinate, and a mean
// square under a quarter of the reference's spread over the subjects, so
// that as a control variate they take out most of it. The Bernoulli
// model's wide start steps after its last gradient, so its contributions
// are shifted; the others' are not.
func TestStartKept(t *testing.T) {
	if testing.Short() {
		t.Skip("brute-force expectations over 20,000 subjects")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []struct {
		fam  glmm.Family
		r    int
		meth Method
	}{
		{glmm.Bernoulli, 1, RVB1}, {glmm.Poisson, 2, RVB2}, {glmm.Poisson, 2, RVB1},
	} {
		m := randomModel(t, rng, c.fam, 20_000, 3, c.r, false)
		n, r, g := m.Dims()
		start := func(kept []float64) (*Target, []float64, []float64) {
			tg, err := New(m, c.meth)
			if err != nil {
				t.Fatal(err)
			}
			theta := make([]float64, n*r+g)
			prec := make([]float64, tg.precLen())
			if kept == nil {
				err = tg.Start(testPool(t), theta, prec)
			} else {
				var ok bool
				ok, err = tg.StartKept(testPool(t), theta, prec, kept)
				if err == nil && !ok {
					t.Fatalf("%v %v: StartKept wrote no contributions", c.fam, c.meth)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			return tg, theta, prec
		}
		_, ref, refPrec := start(nil)
		sd := globalSDs(arrowhead.Wrap(n, r, g, refPrec).Global(), g)
		for _, wide := range []bool{false, true} {
			name := fmt.Sprintf("%v %v wide=%v", c.fam, c.meth, wide)
			if wide {
				prev := startWideSubjects
				startWideSubjects = 1000
				defer func() { startWideSubjects = prev }()
			}
			kept := make([]float64, n*g)
			tg, theta, prec := start(kept)
			if wide {
				startWideSubjects = 1_000_000
			}
			for j := range theta {
				tol := 1e-9 * (1 + math.Abs(ref[j]))
				if wide && j >= n*r {
					// The sample is 2048 subjects here.
					tol = 0.05 * sd[j-n*r]
				} else if wide {
					continue
				}
				if math.Abs(theta[j]-ref[j]) > tol {
					t.Errorf("%s: theta[%d] is %v; Start's is %v", name, j, theta[j], ref[j])
				}
			}
			want := expectedContribs(t, tg, theta, prec, theta[n*r:], 16, 13)
			diff, diffSq, refSum, refSq := make([]float64, g), make([]float64, g), make([]float64, g), make([]float64, g)
			for i := range n {
				for j, v := range want[i*g : (i+1)*g] {
					d := kept[i*g+j] - v
					diff[j] += d
					diffSq[j] += d * d
					refSum[j] += v
					refSq[j] += v * v
				}
			}
			for j := range g {
				mean, se := diff[j]/float64(n), math.Sqrt((diffSq[j]/float64(n)-math.Pow(diff[j]/float64(n), 2))/float64(n))
				spread := refSq[j]/float64(n) - math.Pow(refSum[j]/float64(n), 2)
				ms := diffSq[j] / float64(n)
				t.Logf("%s: coordinate %d: kept less expected %.3g ± %.2g a subject, mean square %.3g against a spread of %.3g", name, j, mean, se, ms, spread)
				if math.Abs(mean) > 4*se {
					t.Errorf("%s: coordinate %d: the contributions differ from their expectations by %.3g a subject, %.1f standard errors", name, j, mean, math.Abs(mean)/se)
				}
				if ms > spread/4 {
					t.Errorf("%s: coordinate %d: the contributions' mean square difference %.3g is not under a quarter of the spread %.3g", name, j, ms, spread)
				}
			}
		}
	}
}

// expectedContribs returns each subject's contribution to the gradient in
// thetaG (n*G values) in expectation over draws of its locals from the
// start theta, prec: the mean over pairs antithetic pairs, drawn from a
// stream of seed.
func expectedContribs(t *testing.T, tg *Target, theta, prec, thetaG []float64, pairs int, seed uint64) []float64 {
	t.Helper()
	n, r, g := tg.Dims()
	ps := arrowhead.Wrap(n, r, g, prec)
	ws := tg.NewWorkspace()
	si, rf := make([]float64, r*r), make([]float64, r*r)
	y, x, gl, gi := make([]float64, r), make([]float64, r), make([]float64, r), make([]float64, g)
	want := make([]float64, n*g)
	rng := rand.New(rand.NewPCG(seed, seed+1))
	for i := range n {
		small.UnpackSym(r, ps.Local(i), si)
		if !small.Chol(r, si, rf) {
			t.Fatalf("subject %d's block is not positive definite", i)
		}
		wi := want[i*g : (i+1)*g]
		for range pairs {
			for u := range y {
				y[u] = rng.NormFloat64()
			}
			small.LowerTSolve(r, rf, y)
			for _, sg := range []float64{1, -1} {
				for u := range x {
					x[u] = theta[i*r+u] + sg*y[u]
				}
				clear(gi)
				if _, err := tg.Local(ws, i, i+1, thetaG, x, gl, gi); err != nil {
					t.Fatal(err)
				}
				for j, v := range gi {
					wi[j] += v / float64(2*pairs)
				}
			}
		}
	}
	return want
}

// TestShiftKept checks shiftKept against brute force: contributions in
// expectation at the start's theta_g, shifted to a point half a
// posterior sd away in omega and a quarter in the intercept with the
// curvature there (central differences of the brute-force gradient), sum
// to the brute-force sum at the point within a tenth of how far that sum
// moved (4% at most here; the start's own steps at 10^6 subjects are a
// fifth of a sd).
func TestShiftKept(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	m := randomModel(t, rng, glmm.Bernoulli, 2000, 3, 1, false)
	n, r, g := m.Dims()
	tg, err := New(m, RVB1)
	if err != nil {
		t.Fatal(err)
	}
	theta := make([]float64, n*r+g)
	prec := make([]float64, tg.precLen())
	if err := tg.Start(testPool(t), theta, prec); err != nil {
		t.Fatal(err)
	}
	sd := globalSDs(arrowhead.Wrap(n, r, g, prec).Global(), g)
	last := slices.Clone(theta[n*r:])
	// The sum of the expected contributions at thetaG, and the gradient
	// of the log joint there.
	const pairs = 8
	sum := func(thetaG []float64) (contribs, sum, grad []float64) {
		contribs = expectedContribs(t, tg, theta, prec, thetaG, pairs, 19)
		sum = make([]float64, g)
		for i := range n {
			for j, v := range contribs[i*g : (i+1)*g] {
				sum[j] += v
			}
		}
		grad = slices.Clone(sum)
		tg.Global(thetaG, grad)
		return contribs, sum, grad
	}
	kept, have, grad := sum(last)
	hess := make([]float64, g*g)
	for e := range g {
		h := 0.01 * sd[e]
		tp, tm := slices.Clone(last), slices.Clone(last)
		tp[e] += h
		tm[e] -= h
		_, _, gp := sum(tp)
		_, _, gm := sum(tm)
		for c := range g {
			hess[c*g+e] = -(gp[c] - gm[c]) / (2 * h)
		}
	}
	next := slices.Clone(last)
	next[0] += 0.25 * sd[0]
	next[g-1] += 0.5 * sd[g-1]
	_, want, _ := sum(next)
	tg.shiftKept(kept, hess, grad, last, next)
	got := make([]float64, g)
	for i := range n {
		for j, v := range kept[i*g : (i+1)*g] {
			got[j] += v
		}
	}
	for c := range g {
		moved := math.Abs(want[c] - have[c])
		t.Logf("coordinate %d: shifted sum %.4f, brute force %.4f, at the start %.4f", c, got[c], want[c], have[c])
		if math.Abs(got[c]-want[c]) > moved/10 {
			t.Errorf("coordinate %d: the shifted contributions sum to %v; brute force gives %v (%v at the start)", c, got[c], want[c], have[c])
		}
	}
}
