// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestSetRows: with the rows of T_gi outside a random pattern zeroed, each
// kernel gives, once SetRows lists the pattern, what it gives on the whole
// blocks, and leaves a destination's rows outside the pattern as they were.
func TestSetRows(t *testing.T) {
	for _, s := range allDims() {
		if s.n == 0 || s.g == 0 {
			continue
		}
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(s.n*100+s.r*10+s.g), 3))
			f := randFactor(rng, s)
			start := make([]int, s.n+1)
			var rows []int32
			for i := range s.n {
				c := f.Cross(i)
				for k := range s.g {
					if rng.IntN(3) == 0 {
						clear(c[k*s.r : (k+1)*s.r])
						continue
					}
					rows = append(rows, int32(k))
				}
				start[i+1] = len(rows)
			}
			sparse := Wrap(s.n, s.r, s.g, f.Data())
			sparse.SetRows(start, rows)
			d := s.n*s.r + s.g
			z, w, mu := randVec(rng, d), randVec(rng, d), randVec(rng, d)
			tz := randVec(rng, s.g)
			// Destinations start as a marker, so that rows a kernel must
			// leave alone can be told from rows it wrote.
			const mark = 7.5
			fill := func(m int) []float64 {
				v := make([]float64, m)
				for j := range v {
					v[j] = mark
				}
				return v
			}
			// ClearUnlisted zeroes exactly the rows outside the lists.
			fac := fill(len(f.Data()))
			sparse.ClearUnlisted(0, s.n, fac)
			for i := range s.n {
				in := make([]bool, s.g)
				for _, r := range rows[start[i]:start[i+1]] {
					in[r] = true
				}
				o := i*f.stride + f.tri
				for j := i * f.stride; j < o; j++ {
					if fac[j] != mark {
						t.Fatalf("ClearUnlisted changed T_%d", i)
					}
				}
				for r := range s.g {
					for _, v := range fac[o+r*s.r : o+(r+1)*s.r] {
						if want := map[bool]float64{true: mark, false: 0}[in[r]]; v != want {
							t.Fatalf("ClearUnlisted: subject %d row %d holds %v, want %v", i, r, v, want)
						}
					}
				}
			}
			for _, v := range fac[s.n*f.stride:] {
				if v != mark {
					t.Fatal("ClearUnlisted changed T_g")
				}
			}

			for _, k := range []struct {
				name string
				run  func(f *Factor, vec, fac []float64)
			}{
				{"DrawRange", func(f *Factor, vec, fac []float64) {
					u := slices.Clone(vec)
					f.DrawGlobal(vec, u, mu, z)
					f.DrawRange(0, f.n, vec, u, mu, z)
				}},
				{"SolveTransRange", func(f *Factor, vec, fac []float64) {
					f.SolveTransGlobal(vec, w)
					f.SolveTransRange(0, f.n, vec, w)
				}},
				{"SolveRange", func(f *Factor, vec, fac []float64) {
					sum := make([]float64, f.g)
					f.SolveRange(0, f.n, vec, w, sum)
					f.SolveGlobal(vec, w, sum)
				}},
				{"MulVecRange", func(f *Factor, vec, fac []float64) {
					sum := make([]float64, f.g)
					f.MulVecRange(0, f.n, vec, w, sum)
					f.MulVecGlobal(vec, w, sum)
				}},
				{"NatGradRange", func(f *Factor, vec, fac []float64) {
					f.NatGradRange(0, f.n, fac, z, w, tz)
				}},
				{"EuclidGradRange", func(f *Factor, vec, fac []float64) {
					f.EuclidGradRange(0, f.n, fac, z, mu, w, w)
				}},
			} {
				vecD, facD := fill(d), fill(len(f.Data()))
				k.run(f, vecD, facD)
				vecS, facS := fill(d), fill(len(f.Data()))
				k.run(sparse, vecS, facS)
				checkClose(t, k.name+" vector", vecS, vecD, 1e-13)
				for i := range s.n {
					in := make([]bool, s.g)
					for _, r := range rows[start[i]:start[i+1]] {
						in[r] = true
					}
					o := i*f.stride + f.tri
					checkClose(t, k.name+" local block", facS[i*f.stride:o], facD[i*f.stride:o], 1e-13)
					for r := range s.g {
						gotRow := facS[o+r*s.r : o+(r+1)*s.r]
						want := facD[o+r*s.r : o+(r+1)*s.r]
						if !in[r] {
							want = fill(s.r)
						}
						checkClose(t, k.name+" cross row", gotRow, want, 1e-13)
					}
				}
			}
		})
	}
}
