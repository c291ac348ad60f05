// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

func TestSimulateShape(t *testing.T) {
	for _, test := range []struct {
		spec    SimSpec
		names   []string
		formula string
	}{
		{
			spec:    SimSpec{Family: "bernoulli", Subjects: 7, Obs: 5, Beta: []float64{-1, 0.5, 1}, RECov: [][]float64{{1}}, Seed: 1},
			names:   []string{"id", "t", "x1", "y"},
			formula: "y ~ 1 + t + x1 + (1 | id)",
		},
		{
			spec:    SimSpec{Family: "poisson", Subjects: 12, Obs: 2, ObsMax: 6, Beta: []float64{0.5}, RECov: [][]float64{{0.5, 0.1}, {0.1, 0.3}}, Seed: 2},
			names:   []string{"id", "t", "y"},
			formula: "y ~ 1 + (1 + t | id)",
		},
		{
			spec: SimSpec{Family: "binomial", Subjects: 10001, Obs: 1, Trials: 3, Beta: []float64{0, 1, -1, 2},
				RECov: [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}, Seed: 3},
			names:   []string{"id", "t", "x1", "x2", "y", "trials", "failures"},
			formula: "cbind(y, failures) ~ 1 + t + x1 + x2 + (1 + t + x1 | id)",
		},
		{
			// A random slope on x1 needs x1 even without its fixed effect.
			spec:    SimSpec{Family: "binomial", Subjects: 3, Obs: 4, Beta: []float64{0, 1}, RECov: [][]float64{{1, 0, 0}, {0, 1, 0}, {0, 0, 1}}},
			names:   []string{"id", "t", "x1", "y", "trials", "failures"},
			formula: "cbind(y, failures) ~ 1 + t + (1 + t + x1 | id)",
		},
	} {
		t.Run(test.spec.Family+test.formula, func(t *testing.T) {
			spec := test.spec
			f, truth, err := Simulate(spec)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.Names(), test.names) || truth.Formula != test.formula {
				t.Fatalf("got columns %q, formula %q; want %q, %q", f.Names(), truth.Formula, test.names, test.formula)
			}
			if len(truth.B) != spec.Subjects || len(truth.B[0]) != len(spec.RECov) {
				t.Fatalf("B is %d×%d", len(truth.B), len(truth.B[0]))
			}
			id := mustCol(t, f, "id", Categorical)
			lev := id.Levels()
			width := max(4, len(fmt.Sprint(spec.Subjects)))
			if len(lev) != spec.Subjects || lev[0] != fmt.Sprintf("s%0*d", width, 1) ||
				lev[len(lev)-1] != fmt.Sprintf("s%0*d", width, spec.Subjects) {
				t.Fatalf("got %d subjects from %q to %q", len(lev), lev[0], lev[len(lev)-1])
			}
			// Rows of a subject are contiguous, n_i within bounds, and t is
			// j/(n_i-1).
			tt := mustCol(t, f, "t", Numeric).Num
			y := mustCol(t, f, "y", Numeric).Num
			hi := max(spec.Obs, spec.ObsMax)
			for start := 0; start < f.NumRows(); {
				end := start
				for end < f.NumRows() && id.Str[end] == id.Str[start] {
					end++
				}
				n := end - start
				if n < spec.Obs || n > hi {
					t.Fatalf("subject %s has %d observations, want %d to %d", id.Str[start], n, spec.Obs, hi)
				}
				for j := range n {
					want := 0.0
					if n > 1 {
						want = float64(j) / float64(n-1)
					}
					if tt[start+j] != want {
						t.Fatalf("subject %s, obs %d: t = %v, want %v", id.Str[start], j, tt[start+j], want)
					}
				}
				start = end
			}
			trials := 1.0
			if spec.Family == "binomial" {
				trials = float64(spec.Trials)
				if spec.Trials == 0 {
					trials = DefaultTrials
				}
				tr := mustCol(t, f, "trials", Numeric).Num
				fl := mustCol(t, f, "failures", Numeric).Num
				for i := range y {
					if tr[i] != trials || fl[i] != trials-y[i] {
						t.Fatalf("row %d: y, trials, failures = %v, %v, %v", i, y[i], tr[i], fl[i])
					}
				}
			}
			for i, v := range y {
				if v < 0 || v != math.Trunc(v) || (spec.Family != "poisson" && v > trials) {
					t.Fatalf("row %d: y = %v", i, v)
				}
			}

			// Deterministic: the same spec gives the same data, another
			// seed other data.
			g, truth2, err := Simulate(spec)
			if err != nil {
				t.Fatal(err)
			}
			if msg := framesEqual(f, g); msg != "" || !slices.EqualFunc(truth.B, truth2.B, slices.Equal) {
				t.Errorf("same seed, different result: %s", msg)
			}
			spec.Seed++
			h, _, err := Simulate(spec)
			if err != nil {
				t.Fatal(err)
			}
			if framesEqual(f, h) == "" {
				t.Error("different seeds, same data")
			}
		})
	}
}

