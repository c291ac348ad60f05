// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

// Per-subject access to a Nested model's rows, as Model's (access.go,
// crossed.go), for the reparametrisations of package rvb. Rows are stored
// subject by subject: stored row k is data row DataRow(k).

// SubjectRows returns the half-open range [lo, hi) of subject i's stored
// rows.
func (mod *Nested) SubjectRows(i int) (lo, hi int) { return mod.start[i], mod.start[i+1] }

// ObsRange returns the number of observations of the subjects [lo, hi).
func (mod *Nested) ObsRange(lo, hi int) int { return mod.start[hi] - mod.start[lo] }

// MaxSubjectObs returns the largest number of observations of a subject.
func (mod *Nested) MaxSubjectObs() int {
	var m int
	for i := range mod.n {
		m = max(m, mod.start[i+1]-mod.start[i])
	}
	return m
}

// MaxBlockSize returns the largest local block, 1 + max k_i.
func (mod *Nested) MaxBlockSize() int {
	var m int
	for _, s := range mod.sizes {
		m = max(m, s)
	}
	return m
}

// DataRow returns the row of the data given to NewNested that is stored
// row k.
func (mod *Nested) DataRow(k int) int { return mod.perm[k] }

// Response returns subject i's responses y, trials m and weights w, views
// that must not be modified.
func (mod *Nested) Response(i int) (y, m, w []float64) {
	lo, hi := mod.start[i], mod.start[i+1]
	return mod.y[lo:hi:hi], mod.m[lo:hi:hi], mod.w[lo:hi:hi]
}

// SubjectConstant returns the sum of the data-only terms of subject i's
// rows, which Local includes.
func (mod *Nested) SubjectConstant(i int) float64 { return mod.subjConst[i] }

// ZRowsTo writes subject i's random-effect design Z_i, n_i×(1+k_i)
// row-major, into dst and returns it: row j loads on the subject's effect
// u_a (column 0) and on its b level's v_b (column 1+q). dst must hold
// n_i(1+k_i) values. Z_i is not stored: it has two nonzeros a row.
func (mod *Nested) ZRowsTo(i int, dst []float64) []float64 {
	lo, hi := mod.start[i], mod.start[i+1]
	r := mod.sizes[i]
	dst = dst[: (hi-lo)*r : (hi-lo)*r]
	clear(dst)
	for j := range hi - lo {
		dst[j*r] = 1
		dst[j*r+1+int(mod.inner[lo+j])] = 1
	}
	return dst
}

// RowInner returns, for each of subject i's rows, the position among the
// subject's b levels of the row's level: the row loads on column
// 1 + RowInner(i)[j] of Z_i besides column 0. The slice must not be
// modified.
func (mod *Nested) RowInner(i int) []int32 {
	lo, hi := mod.start[i], mod.start[i+1]
	return mod.inner[lo:hi:hi]
}

// GlobalEta writes into dst the part of subject i's linear predictors that
// theta_g determines, X_i beta + offset_i; the linear predictors are dst +
// Z_i b_i. The workspace is not used.
func (mod *Nested) GlobalEta(_ any, i int, thetaG, dst []float64) {
	lo, hi := mod.start[i], mod.start[i+1]
	p := mod.p
	if len(dst) != hi-lo || len(thetaG) < p {
		panic("glmm: bad index or length in GlobalEta")
	}
	beta := thetaG[:p]
	for j := range dst {
		k := lo + j
		e := mod.off[k]
		for c, xc := range mod.x[k*p : k*p+p] {
			e += xc * beta[c]
		}
		dst[j] = e
	}
}

// AddGlobalEtaGrad adds into gradG the gradient in theta_g of v'e, e
// subject i's GlobalEta: X_i' v in beta.
func (mod *Nested) AddGlobalEtaGrad(_ any, i int, thetaG, v, gradG []float64) {
	lo, hi := mod.start[i], mod.start[i+1]
	p := mod.p
	if len(v) != hi-lo || len(gradG) < p {
		panic("glmm: bad index or length in AddGlobalEtaGrad")
	}
	for j, vj := range v {
		k := lo + j
		for c, xc := range mod.x[k*p : k*p+p] {
			gradG[c] += xc * vj
		}
	}
}
