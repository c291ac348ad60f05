// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// tinyPoisson returns a Poisson model of six subjects of four counts
// with prior sd 2: no fixed effects (p = 0), an intercept, or with p = 2
// also a slope on t = -1, 0, 1, 2, and a random intercept and, for r = 2, a random slope
// on t; and the counts it was built from.
func tinyPoisson(t *testing.T, p, r int) (*glmm.Model, [][]float64) {
	t.Helper()
	counts := [][]float64{{0, 1, 2, 1}, {3, 5, 2, 4}, {1, 0, 0, 2}, {6, 4, 7, 5}, {2, 2, 1, 3}, {0, 0, 1, 0}}
	var y, x, z []float64
	var group []int
	for i, c := range counts {
		for j, v := range c {
			tj := float64(j) - 1
			y = append(y, v)
			x = append(x, 1)
			if p == 2 {
				x = append(x, tj)
			}
			z = append(z, 1)
			if r == 2 {
				z = append(z, tj)
			}
			group = append(group, i)
		}
	}
	nobs := len(y)
	var xm mat.Matrix
	if p > 0 {
		xm = mat.NewDense(nobs, p, x)
	}
	m, err := glmm.New(glmm.Config{Family: glmm.Poisson, Y: y, X: xm, Z: mat.NewDense(nobs, r, z),
		Group: group, NumGroups: len(counts), PriorSD: 2})
	if err != nil {
		t.Fatal(err)
	}
	return m, counts
}

// bruteLogLik returns log p(y | beta, omega) of tinyPoisson's data by the
// trapezoid rule with spacing h over u ~ N(0, I) on [-9, 9]^r, b = W^-T u.
func bruteLogLik(counts [][]float64, r int, beta, omega []float64, h float64) float64 {
	w := make([]float64, r*r)
	glmm.OmegaToW(omega, r, w)
	var total float64
	steps := int(math.Round(18 / h))
	for _, c := range counts {
		var acc float64
		u := make([]float64, r)
		b := make([]float64, r)
		var walk func(a int, logw float64)
		walk = func(a int, logw float64) {
			if a == r {
				// b = W^-T u: back substitution on W' (upper triangular).
				for k := r - 1; k >= 0; k-- {
					s := u[k]
					for l := k + 1; l < r; l++ {
						s -= w[l*r+k] * b[l]
					}
					b[k] = s / w[k*r+k]
				}
				ll := logw
				for j, v := range c {
					tj := float64(j) - 1
					eta := beta[0] + beta[1]*tj + b[0]
					if r == 2 {
						eta += b[1] * tj
					}
					lg, _ := math.Lgamma(v + 1)
					ll += v*eta - math.Exp(eta) - lg
				}
				acc += math.Exp(ll)
				return
			}
			for s := 0; s <= steps; s++ {
				u[a] = -9 + float64(s)*h
				lw := logw - 0.5*u[a]*u[a] + math.Log(h/math.Sqrt(2*math.Pi))
				if s == 0 || s == steps {
					lw += math.Log(0.5)
				}
				walk(a+1, lw)
			}
		}
		walk(0, 0)
		total += math.Log(acc)
	}
	return total
}

