// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag_test

import (
	"fmt"

	"github.com/sparsevi/sparsevi/blockdiag"
)

// The compressed storage of a factor with two subjects of order 2 and a
// global block of order 2: the lower triangles packed by rows, subject by
// subject, then the global block.
func ExampleFactor() {
	f := blockdiag.Wrap(2, 2, 2, []float64{
		1, 0.5, 2, // C_1 = [[1 0] [0.5 2]]
		3, -1, 4, // C_2 = [[3 0] [-1 4]]
		0.1, 0.2, 0.3, // C_g = [[0.1 0] [0.2 0.3]]
	})
	fmt.Println("d =", f.Dim(), "stored =", blockdiag.Len(2, 2, 2))
	fmt.Println("C_2 =", f.Local(1), "C(3,2) =", f.At(3, 2))

	// theta = mu + C z, blockwise.
	mu := []float64{0, 0, 10, 10, 0, 0}
	z := []float64{1, 1, 1, 1, 1, 1}
	theta := make([]float64, f.Dim())
	f.DrawRange(0, 2, theta, mu, z)
	f.DrawGlobal(theta, mu, z)
	fmt.Printf("theta = %.1f\n", theta)

	// The covariance blocks C_k C_k' in the same layout.
	cov := make([]float64, blockdiag.Len(2, 2, 2))
	f.CovRange(0, 2, cov)
	f.CovGlobal(cov)
	fmt.Printf("cov = %.2f\n", cov)
	// Output:
	// d = 6 stored = 9
	// C_2 = [3 -1 4] C(3,2) = -1
	// theta = [1.0 2.5 13.0 13.0 0.1 0.5]
	// cov = [1.00 0.50 4.25 9.00 -3.00 17.00 0.01 0.02 0.13]
}