// TestSimulateRandomEffects checks that the random effects have the
// requested covariance: each entry of their sample covariance lies within 4
// standard errors, sqrt((S_kk S_mm + S_km^2)/n) for normal data, of RECov.
func TestSimulateRandomEffects(t *testing.T) {
	for _, cov := range [][][]float64{
		{{0.7}},
		{{1, -0.6}, {-0.6, 0.5}},
		{{2, 0.5, -0.3}, {0.5, 1, 0.2}, {-0.3, 0.2, 0.4}},
		{{1, 1}, {1, 1}}, // singular: b_i2 = b_i1
	} {
		const n = 20000
		_, truth, err := Simulate(SimSpec{Family: "bernoulli", Subjects: n, Obs: 1, Beta: []float64{0}, RECov: cov, Seed: 42})
		if err != nil {
			t.Fatal(err)
		}
		r := len(cov)
		for k := range r {
			for m := range r {
				var s float64
				for _, b := range truth.B {
					s += b[k] * b[m]
				}
				got := s / n
				se := math.Sqrt((cov[k][k]*cov[m][m] + cov[k][m]*cov[k][m]) / n)
				if math.Abs(got-cov[k][m]) > 4*se {
					t.Errorf("RECov %v: sample cov[%d][%d] = %.4f, want %v ± %.4f", cov, k, m, got, cov[k][m], 4*se)
				}
			}
		}
	}
}

