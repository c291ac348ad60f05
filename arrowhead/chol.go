// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"fmt"
	"math"
)

// NotPositiveDefiniteError reports that an arrowhead Cholesky factorization
// met a block that is not positive definite.
type NotPositiveDefiniteError struct {
	// Subject is the subject whose local block S_i failed, or -1 for the
	// global Schur complement S_g - sum_i T_gi T_gi'.
	Subject int
}

func (e *NotPositiveDefiniteError) Error() string {
	if e.Subject < 0 {
		return "arrowhead: global block is not positive definite"
	}
	return fmt.Sprintf("arrowhead: local block of subject %d is not positive definite", e.Subject)
}

// CholRange factorizes the blocks of the subjects i in [lo, hi) of a
// symmetric positive definite arrowhead matrix S = T T' into f:
//
//	T_i = chol(S_i),  T_gi = S_gi T_i^-T,
//
// and adds sum_i T_gi T_gi' into sum, a packed lower triangle of order g.
// CholGlobal completes the factorization from the total of the partial sums.
//
// S is given in the compressed storage of T: for each subject the packed
// lower triangle of S_i and the g×r block S_gi, then the packed lower
// triangle of S_g. s may be f.Data(), factorizing in place.
//
// A local block that is not positive definite (a pivot that is zero,
// negative or NaN) gives a *NotPositiveDefiniteError naming the first such
// subject in the range; the blocks of that subject and of later subjects in
// the range are then unspecified. Calls on disjoint ranges may run
// concurrently with their own sum.
func (f *Factor) CholRange(lo, hi int, s, sum []float64) error {
	f.checkRange(lo, hi)
	if len(s) != len(f.data) {
		panic(badLen)
	}
	g := f.g
	if len(sum) != g*(g+1)/2 {
		panic(badLen)
	}
	for i := lo; i < hi; i++ {
		r, _, so := f.blk(i)
		tri, end := r*(r+1)/2, so+Stride(r, g)
		ti, c := f.data[so:so+tri], f.data[so+tri:end]
		copy(ti, s[so:so+tri])
		if !cholPacked(r, ti) {
			return &NotPositiveDefiniteError{Subject: i}
		}
		copy(c, s[so+tri:end])
		// Only the nonzero rows of T_gi contribute: with crossed factors
		// a subject meets few of the global variables. (The buffer keeps
		// the common case off the heap.)
		var buf [256]int
		var nz []int
		if r == 1 {
			// A row of T_gi is that of S_gi over T_i's positive entry:
			// the zero rows stay as they are, bit for bit, and are
			// skipped (insteval: 28 of 1148 rows a subject are not zero).
			nz = nonzeroRows(r, c, buf[:0])
			for _, k := range nz {
				c[k] /= ti[0]
			}
		} else {
			for k := range g {
				trsvN(r, ti, c[k*r:(k+1)*r])
			}
			nz = nonzeroRows(r, c, buf[:0])
		}
		for x, a := range nz {
			ca := c[a*r : (a+1)*r]
			row := sum[a*(a+1)/2 : a*(a+1)/2+a+1]
			for _, b := range nz[:x+1] {
				cb := c[b*r : (b+1)*r]
				var t float64
				for p, v := range ca {
					t += v * cb[p]
				}
				row[b] += t
			}
		}
	}
	return nil
}

// CholGlobal completes the arrowhead Cholesky factorization started by
// CholRange: T_g = chol(S_g - sum), where sum is the packed lower total of
// sum_i T_gi T_gi' over all subjects. s may be f.Data(). If the Schur
// complement is not positive definite it returns a *NotPositiveDefiniteError
// with Subject -1 and T_g is unspecified.
func (f *Factor) CholGlobal(s, sum []float64) error {
	if len(s) != len(f.data) {
		panic(badLen)
	}
	g := f.g
	if len(sum) != g*(g+1)/2 {
		panic(badLen)
	}
	tg := f.Global()
	o := f.gs
	for j, v := range s[o:] {
		tg[j] = v - sum[j]
	}
	if !cholPacked(g, tg) {
		return &NotPositiveDefiniteError{Subject: -1}
	}
	return nil
}

// PrecRange is the inverse of CholRange: for the subjects i in [lo, hi) it
// writes into s, in the compressed storage of T, the blocks of the
// precision S = T T' that depend on subject i alone, S_i = T_i T_i' and
// S_gi = T_gi T_i', and adds sum_i T_gi T_gi' into sum, a packed lower
// triangle of order g. PrecGlobal completes S. s must not be f.Data().
// Calls on disjoint ranges may run concurrently with their own sum.
func (f *Factor) PrecRange(lo, hi int, s, sum []float64) {
	f.checkRange(lo, hi)
	g := f.g
	if len(s) != len(f.data) || len(sum) != g*(g+1)/2 {
		panic(badLen)
	}
	for i := lo; i < hi; i++ {
		r, _, so := f.blk(i)
		tri, end := r*(r+1)/2, so+Stride(r, g)
		ti, tgi := f.data[so:so+tri], f.data[so+tri:end]
		si, sgi := s[so:so+tri], s[so+tri:end]
		for a := range r {
			for b := 0; b <= a; b++ {
				var x float64
				for c := 0; c <= b; c++ {
					x += ti[a*(a+1)/2+c] * ti[b*(b+1)/2+c]
				}
				si[a*(a+1)/2+b] = x
			}
		}
		for a := range g {
			for b := range r {
				var x float64
				for c := 0; c <= b; c++ {
					x += tgi[a*r+c] * ti[b*(b+1)/2+c]
				}
				sgi[a*r+b] = x
			}
			for b := 0; b <= a; b++ {
				var x float64
				for c := range r {
					x += tgi[a*r+c] * tgi[b*r+c]
				}
				sum[a*(a+1)/2+b] += x
			}
		}
	}
}

// PrecGlobal completes S = T T' started by PrecRange: S_g = T_g T_g' +
// sum, where sum is the packed lower total of sum_i T_gi T_gi' over all
// subjects.
func (f *Factor) PrecGlobal(s, sum []float64) {
	g := f.g
	if len(s) != len(f.data) || len(sum) != g*(g+1)/2 {
		panic(badLen)
	}
	tg := f.Global()
	sg := s[f.gs:]
	for a := range g {
		for b := 0; b <= a; b++ {
			var x float64
			for c := 0; c <= b; c++ {
				x += tg[a*(a+1)/2+c] * tg[b*(b+1)/2+c]
			}
			sg[a*(a+1)/2+b] = sum[a*(a+1)/2+b] + x
		}
	}
}

// cholPacked overwrites the packed lower triangle of a symmetric matrix of
// order m with its lower Cholesky factor, row by row. It reports whether
// every pivot was positive; the test is false for NaN pivots too.
func cholPacked(m int, a []float64) bool {
	for j := range m {
		rj := a[j*(j+1)/2 : j*(j+1)/2+j+1]
		for b := range j {
			rb := a[b*(b+1)/2 : b*(b+1)/2+b+1]
			t := rj[b]
			for k, v := range rb[:b] {
				t -= rj[k] * v
			}
			rj[b] = t / rb[b]
		}
		d := rj[j]
		for _, v := range rj[:j] {
			d -= v * v
		}
		if d <= 0 || math.IsNaN(d) {
			return false
		}
		rj[j] = math.Sqrt(d)
	}
	return true
}
