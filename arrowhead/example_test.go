// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/parallel"
)

// One natural-gradient step of Algorithm 2S for a target with
// grad log p(theta) = -theta (a standard normal). Each pass runs a Range
// kernel on chunks of subjects concurrently, and its Global kernel
// between passes, as package vi does; partial sums over subjects are kept
// per chunk and added in chunk order, so the result does not depend on
// the number of workers.
func Example() {
	const n, r, g = 3, 2, 1
	d := n*r + g
	f := arrowhead.New(n, r, g)
	f.SetIdentity(2) // precision 4 I: too narrow for N(0, I)

	pool := parallel.NewPool(context.Background(), 2)
	defer pool.Close()
	chunks := parallel.NewChunking(n, 2)
	each := func(pass func(k, lo, hi int)) {
		_ = pool.Run(chunks.Len(), func(k int) error {
			lo, hi := chunks.Bounds(k)
			pass(k, lo, hi)
			return nil
		})
	}
	sums := make([][]float64, chunks.Len()) // per chunk: sum_i T_gi v_i
	for k := range sums {
		sums[k] = make([]float64, g)
	}

	mu := make([]float64, d)
	z := []float64{0.5, -1, 0.3, 0.8, -0.2, 1.1, -0.7}
	theta, u, v := make([]float64, d), make([]float64, d), make([]float64, d)
	dir := make([]float64, arrowhead.Len(n, r, g))
	tz := make([]float64, g)
	const rho = 0.1

	// theta = mu + T^-T z.
	f.DrawGlobal(theta, u, mu, z)
	each(func(_, lo, hi int) { f.DrawRange(lo, hi, theta, u, mu, z) })
	for i := range v {
		v[i] = -theta[i] // grad log p
	}
	// v = T^-1 grad log p: the subjects first, then the global block.
	each(func(k, lo, hi int) { f.SolveRange(lo, hi, v, v, sums[k]) })
	total := make([]float64, g)
	for _, s := range sums {
		for j, x := range s {
			total[j] += x
		}
	}
	f.SolveGlobal(v, v, total)
	for i := range v {
		v[i] += z[i] // v = T^-1 (grad log p + T z) = T^-1 grad h
	}
	f.NatGradGlobal(dir, z, v, tz)
	each(func(_, lo, hi int) { f.NatGradRange(lo, hi, dir, z, v, tz) })
	f.AddScaled(rho, dir) // T <- T + rho N
	// The mean moves by rho T_new^-T v.
	f.SolveTransGlobal(theta, v)
	each(func(_, lo, hi int) { f.SolveTransRange(lo, hi, theta, v) })
	for i := range mu {
		mu[i] += rho * theta[i]
	}
	fmt.Printf("T_1 = %.4f\n", f.Local(0))
	fmt.Printf("mu_1 = %.4f\n", mu[:r])
	// Output:
	// T_1 = [1.9812 0.0750 1.9250]
	// mu_1 = [0.0212 -0.0404]
}

// Factorizing a symmetric positive definite arrowhead matrix given in the
// compressed storage of its factor: the subjects' blocks, then the global
// block from the sum of their contributions.
func ExampleFactor_CholRange() {
	const n, r, g = 2, 1, 1
	// S = [4 0 2; 0 9 3; 2 3 6]: subjects store S_i then S_gi, then S_g.
	s := []float64{4, 2, 9, 3, 6}
	f := arrowhead.New(n, r, g)
	chol := func() error {
		sum := make([]float64, g*(g+1)/2)
		if err := f.CholRange(0, n, s, sum); err != nil {
			return err
		}
		return f.CholGlobal(s, sum)
	}
	if err := chol(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Data())

	s[2] = -9
	err := chol()
	var npd *arrowhead.NotPositiveDefiniteError
	fmt.Println(errors.As(err, &npd), npd.Subject)
	// Output:
	// [2 1 3 1 2]
	// true 1
}
