// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// nestedModel simulates na levels of a with kb levels of b each and m rows
// a b level, x ~ N(0, 1), eta = beta0 + beta1 x + u_a + v_b.
func nestedModel(t testing.TB, fam glmm.Family, na, kb, m int, beta []float64, sa, sb, sd float64, seed uint64) *glmm.Nested {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 17))
	var y, x []float64
	var outer, inner []int
	for a := range na {
		u := sa * rng.NormFloat64()
		for q := range kb {
			v := sb * rng.NormFloat64()
			for range m {
				xx := rng.NormFloat64()
				eta := beta[0] + beta[1]*xx + u + v
				var yy float64
				switch fam {
				case glmm.Bernoulli:
					if rng.Float64() < 1/(1+math.Exp(-eta)) {
						yy = 1
					}
				case glmm.Gaussian:
					yy = eta + sd*rng.NormFloat64()
				}
				y, x = append(y, yy), append(x, 1, xx)
				outer, inner = append(outer, a), append(inner, a*kb+q)
			}
		}
	}
	mod, err := glmm.NewNested(glmm.NestedConfig{Family: fam, Y: y, X: mat.NewDense(len(y), 2, x),
		Outer: outer, NumOuter: na, Inner: inner, NumInner: na * kb, OuterName: "a", InnerName: "a:b"})
	if err != nil {
		t.Fatal(err)
	}
	return mod
}

// nestedCases are the families and sds of TestNestedRecovers and
// TestNestedBlockDiag.
var nestedCases = []struct {
	fam    glmm.Family
	sa, sb float64
	sd     float64
}{
	{glmm.Bernoulli, 1, 0.6, 0},
	{glmm.Gaussian, 1, 0.5, 0.8},
}

// TestNestedRecovers: GVA on variable-size local blocks (a's effect and
// its b levels') recovers the simulated beta and the two sds, and gives
// the same bits on 1 and 2 workers.
func TestNestedRecovers(t *testing.T) {
	beta := []float64{-0.5, 1}
	for _, tc := range nestedCases {
		t.Run(tc.fam.String(), func(t *testing.T) {
			mod := nestedModel(t, tc.fam, 400, 3, 8, beta, tc.sa, tc.sb, tc.sd, 1)
			var mus [][]float64
			for _, w := range []int{1, 2} {
				res, err := vi.Fit(context.Background(), mod, vi.Settings{Seed: 3, Workers: w})
				if err != nil {
					t.Fatal(err)
				}
				mus = append(mus, res.Mu)
				if w > 1 {
					continue
				}
				mean, sd := res.GlobalMoments()
				t.Logf("%v: mean %.3f sd %.3f, %d iterations", tc.fam, mean, sd, res.Iterations)
				for k, b := range beta {
					if math.Abs(mean[k]-b) > 4*sd[k] {
						t.Errorf("beta[%d] = %.3f ± %.3f, truth %v", k, mean[k], sd[k], b)
					}
				}
				for k, s := range []float64{tc.sa, tc.sb} {
					if got := math.Exp(-mean[2+k]); math.Abs(got-s) > 0.25*s {
						t.Errorf("sd %d = %.3f, truth %v", k, got, s)
					}
				}
				if tc.sd > 0 {
					if got := math.Exp(mean[4]); math.Abs(got-tc.sd) > 0.1*tc.sd {
						t.Errorf("residual sd %.3f, truth %v", got, tc.sd)
					}
				}
				if len(res.LocalCov()) != 400*4*4 {
					t.Errorf("LocalCov of %d values", len(res.LocalCov()))
				}
			}
			for j := range mus[0] {
				if math.Float64bits(mus[0][j]) != math.Float64bits(mus[1][j]) {
					t.Fatalf("mu[%d] differs between 1 and 2 workers: %v, %v", j, mus[0][j], mus[1][j])
				}
			}
		})
	}
}

