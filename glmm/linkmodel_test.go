// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/diff/fd"
	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/sparsevi/sparsevi/glmm"
)

// TestLinkModels: probit and complementary log-log models of Bernoulli
// and binomial data have the log joint of the reference (the canonical
// model's random-effect density and prior, the likelihood written from
// the inverse link), its gradient and subject Hessians by finite
// differences; a non-canonical link of another family is an error.
func TestLinkModels(t *testing.T) {
	for _, link := range []glmm.Link{glmm.Probit, glmm.Cloglog} {
		for _, fam := range []glmm.Family{glmm.Bernoulli, glmm.Binomial} {
			rng := rand.New(rand.NewPCG(uint64(10*link)+uint64(fam), 3))
			const n, p, r = 6, 2, 2
			cfg := randomConfig(rng, fam, n, p, r, false)
			cfg.Link = link
			mod, err := glmm.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			local, thetaG := randomLocal(rng, n, r), randomGlobal(rng, p, r)
			// The reference: the canonical model at eta = 0 for every row
			// gives the random-effect density, the prior and the constants
			// less the likelihood; add the link's likelihood by hand.
			canon := cfg
			canon.Link = glmm.CanonicalLink
			cm, err := glmm.New(canon)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := logJoint(t, cm, local, thetaG, false)
			for k, y := range cfg.Y {
				i := cfg.Group[k]
				eta := cfg.Offset[k]
				for c := range p {
					eta += cfg.X.At(k, c) * thetaG[c]
				}
				for c := range r {
					eta += cfg.Z.At(k, c) * local[i*r+c]
				}
				m := 1.0
				if cfg.Trials != nil {
					m = cfg.Trials[k]
				}
				F := distuv.UnitNormal.CDF(eta)
				if link == glmm.Cloglog {
					F = 1 - math.Exp(-math.Exp(eta))
				}
				w := cfg.Weights[k]
				logit := y*eta - m*math.Log1p(math.Exp(eta))
				want += w * (y*math.Log(F) + (m-y)*math.Log(1-F) - logit)
			}
			got, _ := logJoint(t, mod, local, thetaG, false)
			if math.Abs(got-want) > 1e-10*math.Abs(want) {
				t.Errorf("%v %v: log joint %v, reference %v", link, fam, got, want)
			}
			checkGradientFD(t, link.String()+" "+fam.String(), mod, local, thetaG)
			ws := mod.NewWorkspace()
			gg := make([]float64, len(thetaG))
			for i := range n {
				bi := slices.Clone(local[i*r : (i+1)*r])
				h := make([]float64, r*r)
				mod.LocalHessian(ws, i, thetaG, bi, h)
				jac := mat.NewDense(r, r, nil)
				fd.Jacobian(jac, func(dst, x []float64) {
					if _, err := mod.Local(ws, i, i+1, thetaG, x, dst, gg); err != nil {
						t.Fatal(err)
					}
				}, bi, &fd.JacobianSettings{Formula: fd.Central, Step: 1e-5})
				for a := range r * r {
					if e := relErr(h[a], jac.RawMatrix().Data[a]); e > 1e-6 {
						t.Errorf("%v %v subject %d: H[%d] = %v, finite difference %v", link, fam, i, a, h[a], jac.RawMatrix().Data[a])
					}
				}
			}
		}
	}
	cfg := randomConfig(rand.New(rand.NewPCG(1, 1)), glmm.Poisson, 4, 2, 1, false)
	cfg.Link = glmm.Probit
	if _, err := glmm.New(cfg); err == nil {
		t.Error("a probit Poisson model was accepted")
	}
}