// TestSimulateResponse checks the response given the linear predictor,
// recomputed here from the frame and the true B: the standardized sums of
// y - mu, and of t(y - mu) and x1(y - mu), are within 4 of zero, which
// fails if the intercept, the random slope on t or the one on x1 were
// wrong.
func TestSimulateResponse(t *testing.T) {
	for _, test := range []struct {
		family string
		beta   []float64
		cov    [][]float64
		trials int
	}{
		{"bernoulli", []float64{0.7}, [][]float64{{0}}, 0},
		{"poisson", []float64{math.Log(3)}, [][]float64{{0}}, 0},
		{"bernoulli", []float64{-0.5, 1, 0.5}, [][]float64{{1, 0.3, 0}, {0.3, 1, 0.2}, {0, 0.2, 1}}, 0},
		{"poisson", []float64{0.2, -0.5, 0.3, -0.2}, [][]float64{{0.5, -0.1, 0.05}, {-0.1, 0.3, 0}, {0.05, 0, 0.2}}, 0},
		{"binomial", []float64{-1, 2, -0.5}, [][]float64{{1, 0.5}, {0.5, 1}}, 5},
		{"binomial", []float64{0.3}, [][]float64{{0}}, 0},
		{"binomial", []float64{-4, 1, 0.5}, [][]float64{{0.5}}, 1000}, // large-N binomial sampler
	} {
		t.Run(fmt.Sprint(test.family, test.beta), func(t *testing.T) {
			spec := SimSpec{Family: test.family, Subjects: 3000, Obs: 3, ObsMax: 8, Beta: test.beta, RECov: test.cov, Trials: test.trials, Seed: 7}
			f, truth, err := Simulate(spec)
			if err != nil {
				t.Fatal(err)
			}
			id := mustCol(t, f, "id", Categorical).Str
			tt := mustCol(t, f, "t", Numeric).Num
			y := mustCol(t, f, "y", Numeric).Num
			var x [][]float64
			for k := 1; ; k++ {
				c, ok := f.Column(fmt.Sprint("x", k))
				if !ok {
					break
				}
				x = append(x, c.Num)
			}
			trials := 1.0
			if test.family == "binomial" {
				trials = mustCol(t, f, "trials", Numeric).Num[0]
			}
			subject := 0
			var s0, v0, s1, v1, s2, v2 float64
			for i := range y {
				if i > 0 && id[i] != id[i-1] {
					subject++
				}
				b := truth.B[subject]
				eta := test.beta[0] + b[0]
				if len(test.beta) > 1 {
					eta += test.beta[1] * tt[i]
				}
				for k := 2; k < len(test.beta); k++ {
					eta += test.beta[k] * x[k-2][i]
				}
				if len(b) > 1 {
					eta += b[1] * tt[i]
				}
				if len(b) > 2 {
					eta += b[2] * x[0][i]
				}
				var mu, v float64
				if test.family == "poisson" {
					mu = math.Exp(eta)
					v = mu
				} else {
					p := 1 / (1 + math.Exp(-eta))
					mu, v = trials*p, trials*p*(1-p)
				}
				res := y[i] - mu
				s0 += res
				v0 += v
				s1 += tt[i] * res
				v1 += tt[i] * tt[i] * v
				if len(x) > 0 {
					s2 += x[0][i] * res
					v2 += x[0][i] * x[0][i] * v
				}
			}
			if subject != spec.Subjects-1 {
				t.Fatalf("walked %d subjects", subject+1)
			}
			for _, z := range []struct {
				name string
				s, v float64
			}{{"1", s0, v0}, {"t", s1, v1}, {"x1", s2, v2}} {
				if z.v > 0 && math.Abs(z.s/math.Sqrt(z.v)) > 4 {
					t.Errorf("standardized score for %s is %.2f", z.name, z.s/math.Sqrt(z.v))
				}
			}
		})
	}
}

// TestSimulateGLMMean checks the plain mean of y against its closed form
// when the random effects are zero.
func TestSimulateGLMMean(t *testing.T) {
	for _, test := range []struct {
		family string
		beta0  float64
		mean   float64
		sd     float64 // of one observation
	}{
		{"bernoulli", 0.7, 1 / (1 + math.Exp(-0.7)), math.Sqrt(1 / (1 + math.Exp(-0.7)) * (1 - 1/(1+math.Exp(-0.7))))},
		{"bernoulli", -3, 1 / (1 + math.Exp(3)), math.Sqrt(1 / (1 + math.Exp(3)) * (1 - 1/(1+math.Exp(3))))},
		{"bernoulli", 2, 1 / (1 + math.Exp(-2)), math.Sqrt(1 / (1 + math.Exp(-2)) * (1 - 1/(1+math.Exp(-2))))},
		{"poisson", math.Log(2.5), 2.5, math.Sqrt(2.5)},
		{"poisson", -20, math.Exp(-20), math.Sqrt(math.Exp(-20))},
	} {
		const n = 40000
		f, _, err := Simulate(SimSpec{Family: test.family, Subjects: n / 4, Obs: 4, Beta: []float64{test.beta0}, RECov: [][]float64{{0}}, Seed: 11})
		if err != nil {
			t.Fatal(err)
		}
		y := mustCol(t, f, "y", Numeric).Num
		mean := floatSum(y) / float64(len(y))
		if se := test.sd / math.Sqrt(n); math.Abs(mean-test.mean) > 4*se+1e-12 {
			t.Errorf("%s beta0=%v: mean y = %.5f, want %.5f ± %.5f", test.family, test.beta0, mean, test.mean, 4*se)
		}
	}
}

