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
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// denseRVB1 returns RVB1's centre lambda_i and factor L_i of subject i
// from dense matrices: P = Omega + Z' H Z, lambda = P^-1 Z'(r + H(eta^ -
// X beta - offset)), L = chol(P^-1), with H and r at the digamma
// expansion point.
func denseRVB1(m *glmm.Model, i int, thetaG []float64) (*mat.VecDense, *mat.TriDense) {
	_, r, _ := m.Dims()
	p := m.P()
	lo, hi := m.SubjectRows(i)
	ni := hi - lo
	x := mat.DenseCopyOf(m.FixedDesign()).Slice(lo, hi, 0, p)
	z := mat.NewDense(ni, r, append([]float64(nil), m.ZRows(i)...))
	y, tr, w := m.Response(i)
	off := m.Offsets(i)
	h := mat.NewDiagDense(ni, nil)
	work := mat.NewVecDense(ni, nil)
	xb := mat.NewVecDense(ni, nil)
	xb.MulVec(x, mat.NewVecDense(p, append([]float64(nil), thetaG[:p]...)))
	for j := range ni {
		e := DefaultExpansion(m.Family(), y[j], tr[j])
		d1, d2, _ := m.Family().Derivs(y[j], tr[j], e, 0)
		h.SetDiag(j, -w[j]*d2)
		work.SetVec(j, w[j]*d1-w[j]*d2*(e-xb.AtVec(j)-off[j]))
	}
	var prec mat.Dense
	var hz mat.Dense
	hz.Mul(h, z)
	prec.Mul(z.T(), &hz)
	prec.Add(&prec, glmm.Precision(thetaG[p:], r))
	var rhs mat.VecDense
	rhs.MulVec(z.T(), work)
	var lam mat.VecDense
	if err := lam.SolveVec(&prec, &rhs); err != nil {
		panic(err)
	}
	var cov mat.Dense
	if err := cov.Inverse(&prec); err != nil {
		panic(err)
	}
	sym := mat.NewSymDense(r, nil)
	for a := range r {
		for c := a; c < r; c++ {
			sym.SetSym(a, c, 0.5*(cov.At(a, c)+cov.At(c, a)))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(sym) {
		panic("covariance not positive definite")
	}
	var l mat.TriDense
	ch.LTo(&l)
	return &lam, &l
}

// TestMapLocal checks the map to the original scale against dense
// references (RVB1: the formulas of the centre and factor; RVB2: the
// gradient of the model's density vanishes at the centre), and that
// FromOriginal inverts it.
func TestMapLocal(t *testing.T) {
	for _, fam := range []glmm.Family{glmm.Poisson, glmm.Bernoulli, glmm.Binomial} {
		for r := 1; r <= 3; r++ {
			for _, method := range []Method{RVB1, RVB2} {
				t.Run(fmt.Sprintf("%v/r=%d/%v", fam, r, method), func(t *testing.T) {
					rng := rand.New(rand.NewPCG(uint64(r), uint64(fam)))
					m := randomModel(t, rng, fam, 6, 3, r, true)
					tg, err := New(m, method)
					if err != nil {
						t.Fatal(err)
					}
					n, _, g := tg.Dims()
					thetaG := make([]float64, g)
					for k := range thetaG {
						thetaG[k] = 0.5 * rng.NormFloat64()
					}
					bt := make([]float64, n*r)
					for k := range bt {
						bt[k] = rng.NormFloat64()
					}
					b := make([]float64, n*r)
					if err := tg.ToOriginal(thetaG, bt, b); err != nil {
						t.Fatal(err)
					}
					ws := tg.NewWorkspace()
					back := make([]float64, r)
					centre := make([]float64, r)
					zero := make([]float64, r)
					mws := m.NewWorkspace()
					gl := make([]float64, r)
					gg := make([]float64, g)
					for i := range n {
						bi := b[i*r : (i+1)*r]
						if err := tg.FromOriginal(ws, i, thetaG, bi, back); err != nil {
							t.Fatal(err)
						}
						for a := range r {
							if math.Abs(back[a]-bt[i*r+a]) > 1e-10*(1+math.Abs(bt[i*r+a])) {
								t.Errorf("subject %d: FromOriginal gives %v, want %v", i, back, bt[i*r:(i+1)*r])
							}
						}
						if err := tg.MapLocal(ws, i, thetaG, zero, centre); err != nil {
							t.Fatal(err)
						}
						if method == RVB1 {
							lam, l := denseRVB1(m, i, thetaG)
							for a := range r {
								want := lam.AtVec(a)
								for c := 0; c <= a; c++ {
									want += l.At(a, c) * bt[i*r+c]
								}
								if math.Abs(bi[a]-want) > 1e-10*(1+math.Abs(want)) {
									t.Errorf("subject %d: b[%d] = %v, dense reference %v", i, a, bi[a], want)
								}
							}
							continue
						}
						// The centre is the conditional mode.
						if _, err := m.Local(mws, i, i+1, thetaG, centre, gl, gg); err != nil {
							t.Fatal(err)
						}
						for a := range r {
							if math.Abs(gl[a]) > 1e-9 {
								t.Errorf("subject %d: gradient %v at the centre %v", i, gl, centre)
							}
						}
					}
				})
			}
		}
	}
}

// TestSummarize: with a global block of negligible spread, b_i under q is
// Gaussian with mean lambda_i + L_i mu_i and covariance
// L_i C_i C_i' L_i'; the sampled moments must match within their Monte
// Carlo error, and must not depend on the number of processors.
func TestSummarize(t *testing.T) {
	for _, method := range []Method{RVB1, RVB2} {
		for _, r := range []int{1, 2} {
			t.Run(fmt.Sprintf("%v/r=%d", method, r), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(9, uint64(r)))
				m := randomModel(t, rng, glmm.Binomial, 5, 2, r, false)
				tg, err := New(m, method)
				if err != nil {
					t.Fatal(err)
				}
				n, _, g := tg.Dims()
				res := &vi.Result{Method: vi.BlockDiag, N: n, R: r, G: g, Mu: make([]float64, n*r+g), Factor: make([]float64, blockdiag.Len(n, r, g))}
				for k := range res.Mu {
					res.Mu[k] = 0.5 * rng.NormFloat64()
				}
				c := blockdiag.Wrap(n, r, g, res.Factor)
				for i := range n {
					ci := c.Local(i)
					for a := range r {
						for q := 0; q <= a; q++ {
							ci[a*(a+1)/2+q] = 0.3 * rng.NormFloat64()
						}
						ci[a*(a+1)/2+a] = 0.5 + rng.Float64()
					}
				}
				cg := c.Global()
				for a := range g {
					cg[a*(a+1)/2+a] = 1e-9 * float64(a+1)
				}
				const draws = 4000
				s, err := tg.Summarize(context.Background(), 0, res.Mu, res.Factor, draws, 17)
				if err != nil {
					t.Fatal(err)
				}
				for a := range g {
					if s.GlobalMean[a] != res.Mu[n*r+a] || math.Abs(s.GlobalSD[a]-1e-9*float64(a+1)) > 1e-22 {
						t.Errorf("global %d: mean %v sd %v", a, s.GlobalMean[a], s.GlobalSD[a])
					}
				}
				thetaG := res.Mu[n*r:]
				ws := tg.NewWorkspace()
				zero := make([]float64, r)
				centre := make([]float64, r)
				lb := make([]float64, r*r)
				for i := range n {
					if err := tg.MapLocal(ws, i, thetaG, zero, centre); err != nil {
						t.Fatal(err)
					}
					// L_i: the map of unit vectors, less the centre.
					e := make([]float64, r)
					col := make([]float64, r)
					for q := range r {
						clear(e)
						e[q] = 1
						tg.MapLocal(ws, i, thetaG, e, col)
						for a := range r {
							lb[a*r+q] = col[a] - centre[a]
						}
					}
					ci := c.Local(i)
					cd := mat.NewTriDense(r, mat.Lower, nil)
					for a := range r {
						for q := 0; q <= a; q++ {
							cd.SetTri(a, q, ci[a*(a+1)/2+q])
						}
					}
					var lc mat.Dense
					lc.Mul(mat.NewDense(r, r, lb), cd)
					var cov mat.Dense
					cov.Mul(&lc, lc.T())
					for a := range r {
						mean := centre[a]
						for q := range r {
							mean += lb[a*r+q] * res.Mu[i*r+q]
						}
						sd := math.Sqrt(cov.At(a, a))
						if d := math.Abs(s.LocalMean[i*r+a] - mean); d > 5*sd/math.Sqrt(draws) {
							t.Errorf("subject %d, effect %d: mean %v, want %v (sd %v)", i, a, s.LocalMean[i*r+a], mean, sd)
						}
						if d := math.Abs(s.LocalSD[i*r+a] - sd); d > 5*sd/math.Sqrt(2*draws) {
							t.Errorf("subject %d, effect %d: sd %v, want %v", i, a, s.LocalSD[i*r+a], sd)
						}
					}
				}
				prev := runtime.GOMAXPROCS(1)
				s1, err := tg.Summarize(context.Background(), 0, res.Mu, res.Factor, draws, 17)
				runtime.GOMAXPROCS(prev)
				if err != nil {
					t.Fatal(err)
				}
				for j := range s.LocalMean {
					if s1.LocalMean[j] != s.LocalMean[j] || s1.LocalSD[j] != s.LocalSD[j] {
						t.Fatalf("summary %d differs with one processor", j)
					}
				}
			})
		}
	}
}

