// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/internal/scratch"
)

// chunkedGVA lets GVA under Snngm hold a draw chunk by chunk (gvaChunks);
// tests turn it off to compare with the family that stores them whole.
var chunkedGVA = true

// gvaChunks is GVA's estimate with a draw's vectors theta, grad and tmp
// held chunk by chunk rather than for every subject, and the natural
// gradient computed block by block of Snngm's passes when the step asks
// (blockGrader) rather than stored: three vectors of d and one of
// lambda's length fewer, 88 bytes a subject with a random intercept and 6
// global variables (88 of GVA's 686 at 10^6 Bernoulli subjects,
// benchmarks/memory). It needs the subjects in one process and no supports
// of the T_gi (GlobalSupporter), and serves Snngm alone, whose step
// consumes the natural gradient twice an iteration: its norm, then the
// step; the gradient's local blocks are computed at each, from z, v and
// T, which the step does not change before it has read them.
//
// The values are those of the stored family to the bit: the same
// arrowhead kernels run on the same numbers in the same order, on views
// of the factor over each chunk's subjects (view), and the sums over
// the chunks are added in chunk order as before.
type gvaChunks struct {
	f *gva

	// view[k] is the factor laid over the subjects of chunk k: its
	// local blocks are theirs, and what it takes for its global block
	// is the next subjects' storage (or the global block, for the last
	// chunk). Only its range methods run, which read the local blocks,
	// and vectors whose global part the caller fills. global is the
	// factor of the global block alone (no subjects).
	view   []*arrowhead.Factor
	global *arrowhead.Factor

	// The global parts of theta, tmp (u) and grad, and of the natural
	// gradient (the mean's and the factor's).
	thetaG, uG, gradG, natMuG, natTG []float64

	// The kinds of lambda's entries by their spans (spanKinds): zeros
	// (kindMean) for the means, the pattern of a subject's factor block
	// repeated over a chunk's subjects, and the global block's.
	kindMean, kindLocal, kindGlobal []uint8

	// partV holds each chunk's sum of T_gi v_i, reduced in chunk order.
	partV [][]float64
	sumV  []float64
	// bufs holds one workspace for each worker: a pass takes one and
	// gives it back.
	bufs chan *gvaChunkBuf

	noEntropy, grads bool
	passDraw         func(int) error
}

// gvaChunkBuf is a worker's workspace for one chunk: theta, u = T_d^-T z
// and the gradient of its subjects, each followed by room for the global
// part that the kernels read.
type gvaChunkBuf struct {
	theta, u, grad []float64
}

func newGVAChunks(f *gva) *gvaChunks {
	n, r, g := f.n, f.r, f.g
	c := &gvaChunks{f: f,
		view:   make([]*arrowhead.Factor, f.chunks.Len()),
		global: arrowhead.Wrap(0, r, g, f.t.Global()),
		thetaG: make([]float64, g), uG: make([]float64, g), gradG: make([]float64, g),
		natMuG: make([]float64, g), natTG: make([]float64, g*(g+1)/2),
		partV: scratch.Partials(f.chunks.Len(), g), sumV: make([]float64, g),
		bufs: make(chan *gvaChunkBuf, f.pool.Workers()),
	}
	// The diagonals of one subject's block and of the global block, by
	// their positions in a factor of one subject.
	size := min(n, f.chunks.Size)
	c.kindMean = make([]uint8, max(size*r, g))
	c.kindLocal = make([]uint8, size*f.stride)
	c.kindGlobal = make([]uint8, g*(g+1)/2)
	for j := range c.kindLocal {
		c.kindLocal[j] = kindOff
	}
	for j := range c.kindGlobal {
		c.kindGlobal[j] = kindOff
	}
	for _, j := range arrowhead.New(1, r, g).DiagIndices() {
		if j < f.stride {
			f.diagLocal = append(f.diagLocal, j)
			for i := range size {
				c.kindLocal[i*f.stride+j] = kindDiag
			}
		} else {
			f.diagGlobal = append(f.diagGlobal, j-f.stride)
			c.kindGlobal[j-f.stride] = kindDiag
		}
	}
	data := f.t.Data()
	for k := range c.view {
		lo, hi := f.chunks.Bounds(k)
		o := lo * f.stride
		c.view[k] = arrowhead.Wrap(hi-lo, r, g, data[o:o+arrowhead.Len(hi-lo, r, g)])
	}
	m := size*r + g
	for range f.pool.Workers() {
		c.bufs <- &gvaChunkBuf{theta: make([]float64, m), u: make([]float64, m), grad: make([]float64, m)}
	}
	c.passDraw = c.drawPass
	return c
}

