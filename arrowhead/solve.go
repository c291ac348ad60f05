// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

// Packed lower-triangular helpers. A packed lower triangle of order m holds
// element (a, b), a >= b, at a*(a+1)/2 + b.

// trsvT solves L' x = x in place for packed lower L of order m (back
// substitution).
func trsvT(m int, l, x []float64) {
	for a := m - 1; a >= 0; a-- {
		s := x[a]
		for c := a + 1; c < m; c++ {
			s -= l[c*(c+1)/2+a] * x[c]
		}
		x[a] = s / l[a*(a+1)/2+a]
	}
}

// trsvN solves L x = x in place for packed lower L of order m (forward
// substitution).
func trsvN(m int, l, x []float64) {
	for a := range m {
		row := l[a*(a+1)/2 : a*(a+1)/2+a+1]
		s := x[a]
		for c, lac := range row[:a] {
			s -= lac * x[c]
		}
		x[a] = s / row[a]
	}
}

// trmvN sets x = L x in place for packed lower L of order m.
func trmvN(m int, l, x []float64) {
	for a := m - 1; a >= 0; a-- {
		row := l[a*(a+1)/2 : a*(a+1)/2+a+1]
		var s float64
		for c, lac := range row {
			s += lac * x[c]
		}
		x[a] = s
	}
}

// SolveTransGlobal sets x_g = T_g^-T w_g, the first step of the transposed
// solve x = T^-T w. The vectors have length d; only their global parts are
// used. x and w may be the same slice.
func (f *Factor) SolveTransGlobal(x, w []float64) {
	f.checkVec(x)
	f.checkVec(w)
	nr := f.nr
	xg := x[nr:]
	copy(xg, w[nr:])
	trsvT(f.g, f.Global(), xg)
}

// SolveTransRange sets x_i = T_i^-T (w_i - T_gi' x_g) for the subjects i in
// [lo, hi), completing the transposed solve x = T^-T w once x_g has been set
// by SolveTransGlobal. The vectors have length d and are indexed globally
// (x_i at x[i*r:]). x and w may be the same slice. Calls on disjoint ranges
// may run concurrently.
func (f *Factor) SolveTransRange(lo, hi int, x, w []float64) {
	f.checkRange(lo, hi)
	f.checkVec(x)
	f.checkVec(w)
	if f.rowStart != nil {
		f.solveTransRows(lo, hi, x, w)
		return
	}
	g, st := f.g, f.stride
	xg := x[f.nr:]
	switch f.kind {
	case 1:
		for i := lo; i < hi; i++ {
			blk := f.data[i*st : (i+1)*st]
			x[i] = (w[i] - dot(blk[1:1+g], xg)) / blk[0]
		}
	case 2:
		for i := lo; i < hi; i++ {
			blk := f.data[i*st : (i+1)*st]
			s0, s1 := dot2T(blk[3:3+2*g], xg)
			x1 := (w[2*i+1] - s1) / blk[2]
			x[2*i] = (w[2*i] - s0 - blk[1]*x1) / blk[0]
			x[2*i+1] = x1
		}
	default:
		for i := lo; i < hi; i++ {
			r, o, so := f.blk(i)
			blk := f.data[so : so+Stride(r, g)]
			xi := x[o : o+r]
			copy(xi, w[o:o+r])
			subCrossT(r, g, blk[r*(r+1)/2:], xg, xi)
			trsvT(r, blk, xi)
		}
	}
}

// dot returns sum_k a[k]*b[k] over len(a). Two accumulators halve the
// chain of dependent additions.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1 float64
	k := 0
	for ; k+1 < len(a); k += 2 {
		s0 += a[k] * b[k]
		s1 += a[k+1] * b[k+1]
	}
	if k < len(a) {
		s0 += a[k] * b[k]
	}
	return s0 + s1
}

// dot2T returns C' x for the g×2 row-major block C = c and x of length g,
// with two accumulators per output.
func dot2T(c, x []float64) (s0, s1 float64) {
	g := len(c) / 2
	x = x[:g]
	var t0, t1 float64
	k := 0
	for ; k+1 < g; k += 2 {
		cc := c[2*k : 2*k+4 : 2*k+4]
		x0, x1 := x[k], x[k+1]
		s0 += cc[0] * x0
		s1 += cc[1] * x0
		t0 += cc[2] * x1
		t1 += cc[3] * x1
	}
	if k < g {
		s0 += c[2*k] * x[k]
		s1 += c[2*k+1] * x[k]
	}
	return s0 + t0, s1 + t1
}

