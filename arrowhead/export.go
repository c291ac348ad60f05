// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"github.com/james-bowman/sparse"
	"gonum.org/v1/gonum/mat"
)

// NNZ returns the number of stored elements of T, Len(n, r, g).
func (f *Factor) NNZ() int { return len(f.data) }

// ToCSR returns T as a new d×d compressed sparse row matrix holding every
// element of the pattern (stored zeros included), with column indices
// ascending within each row. The result does not alias f.
func (f *Factor) ToCSR() *sparse.CSR {
	n, g, nr := f.n, f.g, f.nr
	d := nr + g
	nnz := len(f.data)
	ia := make([]int, d+1)
	ja := make([]int, 0, nnz)
	data := make([]float64, 0, nnz)
	for i := range n {
		r, o, so := f.blk(i)
		blk := f.data[so:]
		for a := range r {
			for b := 0; b <= a; b++ {
				ja = append(ja, o+b)
				data = append(data, blk[a*(a+1)/2+b])
			}
			ia[o+a+1] = len(ja)
		}
	}
	tg := f.Global()
	for k := range g {
		for i := range n {
			r, o, so := f.blk(i)
			c := f.data[so+r*(r+1)/2+k*r : so+r*(r+1)/2+(k+1)*r]
			for b, v := range c {
				ja = append(ja, o+b)
				data = append(data, v)
			}
		}
		for b := 0; b <= k; b++ {
			ja = append(ja, nr+b)
			data = append(data, tg[k*(k+1)/2+b])
		}
		ia[nr+k+1] = len(ja)
	}
	return sparse.NewCSR(d, d, ia, ja, data)
}

// ToTriDense returns T as a new dense d×d lower-triangular matrix. It is
// meant for tests and small problems: its storage grows as d^2.
func (f *Factor) ToTriDense() *mat.TriDense {
	n, g, nr := f.n, f.g, f.nr
	t := mat.NewTriDense(nr+g, mat.Lower, nil)
	for i := range n {
		r, o, so := f.blk(i)
		blk := f.data[so:]
		tri := r * (r + 1) / 2
		for a := range r {
			for b := 0; b <= a; b++ {
				t.SetTri(o+a, o+b, blk[a*(a+1)/2+b])
			}
		}
		for k := range g {
			for b := range r {
				t.SetTri(nr+k, o+b, blk[tri+k*r+b])
			}
		}
	}
	tg := f.Global()
	for a := range g {
		for b := 0; b <= a; b++ {
			t.SetTri(nr+a, nr+b, tg[a*(a+1)/2+b])
		}
	}
	return t
}