// TestLocalAllocatesNothing: the evaluation of every subject, with
// gradients, allocates nothing in steady state.
func TestLocalAllocatesNothing(t *testing.T) {
	for _, method := range []Method{RVB1, RVB2} {
		rng := rand.New(rand.NewPCG(1, 1))
		m := randomModel(t, rng, glmm.Poisson, 20, 3, 2, false)
		tg, err := New(m, method)
		if err != nil {
			t.Fatal(err)
		}
		n, r, g := tg.Dims()
		x := make([]float64, n*r+g)
		grad := make([]float64, len(x))
		ws := tg.NewWorkspace()
		allocs := testing.AllocsPerRun(20, func() {
			x[n*r] += 1e-3
			if _, err := tg.Local(ws, 0, n, x[n*r:], x[:n*r], grad[:n*r], grad[n*r:]); err != nil {
				t.Fatal(err)
			}
		})
		if allocs != 0 {
			t.Errorf("%v: Local allocates %v times per call", method, allocs)
		}
	}
}

// TestSummarizeMixture: with a global block that does spread, the marginal
// of b_i is a mixture over theta_g. Summarize's Rao-Blackwellised moments
// must match those of a long brute-force run that draws theta_g and b~_i
// jointly and maps each draw with MapLocal, within the two runs' Monte
// Carlo errors; it must stop early when the spread is negligible.
func TestSummarizeMixture(t *testing.T) {
	for _, method := range []Method{RVB1, RVB2} {
		for _, r := range []int{1, 2} {
			t.Run(fmt.Sprintf("%v/r=%d", method, r), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(11, uint64(r)))
				m := randomModel(t, rng, glmm.Poisson, 4, 2, r, false)
				tg, err := New(m, method)
				if err != nil {
					t.Fatal(err)
				}
				n, _, g := tg.Dims()
				res := &vi.Result{Method: vi.BlockDiag, N: n, R: r, G: g, Mu: make([]float64, n*r+g), Factor: make([]float64, blockdiag.Len(n, r, g))}
				for k := range res.Mu {
					res.Mu[k] = 0.3 * rng.NormFloat64()
				}
				c := blockdiag.Wrap(n, r, g, res.Factor)
				for i := range n {
					ci := c.Local(i)
					for a := range r {
						for q := 0; q < a; q++ {
							ci[a*(a+1)/2+q] = 0.2 * rng.NormFloat64()
						}
						ci[a*(a+1)/2+a] = 0.4 + 0.5*rng.Float64()
					}
				}
				cg := c.Global()
				for a := range g {
					for q := 0; q < a; q++ {
						cg[a*(a+1)/2+q] = 0.05 * rng.NormFloat64()
					}
					cg[a*(a+1)/2+a] = 0.3
				}
				const maxDraws = 3200
				s, err := tg.Summarize(context.Background(), 0, res.Mu, res.Factor, maxDraws, 5)
				if err != nil {
					t.Fatal(err)
				}
				if s.MaxRelMCSE > LocalRelMCSE && s.Draws != maxDraws {
					t.Errorf("stopped at %d draws with a relative error of %v", s.Draws, s.MaxRelMCSE)
				}

				// Brute force: joint draws of (theta_g, b~).
				const ref = 200_000
				nr := n * r
				ws := tg.NewWorkspace()
				theta := make([]float64, nr+g)
				z := make([]float64, nr+g)
				b := make([]float64, r)
				sum := make([]float64, nr)
				sum2 := make([]float64, nr)
				brng := rand.New(rand.NewPCG(99, 1))
				for range ref {
					for k := range z {
						z[k] = brng.NormFloat64()
					}
					c.DrawGlobal(theta, res.Mu, z)
					for i := range n {
						ci := c.Local(i)
						bt := make([]float64, r)
						for a := range r {
							v := res.Mu[i*r+a]
							for q := 0; q <= a; q++ {
								v += ci[a*(a+1)/2+q] * z[i*r+q]
							}
							bt[a] = v
						}
						if err := tg.MapLocal(ws, i, theta[nr:], bt, b); err != nil {
							t.Fatal(err)
						}
						for a := range r {
							sum[i*r+a] += b[a]
							sum2[i*r+a] += b[a] * b[a]
						}
					}
				}
				for j := range nr {
					mean := sum[j] / ref
					sd := math.Sqrt(sum2[j]/ref - mean*mean)
					// Summarize's error is at most MaxRelMCSE sd; the
					// reference's sd/sqrt(ref).
					tol := 4 * sd * math.Hypot(s.MaxRelMCSE, 1/math.Sqrt(ref))
					if d := math.Abs(s.LocalMean[j] - mean); d > tol {
						t.Errorf("effect %d: mean %v, brute force %v (tolerance %v)", j, s.LocalMean[j], mean, tol)
					}
					// The sd's relative error is at most that of a sample
					// sd from s.Draws draws (when the spread over theta_g
					// is all of it).
					if d := math.Abs(s.LocalSD[j] - sd); d > 4*sd*(1/math.Sqrt(2*float64(s.Draws-1))+1/math.Sqrt(2*ref)) {
						t.Errorf("effect %d: sd %v, brute force %v", j, s.LocalSD[j], sd)
					}
				}

				// A global block without spread needs only the first pass.
				for a := range g {
					for q := 0; q <= a; q++ {
						cg[a*(a+1)/2+q] = 0
					}
					cg[a*(a+1)/2+a] = 1e-12
				}
				s, err = tg.Summarize(context.Background(), 0, res.Mu, res.Factor, maxDraws, 5)
				if err != nil {
					t.Fatal(err)
				}
				if s.Draws != firstDraws || s.MaxRelMCSE > 1e-6 {
					t.Errorf("negligible spread: %d draws, relative error %v", s.Draws, s.MaxRelMCSE)
				}
			})
		}
	}
}
