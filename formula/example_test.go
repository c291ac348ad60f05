// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula_test

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
)

func ExampleParse() {
	f, err := formula.Parse("y ~ lbase*trt + lage + V4 + (1 + V4 | subject)")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(f)
	fmt.Println(f.Terms())
	fmt.Println(f.Group(), f.RandomTerms())

	// Errors name the offending token and its column.
	_, err = formula.Parse("y ~ lbase*trt + (1 | subject")
	fmt.Println(err)
	// Output:
	// y ~ 1 + lbase + trt + lage + V4 + lbase:trt + (1 + V4 | subject)
	// [lbase trt lage V4 lbase:trt]
	// subject [V4]
	// formula: "(" at character 17: unmatched (
}

// frame returns a small data frame: 6 counts y of 3 subjects, a numeric
// covariate x and a categorical one f.
func frame() *datasets.Frame {
	fr, err := datasets.NewFrame(
		datasets.NewNumeric("y", []float64{0, 3, 1, 4, 2, 2}),
		datasets.NewNumeric("x", []float64{0.5, 1, 1.5, 2, 2.5, 3}),
		datasets.NewCategorical("f", []string{"lo", "hi", "mid", "lo", "hi", "mid"}),
		datasets.NewCategorical("id", []string{"a", "a", "b", "b", "c", "c"}),
	)
	if err != nil {
		log.Fatal(err)
	}
	return fr
}

func ExampleBuild() {
	f, err := formula.Parse("y ~ x + f + (1 + x | id)")
	if err != nil {
		log.Fatal(err)
	}
	d, err := formula.Build(f, frame(), formula.Options{Family: glmm.Poisson})
	if err != nil {
		log.Fatal(err)
	}
	// Treatment contrasts against the first sorted level, "hi", named as
	// R names them.
	fmt.Println(d.FixedNames())
	fmt.Printf("%v\n", mat.Formatted(d.X()))
	fmt.Println(d.RandomNames(), d.GroupLevels(), d.Group())
	n, r, g := d.Model().Dims()
	fmt.Println("subjects", n, "random effects", r, "global", g)
	// Output:
	// [(Intercept) x flo fmid]
	// ⎡  1  0.5    1    0⎤
	// ⎢  1    1    0    0⎥
	// ⎢  1  1.5    0    1⎥
	// ⎢  1    2    1    0⎥
	// ⎢  1  2.5    0    0⎥
	// ⎣  1    3    0    1⎦
	// [(Intercept) x] [a b c] [0 0 1 1 2 2]
	// subjects 3 random effects 2 global 7
}

// R's rule for interactions: a factor is coded by contrasts only when the
// term without it is in the model.
func ExampleBuild_contrasts() {
	for _, s := range []string{"y ~ x + x:f + (1 | id)", "y ~ x:f + (1 | id)", "y ~ 0 + f + (1 | id)"} {
		f, err := formula.Parse(s)
		if err != nil {
			log.Fatal(err)
		}
		d, err := formula.Build(f, frame(), formula.Options{
			Family:    glmm.Poisson,
			Reference: map[string]string{"f": "lo"},
		})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(d.FixedNames())
	}
	// Output:
	// [(Intercept) x x:fhi x:fmid]
	// [(Intercept) x:flo x:fhi x:fmid]
	// [flo fhi fmid]
}

func ExampleDesign_NewData() {
	f, err := formula.Parse("y ~ x + f + (1 | id)")
	if err != nil {
		log.Fatal(err)
	}
	d, err := formula.Build(f, frame(), formula.Options{Family: glmm.Poisson})
	if err != nil {
		log.Fatal(err)
	}
	// New rows need no response; subject "z" is new.
	fresh, err := datasets.NewFrame(
		datasets.NewNumeric("x", []float64{4, 5}),
		datasets.NewCategorical("f", []string{"mid", "lo"}),
		datasets.NewCategorical("id", []string{"b", "z"}),
	)
	if err != nil {
		log.Fatal(err)
	}
	X, _, group, known, err := d.NewData(fresh)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%v\n", mat.Formatted(X))
	fmt.Println(group, known)
	// Output:
	// ⎡1  4  0  1⎤
	// ⎣1  5  1  0⎦
	// [1 -1] [true false]
}

