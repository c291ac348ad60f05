// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"context"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// TestPredictBatches: Predict's numbers do not depend on how many rows it
// holds at once, identical rows get identical predictions (of a known
// subject, and of new subjects), and for GVA a known row's mean linear
// predictor is x'beta + z'b_i at q's mean, within its Monte Carlo error.
func TestPredictBatches(t *testing.T) {
	m := simulated(t, datasets.SimSpec{Family: "poisson", Subjects: 30, Obs: 4,
		Beta: []float64{0.2, -0.5}, RECov: [][]float64{{0.5, 0.1}, {0.1, 0.3}}, Seed: 8}, glmm.Poisson)
	n, r, _ := m.Dims()
	p := m.P()
	// Rows: subject 0's, subject 1's as new rows, then subject 0's first
	// again and a copy of the first new row.
	X, Z := m.FixedDesign(), m.RandomDesign()
	lo0, hi0 := m.SubjectRows(0)
	lo1, hi1 := m.SubjectRows(1)
	var src []int
	var known []bool
	for j := lo0; j < hi0; j++ {
		src, known = append(src, j), append(known, true)
	}
	for j := lo1; j < hi1; j++ {
		src, known = append(src, j), append(known, false)
	}
	src, known = append(src, lo0, lo1), append(known, true, false)
	rows := len(src)
	nx, nz := mat.NewDense(rows, p, nil), mat.NewDense(rows, r, nil)
	group := make([]int, rows)
	for k, j := range src {
		for c := range p {
			nx.Set(k, c, X.At(j, c))
		}
		for c := range r {
			nz.Set(k, c, Z.At(j, c))
		}
	}
	nd := NewData{X: nx, Z: nz, Group: group, Known: known}
	ctx := context.Background()
	rt, err := rvb.New(m, rvb.RVB1)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		target vi.Target
		method vi.Method
	}{{"gva", m, vi.GVA}, {"rvb1", rt, vi.BlockDiag}} {
		res, err := vi.Fit(ctx, c.target, vi.Settings{Method: c.method, Seed: 2, Workers: 1})
		if err != nil {
			t.Fatal(err)
		}
		set := PredictSettings{Draws: 400, Seed: 5}
		whole, err := Predict(ctx, res, c.target, m, nd, set)
		if err != nil {
			t.Fatal(err)
		}
		saved := predictBatch
		predictBatch = 2 * set.Draws // two rows at a time
		batched, err := Predict(ctx, res, c.target, m, nd, set)
		predictBatch = saved
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(whole, batched) {
			t.Errorf("%s: predictions differ with two rows at a time", c.name)
		}
		// The rows four times over, summarised by one worker and by
		// three, several chunks of rows each: the rows' numbers again.
		four := repeatRows(nd, 4)
		var byWorkers []*Predictions
		for _, workers := range []int{1, 3} {
			set.Workers = workers
			pr, err := Predict(ctx, res, c.target, m, four, set)
			if err != nil {
				t.Fatal(err)
			}
			byWorkers = append(byWorkers, pr)
		}
		set.Workers = 0
		if len(four.Known) <= predictRowChunk || !reflect.DeepEqual(byWorkers[0], byWorkers[1]) {
			t.Errorf("%s: predictions of %d rows differ between one worker and three", c.name, len(four.Known))
		}
		for k := range four.Known {
			if j := k % rows; byWorkers[1].MeanLo[k] != whole.MeanLo[j] || byWorkers[1].EtaHi[k] != whole.EtaHi[j] {
				t.Errorf("%s: row %d, a copy of row %d, predicted %v, %v against %v, %v", c.name, k, j, byWorkers[1].MeanLo[k], byWorkers[1].EtaHi[k], whole.MeanLo[j], whole.EtaHi[j])
				break
			}
		}
		last := rows - 1
		for _, pair := range [][2]int{{0, last - 1}, {hi0 - lo0, last}} {
			a, b := pair[0], pair[1]
			if whole.Eta[a] != whole.Eta[b] || whole.MeanSD[a] != whole.MeanSD[b] {
				t.Errorf("%s: identical rows %d and %d predicted %v ± %v and %v ± %v", c.name, a, b, whole.Eta[a], whole.EtaSD[a], whole.Eta[b], whole.EtaSD[b])
			}
		}
		if c.method != vi.GVA {
			continue
		}
		for k := range hi0 - lo0 {
			want := 0.0
			for j := range p {
				want += nx.At(k, j) * res.Mu[n*r+j]
			}
			for j := range r {
				want += nz.At(k, j) * res.Mu[j]
			}
			if se := whole.EtaSD[k] / math.Sqrt(float64(set.Draws)); math.Abs(whole.Eta[k]-want) > 4*se {
				t.Errorf("gva row %d: eta %v ± %v (Monte Carlo error %.2g), q's mean %v", k, whole.Eta[k], whole.EtaSD[k], se, want)
			}
		}
	}
}