func TestSimulateInvalid(t *testing.T) {
	ok := SimSpec{Family: "poisson", Subjects: 2, Obs: 2, Beta: []float64{0}, RECov: [][]float64{{1}}}
	for _, test := range []struct {
		name   string
		modify func(s *SimSpec)
	}{
		{"family", func(s *SimSpec) { s.Family = "gaussian" }},
		{"no subjects", func(s *SimSpec) { s.Subjects = 0 }},
		{"no obs", func(s *SimSpec) { s.Obs = 0 }},
		{"ObsMax below Obs", func(s *SimSpec) { s.Obs, s.ObsMax = 5, 3 }},
		{"too many rows", func(s *SimSpec) { s.Subjects, s.Obs = 1<<20, 1<<10 }},
		{"empty beta", func(s *SimSpec) { s.Beta = nil }},
		{"NaN beta", func(s *SimSpec) { s.Beta = []float64{0, math.NaN()} }},
		{"no RECov", func(s *SimSpec) { s.RECov = nil }},
		{"4x4 RECov", func(s *SimSpec) {
			s.RECov = [][]float64{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}, {0, 0, 0, 1}}
		}},
		{"ragged RECov", func(s *SimSpec) { s.RECov = [][]float64{{1, 0}, {0}} }},
		{"asymmetric RECov", func(s *SimSpec) { s.RECov = [][]float64{{1, 0.5}, {0.4, 1}} }},
		{"indefinite RECov", func(s *SimSpec) { s.RECov = [][]float64{{1, 2}, {2, 1}} }},
		{"negative variance", func(s *SimSpec) { s.RECov = [][]float64{{-1}} }},
		{"Inf in RECov", func(s *SimSpec) { s.RECov = [][]float64{{math.Inf(1)}} }},
		{"negative trials", func(s *SimSpec) { s.Family, s.Trials = "binomial", -1 }},
	} {
		t.Run(test.name, func(t *testing.T) {
			spec := ok
			test.modify(&spec)
			if _, _, err := Simulate(spec); !errors.Is(err, ErrSimSpec) {
				t.Errorf("got %v, want ErrSimSpec", err)
			}
		})
	}
	if _, _, err := Simulate(ok); err != nil {
		t.Errorf("valid spec: %v", err)
	}
	// A Poisson mean beyond any count is an error, not a hang.
	huge := ok
	huge.Beta = []float64{100}
	if _, _, err := Simulate(huge); err == nil {
		t.Error("no error for Poisson mean exp(100)")
	}
}

func TestCovFactor(t *testing.T) {
	for _, c := range [][][]float64{
		{{4}},
		{{0}},
		{{2, 0.5}, {0.5, 1}},
		{{1, 1}, {1, 1}},
		{{2, 0.5, -0.3}, {0.5, 1, 0.2}, {-0.3, 0.2, 0.4}},
		{{1, 0, 1}, {0, 0, 0}, {1, 0, 1}},
	} {
		L, err := covFactor(c)
		if err != nil {
			t.Errorf("%v: %v", c, err)
			continue
		}
		var llt mat.Dense
		llt.Mul(L, L.T())
		want := mat.NewDense(len(c), len(c), slices.Concat(c...))
		if !mat.EqualApprox(&llt, want, 1e-12) {
			t.Errorf("L L' = %v, want %v", mat.Formatted(&llt), c)
		}
	}
}

func TestSimulateWriteCSV(t *testing.T) {
	f, _, err := Simulate(SimSpec{Family: "binomial", Subjects: 20, Obs: 3, Beta: []float64{0, 1, 1}, RECov: [][]float64{{1}}, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, f); err != nil {
		t.Fatal(err)
	}
	g, err := ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if msg := framesEqual(f, g); msg != "" {
		t.Error(msg)
	}
}

func TestLogistic(t *testing.T) {
	for _, test := range []struct{ x, want float64 }{
		{0, 0.5},
		{2, 0.8807970779778823},
		{-2, 0.11920292202211755},
		{40, 1 - 4.248354255291589e-18},
		{-800, 0}, // exp(800) overflows; the result must not be NaN
		{800, 1},
		{-30, 9.357622968840175e-14 / (1 + 9.357622968840175e-14)}, // exp(-30)/(1+exp(-30))
	} {
		if got := logistic(test.x); math.IsNaN(got) || math.Abs(got-test.want) > 1e-14*test.want {
			t.Errorf("logistic(%v) = %v, want %v", test.x, got, test.want)
		}
	}
}
