// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

// trials returns the trials of stored row j (1 unless binomial).
func (mod *Model) trials(j int) float64 {
	if mod.m == nil {
		return 1
	}
	return mod.m[j]
}

// weight returns the weight of stored row j (1 unless given).
func (mod *Model) weight(j int) float64 {
	if mod.w == nil {
		return 1
	}
	return mod.w[j]
}

// offset returns the offset of stored row j (0 unless given).
func (mod *Model) offset(j int) float64 {
	if mod.off == nil {
		return 0
	}
	return mod.off[j]
}

// rowRange returns v[s:e], or the first e-s of fill when v is nil (a
// column stored only when it is not constant).
func rowRange(v, fill []float64, s, e int) []float64 {
	if v == nil {
		return fill[:e-s]
	}
	return v[s:e]
}
