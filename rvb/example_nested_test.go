// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb_test

import (
	"context"
	"fmt"
	"log"
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// A nested Bernoulli model, (1|school/class): 200 schools of 2 or 3
// classes, fitted by RVB1 expanded at the model's start, and the random
// effects summarised on their own scale. Each school's block holds its
// effect and its classes', so the blocks vary in size.
func ExampleNewNestedAtStart() {
	rng := rand.New(rand.NewPCG(1, 2))
	var y, x []float64
	var school, class []int
	classes := 0
	for s := range 200 {
		u := rng.NormFloat64()
		for range 2 + s%2 {
			v := 0.5 * rng.NormFloat64()
			for range 6 {
				xx := rng.NormFloat64()
				eta := -0.5 + xx + u + v
				yy := 0.0
				if rng.Float64() < 1/(1+math.Exp(-eta)) {
					yy = 1
				}
				y, x = append(y, yy), append(x, 1, xx)
				school, class = append(school, s), append(class, classes)
			}
			classes++
		}
	}
	m, err := glmm.NewNested(glmm.NestedConfig{Family: glmm.Bernoulli, Y: y, X: mat.NewDense(len(y), 2, x),
		Outer: school, NumOuter: 200, Inner: class, NumInner: classes, OuterName: "school", InnerName: "school:class"})
	if err != nil {
		log.Fatal(err)
	}
	pool := parallel.NewPool(context.Background(), 2)
	t, err := rvb.NewNestedAtStart(pool, m, rvb.RVB1)
	pool.Close()
	if err != nil {
		log.Fatal(err)
	}
	res, err := vi.Fit(context.Background(), t, vi.Settings{Method: vi.BlockDiag, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	// theta_g's marginals are q's own; the effects' are mapped back.
	mean, _ := res.GlobalMoments()
	s, err := posterior.SummarizeRVB(context.Background(), res, t, 200, 1)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("beta %.1f, sd(school) %.1f\n", mean[:2], math.Exp(-mean[2]))
	fmt.Printf("%d effects for %d schools and %d classes\n", len(s.LocalMean), len(res.Sizes), classes)
	// Output:
	// beta [-0.5 1.0], sd(school) 0.8
	// 700 effects for 200 schools and 500 classes
}
