// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"context"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// nestedConfig simulates a Bernoulli model of na levels of a, level a
// holding 1 + a%3 levels of b of 4 rows each (blocks of 2 to 4 variables),
// x ~ N(0, 1) and eta = -0.3 + 0.8 x + u_a + v_b with sds 1 and 0.5.
func nestedConfig(na int, seed uint64) glmm.NestedConfig {
	rng := rand.New(rand.NewPCG(seed, 3))
	var y, x []float64
	var outer, inner []int
	nb := 0
	for a := range na {
		u := rng.NormFloat64()
		for range 1 + a%3 {
			v := 0.5 * rng.NormFloat64()
			for range 4 {
				xx := rng.NormFloat64()
				yy := 0.0
				if rng.Float64() < 1/(1+math.Exp(0.3-0.8*xx-u-v)) {
					yy = 1
				}
				y, x = append(y, yy), append(x, 1, xx)
				outer, inner = append(outer, a), append(inner, nb)
			}
			nb++
		}
	}
	return glmm.NestedConfig{Family: glmm.Bernoulli, Y: y, X: mat.NewDense(len(y), 2, x),
		Outer: outer, NumOuter: na, Inner: inner, NumInner: nb, OuterName: "a", InnerName: "a:b"}
}

// TestSaveLoadNested: a nested fit, by RVB1 expanded at the start (what
// glmmfit fits by default), RVB2 about the paper's point or GVA, saved as
// JSON and loaded for the same model predicts the same bits as the fit
// itself, whatever the number of workers and of rows held at once; known
// levels are predicted from their effects, and loading for another model,
// or a fit that is not nested, is an error.
func TestSaveLoadNested(t *testing.T) {
	ctx := context.Background()
	m, err := glmm.NewNested(nestedConfig(30, 2))
	if err != nil {
		t.Fatal(err)
	}
	other, err := glmm.NewNested(nestedConfig(30, 3))
	if err != nil {
		t.Fatal(err)
	}
	for _, fit := range []struct{ method, expansion string }{
		{RVB1, AtStart},
		{RVB2, Jeffreys},
		{GVA, ""},
	} {
		pool := parallel.NewPool(ctx, 1)
		target, meth, err := NewNestedTarget(pool, m, fit.method, fit.expansion)
		pool.Close()
		if err != nil {
			t.Fatal(err)
		}
		res, err := vi.Fit(ctx, target, vi.Settings{Method: meth, Seed: 4, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSavedNested(res, target)
		if err != nil {
			t.Fatal(err)
		}
		if s.Method != fit.method || s.Expansion != fit.expansion {
			t.Errorf("%s: saved as method %q, expansion %q", fit.method, s.Method, s.Expansion)
		}
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back SavedFit
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		got, gotTarget, err := back.LoadNested(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		// Rows: a known a:b level of subject 4 (its first b), a new b
		// within subject 4, a new a, and the first again.
		b4 := m.InnerLevel(4, 1)
		nd := NestedData{X: mat.NewDense(4, 2, []float64{1, 0.5, 1, 0.5, 1, 0.5, 1, 0.5}),
			Outer: []int{4, 4, -1, 4}, Inner: []int{b4, -1, -1, b4}}
		set := PredictSettings{Draws: 3000, Seed: 5, Workers: 1}
		want, err := PredictNested(ctx, res, target, m, nd, set)
		if err != nil {
			t.Fatal(err)
		}
		saved := predictBatch
		if (back.Start != nil) != (fit.expansion == AtStart) {
			t.Errorf("%s: saved a start of %d values", fit.method, len(back.Start))
		}
		// Without the start (a fit saved before it was kept) the start
		// is computed again.
		back.Start = nil
		again, againTarget, err := back.LoadNested(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name    string
			workers int
			batch   int
			res     *vi.Result
			target  vi.Target
		}{
			{"loaded", 1, saved, got, gotTarget},
			{"3 workers, a row at a time", 3, set.Draws, got, gotTarget},
			{"loaded without its start", 1, saved, again, againTarget},
		} {
			predictBatch = c.batch
			set.Workers = c.workers
			have, err := PredictNested(ctx, c.res, c.target, m, nd, set)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(want, have) {
				t.Errorf("%s: %s: the predictions differ from the fit's own", fit.method, c.name)
			}
		}
		predictBatch = saved
		if want.Eta[0] != want.Eta[3] || want.EtaSD[0] != want.EtaSD[3] {
			t.Errorf("%s: identical rows predicted %v ± %v and %v ± %v", fit.method, want.Eta[0], want.EtaSD[0], want.Eta[3], want.EtaSD[3])
		}
		// The known row's mean is x'beta + u + v under q (an RVB fit's
		// effects mapped back, their means within relative Monte Carlo
		// error mcse of their sds), within 4 Monte Carlo se.
		nr := len(res.Mu) - res.G
		off := 0
		for _, k := range res.Sizes[:4] {
			off += k
		}
		effMean, effSD := res.LocalMoments()
		mcse := 0.0
		if rt, ok := target.(*rvb.Target); ok {
			rs, err := SummarizeRVB(ctx, res, rt, 4000, 6)
			if err != nil {
				t.Fatal(err)
			}
			effMean, effSD, mcse = rs.LocalMean, rs.LocalSD, rs.MaxRelMCSE
		}
		mean := res.Mu[nr] + 0.5*res.Mu[nr+1] + effMean[off] + effMean[off+1]
		tol := 4 * (want.EtaSD[0]/math.Sqrt(float64(set.Draws)) + mcse*(effSD[off]+effSD[off+1]))
		if !(math.Abs(want.Eta[0]-mean) <= tol) {
			t.Errorf("%s: known levels: eta %v, q's mean gives %v (tolerance %v)", fit.method, want.Eta[0], mean, tol)
		}
		if !(want.EtaSD[0] < want.EtaSD[1] && want.EtaSD[1] < want.EtaSD[2]) {
			t.Errorf("%s: sds of eta %v: want known < new b < new a", fit.method, want.EtaSD[:3])
		}
		// FixedOnly: x'beta alone, the same for every row, its mean q's.
		fixedSet := set
		fixedSet.FixedOnly = true
		fixed, err := PredictNested(ctx, res, target, m, nd, fixedSet)
		if err != nil {
			t.Fatal(err)
		}
		if fixed.Eta[0] != fixed.Eta[2] || fixed.EtaSD[0] != fixed.EtaSD[1] || !(fixed.EtaSD[0] < want.EtaSD[0]) {
			t.Errorf("%s: FixedOnly: eta %v ± %v, not the same for every row or not narrower than the known levels' %v", fit.method, fixed.Eta, fixed.EtaSD, want.EtaSD[0])
		}
		if xb := res.Mu[nr] + 0.5*res.Mu[nr+1]; !(math.Abs(fixed.Eta[0]-xb) <= 4*fixed.EtaSD[0]/math.Sqrt(float64(set.Draws))) {
			t.Errorf("%s: FixedOnly: eta %v, q's x'beta %v", fit.method, fixed.Eta[0], xb)
		}

		notNested := back
		notNested.Sizes = nil
		for _, c := range []struct {
			name string
			s    SavedFit
			m    *glmm.Nested
			want string
		}{
			{"another model", back, other, "another model"},
			{"not nested", notNested, m, "not a fit of a nested model"},
		} {
			if _, _, err := c.s.LoadNested(ctx, c.m); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("%s: %s: error %v, want %q", fit.method, c.name, err, c.want)
			}
		}
		// The fit with the wrong target: the model for RVB, an RVB
		// target for GVA.
		wrong := vi.Target(m)
		if fit.method == GVA {
			wrong = rvbTargetOf(t, m)
		}
		if _, err := PredictNested(ctx, res, wrong, m, nd, set); err == nil {
			t.Errorf("%s: predicting with the wrong target: no error", fit.method)
		}
	}
}

// rvbTargetOf returns m's RVB1 reparametrisation about the paper's point.
func rvbTargetOf(t *testing.T, m *glmm.Nested) vi.Target {
	t.Helper()
	rt, err := rvb.NewNested(m, rvb.RVB1)
	if err != nil {
		t.Fatal(err)
	}
	return rt
}