func ExampleDataError() {
	f, err := formula.Parse("y ~ x + g + (1 | id)")
	if err != nil {
		log.Fatal(err)
	}
	_, err = formula.Build(f, frame(), formula.Options{Family: glmm.Poisson})
	fmt.Println(err)
	// Output:
	// formula: "g" at character 9: no such column in the data (columns: y, x, f, id)
}

// Each process of a fit over several (a vi.Group) builds the design of its
// own subjects with Options.Part: the first two subjects here, then the
// last, each coded from all the rows, so that the centring and scaling of
// the auto prior are the whole design's.
func ExampleOptions_part() {
	f, err := formula.Parse("y ~ x + f + (1 | id)")
	if err != nil {
		log.Fatal(err)
	}
	for _, share := range [][2]int{{0, 2}, {2, 3}} {
		opts := formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto,
			Part: func(n int) (lo, hi int, err error) { return share[0], share[1], nil }}
		d, err := formula.Build(f, frame(), opts)
		if err != nil {
			log.Fatal(err)
		}
		levels, lo, hi := d.PartOf()
		fm := d.FixedMap()
		fmt.Printf("subjects %v, [%d, %d) of %v (rows %v); x centred at %.2f, scaled by %.3f\n",
			d.GroupLevels(), lo, hi, levels, d.Rows(), fm.Center[1], fm.Scale[1])
	}
	// Output:
	// subjects [a b], [0, 2) of [a b c] (rows [0 1 2 3]); x centred at 1.75, scaled by 0.854
	// subjects [c], [2, 3) of [a b c] (rows [4 5]); x centred at 1.75, scaled by 0.854
}

// Arithmetic of one column, and scale(), named as R names them; new rows
// are transformed as the training rows were, scale() with their mean and
// sd.
func ExampleBuild_transformations() {
	f, err := formula.Parse("y ~ I(x^2) + log(x + 1) + scale(x) + (1 | id)")
	if err != nil {
		log.Fatal(err)
	}
	d, err := formula.Build(f, frame(), formula.Options{Family: glmm.Poisson})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.FixedNames())
	fresh, err := datasets.NewFrame(
		datasets.NewNumeric("x", []float64{1.75}),
		datasets.NewCategorical("id", []string{"z"}),
	)
	if err != nil {
		log.Fatal(err)
	}
	X, _, _, _, err := d.NewData(fresh)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%.4f\n", mat.Formatted(X))
	// Output:
	// [(Intercept) I(x^2) log(x + 1) scale(x)]
	// [1.0000  3.0625  1.0116  0.0000]
}

// A binomial response's trials in new rows, from its cbind() columns: a
// new observation of a row counts successes out of them.
func ExampleDesign_NewTrials() {
	train, err := datasets.NewFrame(
		datasets.NewNumeric("s", []float64{1, 0, 2, 3}),
		datasets.NewNumeric("n", []float64{3, 4, 3, 5}),
		datasets.NewNumeric("x", []float64{0.1, 0.2, 0.3, 0.4}),
		datasets.NewCategorical("id", []string{"a", "a", "b", "b"}),
	)
	if err != nil {
		log.Fatal(err)
	}
	f, err := formula.Parse("cbind(s, n - s) ~ x + (1 | id)")
	if err != nil {
		log.Fatal(err)
	}
	d, err := formula.Build(f, train, formula.Options{})
	if err != nil {
		log.Fatal(err)
	}
	fresh, err := datasets.NewFrame(
		datasets.NewNumeric("n", []float64{20, 7}),
		datasets.NewNumeric("x", []float64{0.5, 0.1}),
		datasets.NewCategorical("id", []string{"a", "new"}),
	)
	if err != nil {
		log.Fatal(err)
	}
	trials, err := d.NewTrials(fresh)
	fmt.Println(d.TrialColumns(), trials, err)
	// Output:
	// [n] [20 7] <nil>
}