// repeatRows returns the rows of nd times times over, one copy after
// another.
func repeatRows(nd NewData, times int) NewData {
	rows, p := nd.X.Dims()
	_, r := nd.Z.Dims()
	out := NewData{X: mat.NewDense(rows*times, p, nil), Z: mat.NewDense(rows*times, r, nil)}
	for c := range times {
		out.X.(*mat.Dense).Slice(c*rows, (c+1)*rows, 0, p).(*mat.Dense).Copy(nd.X)
		out.Z.(*mat.Dense).Slice(c*rows, (c+1)*rows, 0, r).(*mat.Dense).Copy(nd.Z)
		out.Group = append(out.Group, nd.Group...)
		out.Known = append(out.Known, nd.Known...)
	}
	return out
}

// TestPredictResponse: the draws of a new observation have the mean of
// the mean response and, by the law of total variance, the variance of
// the mean plus the family's own: mu for poisson, sigma^2 for gaussian
// (E[exp(2 psi)] under q's Gaussian marginal of psi), p(1-p) of their mean
// for bernoulli's 0s and 1s, and for negbinomial more than poisson's by
// mu^2/phi; for binomial, of n trials, the mean n E[p] and the variance
// n E[p(1-p)] + n^2 Var(p), and none for a row whose trials are not
// known, its neighbour's draws unchanged.
func TestPredictResponse(t *testing.T) {
	const draws = 20000
	for _, c := range []struct {
		family string
		disp   float64
	}{
		{"gaussian", 0.8}, {"poisson", 0}, {"bernoulli", 0}, {"negbinomial", 2}, {"binomial", 0},
	} {
		fam, err := glmm.ParseFamily(c.family)
		if err != nil {
			t.Fatal(err)
		}
		m := simulated(t, datasets.SimSpec{Family: c.family, Subjects: 40, Obs: 5,
			Beta: []float64{0.2, -0.5}, RECov: [][]float64{{0.4}}, Dispersion: c.disp, Seed: 3}, fam)
		res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 2, MaxIter: 2000})
		if err != nil {
			t.Fatal(err)
		}
		// Subject 0's first row, and the same row of a new subject.
		X, Z := m.FixedDesign(), m.RandomDesign()
		lo, _ := m.SubjectRows(0)
		nx := mat.NewDense(2, 2, []float64{X.At(lo, 0), X.At(lo, 1), X.At(lo, 0), X.At(lo, 1)})
		nz := mat.NewDense(2, 1, []float64{Z.At(lo, 0), Z.At(lo, 0)})
		nd := NewData{X: nx, Z: nz, Group: []int{0, 0}, Known: []bool{true, false}}
		const trials = 8
		n := 1.0
		if fam == glmm.Binomial {
			n = trials
			nd.Trials = []float64{trials, trials}
		}
		pr, err := Predict(context.Background(), res, m, m, nd, PredictSettings{Draws: draws, Seed: 4})
		if err != nil {
			t.Fatal(err)
		}
		if fam == glmm.Binomial {
			nd.Trials = []float64{trials, math.NaN()}
			un, err := Predict(context.Background(), res, m, m, nd, PredictSettings{Draws: draws, Seed: 4})
			if err != nil {
				t.Fatal(err)
			}
			if !math.IsNaN(un.Y[1]) || !math.IsNaN(un.YSD[1]) || !math.IsNaN(un.YLo[1]) || !math.IsNaN(un.YHi[1]) {
				t.Errorf("binomial row of unknown trials: response %v ± %v, want NaN", un.Y[1], un.YSD[1])
			}
			if un.Y[0] != pr.Y[0] || un.YSD[0] != pr.YSD[0] || un.Mean[1] != pr.Mean[1] {
				t.Errorf("binomial: a row of unknown trials changed the others: %v ± %v, want %v ± %v", un.Y[0], un.YSD[0], pr.Y[0], pr.YSD[0])
			}
		}
		for k := range 2 {
			y, ysd, mu, musd := pr.Y[k], pr.YSD[k], pr.Mean[k], pr.MeanSD[k]
			if !(pr.YLo[k] <= y && y <= pr.YHi[k]) {
				t.Errorf("%s row %d: response mean %v outside its interval [%v, %v]", c.family, k, y, pr.YLo[k], pr.YHi[k])
			}
			if math.Abs(y-n*mu) > 5*ysd/math.Sqrt(draws) {
				t.Errorf("%s row %d: response mean %v, the mean's %v (Monte Carlo sd %.3g)", c.family, k, y, mu, ysd/math.Sqrt(draws))
			}
			v := ysd * ysd
			switch fam {
			case glmm.Gaussian:
				gm, gs := res.GlobalMoments()
				j, _ := m.Dispersion()
				want := musd*musd + math.Exp(2*gm[j]+2*gs[j]*gs[j])
				if math.Abs(v/want-1) > 0.05 {
					t.Errorf("gaussian row %d: response variance %v, want %v", k, v, want)
				}
			case glmm.Poisson:
				if want := musd*musd + mu; math.Abs(v/want-1) > 0.05 {
					t.Errorf("poisson row %d: response variance %v, want %v", k, v, want)
				}
			case glmm.Binomial:
				want := n*(mu-mu*mu-musd*musd) + n*n*musd*musd
				if math.Abs(v/want-1) > 0.05 {
					t.Errorf("binomial row %d: response variance %v, want %v", k, v, want)
				}
			case glmm.Bernoulli:
				if want := y * (1 - y) * draws / (draws - 1); math.Abs(v-want) > 1e-12 {
					t.Errorf("bernoulli row %d: response variance %v, want %v", k, v, want)
				}
			case glmm.NegBinomial:
				if poisson := musd*musd + mu; v < 1.2*poisson {
					t.Errorf("negbinomial row %d: response variance %v, not over poisson's %v", k, v, poisson)
				}
			}
		}
	}
}