// subCrossT sets y -= C' x for the g×r row-major block C.
func subCrossT(r, g int, c, x, y []float64) {
	y = y[:r]
	for k, xk := range x[:g] {
		row := c[k*r : k*r+r]
		for b, cb := range row {
			y[b] -= cb * xk
		}
	}
}

// addCross sets y += C x for the g×r row-major block C.
func addCross(r, g int, c, x, y []float64) {
	switch r {
	case 1:
		x0 := x[0]
		for k := range y[:g] {
			y[k] += c[k] * x0
		}
	case 2:
		x0, x1 := x[0], x[1]
		c = c[:2*g]
		for k := range y[:g] {
			y[k] += c[2*k]*x0 + c[2*k+1]*x1
		}
	default:
		x = x[:r]
		for k := range y[:g] {
			row := c[k*r : k*r+r]
			var s float64
			for b, cb := range row {
				s += cb * x[b]
			}
			y[k] += s
		}
	}
}

// DrawGlobal sets u_g = T_g^-T z_g and theta_g = mu_g + u_g: the global part
// of a draw theta = mu + T^-T z from N(mu, (T T')^-1). The vectors have
// length d; only their global parts are used.
func (f *Factor) DrawGlobal(theta, u, mu, z []float64) {
	f.checkVec(theta)
	f.checkVec(u)
	f.checkVec(mu)
	f.checkVec(z)
	nr := f.nr
	ug := u[nr:]
	copy(ug, z[nr:])
	trsvT(f.g, f.Global(), ug)
	tg, mg := theta[nr:], mu[nr:]
	for k, v := range ug {
		tg[k] = mg[k] + v
	}
}

// DrawRange sets, for the subjects i in [lo, hi),
//
//	theta_i = mu_i + T_i^-T (z_i - T_gi' u_g),  u_i = T_i^-T z_i,
//
// completing the draw theta = mu + T^-T z and u = T_d^-T z once DrawGlobal
// has set u_g. The vectors have length d and are indexed globally; theta and
// u must not share storage with each other or with mu or z. Calls on
// disjoint ranges may run concurrently.
func (f *Factor) DrawRange(lo, hi int, theta, u, mu, z []float64) {
	f.checkRange(lo, hi)
	f.checkVec(theta)
	f.checkVec(u)
	f.checkVec(mu)
	f.checkVec(z)
	if f.rowStart != nil {
		f.drawRows(lo, hi, theta, u, mu, z)
		return
	}
	g, st := f.g, f.stride
	ug := u[f.nr:]
	switch f.kind {
	case 1:
		for i := lo; i < hi; i++ {
			blk := f.data[i*st : (i+1)*st]
			t := blk[0]
			u[i] = z[i] / t
			theta[i] = mu[i] + (z[i]-dot(blk[1:1+g], ug))/t
		}
		return
	case 2:
		for i := lo; i < hi; i++ {
			blk := f.data[i*st : (i+1)*st]
			t00, t10, t11 := blk[0], blk[1], blk[2]
			z0, z1 := z[2*i], z[2*i+1]
			u1 := z1 / t11
			u[2*i] = (z0 - t10*u1) / t00
			u[2*i+1] = u1
			s0, s1 := dot2T(blk[3:3+2*g], ug)
			x1 := (z1 - s1) / t11
			theta[2*i] = mu[2*i] + (z0-s0-t10*x1)/t00
			theta[2*i+1] = mu[2*i+1] + x1
		}
		return
	}
	for i := lo; i < hi; i++ {
		r, o, so := f.blk(i)
		blk := f.data[so : so+Stride(r, g)]
		zi := z[o : o+r]
		ui := u[o : o+r]
		copy(ui, zi)
		trsvT(r, blk, ui)
		ti := theta[o : o+r]
		copy(ti, zi)
		subCrossT(r, g, blk[r*(r+1)/2:], ug, ti)
		trsvT(r, blk, ti)
		for b, m := range mu[o : o+r] {
			ti[b] += m
		}
	}
}

