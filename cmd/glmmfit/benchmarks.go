// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"strings"

	"github.com/sparsevi/sparsevi/datasets"
)

// benchmark is a data set of -dataset: a loader of package datasets, which
// adds the derived columns of Tan's paper, and the family of the paper's
// model (its formula comes from package paper).
type benchmark struct {
	name   string
	family string
	load   func(dir string) (*datasets.Frame, error)
}

var benchmarks = []benchmark{
	{"epilepsy", "poisson", datasets.Epilepsy},
	{"toenail", "bernoulli", func(dir string) (*datasets.Frame, error) { return datasets.Toenail(dir, datasets.ToenailOptions{}) }},
	{"hers", "bernoulli", datasets.HERS},
	{"diabetes", "bernoulli", func(dir string) (*datasets.Frame, error) {
		return datasets.Diabetes(dir, datasets.DiabetesOptions{})
	}},
	{"cbpp", "binomial", datasets.CBPP},
	{"grouseticks", "poisson", datasets.Grouseticks},
}

func lookupBenchmark(name string) (benchmark, error) {
	var names []string
	for _, b := range benchmarks {
		if b.name == strings.ToLower(name) {
			return b, nil
		}
		names = append(names, b.name)
	}
	return benchmark{}, usageErrorf("fit", "unknown data set %q (known: %s)", name, strings.Join(names, ", "))
}
