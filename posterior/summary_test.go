// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior_test

import (
	"context"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

func simModel(t *testing.T, subjects int, seed uint64) *glmm.Model {
	t.Helper()
	fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: "poisson", Subjects: subjects, Obs: 6,
		Beta: []float64{0.2, -0.5, 0.4}, RECov: [][]float64{{0.5, 0.1}, {0.1, 0.3}}, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	f, err := formula.Parse(truth.Formula)
	if err != nil {
		t.Fatal(err)
	}
	d, err := formula.Build(f, fr, formula.Options{Family: glmm.Poisson})
	if err != nil {
		t.Fatal(err)
	}
	return d.Model()
}

// TestSummarizeGVA: the fixed effects, omega and every subject's random
// effects are the exact Gaussian marginals of the fitted q (the mean and
// the diagonal of vi's covariances), and the random-effect sds' Monte
// Carlo summaries bracket their medians.
func TestSummarizeGVA(t *testing.T) {
	m := simModel(t, 30, 4)
	res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 1, MaxIter: 400})
	if err != nil {
		t.Fatal(err)
	}
	s, err := posterior.Summarize(res, m, 500, 1)
	if err != nil {
		t.Fatal(err)
	}
	n, r, g := m.Dims()
	p := m.P()
	cov := res.GlobalCov()
	for k := range g {
		mk := s.Fixed
		j := k
		if k >= p {
			mk, j = s.Omega, k-p
		}
		mean, sd := res.Mu[n*r+k], math.Sqrt(cov.At(k, k))
		if mk[j].Mean != mean || mk[j].SD != sd || math.Abs(mk[j].Q975-(mean+1.959963984540054*sd)) > 1e-9*(1+math.Abs(mean)) {
			t.Errorf("global %d: %+v, want mean %v sd %v", k, mk[j], mean, sd)
		}
	}
	local := res.LocalCov()
	for i, se := range s.Subjects {
		for a := range r {
			if se.Mean[a] != res.Mu[i*r+a] || se.SD[a] != math.Sqrt(local[i*r*r+a*r+a]) {
				t.Fatalf("subject %d effect %d: %v ± %v", i, a, se.Mean[a], se.SD[a])
			}
		}
	}
	for _, sd := range s.SD {
		if !(sd.Q025 < sd.Q50 && sd.Q50 < sd.Q975 && sd.Mean > 0) {
			t.Errorf("%s: %+v", sd.Name, sd)
		}
	}
}

// TestSampleMarginal: quantiles by R's type 7 rule on a small sample.
func TestSampleMarginal(t *testing.T) {
	got := posterior.SampleMarginal("x", []float64{5, 1, 4, 2, 3})
	// R: quantile(1:5, c(0.025, 0.5, 0.975)) = 1.1, 3, 4.9; sd(1:5) = 1.581139.
	if got.Mean != 3 || math.Abs(got.SD-1.5811388300841898) > 1e-12 ||
		math.Abs(got.Q025-1.1) > 1e-12 || got.Q50 != 3 || math.Abs(got.Q975-4.9) > 1e-12 {
		t.Errorf("SampleMarginal = %+v", got)
	}
}

// TestSummarizeRefusesMisuse: nil arguments, too few draws and a Result
// of another target are errors naming the problem.
func TestSummarizeRefusesMisuse(t *testing.T) {
	m := simModel(t, 12, 5)
	res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 1, MaxIter: 200})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := rvb.New(m, rvb.RVB1)
	if err != nil {
		t.Fatal(err)
	}
	rres, err := vi.Fit(context.Background(), tg, vi.Settings{Method: vi.BlockDiag, Seed: 1, MaxIter: 200})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"nil result", func() error { _, err := posterior.Summarize(nil, m, 100, 1); return err }, "nil Result"},
		{"nil model", func() error { _, err := posterior.Summarize(res, nil, 100, 1); return err }, "nil model"},
		{"0 draws", func() error { _, err := posterior.Summarize(res, m, 0, 1); return err }, "0 draws"},
		{"-1 draws", func() error { _, err := posterior.Summarize(res, m, -1, 1); return err }, "-1 draws"},
		{"an RVB fit as GVA", func() error { _, err := posterior.Summarize(rres, m, 100, 1); return err }, "reparametrised"},
		{"a GVA fit as RVB", func() error {
			_, err := posterior.SummarizeRVB(context.Background(), res, tg, 100, 1)
			return err
		}, "method"},
		{"nil RVB result", func() error {
			_, err := posterior.SummarizeRVB(context.Background(), nil, tg, 100, 1)
			return err
		}, "nil Result"},
	} {
		if err := c.call(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	got, err := posterior.SummarizeRVB(context.Background(), rres, tg, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, err := tg.Summarize(context.Background(), 0, rres.Mu, rres.Factor, 100, 1)
	if err != nil {
		t.Fatal(err)
	}
	for k := range want.LocalMean {
		if got.LocalMean[k] != want.LocalMean[k] || got.LocalSD[k] != want.LocalSD[k] {
			t.Fatalf("SummarizeRVB and rvb.Target.Summarize differ at %d", k)
		}
	}
}

// TestSummarizeFit: for GVA it is Summarize, bit for bit; for RVB the
// fixed effects are SummarizeRVB's exact marginals, every subject is
// summarised, and the sds come from draws; a target of another model, or
// of no known kind, is refused.
func TestSummarizeFit(t *testing.T) {
	ctx := context.Background()
	m, other := simModel(t, 30, 4), simModel(t, 30, 5)
	res, err := vi.Fit(ctx, m, vi.Settings{Seed: 1, MaxIter: 400})
	if err != nil {
		t.Fatal(err)
	}
	got, err := posterior.SummarizeFit(ctx, res, m, m, 200, 3)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := posterior.Summarize(res, m, 200, 3)
	if !reflect.DeepEqual(got, want) {
		t.Error("GVA: SummarizeFit differs from Summarize")
	}
	rt, err := rvb.New(m, rvb.RVB1)
	if err != nil {
		t.Fatal(err)
	}
	rres, err := vi.Fit(ctx, rt, vi.Settings{Method: vi.BlockDiag, Seed: 1, MaxIter: 400})
	if err != nil {
		t.Fatal(err)
	}
	s, err := posterior.SummarizeFit(ctx, rres, rt, m, 200, 3)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := posterior.SummarizeRVB(ctx, rres, rt, 200, 3)
	if err != nil {
		t.Fatal(err)
	}
	for k, f := range s.Fixed {
		if f.Mean != rs.GlobalMean[k] || f.SD != rs.GlobalSD[k] {
			t.Errorf("RVB fixed effect %d: %v ± %v, SummarizeRVB %v ± %v", k, f.Mean, f.SD, rs.GlobalMean[k], rs.GlobalSD[k])
		}
	}
	if len(s.Subjects) != 30 || len(s.SD) != 2 || s.SD[0].MCSE.Mean == 0 {
		t.Errorf("RVB: %d subjects, %d sds (MCSE %v)", len(s.Subjects), len(s.SD), s.SD)
	}
	if _, err := posterior.SummarizeFit(ctx, rres, rt, other, 200, 3); err == nil {
		t.Error("an rvb.Target of another model: no error")
	}
	if _, err := posterior.SummarizeFit(ctx, res, other, m, 200, 3); err == nil {
		t.Error("a target that is neither m nor an rvb.Target of it: no error")
	}
}
