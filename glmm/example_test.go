// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"fmt"
	"log"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
)

// A random-intercept Poisson model of six counts on three subjects,
// evaluated at theta = 0: the log joint density with every constant, and in
// the convention of Tan's paper.
func ExampleNew() {
	cfg := glmm.Config{
		Family:      glmm.Poisson,
		Y:           []float64{2, 0, 5, 3, 1, 4},
		X:           mat.NewDense(6, 2, []float64{1, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1}),
		Z:           mat.NewDense(6, 1, []float64{1, 1, 1, 1, 1, 1}),
		Group:       []int{0, 0, 1, 1, 2, 2},
		NumGroups:   3,
		FixedNames:  []string{"(Intercept)", "treat"},
		RandomNames: []string{"(Intercept)"},
		GroupName:   "patient",
		GroupLevels: []string{"A", "B", "C"},
	}
	mod, err := glmm.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	n, r, g := mod.Dims()
	fmt.Println("subjects", n, "random effects", r, "globals", g, mod.GlobalNames())

	thetaG := make([]float64, g)  // beta = 0, W = I
	local := make([]float64, n*r) // b_i = 0
	gradLocal := make([]float64, n*r)
	gradG := make([]float64, g)
	ws := mod.NewWorkspace()
	lp, err := mod.Local(ws, 0, n, thetaG, local, gradLocal, gradG)
	if err != nil {
		log.Fatal(err)
	}
	lp += mod.Global(thetaG, gradG)
	fmt.Printf("log p(y, theta) = %.4f (paper convention %.4f)\n", lp, mod.PaperELBO(lp))
	fmt.Printf("d/dbeta = %.0f\n", gradG[:2])

	// A response the family cannot produce is reported with its row.
	cfg.Y[3] = -1
	_, err = glmm.New(cfg)
	fmt.Println(err)
	// Output:
	// subjects 3 random effects 1 globals 3 [(Intercept) treat log W[(Intercept),(Intercept)]]
	// log p(y, theta) = -28.8718 (paper convention -8.7568)
	// d/dbeta = [9 4]
	// glmm: row 4: impossible response: poisson response -1 is not a non-negative integer
}

// The random-effect precision is W W' with omega = vech(W*), W* holding
// log W_kk on the diagonal; RESDCorr turns omega into standard deviations
// and correlations of b_i.
func ExampleRESDCorr() {
	// W = [[2, 0], [1, 0.5]]: omega = (log 2, 1, log 0.5), column-major.
	w := []float64{2, 0, 1, 0.5}
	omega := make([]float64, glmm.NumOmega(2))
	glmm.WToOmega(w, 2, omega)
	fmt.Printf("omega %.4f %q\n", omega, glmm.OmegaNames([]string{"(Intercept)", "time"}))
	fmt.Printf("precision %.2f\n", mat.Formatted(glmm.Precision(omega, 2), mat.Squeeze()))
	sd, corr := glmm.RESDCorr(omega, 2)
	fmt.Printf("sd %.4f corr %.4f\n", sd, corr.At(0, 1))
	// Output:
	// omega [0.6931 1.0000 -0.6931] ["log W[(Intercept),(Intercept)]" "W[time,(Intercept)]" "log W[time,time]"]
	// precision ⎡4.00  2.00⎤
	// ⎣2.00  1.25⎦
	// sd [1.1180 2.0000] corr -0.8944
}
