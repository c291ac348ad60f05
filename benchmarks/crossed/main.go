// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Crossed measures how the Gaussian approximation copes with a crossed
// factor of many levels, whose effects join the global block: for each
// number of levels it simulates Bernoulli data (subjects with a random
// intercept of sd 0.3, a covariate, a crossed factor of sd 0.5), fits it
// by GVA from glmm's Start, and prints the lower bound at every window of
// the trace and at the end. A steady fit's bound rises to a plateau; the
// measurements behind vi.StepShared and glmm.MaxCrossedLevels are its
// output (results.md).
//
//	go run ./benchmarks/crossed -levels 30,100,300,1000
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

func main() {
	levels := flag.String("levels", "30,50,70,100", "comma-separated numbers of levels of the crossed factor")
	subjects := flag.Int("subjects", 2000, "subjects")
	rows := flag.Int("rows", 15, "rows per subject")
	seeds := flag.Int("seeds", 2, "fits per size, seeds 1..N")
	flag.Parse()
	for _, f := range strings.Split(*levels, ",") {
		nl, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || nl < 2 {
			log.Fatalf("crossed: bad -levels entry %q", f)
		}
		m, err := model(nl, *subjects, *rows)
		if err != nil {
			log.Fatal(err)
		}
		for seed := 1; seed <= *seeds; seed++ {
			res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: uint64(seed)})
			if err != nil {
				log.Fatal(err)
			}
			var tr []string
			for _, t := range res.Trace {
				tr = append(tr, fmt.Sprintf("%.0f", t.LowerBound))
			}
			_, _, _, omega := m.CrossedFactor(0)
			nr := res.N * res.R
			fmt.Printf("levels %d seed %d: %s after %d iterations, bound %.1f ± %.2f, crossed sd %.3f (truth 0.5); windows: %s\n",
				nl, seed, res.Status, res.Iterations, res.LowerBound, res.LowerBoundSE, math.Exp(-res.Mu[nr+omega]), strings.Join(tr, " "))
		}
	}
}

// model simulates the data and returns the model.
func model(levels, subjects, rows int) (*glmm.Model, error) {
	rng := rand.New(rand.NewPCG(uint64(levels), 7))
	u := make([]float64, levels)
	for l := range u {
		u[l] = 0.5 * rng.NormFloat64()
	}
	nobs := subjects * rows
	x := mat.NewDense(nobs, 2, nil)
	z := mat.NewDense(nobs, 1, nil)
	y := make([]float64, nobs)
	group := make([]int, nobs)
	item := make([]int, nobs)
	k := 0
	for i := range subjects {
		b := 0.3 * rng.NormFloat64()
		for range rows {
			l := rng.IntN(levels)
			xv := rng.NormFloat64()
			x.Set(k, 0, 1)
			x.Set(k, 1, xv)
			z.Set(k, 0, 1)
			eta := 0.2 + 0.3*xv + b + u[l]
			if rng.Float64() < 1/(1+math.Exp(-eta)) {
				y[k] = 1
			}
			group[k], item[k] = i, l
			k++
		}
	}
	return glmm.New(glmm.Config{Family: glmm.Bernoulli, Y: y, X: x, Z: z, Group: group, NumGroups: subjects,
		Crossed: []glmm.Crossed{{Name: "item", Index: item, NumLevels: levels}}, CrossedLimit: levels})
}
