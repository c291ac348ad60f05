// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"fmt"
	"log"
	"math"

	"github.com/sparsevi/sparsevi/vi"
)

// means is a hierarchical model written by hand: group means b_i ~ N(mu,
// 1), one observation y_i ~ N(b_i, 1) of each, and mu ~ N(0, 10²). Its
// posterior is Gaussian, so GVA's is exact.
type means struct{ y []float64 }

func (m means) Dims() (n, r, g int)      { return len(m.y), 1, 1 }
func (means) NewWorkspace() vi.Workspace { return nil }

// Global is log p(mu), adding its gradient into grad.
func (means) Global(thetaG, grad []float64) float64 {
	mu := thetaG[0]
	if grad != nil {
		grad[0] -= mu / 100
	}
	return -0.5*math.Log(2*math.Pi*100) - 0.5*mu*mu/100
}

// Local is the sum over groups lo..hi-1 of log p(b_i | mu) + log p(y_i | b_i).
func (m means) Local(_ vi.Workspace, lo, hi int, thetaG, local, gradLocal, gradG []float64) (float64, error) {
	mu := thetaG[0]
	var f float64
	for i := lo; i < hi; i++ {
		b := local[i-lo]
		f += -math.Log(2*math.Pi) - 0.5*(b-mu)*(b-mu) - 0.5*(m.y[i]-b)*(m.y[i]-b)
		if gradLocal != nil {
			gradLocal[i-lo] = (mu - b) + (m.y[i] - b)
			gradG[0] += b - mu
		}
	}
	return f, nil
}

// Fit a model of one's own: any Target, here three group means. The
// posterior of mu is N(sum(y)/(n/2 + 1/100)/2, 1/(n/2 + 1/100)) in closed
// form (each y_i ~ N(mu, 2) once b_i is integrated out).
func ExampleFit() {
	m := means{y: []float64{1.2, 0.4, 2.0}}
	res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	prec := float64(len(m.y))/2 + 1.0/100
	exact := (1.2 + 0.4 + 2.0) / 2 / prec
	n, r, _ := m.Dims()
	fmt.Printf("%v; mu %.2f ± %.2f, exact %.2f ± %.2f\n", res.Status, res.Mu[n*r], math.Sqrt(res.GlobalCov().At(0, 0)), exact, math.Sqrt(1/prec))
	// Output:
	// converged; mu 1.19 ± 0.81, exact 1.19 ± 0.81
}

// Choose a step rule and set its own parameters; the fields left at zero
// keep their defaults, which the result reports filled in.
func ExampleRule() {
	m := means{y: []float64{1.2, 0.4, 2.0}}
	for _, rule := range []vi.Rule{vi.Snngm{Alpha0: 0.01}, vi.Adam{Alpha: 0.01}} {
		res, err := vi.Fit(context.Background(), m, vi.Settings{Rule: rule, Seed: 1})
		if err != nil {
			log.Fatal(err)
		}
		n, r, _ := m.Dims()
		fmt.Printf("%#v: %v; mu %.2f\n", res.Rule, res.Status, res.Mu[n*r])
	}
	// Output:
	// vi.Snngm{Alpha:0.033166247903554, Alpha0:0.01, Beta1:0.9, Beta2:0.999}: converged; mu 1.19
	// vi.Adam{Alpha:0.01, Beta1:0.9, Beta2:0.999, Eps:1e-08}: converged; mu 1.19
}