// TestIntegratorBruteForce: log p(y | theta_g) by adaptive Gauss–Hermite
// quadrature with the nodes Adapt picks agrees with the trapezoid rule
// (checked by halving its spacing) to 1e-3, for r = 1 and r = 2, at the
// prior's centre and at a point with large random effects; the Laplace
// approximation alone does not, so the test can tell.
func TestIntegratorBruteForce(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		r      int
		thetaG []float64
	}{
		{1, []float64{0.5, 0.1, 0}},
		{1, []float64{0.3, -0.2, -1.2}},
		{2, []float64{0.5, 0.1, 0, 0.3, 0.5}},
		{2, []float64{0.3, -0.2, -1, 0.5, 0.2}},
	} {
		m, counts := tinyPoisson(t, 2, c.r)
		p := 2
		want := bruteLogLik(counts, c.r, c.thetaG[:p], c.thetaG[p:], 0.05)
		if half := bruteLogLik(counts, c.r, c.thetaG[:p], c.thetaG[p:], 0.025); math.Abs(half-want) > 1e-6 {
			t.Fatalf("r=%d: the trapezoid rule has not converged: %v and %v", c.r, want, half)
		}
		in, err := posterior.NewIntegrator(ctx, m, 2)
		if err != nil {
			t.Fatal(err)
		}
		qerr, err := in.Adapt(c.thetaG, 1e-4)
		if err != nil {
			t.Fatal(err)
		}
		fewest, most := in.Nodes()
		got, err := in.LogLik(c.thetaG)
		if err != nil {
			t.Fatal(err)
		}
		if most < 3 || !(qerr <= 1e-4) || math.Abs(got-want) > 1e-3 {
			t.Errorf("r=%d at %v: %v with %d to %d nodes (error %.2g), brute force %v", c.r, c.thetaG, got, fewest, most, qerr, want)
		}
		t.Logf("r=%d at %v: %.6f with %d to %d nodes, brute force %.6f", c.r, c.thetaG, got, fewest, most, want)
		if err := in.SetNodes(1); err != nil {
			t.Fatal(err)
		}
		laplace, err := in.LogLik(c.thetaG)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(laplace-want) < 1e-3 {
			t.Errorf("r=%d at %v: the Laplace approximation %v is as good; the test cannot tell them apart", c.r, c.thetaG, laplace)
		}
		if err := in.SetNodes(6); err == nil {
			t.Error("SetNodes(6): no error")
		}
		in.Close()
	}
}

// TestIntegratorAllocs: LogLik, which the correction's draws and its
// Laplace step call thousands of times, allocates nothing.
func TestIntegratorAllocs(t *testing.T) {
	m, _ := tinyPoisson(t, 2, 2)
	in, err := posterior.NewIntegrator(context.Background(), m, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	theta := []float64{0.5, 0.1, 0, 0.3, 0.5}
	if _, err := in.Adapt(theta, 1e-4); err != nil {
		t.Fatal(err)
	}
	if a := testing.AllocsPerRun(50, func() {
		if _, err := in.LogLik(theta); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("%v allocations per LogLik", a)
	}
}

// toenailLike returns a model of toenail-like data: a Bernoulli random
// intercept of sd 3 on 7 observations per subject, simulated with seed.
func toenailLike(tb testing.TB, subjects int, seed uint64) *glmm.Model {
	fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: "bernoulli", Subjects: subjects, Obs: 7,
		Beta: []float64{-1.5, -0.4}, RECov: [][]float64{{9}}, Seed: seed})
	if err != nil {
		tb.Fatal(err)
	}
	f, _ := formula.Parse(truth.Formula)
	d, err := formula.Build(f, fr, formula.Options{Family: glmm.Bernoulli})
	if err != nil {
		tb.Fatal(err)
	}
	return d.Model()
}

// BenchmarkIntegratorLogLik reports the cost of one subject's integral on
// toenail-like data, at draws of theta_g about the point of Adapt, as the
// correction of q takes them.
func BenchmarkIntegratorLogLik(b *testing.B) {
	m := toenailLike(b, 300, 1)
	in, err := posterior.NewIntegrator(context.Background(), m, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer in.Close()
	theta := []float64{-1.5, -0.4, -math.Log(3)}
	if _, err := in.Adapt(theta, 0); err != nil {
		b.Fatal(err)
	}
	fewest, most := in.Nodes()
	// Draws about a posterior sd of 0.2 in beta and 0.1 in omega away.
	rnd := rand.New(rand.NewPCG(1, 2))
	draws := make([][]float64, 16)
	for d := range draws {
		draws[d] = []float64{theta[0] + 0.2*rnd.NormFloat64(), theta[1] + 0.2*rnd.NormFloat64(), theta[2] + 0.1*rnd.NormFloat64()}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for k := range b.N {
		if _, err := in.LogLik(draws[k%len(draws)]); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*300), "ns/subject")
	b.ReportMetric(float64(fewest), "fewest-nodes")
	b.ReportMetric(float64(most), "most-nodes")
}

// labelledToy is gaussToy with a Hessian of the wrong sign and subjects
// labelled as glmm.Model labels them.
type labelledToy struct{ gaussToy }

func (labelledToy) LocalHessian(_ vi.Workspace, _ int, _, _, h []float64) { h[0] = 1 }

func (labelledToy) GroupName() string { return "patient" }

func (m labelledToy) GroupLevels() []string {
	l := make([]string, len(m.y))
	for i := range l {
		l[i] = fmt.Sprintf("p%d", i+1)
	}
	return l
}

// TestIntegratorNamesSubject: where a subject cannot be integrated, the
// error names it by the grouping factor and its level when the target
// labels its subjects, and by its number otherwise.
func TestIntegratorNamesSubject(t *testing.T) {
	toy := gaussToy{x: []float64{0, 1, 2}, y: []float64{0.5, -0.2, 1}}
	for _, c := range []struct {
		t    posterior.LocalTarget
		want string
	}{
		{labelledToy{toy}, `integrating the random effects of patient "p1": the curvature at the conditional mode is not positive definite`},
		{unlabelledToy{toy}, "integrating subject 1: the curvature"},
	} {
		in, err := posterior.NewIntegrator(context.Background(), c.t, 1)
		if err != nil {
			t.Fatal(err)
		}
		_, err = in.LogLik([]float64{0, 0})
		in.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one containing %q", err, c.want)
		}
	}
}

