// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command nested simulates data of a nested model, schools with classes
// in them,
//
//	eta = -0.5 + 1.0 x + u_school + v_class,  u ~ N(0, 1), v ~ N(0, 0.5^2),
//
// with a Bernoulli response y and a Gaussian one z = eta + N(0, 0.8^2), for
// glmmfit's (1 | school/class) and lme4's. Each school has -classes
// classes of -rows rows; the seed fixes the data. It writes the CSV to
// -out and the truth to standard output:
//
//	go run ./benchmarks/nested -schools 300 -out benchmarks/nested/nested_sim.csv
//	go run ./benchmarks/nested -schools 100000 -rows 4 -out /tmp/nested_1e5.csv
//
// benchmarks/nested/nested.R fits the first with glmer and lmer
// (nested_peers.csv, read by cmd/glmmfit's TestPeerNested);
// results.md has the fits.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
)

// The simulated truth.
const (
	beta0, beta1 = -0.5, 1.0
	sdSchool     = 1.0
	sdClass      = 0.5
	sigma        = 0.8
)

func main() {
	schools := flag.Int("schools", 300, "number of schools")
	classes := flag.Int("classes", 3, "classes a school")
	rows := flag.Int("rows", 6, "rows a class")
	seed := flag.Uint64("seed", 1, "seed")
	out := flag.String("out", "", "CSV file to write")
	flag.Parse()
	if *out == "" {
		log.Fatal("nested: -out is needed")
	}
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "y,z,x,school,class")
	rng := rand.New(rand.NewPCG(*seed, 2026))
	for s := range *schools {
		u := sdSchool * rng.NormFloat64()
		for c := range *classes {
			v := sdClass * rng.NormFloat64()
			for range *rows {
				x := rng.NormFloat64()
				eta := beta0 + beta1*x + u + v
				y := 0
				if rng.Float64() < 1/(1+math.Exp(-eta)) {
					y = 1
				}
				z := eta + sigma*rng.NormFloat64()
				fmt.Fprintf(w, "%d,%.5f,%.5f,s%d,c%d\n", y, z, x, s+1, c+1)
			}
		}
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s: %d schools x %d classes x %d rows; truth (Intercept) %g, x %g, sd(school) %g, sd(school:class) %g, sigma %g (z)\n",
		*out, *schools, *classes, *rows, beta0, beta1, sdSchool, sdClass, sigma)
}
