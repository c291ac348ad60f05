// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import "math"

// Unrolled kernels for subject blocks of order 1 and 2, the common cases of
// random intercepts and random intercept-and-slope models. They act on the
// flat slices of a range of subjects at once: c holds the packed blocks
// (1 or 3 values per subject) and the vectors r values per subject. Their
// arithmetic is that of the general block kernels, in the same order.

func mulVec1(c, dst, x []float64) {
	x = x[:len(c)]
	dst = dst[:len(c)]
	for i, v := range c {
		dst[i] = v * x[i]
	}
}

func mulVec2(c, dst, x []float64) {
	for i := 0; i+3 <= len(c); i += 3 {
		k := i / 3 * 2
		b := c[i : i+3 : i+3]
		xv := x[k : k+2 : k+2]
		x0, x1 := xv[0], xv[1]
		d := dst[k : k+2 : k+2]
		d[1] = b[1]*x0 + b[2]*x1
		d[0] = b[0] * x0
	}
}

func mulTransVec2(c, dst, x []float64) {
	for i := 0; i+3 <= len(c); i += 3 {
		k := i / 3 * 2
		b := c[i : i+3 : i+3]
		xv := x[k : k+2 : k+2]
		x0, x1 := xv[0], xv[1]
		d := dst[k : k+2 : k+2]
		d[0] = b[0]*x0 + b[1]*x1
		d[1] = b[2] * x1
	}
}

func solve1(c, dst, x []float64) {
	x = x[:len(c)]
	dst = dst[:len(c)]
	for i, v := range c {
		dst[i] = x[i] / v
	}
}

func solve2(c, dst, x []float64) {
	for i := 0; i+3 <= len(c); i += 3 {
		k := i / 3 * 2
		b := c[i : i+3 : i+3]
		xv := x[k : k+2 : k+2]
		x0, x1 := xv[0], xv[1]
		d := dst[k : k+2 : k+2]
		y0 := x0 / b[0]
		d[0] = y0
		d[1] = (x1 - b[1]*y0) / b[2]
	}
}

func solveTrans2(c, dst, x []float64) {
	for i := 0; i+3 <= len(c); i += 3 {
		k := i / 3 * 2
		b := c[i : i+3 : i+3]
		xv := x[k : k+2 : k+2]
		x0, x1 := xv[0], xv[1]
		d := dst[k : k+2 : k+2]
		y1 := x1 / b[2]
		d[1] = y1
		d[0] = (x0 - b[1]*y1) / b[0]
	}
}

func draw1(c, theta, mu, z []float64) {
	theta = theta[:len(c)]
	mu = mu[:len(c)]
	z = z[:len(c)]
	for i, v := range c {
		theta[i] = mu[i] + v*z[i]
	}
}

func draw2(c, theta, mu, z []float64) {
	for i := 0; i+3 <= len(c); i += 3 {
		k := i / 3 * 2
		b := c[i : i+3 : i+3]
		zv := z[k : k+2 : k+2]
		m := mu[k : k+2 : k+2]
		z0, z1 := zv[0], zv[1]
		m0, m1 := m[0], m[1]
		t := theta[k : k+2 : k+2]
		t[1] = m1 + b[1]*z0 + b[2]*z1
		t[0] = m0 + b[0]*z0
	}
}

// natGrad1: y = c g; dC = z (c y - c y / 2); dMu = c y.
func natGrad1(c, dMu, dC, z, g []float64) {
	dMu = dMu[:len(c)]
	dC = dC[:len(c)]
	z = z[:len(c)]
	g = g[:len(c)]
	for i, v := range c {
		cy := v * (v * g[i])
		dC[i] = z[i] * (cy - 0.5*cy)
		dMu[i] = cy
	}
}

