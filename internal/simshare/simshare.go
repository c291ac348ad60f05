// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package simshare simulates GLMM data whose models can be built over any
// range of the subjects: the shares of a fit over a vi.Group, for the tests
// of vi, mpi and glmmfit.
package simshare

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
)

// Data is a simulated GLMM: rows grouped by subject, in subject order.
type Data struct {
	Family  glmm.Family
	X, Z    [][]float64 // per row
	Y       []float64
	Subject []int // per row, increasing
	N       int   // subjects
}

// New simulates n subjects of 4 to 9 rows each, with fixed effects for an
// intercept, a covariate and time: a Bernoulli random intercept (r = 1)
// for glmm.Bernoulli, a Poisson random intercept and slope in time (r = 2)
// for glmm.Poisson.
func New(family glmm.Family, n int, seed uint64) *Data {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &Data{Family: family, N: n}
	for i := range n {
		b0, b1 := 0.8*rng.NormFloat64(), 0.3*rng.NormFloat64()
		for t := range 4 + rng.IntN(6) {
			tt := float64(t) / 4
			x1 := rng.NormFloat64()
			var y float64
			z := []float64{1}
			if family == glmm.Poisson {
				z = []float64{1, tt}
				// Poisson by counting exponential gaps within 1.
				rate := math.Exp(0.2 + 0.3*x1 + 0.2*tt + b0 + b1*tt)
				for l := rng.ExpFloat64() / rate; l <= 1; l += rng.ExpFloat64() / rate {
					y++
				}
			} else if rng.Float64() < 1/(1+math.Exp(0.3-0.5*x1-b0)) {
				y = 1
			}
			d.X = append(d.X, []float64{1, x1, tt})
			d.Z = append(d.Z, z)
			d.Y = append(d.Y, y)
			d.Subject = append(d.Subject, i)
		}
	}
	return d
}

// Model returns the model of the subjects [lo, hi), numbered from 0.
func (d *Data) Model(lo, hi int) (*glmm.Model, error) {
	var x, z, y []float64
	var group []int
	for j, i := range d.Subject {
		if i < lo || i >= hi {
			continue
		}
		x = append(x, d.X[j]...)
		z = append(z, d.Z[j]...)
		y = append(y, d.Y[j])
		group = append(group, i-lo)
	}
	p, r := len(d.X[0]), len(d.Z[0])
	return glmm.New(glmm.Config{Family: d.Family, Y: y,
		X: mat.NewDense(len(y), p, x), Z: mat.NewDense(len(y), r, z),
		Group: group, NumGroups: hi - lo})
}
