// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
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
	h := newHasher()
	h.ints(int(mod.family), int(mod.link), mod.nobs, mod.p, mod.r, mod.n, int(math.Float64bits(mod.priorSD)))
	h.ints(mod.start...)
	if mod.yb == nil {
		h.floats(mod.y)
	} else {
		// Hashed as the float64 values they stand for.
		h.ints(mod.nobs)
		for i := range mod.n {
			for _, x := range mod.yRange(mod.start[i], mod.start[i+1]) {
				h.float(x)
			}
		}
	}
	// Trials, weights and offsets as values, whether stored or not.
	for j := range mod.nobs {
		h.float(mod.trials(j))
		h.float(mod.weight(j))
		h.float(mod.offset(j))
	}
	if mod.sparseX {
		h.ints(1)
		h.ints(mod.xptr...)
		h.ints(mod.xind...)
		h.floats(mod.xval)
	} else if mod.xcols != nil {
		// Hashed as the row-major matrix it stands for.
		h.ints(0)
		h.ints(mod.nobs * mod.p)
		for j := range mod.nobs {
			for _, col := range mod.xcols {
				h.float(columnAt(col, j))
			}
		}
	} else {
		h.ints(0)
		h.floats(mod.x)
	}
	if mod.z == nil {
		// A column of ones (zRange), hashed as if stored.
		h.ints(mod.nobs)
		for range mod.nobs {
			h.float(1)
		}
	} else {
		h.floats(mod.z)
	}
	h.ints(len(mod.cross))
	for _, c := range mod.cross {
		h.ints(len(c.levels), c.off, c.omega, len(c.idx))
		for _, l := range c.idx {
			h.ints(int(l))
		}
		h.floats(c.weight)
	}
	h.ints(len(mod.omegaFree))
	for _, f := range mod.omegaFree {
		b := 0
		if f {
			b = 1
		}
		h.ints(b)
	}
	return h.sum()
}

// Fingerprint returns the SHA-256, in hex, of everything that defines the
// nested model's log density, as Model.Fingerprint does for a Model: the
// family and link, the dimensions, the prior, the subjects' rows and
// block sizes, the data in storage order and the a:b level of each
// variable. Names and labels do not enter it.
func (mod *Nested) Fingerprint() string {
	h := newHasher()
	h.ints(int(mod.family), int(mod.link), mod.nobs, mod.p, mod.n, mod.nd, int(math.Float64bits(mod.priorSD)))
	h.ints(mod.start...)
	h.ints(mod.sizes...)
	for _, v := range [][]float64{mod.y, mod.m, mod.w, mod.off, mod.x} {
		h.floats(v)
	}
	h.ints(len(mod.inner))
	for _, q := range mod.inner {
		h.ints(int(q))
	}
	h.ints(mod.innerLevel...)
	return h.sum()
}

// hasher feeds little-endian 8-byte words to SHA-256 through a buffer.
type hasher struct {
	h   hash.Hash
	buf []byte
}

func newHasher() *hasher { return &hasher{h: sha256.New(), buf: make([]byte, 0, 1<<16)} }

func (hs *hasher) word(x uint64) {
	if len(hs.buf)+8 > cap(hs.buf) {
		hs.h.Write(hs.buf)
		hs.buf = hs.buf[:0]
	}
	hs.buf = binary.LittleEndian.AppendUint64(hs.buf, x)
}

func (hs *hasher) ints(v ...int) {
	for _, x := range v {
		hs.word(uint64(x))
	}
}

func (hs *hasher) float(x float64) { hs.word(math.Float64bits(x)) }

// floats hashes the length of v, then its values.
func (hs *hasher) floats(v []float64) {
	hs.ints(len(v))
	for _, x := range v {
		hs.float(x)
	}
}

// sum returns the hex SHA-256 of everything fed.
func (hs *hasher) sum() string {
	hs.h.Write(hs.buf)
	return hex.EncodeToString(hs.h.Sum(nil))
}
