// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package paper_test

import (
	"fmt"
	"log"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/paper"
)

// Loop over the models of the paper, as a benchmark program does.
func Example() {
	dir := datasets.DataDir("")
	for _, name := range paper.Names() {
		d, err := paper.Load(name, dir)
		if err != nil {
			log.Fatal(err)
		}
		m := d.Model()
		fmt.Printf("%-12s %-9v n=%-6d p=%-3d r=%d\n", name, m.Family(), m.NumSubjects(), m.P(), m.R())
	}
}

func ExampleEpilepsy() {
	d, err := paper.Epilepsy(datasets.DataDir(""))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(d.Formula())
	fmt.Println(d.FixedNames())
	fmt.Println(d.RandomNames())
}
