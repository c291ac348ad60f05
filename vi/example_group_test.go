// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"fmt"
	"log"
	"slices"
	"sync"

	"github.com/sparsevi/sparsevi/vi"
)

// ExampleGroup fits the model of the package example over two processes,
// here goroutines linked by channels (package mpi's Group links processes
// of an MPI job), each fitting a Share of 256 and 44 groups, and compares
// the global block with the fit in one process.
func ExampleGroup() {
	y := make([]float64, 300)
	for i := range y {
		y[i] = float64(i%7) - 3
	}
	whole := means{y: y}
	set := vi.Settings{Seed: 1}
	one, err := vi.Fit(context.Background(), whole, set)
	if err != nil {
		log.Fatal(err)
	}

	// Every process but the last holds whole chunks (256 subjects each
	// by default).
	bounds := []int{0, 256, 300}
	groups := newChanGroups(2)
	res := make([]*vi.Result, 2)
	var wg sync.WaitGroup
	for k := range 2 {
		share, err := vi.NewShare(whole, bounds[k], bounds[k+1])
		if err != nil {
			log.Fatal(err)
		}
		s := set
		s.Group = groups[k]
		wg.Go(func() {
			r, err := vi.Fit(context.Background(), share, s)
			if err != nil {
				log.Fatal(err)
			}
			res[k] = r
		})
	}
	wg.Wait()
	mu := func(r *vi.Result) float64 { return r.Mu[len(r.Mu)-1] }
	fmt.Printf("mu: %.4f alone, %.4f and %.4f in the two processes\n", mu(one), mu(res[0]), mu(res[1]))
	fmt.Println("the same bits:", mu(one) == mu(res[0]) && slices.Equal(one.Mu[256:300], res[1].Mu[:44]))
	// Output:
	// mu: -0.0093 alone, -0.0093 and -0.0093 in the two processes
	// the same bits: true
}