// TestResponseDrawsAllocs: a new observation is drawn without allocating,
// for every family and for Poisson means on both sides of gonum's switch
// of method at 10.
func TestResponseDrawsAllocs(t *testing.T) {
	for _, fam := range []glmm.Family{glmm.Gaussian, glmm.Poisson, glmm.NegBinomial, glmm.Bernoulli, glmm.Binomial} {
		d := newResponseDraws(fam, 1, 100)
		for j, mu := range []float64{0.3, 5.5, 25.5} {
			trials := 2.0
			if fam == glmm.Binomial {
				// gonum's three methods: under 25 trials, a mean
				// under 1, and the rest.
				mu, trials = []float64{0.3, 0.02, 0.85}[j], []float64{3, 30, 52}[j]
			}
			if a := testing.AllocsPerRun(50, func() { d.draw(3, 4, mu, 2, trials) }); a != 0 {
				t.Errorf("%v at mean %v: %v allocations a draw", fam, mu, a)
			}
		}
	}
}

// TestCountQuantile: the p-quantile of sorted draws is the smallest draw
// with at least a share p of the draws at or below it, by brute force
// over the draws, and an interval of its quantiles covers at least its
// level.
func TestCountQuantile(t *testing.T) {
	for _, c := range []struct {
		draws []float64
		p     float64
		want  float64
	}{
		{[]float64{0, 0, 1, 1, 1, 2, 2, 3, 5, 9}, 0, 0},
		{[]float64{0, 0, 1, 1, 1, 2, 2, 3, 5, 9}, 0.1, 0},
		{[]float64{0, 0, 1, 1, 1, 2, 2, 3, 5, 9}, 0.2, 0},
		{[]float64{0, 0, 1, 1, 1, 2, 2, 3, 5, 9}, 0.21, 1},
		{[]float64{0, 0, 1, 1, 1, 2, 2, 3, 5, 9}, 0.9, 5},
		{[]float64{0, 0, 1, 1, 1, 2, 2, 3, 5, 9}, 0.95, 9},
		{[]float64{0, 0, 1, 1, 1, 2, 2, 3, 5, 9}, 1, 9},
		{[]float64{4}, 0.025, 4},
		{[]float64{4}, 0.975, 4},
	} {
		got := countQuantile(c.draws, c.p)
		if got != c.want {
			t.Errorf("countQuantile(%v, %v) = %v, want %v", c.draws, c.p, got, c.want)
		}
		// Brute force: the smallest draw whose share at or below is p.
		for _, x := range c.draws {
			at := 0
			for _, y := range c.draws {
				if y <= x {
					at++
				}
			}
			if float64(at) >= c.p*float64(len(c.draws)) {
				if x != got {
					t.Errorf("countQuantile(%v, %v) = %v; brute force %v", c.draws, c.p, got, x)
				}
				break
			}
		}
	}
	// Poisson counts of mean 3: the 95% interval holds at least 95% of
	// them.
	rng := rand.NewPCG(1, 2)
	draws := make([]float64, 2000)
	for s := range draws {
		draws[s] = distuv.Poisson{Lambda: 3, Src: rng}.Rand()
	}
	slices.Sort(draws)
	lo, hi := countQuantile(draws, 0.025), countQuantile(draws, 0.975)
	in := 0
	for _, x := range draws {
		if lo <= x && x <= hi {
			in++
		}
	}
	if in < 1900 {
		t.Errorf("interval [%v, %v] holds %d of 2000 draws, want at least 1900", lo, hi, in)
	}
}

