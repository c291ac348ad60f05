// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets_test

import (
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/sparsevi/sparsevi/datasets"
)

func ExampleReadCSV() {
	const in = "id,dose,arm\n" +
		"s1,1.5,treated\n" +
		"s2,NA,control\n" +
		"s3,2,?\n"
	f, err := datasets.ReadCSV(strings.NewReader(in))
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range f.Columns() {
		fmt.Printf("%s: %v, %d missing\n", c.Name, c.Kind, c.NumMissing())
	}
	arm, _ := f.Column("arm")
	fmt.Println(arm.Levels())
	// Output:
	// id: categorical, 0 missing
	// dose: numeric, 1 missing
	// arm: categorical, 1 missing
	// [control treated]
}

func ExampleParseError() {
	_, err := datasets.ReadCSV(strings.NewReader("y,x\n1,2\n3,NaN\n"))
	fmt.Println(err)
	var pe *datasets.ParseError
	if errors.As(err, &pe) {
		fmt.Println(pe.Line, pe.Column, pe.Name, errors.Is(err, datasets.ErrNonFinite))
	}
	// Output:
	// line 3, column 2 ("x"): non-finite or out-of-range number: "NaN"
	// 3 2 x true
}

func ExampleFrame_SetCategorical() {
	f, err := datasets.ReadCSV(strings.NewReader("period,n\n1,4\n2,5\n10,6\n"))
	if err != nil {
		log.Fatal(err)
	}
	if err := f.SetCategorical("period"); err != nil {
		log.Fatal(err)
	}
	p, _ := f.Column("period")
	fmt.Println(p.Kind, p.Levels())
	// Output:
	// categorical [1 10 2]
}

func ExampleSimulate() {
	f, truth, err := datasets.Simulate(datasets.SimSpec{
		Family:   "bernoulli",
		Subjects: 3,
		Obs:      2,
		Beta:     []float64{-1, 0.5, 1}, // intercept, t, x1
		RECov:    [][]float64{{1, 0.2}, {0.2, 0.5}},
		Seed:     1,
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(truth.Formula)
	fmt.Println(f.Names(), f.NumRows(), len(truth.B), len(truth.B[0]))
	// Output:
	// y ~ 1 + t + x1 + (1 + t | id)
	// [id t x1 y] 6 3 2
}

func ExampleToenail() {
	f, err := datasets.Toenail(datasets.DataDir(""), datasets.ToenailOptions{Time: datasets.Raw})
	if err != nil {
		log.Fatal(err)
	}
	// y ~ Trt + t + TrtT + (1 | patientID)
	id, _ := f.Column("patientID")
	fmt.Println(f.NumRows(), len(id.Levels()))
}

func ExampleICD9Group() {
	for _, code := range []string{"250.83", "428", "V45", "786"} {
		fmt.Println(code, datasets.ICD9Group(code))
	}
	// Output:
	// 250.83 diabetes
	// 428 circulatory
	// V45 other
	// 786 respiratory
}