// TestNestedBeyondCrossedLimit: 5000 schools of 3 classes, two and a half
// times glmm.MaxCrossedLevels (beyond which a crossed school factor is
// refused), fit as nested blocks, and the fit recovers the truth: beta
// within 4 posterior sds, the two sds and sigma within 5%. (Measured:
// -0.494 ± 0.015, 0.998 ± 0.004, sds 0.996 and 0.489, sigma 0.798, in 175
// iterations.)
func TestNestedBeyondCrossedLimit(t *testing.T) {
	beta := []float64{-0.5, 1}
	mod := nestedModel(t, glmm.Gaussian, 5000, 3, 4, beta, 1, 0.5, 0.8, 7)
	res, err := vi.Fit(context.Background(), mod, vi.Settings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	mean, sd := res.GlobalMoments()
	t.Logf("mean %.4f sd %.4f, %d iterations, %v", mean, sd, res.Iterations, res.Elapsed)
	for k, b := range beta {
		if math.Abs(mean[k]-b) > 4*sd[k] {
			t.Errorf("beta[%d] = %.4f ± %.4f, truth %v", k, mean[k], sd[k], b)
		}
	}
	for k, s := range []float64{1, 0.5} {
		if got := math.Exp(-mean[2+k]); math.Abs(got/s-1) > 0.05 {
			t.Errorf("sd %d = %.4f, truth %v", k, got, s)
		}
	}
	if got := math.Exp(mean[4]); math.Abs(got/0.8-1) > 0.05 {
		t.Errorf("sigma %.4f, truth 0.8", got)
	}
}

// TestNestedBlockDiag: the block-diagonal family on variable-size local
// blocks (the plain nested model, not reparametrised) gives the same bits
// on 1 and 2 workers, recovers the simulated beta and the two sds, and
// its means of beta and of the effects agree with GVA's. Its sds of beta
// are those of q, which leaves out the correlation of the effects with
// beta: the tolerances are in GVA's sds.
func TestNestedBlockDiag(t *testing.T) {
	beta := []float64{-0.5, 1}
	for _, tc := range nestedCases {
		t.Run(tc.fam.String(), func(t *testing.T) {
			const na, kb = 400, 3
			mod := nestedModel(t, tc.fam, na, kb, 8, beta, tc.sa, tc.sb, tc.sd, 1)
			gva, err := vi.Fit(context.Background(), mod, vi.Settings{Seed: 3})
			if err != nil {
				t.Fatal(err)
			}
			gMean, gSD := gva.GlobalMoments()
			var mus [][]float64
			for _, w := range []int{1, 2} {
				res, err := vi.Fit(context.Background(), mod, vi.Settings{Method: vi.BlockDiag, Seed: 3, Workers: w})
				if err != nil {
					t.Fatal(err)
				}
				mus = append(mus, res.Mu)
				if w > 1 {
					continue
				}
				mean, sd := res.GlobalMoments()
				t.Logf("%v: mean %.3f sd %.3f (GVA %.3f, %.3f), %d iterations, bound %.2f (GVA %.2f)", tc.fam, mean, sd, gMean, gSD, res.Iterations, res.LowerBound, gva.LowerBound)
				for k, b := range beta {
					if math.Abs(mean[k]-b) > 4*gSD[k] {
						t.Errorf("beta[%d] = %.3f, truth %v, GVA's sd %.3f", k, mean[k], b, gSD[k])
					}
					if math.Abs(mean[k]-gMean[k]) > gSD[k] {
						t.Errorf("beta[%d] = %.3f, GVA's %.3f ± %.3f", k, mean[k], gMean[k], gSD[k])
					}
				}
				for k, s := range []float64{tc.sa, tc.sb} {
					if got := math.Exp(-mean[2+k]); math.Abs(got-s) > 0.25*s {
						t.Errorf("sd %d = %.3f, truth %v", k, got, s)
					}
				}
				if tc.sd > 0 {
					if got := math.Exp(mean[4]); math.Abs(got-tc.sd) > 0.1*tc.sd {
						t.Errorf("residual sd %.3f, truth %v", got, tc.sd)
					}
				}
				// The effects: means within a fifth of GVA's sd of GVA's.
				lc, glc := res.LocalCov(), gva.LocalCov()
				lm, lsd := res.LocalMoments()
				for j := range 2 * (1 + kb) {
					i, a := j/(1+kb), j%(1+kb)
					if lm[j] != res.Mu[j] || lsd[j] != math.Sqrt(lc[i*(1+kb)*(1+kb)+a*(1+kb)+a]) {
						t.Fatalf("LocalMoments[%d] = %v, %v: not Mu's and LocalCov's", j, lm[j], lsd[j])
					}
				}
				if len(lc) != na*(1+kb)*(1+kb) || len(res.Sizes) != na {
					t.Fatalf("LocalCov of %d values, %d sizes", len(lc), len(res.Sizes))
				}
				var worst float64
				for i := range na {
					for a := range 1 + kb {
						j := i*(1+kb) + a
						v := glc[i*(1+kb)*(1+kb)+a*(1+kb)+a]
						worst = max(worst, math.Abs(res.Mu[j]-gva.Mu[j])/math.Sqrt(v))
						if s := lc[i*(1+kb)*(1+kb)+a*(1+kb)+a]; !(s > 0) {
							t.Fatalf("subject %d: variance %d is %v", i, a, s)
						}
					}
				}
				t.Logf("effects' means within %.3f of GVA's sds of GVA's", worst)
				if worst > 0.2 {
					t.Errorf("effects' means %.3f of GVA's sds from GVA's", worst)
				}
			}
			for j := range mus[0] {
				if math.Float64bits(mus[0][j]) != math.Float64bits(mus[1][j]) {
					t.Fatalf("mu[%d] differs between 1 and 2 workers: %v, %v", j, mus[0][j], mus[1][j])
				}
			}
		})
	}
}
