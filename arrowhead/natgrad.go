// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

// NatGradGlobal writes into dst the global block of the natural-gradient
// direction of Algorithm 2S,
//
//	N_g = T_g halfdiag(-z_g v_g'),
//
// and sets tz = T_g z_g (length g), which NatGradRange needs. The vectors z
// and v have length d; dst has the length of the compressed storage and
// must not share it with f.
//
// The paper writes N_g = T_g halfdiag(T_g' lower(-u_g v_g')) with
// u_g = T_g^-T z_g; because T_g' is upper triangular, the lower triangle of
// T_g' lower(-u_g v_g') is that of -(T_g' u_g) v_g' = -z_g v_g', so u_g is
// not needed.
func (f *Factor) NatGradGlobal(dst, z, v, tz []float64) {
	f.checkDst(dst)
	f.checkVec(z)
	f.checkVec(v)
	if len(tz) != f.g {
		panic(badLen)
	}
	nr := f.nr
	zg, vg := z[nr:], v[nr:]
	tg := f.Global()
	o := f.gs
	ng := dst[o:]
	for a := range f.g {
		tz[a] = natRow(tg[a*(a+1)/2:a*(a+1)/2+a+1], ng[a*(a+1)/2:a*(a+1)/2+a+1], zg, vg, 0)
	}
}

// natRow writes one row of a natural-gradient direction, nrow[b] =
// -v[b] (s + sum_{c > b} row[c] z[c] + row[b] z[b]/2) for b from
// len(row)-1 down to 0, s starting at s0, and returns s0 + row·z.
func natRow(row, nrow, z, v []float64, s float64) float64 {
	for b := len(row) - 1; b >= 0; b-- {
		t := row[b] * z[b]
		nrow[b] = -v[b] * (s + 0.5*t)
		s += t
	}
	return s
}

// NatGradRange writes into dst, for the subjects i in [lo, hi), the blocks
// of the natural-gradient direction of Algorithm 2S,
//
//	N_i  = T_i Hbar_i,
//	N_gi = T_gi Hbar_i - (T_g z_g) v_i',   Hbar_i = halfdiag(-z_i v_i'),
//
// with tz = T_g z_g from NatGradGlobal, computed before T_g changes. The
// vectors z and v have length d and are indexed globally; dst has the length
// of the compressed storage and must not share it with f. Calls on disjoint
// ranges may run concurrently.
//
// As for the global block, the paper's Hbar_i = halfdiag(T_i' lower(-u_i
// v_i')) with u_i = T_i^-T z_i equals halfdiag(-z_i v_i'), so the direction
// needs z and v only.
func (f *Factor) NatGradRange(lo, hi int, dst, z, v, tz []float64) {
	f.checkRange(lo, hi)
	f.checkDst(dst)
	f.checkVec(z)
	f.checkVec(v)
	if len(tz) != f.g {
		panic(badLen)
	}
	if f.rowStart != nil {
		f.natGradRows(lo, hi, dst, z, v, tz)
		return
	}
	g, st := f.g, f.stride
	switch f.kind {
	case 1:
		for i := lo; i < hi; i++ {
			blk := f.data[i*st : (i+1)*st]
			out := dst[i*st : (i+1)*st]
			z0, v0 := z[i], v[i]
			hz := 0.5 * z0
			out[0] = -v0 * blk[0] * hz
			c := blk[1 : 1+g]
			nc := out[1 : 1+g]
			for k, tzk := range tz {
				nc[k] = -v0 * (tzk + c[k]*hz)
			}
		}
	case 2:
		for i := lo; i < hi; i++ {
			blk := f.data[i*st : (i+1)*st]
			out := dst[i*st : (i+1)*st]
			z0, z1 := z[2*i], z[2*i+1]
			v0, v1 := v[2*i], v[2*i+1]
			h0, h1 := 0.5*z0, 0.5*z1
			out[0] = -v0 * blk[0] * h0
			out[1] = -v0 * (blk[1]*h0 + blk[2]*z1)
			out[2] = -v1 * blk[2] * h1
			c := blk[3 : 3+2*g]
			nc := out[3 : 3+2*g]
			for k, tzk := range tz {
				cc := c[2*k : 2*k+2 : 2*k+2]
				nn := nc[2*k : 2*k+2 : 2*k+2]
				c1z := cc[1] * z1
				nn[0] = -v0 * (tzk + c1z + cc[0]*h0)
				nn[1] = -v1 * (tzk + 0.5*c1z)
			}
		}
	default:
		for i := lo; i < hi; i++ {
			r, o, so := f.blk(i)
			blk := f.data[so : so+Stride(r, g)]
			out := dst[so : so+Stride(r, g)]
			zi, vi := z[o:o+r], v[o:o+r]
			natGradLocal(r, blk, out, zi, vi)
			c := blk[r*(r+1)/2:]
			nc := out[r*(r+1)/2:]
			for k, tzk := range tz {
				natRow(c[k*r:k*r+r], nc[k*r:k*r+r], zi, vi, tzk)
			}
		}
	}
}

