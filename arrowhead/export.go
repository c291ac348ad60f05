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
	n, r, g, st, tri := f.n, f.r, f.g, f.stride, f.tri
	d := n*r + g
	nnz := len(f.data)
	ia := make([]int, d+1)
	ja := make([]int, 0, nnz)
	data := make([]float64, 0, nnz)
	for i := range n {
		blk := f.data[i*st : i*st+tri]
		for a := range r {
			for b := 0; b <= a; b++ {
				ja = append(ja, i*r+b)
				data = append(data, blk[a*(a+1)/2+b])
			}
			ia[i*r+a+1] = len(ja)
		}
	}
	nr := n * r
	tg := f.Global()
	for k := range g {
		for i := range n {
			c := f.data[i*st+tri+k*r : i*st+tri+(k+1)*r]
			for b, v := range c {
				ja = append(ja, i*r+b)
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
	n, r, g, st, tri := f.n, f.r, f.g, f.stride, f.tri
	d := n*r + g
	t := mat.NewTriDense(d, mat.Lower, nil)
	for i := range n {
		blk := f.data[i*st : (i+1)*st]
		for a := range r {
			for b := 0; b <= a; b++ {
				t.SetTri(i*r+a, i*r+b, blk[a*(a+1)/2+b])
			}
		}
		for k := range g {
			for b := range r {
				t.SetTri(n*r+k, i*r+b, blk[tri+k*r+b])
			}
		}
	}
	tg := f.Global()
	for a := range g {
		for b := 0; b <= a; b++ {
			t.SetTri(n*r+a, n*r+b, tg[a*(a+1)/2+b])
		}
	}
	return t
}
