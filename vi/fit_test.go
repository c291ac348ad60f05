package vi

import (
	"context"
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
)

func relErr(got, want float64) float64 {
	return math.Abs(got-want) / math.Max(1, math.Abs(want))
}

// TestGVAExactOnGaussian: the arrowhead family contains the posterior of
// the conjugate target, so natural-gradient GVA must reach it. (NAdam is
// left out: as the paper shows, Adam's per-coordinate scaling discards the
// natural gradient's scale, and it stalls near 1e-2 on flat directions.)
func TestGVAExactOnGaussian(t *testing.T) {
	for _, tc := range []struct {
		name    string
		n, r, g int
		opt     Optimizer
		alpha   float64 // Snngm's Alpha0 or the rule's Alpha
	}{
		{"snngm/r=1", 12, 1, 2, Snngm, DefaultAlpha0},
		{"snngm/r=2", 8, 2, 3, Snngm, DefaultAlpha0},
		{"nagm/r=1", 12, 1, 2, Nagm, 0.5},
		{"nagm/r=2", 8, 2, 3, Nagm, 0.5},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := newGaussTarget(3, tc.n, tc.r, tc.g)
			mean, prec, logML := tg.exact()
			set := Settings{Method: GVA, Optimizer: tc.opt, Init: InitPaper, Seed: 1, MaxIter: 50000, Workers: 2, ChunkSize: 3, Tol: 1e-4, Refine: 3}
			if tc.opt == Snngm {
				set.Alpha0 = tc.alpha
			} else {
				set.Alpha = tc.alpha
			}
			res, err := Fit(context.Background(), tg, set)
			if err != nil {
				t.Fatal(err)
			}
			var maxMu float64
			for j, m := range res.Mu {
				maxMu = math.Max(maxMu, relErr(m, mean.AtVec(j)))
			}
			tt := arrowhead.Wrap(tc.n, tc.r, tc.g, res.Factor).ToTriDense()
			var got mat.Dense
			got.Mul(tt, tt.T())
			var maxP float64
			d := len(res.Mu)
			for i := range d {
				for j := range d {
					maxP = math.Max(maxP, math.Abs(got.At(i, j)-prec.At(i, j))/math.Max(1, math.Abs(prec.At(i, i))))
				}
			}
			t.Logf("%s: %d iterations, status %v, max rel err mean %.2g precision %.2g, bound %.6f (log p(y) %.6f)", tc.name, res.Iterations, res.Status, maxMu, maxP, res.LowerBound, logML)
			if maxMu > 1e-3 || maxP > 1e-3 {
				t.Errorf("mean error %.3g, precision error %.3g; want <= 1e-3", maxMu, maxP)
			}
			if res.LowerBound > logML+3*res.LowerBoundSE+1e-9 {
				t.Errorf("lower bound %v exceeds log p(y) %v", res.LowerBound, logML)
			}
			if math.Abs(res.LowerBound-logML) > 1e-3 {
				t.Errorf("lower bound %v, want log p(y) %v", res.LowerBound, logML)
			}
		})
	}
}