// span returns the entries of v, a vector of length d, that the view of
// chunk k takes for its own: from the chunk's first subject on, m*r + g
// of them. The view reads and writes the first m*r alone (its subjects);
// the rest, the next chunks' entries, another worker may be writing.
func (c *gvaChunks) span(v []float64, k int) []float64 {
	lo, hi := c.f.chunks.Bounds(k)
	r := c.f.r
	return v[lo*r : hi*r+c.f.g]
}

// estimate is gva.estimate with the natural gradient, when grads is set,
// left for blockGrad: it draws, evaluates h and solves v = T^-1 grad h,
// and sets the global natural gradient.
func (c *gvaChunks) estimate(iter uint64, grads bool) (float64, error) {
	f := c.f
	if f.z == nil {
		// Made after the start, whose workspaces Fit has returned to
		// the operating system by now: they would add to its peak (16
		// bytes a subject of GVA's 606 at 10^6, benchmarks/memory).
		f.z, f.v = make([]float64, f.d), make([]float64, f.d)
	}
	f.iter = iter
	f.grads, c.grads = grads, grads
	nr := f.n * f.r
	mu := f.lam[:f.d]
	zzg := f.drawGlobal()
	c.global.DrawGlobal(c.thetaG, c.uG, mu[nr:], f.z[nr:])
	lp, zz, ld, err := f.reduce(f.pool.Run(f.chunks.Len(), c.passDraw))
	if err != nil {
		return 0, err
	}
	copy(c.gradG, f.sumG)
	lp += f.target.Global(c.thetaG, c.gradG)
	zz += zzg
	ld += f.t.LogDetGlobal()
	h := lp - (f.logNorm() + ld - 0.5*zz)
	if !grads {
		return h, nil
	}
	vG, zG := f.v[nr:], f.z[nr:]
	// (T z)_g = T_g z_g + sum_i T_gi z_i.
	c.global.MulVecGlobal(vG, zG, f.sumS1)
	for j, x := range vG {
		c.gradG[j] += x
	}
	// The local blocks of v were solved in the draw's pass.
	clear(c.sumV)
	for _, p := range c.partV {
		for j, x := range p {
			c.sumV[j] += x
		}
	}
	c.global.SolveGlobal(vG, c.gradG, c.sumV)
	c.global.NatGradGlobal(c.natTG, zG, vG, f.tz)
	c.global.SolveTransGlobal(c.natMuG, vG)
	return h, nil
}

// drawPass draws the subjects of chunk k, evaluates the target there and,
// for gradients, solves v_i = T_i^-1 grad_i with the chunk's sum of T_gi
// v_i: what gva's drawPass and solvePass do, theta, u and the gradient of
// the chunk in a worker's buffer.
func (c *gvaChunks) drawPass(k int) error {
	f := c.f
	lo, hi := f.chunks.Bounds(k)
	f.drawChunk(k, lo, hi)
	b := <-c.bufs
	err := c.drawChunk(k, lo, hi, b)
	c.bufs <- b
	return err
}

