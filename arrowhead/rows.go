// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

// SetRows restricts each block T_gi to some of its rows: subject i's are
// rows[start[i]:start[i+1]], in increasing order, and the others are zero.
// DrawRange, SolveTransRange, SolveRange, MulVecRange, NatGradRange and
// EuclidGradRange then cost O(r) per listed row instead of O(r g) per
// subject: they read only the listed rows, and write only those of a
// destination, leaving its others as they are. A nil start lifts the
// restriction. The slices are kept, not copied.
//
// When the global variables are the levels of a factor crossed with the
// subjects, each subject meets few of them and T_gi is zero in the other
// rows at the optimum (package vi's GlobalSupporter).
func (f *Factor) SetRows(start []int, rows []int32) {
	if start == nil {
		f.rowStart, f.rows = nil, nil
		return
	}
	if len(start) != f.n+1 || start[0] != 0 || start[f.n] != len(rows) {
		panic(badLen)
	}
	if f.off != nil {
		panic("arrowhead: SetRows on a factor of variable-size blocks")
	}
	f.rowStart, f.rows = start, rows
}

// ClearUnlisted zeroes, in dst (in the compressed storage of f), the rows
// of the blocks T_gi outside the lists of SetRows, for the subjects i in
// [lo, hi): what a kernel without the lists, such as InvFisherRange or a
// factorisation, wrote there. Without lists it does nothing.
func (f *Factor) ClearUnlisted(lo, hi int, dst []float64) {
	f.checkRange(lo, hi)
	if len(dst) != len(f.data) {
		panic(badLen)
	}
	if f.rowStart == nil {
		return
	}
	r := f.r
	for i := lo; i < hi; i++ {
		c := dst[i*f.stride+f.tri : (i+1)*f.stride]
		next := 0
		for _, k := range f.rowsOf(i) {
			clear(c[next*r : int(k)*r])
			next = int(k) + 1
		}
		clear(c[next*r:])
	}
}

// nonzeroRows appends to dst the rows of the g×r block c with a nonzero
// entry (NaN included) and returns it.
func nonzeroRows(r int, c []float64, dst []int) []int {
	for k := range len(c) / max(r, 1) {
		for _, v := range c[k*r : (k+1)*r] {
			if v != 0 {
				dst = append(dst, k)
				break
			}
		}
	}
	return dst
}

// rowsOf returns the listed rows of T_gi.
func (f *Factor) rowsOf(i int) []int32 { return f.rows[f.rowStart[i]:f.rowStart[i+1]] }

// subRowsT sets y -= C' x over subject i's listed rows of the g×r block C.
func (f *Factor) subRowsT(i int, c, x, y []float64) {
	r := f.r
	for _, k := range f.rowsOf(i) {
		xk := x[k]
		for b, cb := range c[int(k)*r : int(k)*r+r] {
			y[b] -= cb * xk
		}
	}
}

// addRows adds C y into sum over subject i's listed rows of the g×r C.
func (f *Factor) addRows(i int, c, y, sum []float64) {
	r := f.r
	for _, k := range f.rowsOf(i) {
		var s float64
		for b, cb := range c[int(k)*r : int(k)*r+r] {
			s += cb * y[b]
		}
		sum[k] += s
	}
}

// drawRows is DrawRange on the listed rows.
func (f *Factor) drawRows(lo, hi int, theta, u, mu, z []float64) {
	r, st := f.r, f.stride
	ug := u[f.n*r:]
	for i := lo; i < hi; i++ {
		blk := f.data[i*st : (i+1)*st]
		c := blk[f.tri:]
		zi, ui := z[i*r:i*r+r], u[i*r:i*r+r]
		copy(ui, zi)
		trsvT(r, blk, ui)
		ti := theta[i*r : i*r+r]
		copy(ti, zi)
		f.subRowsT(i, c, ug, ti)
		trsvT(r, blk, ti)
		for b, m := range mu[i*r : i*r+r] {
			ti[b] += m
		}
	}
}

// solveTransRows is SolveTransRange on the listed rows.
func (f *Factor) solveTransRows(lo, hi int, x, w []float64) {
	r, st := f.r, f.stride
	xg := x[f.n*r:]
	for i := lo; i < hi; i++ {
		blk := f.data[i*st : (i+1)*st]
		c := blk[f.tri:]
		xi := x[i*r : i*r+r]
		copy(xi, w[i*r:i*r+r])
		f.subRowsT(i, c, xg, xi)
		trsvT(r, blk, xi)
	}
}

// solveRows is SolveRange on the listed rows.
func (f *Factor) solveRows(lo, hi int, v, g, sum []float64) {
	r, st := f.r, f.stride
	for i := lo; i < hi; i++ {
		blk := f.data[i*st : (i+1)*st]
		c := blk[f.tri:]
		vi := v[i*r : i*r+r]
		copy(vi, g[i*r:i*r+r])
		trsvN(r, blk, vi)
		f.addRows(i, c, vi, sum)
	}
}

// mulVecRows is MulVecRange on the listed rows.
func (f *Factor) mulVecRows(lo, hi int, y, x, sum []float64) {
	r, st := f.r, f.stride
	for i := lo; i < hi; i++ {
		blk := f.data[i*st : (i+1)*st]
		c := blk[f.tri:]
		xi := x[i*r : i*r+r]
		f.addRows(i, c, xi, sum)
		yi := y[i*r : i*r+r]
		copy(yi, xi)
		trmvN(r, blk, yi)
	}
}

// natGradRows is NatGradRange on the listed rows.
func (f *Factor) natGradRows(lo, hi int, dst, z, v, tz []float64) {
	r, st := f.r, f.stride
	for i := lo; i < hi; i++ {
		blk := f.data[i*st : (i+1)*st]
		out := dst[i*st : (i+1)*st]
		zi, vi := z[i*r:i*r+r], v[i*r:i*r+r]
		natGradLocal(r, blk, out, zi, vi)
		c, nc := blk[f.tri:], out[f.tri:]
		for _, k := range f.rowsOf(i) {
			natRow(c[int(k)*r:int(k)*r+r], nc[int(k)*r:int(k)*r+r], zi, vi, tz[k])
		}
	}
}

// natGradLocal writes N_i = T_i halfdiag(-z_i v_i') into out's packed
// lower triangle.
func natGradLocal(r int, blk, out, zi, vi []float64) {
	for a := range r {
		natRow(blk[a*(a+1)/2:a*(a+1)/2+a+1], out[a*(a+1)/2:a*(a+1)/2+a+1], zi, vi, 0)
	}
}

// euclidGradLocal writes A_i = lower(-(theta_i - mu_i) v_i') into out's
// packed lower triangle.
func euclidGradLocal(r int, out, theta, mu, vi []float64) {
	for a := range r {
		x := theta[a] - mu[a]
		row := out[a*(a+1)/2 : a*(a+1)/2+a+1]
		for b := range row {
			row[b] = -x * vi[b]
		}
	}
}