// EuclidGradGlobal writes into dst the global block of the Euclidean
// gradient of one draw with respect to T, lower(-u_g v_g'). The vectors
// have length d.
func (f *Factor) EuclidGradGlobal(dst, u, v []float64) {
	f.checkDst(dst)
	f.checkVec(u)
	f.checkVec(v)
	nr := f.nr
	ug, vg := u[nr:], v[nr:]
	ag := dst[f.gs:]
	for a := range f.g {
		row := ag[a*(a+1)/2 : a*(a+1)/2+a+1]
		for b := range row {
			row[b] = -ug[a] * vg[b]
		}
	}
}

// EuclidGradRange writes into dst, for the subjects i in [lo, hi), the
// blocks of the Euclidean gradient of one draw with respect to T,
//
//	A_i = lower(-(theta_i - mu_i) v_i'),  B_gi = -u_g v_i',
//
// the entries of -(theta - mu) v' on the pattern of T. The gradient with
// respect to mu is grad h itself. The vectors have length d and are indexed
// globally. Calls on disjoint ranges may run concurrently.
func (f *Factor) EuclidGradRange(lo, hi int, dst, theta, mu, u, v []float64) {
	f.checkRange(lo, hi)
	f.checkDst(dst)
	f.checkVec(theta)
	f.checkVec(mu)
	f.checkVec(u)
	f.checkVec(v)
	g := f.g
	ug := u[f.nr:]
	for i := lo; i < hi; i++ {
		r, o, so := f.blk(i)
		out := dst[so : so+Stride(r, g)]
		vi := v[o : o+r]
		euclidGradLocal(r, out, theta[o:o+r], mu[o:o+r], vi)
		nc := out[r*(r+1)/2:]
		if f.rowStart != nil {
			for _, k := range f.rowsOf(i) {
				scaleInto(nc[int(k)*r:int(k)*r+r], -ug[k], vi)
			}
			continue
		}
		for k := range g {
			scaleInto(nc[k*r:k*r+r], -ug[k], vi)
		}
	}
}

// scaleInto sets dst = a x.
func scaleInto(dst []float64, a float64, x []float64) {
	for b, xb := range x {
		dst[b] = a * xb
	}
}

// InvFisherGlobal writes into dst the global block of F^-1 times a
// Euclidean gradient a on the pattern of T (both in compressed storage):
//
//	N_g = T_g halfdiag(T_g' lower(A_g)).
//
// dst must not share storage with a or with f.
func (f *Factor) InvFisherGlobal(dst, a []float64) {
	f.checkDst(dst)
	if len(a) != len(f.data) {
		panic(badLen)
	}
	o := f.gs
	ng := dst[o:]
	copy(ng, a[o:])
	tg := f.Global()
	lowerTransMul(f.g, tg, ng)
	halveDiag(f.g, ng)
	lowerMul(f.g, tg, ng)
}