// TestPredictFixedOnly: with FixedOnly a row's linear predictor is its
// fixed part alone, whatever its subject: at x = (1, 0) the draws of the
// intercept, whose mean and sd are q's within Monte Carlo error, the same
// bits for a known and a new subject's row, and narrower than a new
// subject's prediction over the random effects.
func TestPredictFixedOnly(t *testing.T) {
	m := simulated(t, datasets.SimSpec{Family: "poisson", Subjects: 40, Obs: 5,
		Beta: []float64{0.2, -0.5}, RECov: [][]float64{{0.4}}, Seed: 3}, glmm.Poisson)
	res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 2, MaxIter: 2000})
	if err != nil {
		t.Fatal(err)
	}
	const draws = 20000
	nd := NewData{X: mat.NewDense(2, 2, []float64{1, 0, 1, 0}), Z: mat.NewDense(2, 1, []float64{1, 1}), Group: []int{3, 0}, Known: []bool{true, false}}
	fixed, err := Predict(context.Background(), res, m, m, nd, PredictSettings{Draws: draws, Seed: 4, FixedOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	own, err := Predict(context.Background(), res, m, m, nd, PredictSettings{Draws: draws, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	gm, gs := res.GlobalMoments()
	if fixed.Eta[0] != fixed.Eta[1] || fixed.EtaSD[0] != fixed.EtaSD[1] || fixed.MeanHi[0] != fixed.MeanHi[1] {
		t.Errorf("a known and a new subject's rows differ: eta %v ± %v and %v ± %v", fixed.Eta[0], fixed.EtaSD[0], fixed.Eta[1], fixed.EtaSD[1])
	}
	if math.Abs(fixed.Eta[0]-gm[0]) > 5*gs[0]/math.Sqrt(draws) || math.Abs(fixed.EtaSD[0]/gs[0]-1) > 0.03 {
		t.Errorf("eta %v ± %v, the intercept's %v ± %v", fixed.Eta[0], fixed.EtaSD[0], gm[0], gs[0])
	}
	if !(own.EtaSD[1] > 1.5*fixed.EtaSD[1]) || own.Eta[0] == fixed.Eta[0] {
		t.Errorf("new subject: sd %v with its random effect, %v without; known subject: %v with, %v without", own.EtaSD[1], fixed.EtaSD[1], own.Eta[0], fixed.Eta[0])
	}
}
