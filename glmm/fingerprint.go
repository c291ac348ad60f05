// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"math"
)

// Fingerprint returns the SHA-256, in hex, of everything that defines the
// model's log density: the family and link, the dimensions, the prior, the
// data (responses, trials, weights, offsets, designs, subjects) in storage
// order, the crossed factors and the random-effect blocks. Two models have
// the same fingerprint when they are the same model, so that a saved fit
// can be checked against the model it is loaded for. Names and labels do
// not enter it.
func (mod *Model) Fingerprint() string {
	h := sha256.New()
	buf := make([]byte, 0, 1<<16)
	flush := func() {
		h.Write(buf)
		buf = buf[:0]
	}
	ints := func(v ...int) {
		for _, x := range v {
			if len(buf)+8 > cap(buf) {
				flush()
			}
			buf = binary.LittleEndian.AppendUint64(buf, uint64(x))
		}
	}
	floats := func(v []float64) {
		ints(len(v))
		for _, x := range v {
			if len(buf)+8 > cap(buf) {
				flush()
			}
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
		}
	}
	ints(int(mod.family), int(mod.link), mod.nobs, mod.p, mod.r, mod.n, int(math.Float64bits(mod.priorSD)))
	ints(mod.start...)
	if mod.yb == nil {
		floats(mod.y)
	} else {
		// Hashed as the float64 values they stand for.
		ints(mod.nobs)
		for i := range mod.n {
			for _, x := range mod.yRange(mod.start[i], mod.start[i+1]) {
				if len(buf)+8 > cap(buf) {
					flush()
				}
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(x))
			}
		}
	}
	// Trials, weights and offsets as values, whether stored or not.
	for j := range mod.nobs {
		if len(buf)+24 > cap(buf) {
			flush()
		}
		for _, v := range [3]float64{mod.trials(j), mod.weight(j), mod.offset(j)} {
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v))
		}
	}
	if mod.sparseX {
		ints(1)
		ints(mod.xptr...)
		ints(mod.xind...)
		floats(mod.xval)
	} else if mod.xcols != nil {
		// Hashed as the row-major matrix it stands for.
		ints(0)
		ints(mod.nobs * mod.p)
		for j := range mod.nobs {
			for _, col := range mod.xcols {
				if len(buf)+8 > cap(buf) {
					flush()
				}
				buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(columnAt(col, j)))
			}
		}
	} else {
		ints(0)
		floats(mod.x)
	}
	if mod.z == nil {
		// A column of ones (zRange), hashed as if stored.
		ints(mod.nobs)
		for range mod.nobs {
			if len(buf)+8 > cap(buf) {
				flush()
			}
			buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(1))
		}
	} else {
		floats(mod.z)
	}
	ints(len(mod.cross))
	for _, c := range mod.cross {
		ints(len(c.levels), c.off, c.omega, len(c.idx))
		for _, l := range c.idx {
			ints(int(l))
		}
		floats(c.weight)
	}
	ints(len(mod.omegaFree))
	for _, f := range mod.omegaFree {
		b := 0
		if f {
			b = 1
		}
		ints(b)
	}
	flush()
	return hex.EncodeToString(h.Sum(nil))
}
