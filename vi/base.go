// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"math"

	"github.com/sparsevi/sparsevi/internal/scratch"
	"github.com/sparsevi/sparsevi/parallel"
)

// base holds what both approximation families share: the target, the
// chunking of its subjects, per-chunk random streams, workspaces and
// partial sums, and the vectors of one draw.
type base struct {
	target  Target
	n, r, g int
	d       int // n*r + g

	pool    *parallel.Pool
	chunks  parallel.Chunking
	streams *parallel.Streams // one per chunk, plus one for the global block
	ws      []Workspace       // one per chunk

	lam    []float64 // mu (d), then the factor
	stride int       // factor entries per subject; the global ones follow
	kind   []uint8
	nobs   int
	iter   uint64
	grads  bool // the pass computes gradients

	antithetic bool

	// Vectors of length d.
	z, theta, grad, v, tmp []float64

	// Per-chunk partial results, reduced in chunk order.
	partLP, partZZ, partLD []float64
	partG, partS1          [][]float64 // g-vectors
	chunkErr               []error
	sumG, sumS1            []float64
}

// NumObser is implemented by targets that know their number of
// observations; the paper's initialisation scales the factor with it.
type NumObser interface {
	NumObs() int
}

// newBase lays out lambda for a factor of factorLen entries, stride of them
// per subject followed by the global ones.
func newBase(t Target, set Settings, pool *parallel.Pool, factorLen, stride int) *base {
	n, r, g := t.Dims()
	d := n*r + g
	c := parallel.NewChunking(n, set.ChunkSize)
	b := &base{
		target: t, n: n, r: r, g: g, d: d, pool: pool, chunks: c,
		streams: parallel.NewStreams(set.Seed, c.Len()+1),
		ws:      make([]Workspace, c.Len()),
		lam:     make([]float64, d+factorLen),
		stride:  stride,
		kind:    make([]uint8, d+factorLen),
		nobs:    n,

		antithetic: set.Antithetic,
	}
	if no, ok := t.(NumObser); ok {
		b.nobs = no.NumObs()
	}
	for k := range b.ws {
		b.ws[k] = t.NewWorkspace()
	}
	for _, p := range []*[]float64{&b.z, &b.theta, &b.grad, &b.v, &b.tmp} {
		*p = make([]float64, d)
	}
	k := c.Len()
	b.partLP = make([]float64, k)
	b.partZZ = make([]float64, k)
	b.partLD = make([]float64, k)
	b.chunkErr = make([]error, k)
	b.partG = scratch.Partials(k, g)
	b.partS1 = scratch.Partials(k, g)
	b.sumG = make([]float64, g)
	b.sumS1 = make([]float64, g)
	return b
}

func (b *base) lambda() []float64 { return b.lam }
func (b *base) kinds() []uint8    { return b.kind }

// stepBlocks returns the blocks of the step rules' passes, one per chunk.
func (b *base) stepBlocks() [][]span {
	return stepBlocks(b.chunks, b.r, b.g, b.stride, len(b.lam))
}

// streamIter returns the stream iteration and sign of the draws of the
// current iteration: with antithetic draws, iterations 2k-1 and 2k share the
// stream of k, the second negated.
func (b *base) streamIter() (uint64, float64) {
	if b.iter >= finalIterBase && b.iter < crnIterBase {
		k := b.iter - finalIterBase
		return finalIterBase + k/2, 1 - 2*float64(k%2)
	}
	if !b.antithetic || b.iter >= crnIterBase {
		return b.iter, 1
	}
	if b.iter%2 == 1 {
		return (b.iter + 1) / 2, 1
	}
	return b.iter / 2, -1
}

// drawChunk fills z for the subjects of chunk k from its stream.
func (b *base) drawChunk(k, lo, hi int) {
	it, sign := b.streamIter()
	rng := b.streams.At(it, k)
	zz := 0.0
	for j := lo * b.r; j < hi*b.r; j++ {
		x := sign * rng.NormFloat64()
		b.z[j] = x
		zz += x * x
	}
	b.partZZ[k] = zz
}

// drawGlobal fills z_g from the global stream and returns z_g'z_g.
func (b *base) drawGlobal() float64 {
	it, sign := b.streamIter()
	rng := b.streams.At(it, b.chunks.Len())
	zz := 0.0
	for j := b.n * b.r; j < b.d; j++ {
		x := sign * rng.NormFloat64()
		b.z[j] = x
		zz += x * x
	}
	return zz
}

// localChunk evaluates the target on chunk k at theta, writing the local
// gradients into grad and the chunk's share of the global gradient into
// partG[k]. It records the log density in partLP[k].
func (b *base) localChunk(k, lo, hi int) error {
	var gl []float64
	pg := b.partG[k]
	clear(pg)
	if b.grads {
		gl = b.grad[lo*b.r : hi*b.r]
	}
	lp, err := b.target.Local(b.ws[k], lo, hi, b.theta[b.n*b.r:], b.theta[lo*b.r:hi*b.r], gl, pg)
	b.partLP[k] = lp
	return err
}

// reduce adds up the per-chunk partials in chunk order: it returns the sum
// of the local log densities and of z'z over the subjects, and the sum of
// log determinants, and sets sumG and sumS1.
func (b *base) reduce() (lp, zz, ld float64) {
	clear(b.sumG)
	clear(b.sumS1)
	for k := range b.chunks.Len() {
		lp += b.partLP[k]
		zz += b.partZZ[k]
		ld += b.partLD[k]
		for j, x := range b.partG[k] {
			b.sumG[j] += x
		}
		for j, x := range b.partS1[k] {
			b.sumS1[j] += x
		}
	}
	return lp, zz, ld
}

// logNorm is -d/2 log(2 pi).
func (b *base) logNorm() float64 { return -0.5 * float64(b.d) * math.Log(2*math.Pi) }

// labelFactor marks the factor's entries of lambda off-diagonal, except
// those at diag, the positions in the factor of its diagonal.
func (b *base) labelFactor(diag []int) {
	fk := b.kind[b.d:]
	for j := range fk {
		fk[j] = kindOff
	}
	for _, j := range diag {
		fk[j] = kindDiag
	}
}

// checkDiag reports the first non-finite or non-positive diagonal entry of
// the factor.
func (b *base) checkDiag() error {
	for j := b.d; j < len(b.lam); j++ {
		if b.kind[j] != kindDiag {
			continue
		}
		if x := b.lam[j]; !(x > 0) || math.IsInf(x, 0) {
			return &factorError{index: j - b.d, value: x, n: b.n, r: b.r, g: b.g}
		}
	}
	return nil
}

// reduceG sets sumG to the chunk-ordered sum of partG.
func (b *base) reduceG() {
	clear(b.sumG)
	for k := range b.chunks.Len() {
		for j, x := range b.partG[k] {
			b.sumG[j] += x
		}
	}
}

// lastDraw returns theta of the last estimate.
func (b *base) lastDraw() []float64 { return b.theta }