// InvFisherRange writes into dst, for the subjects i in [lo, hi), the blocks
// of F^-1 times a Euclidean gradient a on the pattern of T (both in
// compressed storage, with blocks A_i and B_gi):
//
//	G_i    = A_i + T_i^-T T_gi' B_gi,
//	Hbar_i = halfdiag(T_i' lower(G_i)),
//	N_i    = T_i Hbar_i,
//	N_gi   = T_gi Hbar_i + T_g T_g' B_gi
//
// (Theorem 4 of Tan's paper and its proof in supplement S6). Together with
// InvFisherGlobal it gives the factor part of the natural gradient of any
// Euclidean gradient; the mean part is (T T')^-1 a_mu. dst must not share
// storage with a or with f. Calls on disjoint ranges may run concurrently.
func (f *Factor) InvFisherRange(lo, hi int, dst, a []float64) {
	f.checkRange(lo, hi)
	f.checkDst(dst)
	if len(a) != len(f.data) {
		panic(badLen)
	}
	g := f.g
	tg := f.Global()
	for i := lo; i < hi; i++ {
		r, _, so := f.blk(i)
		tri, end := r*(r+1)/2, so+Stride(r, g)
		blk := f.data[so:end]
		ti, c := blk[:tri], blk[tri:]
		ai, bi := a[so:so+tri], a[so+tri:end]
		ni, nc := dst[so:so+tri], dst[so+tri:end]

		// ni = lower(T_gi' B_gi), then lower(T_i^-T ni): only the lower
		// triangle of T_gi' B_gi enters the lower triangle of the solve.
		for p := range r {
			for q := 0; q <= p; q++ {
				var s float64
				for k := range g {
					s += c[k*r+p] * bi[k*r+q]
				}
				ni[p*(p+1)/2+q] = s
			}
		}
		lowerTransSolve(r, ti, ni)
		for j, v := range ai {
			ni[j] += v
		}
		lowerTransMul(r, ti, ni)
		halveDiag(r, ni) // ni = Hbar_i

		copy(nc, bi)
		crossTransMul(g, r, tg, nc)
		crossMul(g, r, tg, nc)
		for k := range g {
			row := c[k*r : k*r+r]
			for b := range r {
				var s float64
				for p := b; p < r; p++ {
					s += row[p] * ni[p*(p+1)/2+b]
				}
				nc[k*r+b] += s
			}
		}
		lowerMul(r, ti, ni)
	}
}

// lowerTransMul sets H = lower(L' H) in place for packed lower L and H of
// order m. Only the lower triangle of H enters the lower triangle of L' H.
func lowerTransMul(m int, l, h []float64) {
	for a := range m {
		for b := 0; b <= a; b++ {
			var s float64
			for c := a; c < m; c++ {
				s += l[c*(c+1)/2+a] * h[c*(c+1)/2+b]
			}
			h[a*(a+1)/2+b] = s
		}
	}
}

// lowerMul sets H = L H in place for packed lower L and H of order m.
func lowerMul(m int, l, h []float64) {
	for a := m - 1; a >= 0; a-- {
		for b := 0; b <= a; b++ {
			var s float64
			for c := b; c <= a; c++ {
				s += l[a*(a+1)/2+c] * h[c*(c+1)/2+b]
			}
			h[a*(a+1)/2+b] = s
		}
	}
}

// lowerTransSolve sets Y = lower(L^-T Y) in place for packed lower L and Y
// of order m. Only the lower triangle of Y enters.
func lowerTransSolve(m int, l, y []float64) {
	for q := range m {
		for p := m - 1; p >= q; p-- {
			s := y[p*(p+1)/2+q]
			for c := p + 1; c < m; c++ {
				s -= l[c*(c+1)/2+p] * y[c*(c+1)/2+q]
			}
			y[p*(p+1)/2+q] = s / l[p*(p+1)/2+p]
		}
	}
}

func halveDiag(m int, h []float64) {
	for a := range m {
		h[a*(a+1)/2+a] *= 0.5
	}
}

// crossTransMul sets W = L' W in place for packed lower L of order g and
// the g×r row-major W.
func crossTransMul(g, r int, l, w []float64) {
	for k := range g {
		wk := w[k*r : k*r+r]
		lkk := l[k*(k+1)/2+k]
		for b := range wk {
			wk[b] *= lkk
		}
		for c := k + 1; c < g; c++ {
			lck := l[c*(c+1)/2+k]
			wc := w[c*r : c*r+r]
			for b, v := range wc {
				wk[b] += lck * v
			}
		}
	}
}

// crossMul sets W = L W in place for packed lower L of order g and the g×r
// row-major W.
func crossMul(g, r int, l, w []float64) {
	for k := g - 1; k >= 0; k-- {
		wk := w[k*r : k*r+r]
		row := l[k*(k+1)/2 : k*(k+1)/2+k+1]
		for b := range wk {
			wk[b] *= row[k]
		}
		for c, lkc := range row[:k] {
			wc := w[c*r : c*r+r]
			for b, v := range wc {
				wk[b] += lkc * v
			}
		}
	}
}
