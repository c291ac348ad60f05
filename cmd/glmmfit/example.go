// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	_ "embed"

	"github.com/sparsevi/sparsevi/datasets"
)

// exampleCSV is a small longitudinal data set drawn by datasets.Simulate
// from exampleSpec and written by datasets.WriteCSV. It is committed as
// example.csv so that 'glmmfit fit -example' needs no data directory; a test
// checks that the simulator still reproduces it byte for byte (run
// 'go test ./cmd/glmmfit -run TestExampleData -update' to rewrite it after a
// deliberate change of the simulator). The same file is made by
//
//	glmmfit simulate -family poisson -subjects 80 -obs 6 -beta 0.6,-0.5,0.3 \
//	    -re-cov '0.36,0.06;0.06,0.16' -seed 2026 -out example.csv
//
//go:embed example.csv
var exampleCSV []byte

const exampleName = "example.csv"

// exampleSpec is the simulation behind exampleCSV: 80 subjects with 6 visits
// each at times 0, 0.2, ..., 1, one standard normal covariate x1, Poisson
// counts with a correlated random intercept and slope in t.
var exampleSpec = datasets.SimSpec{
	Family:   "poisson",
	Subjects: 80,
	Obs:      6,
	Beta:     []float64{0.6, -0.5, 0.3},
	RECov:    [][]float64{{0.36, 0.06}, {0.06, 0.16}},
	Seed:     2026,
}

// The model fitted by 'glmmfit fit -example': the generating model.
const (
	exampleFormula = "y ~ t + x1 + (1 + t | id)"
	exampleFamily  = "poisson"
)
