// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import "math"

// maxBinaryRun is the largest number of observations of a subject for
// which a 0/1 response is stored as bits (binaryWindows): its windows
// table then holds 2^16 + 15 values and 2^16 positions, 768 KiB.
const maxBinaryRun = 16

// binaryResponse reports whether every response is +0 or 1 exactly (as
// bits) in a family with 0/1 responses and no subject has more than
// maxBinaryRun rows: the model then stores them as bits, 1 bit an
// observation rather than 64, and reads them back as the same float64.
func binaryResponse(fam Family, y []float64, maxNi int) bool {
	if fam != Bernoulli && fam != Binomial || maxNi > maxBinaryRun {
		return false
	}
	for _, v := range y {
		if b := math.Float64bits(v); b != 0 && b != math.Float64bits(1) {
			return false
		}
	}
	return true
}

// binaryWindows holds every string of L bits as a window of one float64
// sequence of zeros and ones, a de Bruijn sequence of order L made linear:
// the window of the string with bit j the value of row j starts at
// pos[string]. A subject's 0/1 responses, stored as bits, are then read
// as a view of float64 values (Model.Response, and the kernels' slices)
// without a copy: its first n_i <= L bits those of the subject's rows
// and the rest zero.
type binaryWindows struct {
	seq []float64
	pos []uint32
}

// newBinaryWindows returns the windows of the strings of L bits, 1 <= L
// <= maxBinaryRun.
func newBinaryWindows(l int) *binaryWindows {
	// The de Bruijn sequence B(2, L), by the FKM algorithm (Fredricksen,
	// Kessler and Maiorana): the concatenation, in lexicographic order,
	// of the Lyndon words whose length divides L.
	seq := make([]float64, 0, 1<<l+l-1)
	a := make([]uint8, l+1)
	var db func(t, p int)
	db = func(t, p int) {
		if t > l {
			if l%p == 0 {
				for _, b := range a[1 : p+1] {
					seq = append(seq, float64(b))
				}
			}
			return
		}
		a[t] = a[t-p]
		db(t+1, p)
		if a[t-p] == 0 {
			a[t] = 1
			db(t+1, t)
		}
	}
	db(1, 1)
	seq = append(seq, seq[:l-1]...) // the cyclic windows, made linear
	w := &binaryWindows{seq: seq, pos: make([]uint32, 1<<l)}
	for p := range 1 << l {
		w.pos[windowBits(seq[p:p+l])] = uint32(p)
	}
	return w
}

// windowBits returns the string of the 0/1 values v, bit j the value v[j].
func windowBits(v []float64) uint32 {
	var bits uint32
	for j, x := range v {
		bits |= uint32(x) << j
	}
	return bits
}

// view returns the n 0/1 values of the bits of s, bit j value j, as a
// view of the sequence that must not be modified.
func (w *binaryWindows) view(s uint32, n int) []float64 {
	p := int(w.pos[s])
	return w.seq[p : p+n : p+n]
}

// yBits returns the responses of stored rows [s, e), e - s <= 32, as the
// bits of a string, bit j that of row s + j.
func (mod *Model) yBits(s, e int) uint32 {
	w, off := s/64, uint(s%64)
	v := mod.yb[w] >> off
	if n := uint(e - s); off+n > 64 {
		v |= mod.yb[w+1] << (64 - off)
	}
	return uint32(v) & (1<<uint(e-s) - 1)
}

// yRange returns the responses of stored rows [s, e), which lie within
// one subject, as a view that must not be modified.
func (mod *Model) yRange(s, e int) []float64 {
	if mod.yb != nil {
		return mod.ywin.view(mod.yBits(s, e), e-s)
	}
	return mod.y[s:e]
}

// yAt returns the response of stored row j.
func (mod *Model) yAt(j int) float64 {
	if mod.yb != nil {
		return float64(mod.yb[j/64] >> (j % 64) & 1)
	}
	return mod.y[j]
}