// unlabelledToy is labelledToy without labels.
type unlabelledToy struct{ gaussToy }

func (unlabelledToy) LocalHessian(_ vi.Workspace, _ int, _, _, h []float64) { h[0] = 1 }

// pointwise is a glmm.Model whose one-dimensional quadrature sums are
// declined, so that the Integrator sums SubjectLogDensity point by point.
type pointwise struct{ *glmm.Model }

func (pointwise) SubjectQuadrature(any, float64, float64, []float64, []float64, []float64, float64) (s0, s1, s2 float64, ok bool) {
	return 0, 0, 0, false
}

// TestIntegratorQuadratureSums: on Bernoulli data, where glmm.Model sums a
// subject's quadrature itself, LogLik and LocalMoments equal the sums
// point by point, and LogLik allocates nothing.
func TestIntegratorQuadratureSums(t *testing.T) {
	m := toenailLike(t, 80, 2)
	ctx := context.Background()
	thetas := []float64{-1.5, -0.4, -math.Log(3), -1.2, -0.3, -1}
	var got, want [2]float64
	var gotMean, gotCov, wantMean, wantCov []float64
	for k, target := range []posterior.LocalTarget{m, pointwise{m}} {
		in, err := posterior.NewIntegrator(ctx, target, 2)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := in.Adapt(thetas[:3], 0); err != nil {
			t.Fatal(err)
		}
		if _, most := in.Nodes(); most < 10 {
			t.Fatalf("at most %d nodes: the test wants skewed subjects", most)
		}
		v := [2]float64{}
		for s := range 2 {
			if v[s], err = in.LogLik(thetas[3*s : 3*s+3]); err != nil {
				t.Fatal(err)
			}
		}
		mean, cov, err := in.LocalMoments(thetas, []float64{0.3, 0.7})
		if err != nil {
			t.Fatal(err)
		}
		if k == 0 {
			got, gotMean, gotCov = v, mean, cov
			if a := testing.AllocsPerRun(20, func() {
				if _, err := in.LogLik(thetas[:3]); err != nil {
					t.Fatal(err)
				}
			}); a != 0 {
				t.Errorf("%v allocations per LogLik", a)
			}
		} else {
			want, wantMean, wantCov = v, mean, cov
		}
		in.Close()
	}
	for s := range got {
		if math.Abs(got[s]-want[s]) > 1e-11*math.Abs(want[s]) {
			t.Errorf("log p(y | theta_%d): %v, point by point %v", s, got[s], want[s])
		}
	}
	for i := range wantMean {
		if math.Abs(gotMean[i]-wantMean[i]) > 1e-10*(1+math.Abs(wantMean[i])) || math.Abs(gotCov[i]-wantCov[i]) > 1e-10*wantCov[i] {
			t.Errorf("subject %d: mean %v, variance %v; point by point %v, %v", i, gotMean[i], gotCov[i], wantMean[i], wantCov[i])
		}
	}
}