// SolveRange sets v_i = T_i^-1 g_i for the subjects i in [lo, hi) and adds
// sum_i T_gi v_i into sum (length g). It is the first step of v = T^-1 g;
// after the partial sums of all ranges are added up, SolveGlobal completes
// it. The vectors have length d and are indexed globally. v and g may be
// the same slice. Calls on disjoint ranges may run concurrently with their
// own sum.
func (f *Factor) SolveRange(lo, hi int, v, g, sum []float64) {
	f.checkRange(lo, hi)
	f.checkVec(v)
	f.checkVec(g)
	if len(sum) != f.g {
		panic(badLen)
	}
	if f.rowStart != nil {
		f.solveRows(lo, hi, v, g, sum)
		return
	}
	gg, st := f.g, f.stride
	switch f.kind {
	case 1:
		for i := lo; i < hi; i++ {
			blk := f.data[i*st : (i+1)*st]
			v0 := g[i] / blk[0]
			v[i] = v0
			c := blk[1 : 1+gg]
			for k := range sum {
				sum[k] += c[k] * v0
			}
		}
	case 2:
		for i := lo; i < hi; i++ {
			blk := f.data[i*st : (i+1)*st]
			v0 := g[2*i] / blk[0]
			v1 := (g[2*i+1] - blk[1]*v0) / blk[2]
			v[2*i], v[2*i+1] = v0, v1
			c := blk[3 : 3+2*gg]
			for k := range sum {
				cc := c[2*k : 2*k+2 : 2*k+2]
				sum[k] += cc[0]*v0 + cc[1]*v1
			}
		}
	default:
		for i := lo; i < hi; i++ {
			r, o, so := f.blk(i)
			blk := f.data[so : so+Stride(r, gg)]
			vi := v[o : o+r]
			copy(vi, g[o:o+r])
			trsvN(r, blk, vi)
			addCross(r, gg, blk[r*(r+1)/2:], vi, sum)
		}
	}
}

// SolveGlobal sets v_g = T_g^-1 (g_g - sum), where sum is the total over
// all subjects of the partial sums from SolveRange; a nil sum counts as
// zero. The vectors have length d; only their global parts are used. v and
// g may be the same slice.
func (f *Factor) SolveGlobal(v, g, sum []float64) {
	f.checkVec(v)
	f.checkVec(g)
	nr := f.nr
	vg := v[nr:]
	copy(vg, g[nr:])
	if sum != nil {
		if len(sum) != f.g {
			panic(badLen)
		}
		for k, s := range sum {
			vg[k] -= s
		}
	}
	trsvN(f.g, f.Global(), vg)
}

// MulVecRange sets y_i = T_i x_i for the subjects i in [lo, hi) and adds
// sum_i T_gi x_i into sum (length g); MulVecGlobal completes y = T x. The
// vectors have length d and are indexed globally. y and x may be the same
// slice. Calls on disjoint ranges may run concurrently with their own sum.
func (f *Factor) MulVecRange(lo, hi int, y, x, sum []float64) {
	f.checkRange(lo, hi)
	f.checkVec(y)
	f.checkVec(x)
	if len(sum) != f.g {
		panic(badLen)
	}
	if f.rowStart != nil {
		f.mulVecRows(lo, hi, y, x, sum)
		return
	}
	g := f.g
	for i := lo; i < hi; i++ {
		r, o, so := f.blk(i)
		blk := f.data[so : so+Stride(r, g)]
		xi := x[o : o+r]
		addCross(r, g, blk[r*(r+1)/2:], xi, sum)
		yi := y[o : o+r]
		copy(yi, xi)
		trmvN(r, blk, yi)
	}
}

// MulVecGlobal sets y_g = T_g x_g + sum, where sum is the total of the partial
// sums from MulVecRange; a nil sum counts as zero. y and x may be the same
// slice.
func (f *Factor) MulVecGlobal(y, x, sum []float64) {
	f.checkVec(y)
	f.checkVec(x)
	nr := f.nr
	yg := y[nr:]
	copy(yg, x[nr:])
	trmvN(f.g, f.Global(), yg)
	if sum != nil {
		if len(sum) != f.g {
			panic(badLen)
		}
		for k, s := range sum {
			yg[k] += s
		}
	}
}
