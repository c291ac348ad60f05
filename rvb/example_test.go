// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb_test

import (
	"context"
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/paper"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// A random-intercept Poisson model of six counts on three subjects: the
// log density of the RVB1 target at b~ = 0 and theta_g = 0, and the random
// effects that b~ = 0 stands for, the centres lambda_i.
func ExampleNewRVB1() {
	m, err := glmm.New(glmm.Config{
		Family:    glmm.Poisson,
		Y:         []float64{2, 0, 5, 3, 1, 4},
		X:         mat.NewDense(6, 2, []float64{1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1}),
		Z:         mat.NewDense(6, 1, []float64{1, 1, 1, 1, 1, 1}),
		Group:     []int{0, 0, 1, 1, 2, 2},
		NumGroups: 3,
	})
	if err != nil {
		log.Fatal(err)
	}
	t, err := rvb.NewRVB1(m)
	if err != nil {
		log.Fatal(err)
	}
	n, r, g := t.Dims()
	thetaG := make([]float64, g) // beta = 0, W = I
	btilde := make([]float64, n*r)
	lp, err := t.Local(t.NewWorkspace(), 0, n, thetaG, btilde, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	b := make([]float64, n*r)
	if err := t.ToOriginal(thetaG, btilde, b); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("method %v (default for %v: %v)\n", t.Method(), m.Family(), rvb.Default(m.Family()))
	fmt.Printf("log density %.4f\n", lp+t.Global(thetaG, nil))
	fmt.Printf("centres %.4f\n", b)
	// Output:
	// method rvb1 (default for poisson: rvb1)
	// log density -26.2093
	// centres [0.3115 1.2604 0.9194]
}

// Fit the paper's Toenail model with RVB2, the method for Bernoulli data,
// and summarise the random effects on their original scale.
func ExampleSummarize() {
	d, err := paper.Toenail(datasets.DataDir(""), datasets.ToenailOptions{})
	if err != nil {
		log.Fatal(err)
	}
	m := d.Model()
	t, err := rvb.New(m, rvb.Default(m.Family()))
	if err != nil {
		log.Fatal(err)
	}
	res, err := vi.Fit(context.Background(), t, vi.Settings{Method: vi.BlockDiag, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("lower bound %.1f (Table 11 convention %.1f)\n", res.LowerBound, m.PaperELBO(res.LowerBound))
	s, err := posterior.SummarizeRVB(context.Background(), res, t, 1000, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("patient %s: b = %.2f ± %.2f\n", m.GroupLevels()[0], s.LocalMean[0], s.LocalSD[0])
	fmt.Printf("beta = %.3f\n", s.GlobalMean[:m.P()])
}