// natGrad2 is blockNatGrad for m = 2.
func natGrad2(c, dMu, dC, z, g []float64) {
	for i := 0; i+3 <= len(c); i += 3 {
		k := i / 3 * 2
		b := c[i : i+3 : i+3]
		gv := g[k : k+2 : k+2]
		zv := z[k : k+2 : k+2]
		c00, c10, c11 := b[0], b[1], b[2]
		z0, z1 := zv[0], zv[1]
		y0 := c00*gv[0] + c10*gv[1]
		y1 := c11 * gv[1]
		n := dC[i : i+3 : i+3]
		m := dMu[k : k+2 : k+2]
		// Row 1, from the diagonal leftwards.
		cy := c11 * y1
		s := cy
		n[2] = z1 * (s - 0.5*cy)
		cy = c10 * y0
		s += cy
		n[1] = z0 * (s - 0.5*cy)
		m[1] = s
		// Row 0.
		cy = c00 * y0
		n[0] = z0 * (cy - 0.5*cy)
		m[0] = cy
	}
}

func euclidGrad1(dC, z, g []float64) {
	z = z[:len(dC)]
	g = g[:len(dC)]
	for i := range dC {
		dC[i] = g[i] * z[i]
	}
}

func euclidGrad2(dC, z, g []float64) {
	for i := 0; i+3 <= len(dC); i += 3 {
		k := i / 3 * 2
		gv := g[k : k+2 : k+2]
		zv := z[k : k+2 : k+2]
		n := dC[i : i+3 : i+3]
		n[0] = gv[0] * zv[0]
		n[1] = gv[1] * zv[0]
		n[2] = gv[1] * zv[1]
	}
}

// invFisher1 is the mean and factor parts of InvFisherRange for m = 1.
func invFisher1(c, dMu, dC, aMu, aC []float64) {
	dMu = dMu[:len(c)]
	dC = dC[:len(c)]
	aMu = aMu[:len(c)]
	aC = aC[:len(c)]
	for i, v := range c {
		dMu[i] = v * (v * aMu[i])
		dC[i] = v * (0.5 * (v * aC[i]))
	}
}

// invFisher2 is the mean and factor parts of InvFisherRange for m = 2.
func invFisher2(c, dMu, dC, aMu, aC []float64) {
	for i := 0; i+3 <= len(c); i += 3 {
		k := i / 3 * 2
		b := c[i : i+3 : i+3]
		c00, c10, c11 := b[0], b[1], b[2]
		av := aMu[k : k+2 : k+2]
		y0 := c00*av[0] + c10*av[1]
		y1 := c11 * av[1]
		m := dMu[k : k+2 : k+2]
		m[0] = c00 * y0
		m[1] = c10*y0 + c11*y1
		a := aC[i : i+3 : i+3]
		h00 := 0.5 * (c00*a[0] + c10*a[1])
		h10 := c11 * a[1]
		h11 := 0.5 * (c11 * a[2])
		n := dC[i : i+3 : i+3]
		n[0] = c00 * h00
		n[1] = c10*h00 + c11*h10
		n[2] = c11 * h11
	}
}

// pivotOK reports whether v is a usable Cholesky pivot: positive and
// finite. The negated comparison is true for NaN.
func pivotOK(v float64) bool { return v > 0 && v <= math.MaxFloat64 }

// cholesky1 factorises blocks of order 1, returning the index of the first
// failing block, or -1.
func cholesky1(l, s []float64) (int, float64) {
	s = s[:len(l)]
	for i, v := range s {
		if !pivotOK(v) {
			return i, v
		}
		l[i] = math.Sqrt(v)
	}
	return -1, 0
}

// cholesky2 factorises blocks of order 2, returning the index of the first
// failing block, the failing row and pivot, or block -1.
func cholesky2(l, s []float64) (blk, row int, pivot float64) {
	for i := 0; i+3 <= len(l); i += 3 {
		a := s[i : i+3 : i+3]
		s00, s10, s11 := a[0], a[1], a[2]
		if !pivotOK(s00) {
			return i / 3, 0, s00
		}
		l00 := math.Sqrt(s00)
		l10 := s10 / l00
		v := s11 - l10*l10
		if !pivotOK(v) {
			return i / 3, 1, v
		}
		b := l[i : i+3 : i+3]
		b[0], b[1], b[2] = l00, l10, math.Sqrt(v)
	}
	return -1, 0, 0
}