// drawChunk is drawPass in the workspace b.
func (c *gvaChunks) drawChunk(k, lo, hi int, b *gvaChunkBuf) error {
	f := c.f
	m := (hi - lo) * f.r
	theta, u, grad := b.theta[:m+f.g], b.u[:m+f.g], b.grad[:m+f.g]
	copy(u[m:], c.uG)
	view, z, v := c.view[k], c.span(f.z, k), c.span(f.v, k)
	view.DrawRange(0, hi-lo, theta, u, c.span(f.lam[:f.d], k), z)
	f.partLD[k] = f.t.LogDetRange(lo, hi)
	pg := f.partG[k]
	clear(pg)
	var gl []float64
	if c.grads {
		gl = grad[:m]
	}
	lp, err := f.target.Local(f.ws[k], lo, hi, c.thetaG, theta[:m], gl, pg)
	f.partLP[k] = lp
	if err != nil || !c.grads {
		return err
	}
	// grad h = grad log p + T z: v holds T z for the chunk, then v.
	s1 := f.partS1[k]
	clear(s1)
	view.MulVecRange(0, hi-lo, v, z, s1)
	for j, x := range v[:m] {
		grad[j] += x
	}
	sv := c.partV[k]
	clear(sv)
	view.SolveRange(0, hi-lo, v, grad, sv)
	return nil
}

// blockGrad writes the natural gradient on the spans of step block k into
// buf: the chunk's means, T^-T v, then its factor's blocks (NatGradRange),
// and for the last block the global ones.
func (c *gvaChunks) blockGrad(k int, buf []float64) []float64 {
	f := c.f
	lo, hi := f.chunks.Bounds(k)
	r, g := f.r, f.g
	m := (hi - lo) * r
	view := c.view[k]
	mean := buf[:m+g]
	copy(mean[m:], c.natMuG)
	view.SolveTransRange(0, hi-lo, mean, c.span(f.v, k))
	// The factor's blocks follow the means, over the global part of
	// mean, which SolveTransRange has read.
	nl := (hi - lo) * f.stride
	view.NatGradRange(0, hi-lo, buf[m:m+arrowhead.Len(hi-lo, r, g)], c.span(f.z, k), c.span(f.v, k), f.tz)
	n := m + nl
	if k == f.chunks.Len()-1 {
		n += copy(buf[n:], c.natMuG)
		n += copy(buf[n:], c.natTG)
	}
	return buf[:n]
}

// spanKinds returns the kinds of the span sp of a step block: a chunk's
// means or factor blocks (which begin at a subject's), or the global
// ones.
func (c *gvaChunks) spanKinds(sp span) []uint8 {
	f := c.f
	n := sp.hi - sp.lo
	switch {
	case sp.lo < f.d:
		return c.kindMean[:n]
	case sp.lo >= f.d+f.n*f.stride:
		return c.kindGlobal[:n]
	}
	return c.kindLocal[:n]
}

// blockGradLen is the length of the last block's gradient, or of a whole
// chunk's with the global ones, whichever is longer.
func (c *gvaChunks) blockGradLen() int {
	f := c.f
	size := min(f.n, f.chunks.Size)
	return max(size*f.r+arrowhead.Len(size, f.r, f.g), size*(f.r+f.stride)+f.g+f.g*(f.g+1)/2)
}

// The chunked family's side of blockedFamily.

func (f *gva) blockedNatural() bool { return f.chunked != nil }

func (f *gva) estimateBlocked(iter uint64) (float64, error) { return f.chunked.estimate(iter, true) }

func (f *gva) blockGrad(k int, buf []float64) []float64 { return f.chunked.blockGrad(k, buf) }

func (f *gva) blockGradLen() int { return f.chunked.blockGradLen() }

func (f *gva) spanKinds(sp span) []uint8 { return f.chunked.spanKinds(sp) }

func (f *gva) lastGlobal() []float64 {
	if f.chunked != nil {
		return f.chunked.thetaG
	}
	return f.base.lastGlobal()
}
