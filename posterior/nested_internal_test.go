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

// TestSaveLoadNested: a nested fit saved as JSON and loaded for the same
// model predicts the same bits as the fit itself, whatever the number of
// workers and of rows held at once; known levels are predicted from their
// effects, and loading for another model, or a fit that is not nested, is
// an error.
func TestSaveLoadNested(t *testing.T) {
	ctx := context.Background()
	m, err := glmm.NewNested(nestedConfig(30, 2))
	if err != nil {
		t.Fatal(err)
	}
	res, err := vi.Fit(ctx, m, vi.Settings{Method: vi.GVA, Seed: 4, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSavedNested(res, m)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var back SavedFit
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	got, err := back.LoadNested(m)
	if err != nil {
		t.Fatal(err)
	}
	// Rows: a known a:b level of subject 4 (its first b), a new b within
	// subject 4, a new a, and the first again.
	b4 := m.InnerLevel(4, 1)
	nd := NestedData{X: mat.NewDense(4, 2, []float64{1, 0.5, 1, 0.5, 1, 0.5, 1, 0.5}),
		Outer: []int{4, 4, -1, 4}, Inner: []int{b4, -1, -1, b4}}
	set := PredictSettings{Draws: 3000, Seed: 5, Workers: 1}
	want, err := PredictNested(ctx, res, m, nd, set)
	if err != nil {
		t.Fatal(err)
	}
	saved := predictBatch
	defer func() { predictBatch = saved }()
	for _, c := range []struct {
		name    string
		workers int
		batch   int
	}{
		{"loaded", 1, saved},
		{"3 workers, a row at a time", 3, set.Draws},
	} {
		predictBatch = c.batch
		set.Workers = c.workers
		have, err := PredictNested(ctx, got, m, nd, set)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(want, have) {
			t.Errorf("%s: the predictions differ from the fit's own", c.name)
		}
	}
	if want.Eta[0] != want.Eta[3] || want.EtaSD[0] != want.EtaSD[3] {
		t.Errorf("identical rows predicted %v ± %v and %v ± %v", want.Eta[0], want.EtaSD[0], want.Eta[3], want.EtaSD[3])
	}
	// The known row's mean is x'beta + u + v at q's mean, within 4 Monte
	// Carlo se; each new level widens the interval.
	nr := len(res.Mu) - res.G
	off := 0
	for _, k := range res.Sizes[:4] {
		off += k
	}
	mean := res.Mu[nr] + 0.5*res.Mu[nr+1] + res.Mu[off] + res.Mu[off+1]
	if se := want.EtaSD[0] / math.Sqrt(float64(set.Draws)); !(math.Abs(want.Eta[0]-mean) <= 4*se) {
		t.Errorf("known levels: eta %v, q's mean gives %v (se %v)", want.Eta[0], mean, se)
	}
	if !(want.EtaSD[0] < want.EtaSD[1] && want.EtaSD[1] < want.EtaSD[2]) {
		t.Errorf("sds of eta %v: want known < new b < new a", want.EtaSD[:3])
	}

	other, err := glmm.NewNested(nestedConfig(30, 3))
	if err != nil {
		t.Fatal(err)
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
		{"not nested", notNested, m, "not a GVA fit of a nested model"},
	} {
		if _, err := c.s.LoadNested(c.m); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}
