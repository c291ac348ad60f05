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
// grad log p(theta) = -theta (a standard normal), run with the whole-vector
// methods of a Runner.
func Example() {
	const n, r, g = 3, 2, 1
	d := n*r + g
	f := arrowhead.New(n, r, g)
	f.SetIdentity(2) // precision 4 I: too narrow for N(0, I)

	pool := parallel.NewPool(context.Background(), 2)
	defer pool.Close()
	run := arrowhead.NewRunner(pool, parallel.NewChunking(n, 2))

	mu := make([]float64, d)
	z := []float64{0.5, -1, 0.3, 0.8, -0.2, 1.1, -0.7}
	theta, u, v := make([]float64, d), make([]float64, d), make([]float64, d)
	dir := make([]float64, arrowhead.Len(n, r, g))
	const rho = 0.1

	_ = run.Draw(f, theta, u, mu, z) // theta = mu + T^-T z
	for i := range v {
		v[i] = -theta[i] // grad log p
	}
	_ = run.Solve(f, v, v) // v = T^-1 grad log p
	for i := range v {
		v[i] += z[i] // v = T^-1 (grad log p + T z) = T^-1 grad h
	}
	_ = run.NatGrad(f, dir, z, v)
	_ = run.AddScaled(f, rho, dir)  // T <- T + rho N
	_ = run.SolveTrans(f, theta, v) // T_new^-T v
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
// compressed storage of its factor.
func ExampleRunner_Chol() {
	const n, r, g = 2, 1, 1
	// S = [4 0 2; 0 9 3; 2 3 6]: subjects store S_i then S_gi, then S_g.
	s := []float64{4, 2, 9, 3, 6}
	f := arrowhead.New(n, r, g)
	pool := parallel.NewPool(context.Background(), 1)
	defer pool.Close()
	run := arrowhead.NewRunner(pool, parallel.NewChunking(n, 0))
	if err := run.Chol(f, s); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(f.Data())

	s[2] = -9
	err := run.Chol(f, s)
	var npd *arrowhead.NotPositiveDefiniteError
	fmt.Println(errors.As(err, &npd), npd.Subject)
	// Output:
	// [2 1 3 1 2]
	// true 1
}

// The marginal covariances of N(mu, (T T')^-1), computed blockwise.
func ExampleFactor_CovRange() {
	const n, r, g = 2, 1, 1
	// T = [2 0 0; 0 1 0; 1 1 1].
	f := arrowhead.Wrap(n, r, g, []float64{2, 1, 1, 1, 1})
	global := make([]float64, g*g)
	local := make([]float64, n*r*r)
	cross := make([]float64, n*r*g)
	f.CovGlobal(global)
	f.CovRange(0, n, local, cross)
	fmt.Println("Var(theta_g) =", global)
	fmt.Println("Var(theta_i) =", local)
	fmt.Println("Cov(theta_i, theta_g) =", cross)
	// Output:
	// Var(theta_g) = [1]
	// Var(theta_i) = [0.5 2]
	// Cov(theta_i, theta_g) = [-0.5 -1]
}
