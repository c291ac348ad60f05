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
	d       int // n*r + g, or the sum of the sizes plus g
	nr      int // theta_g's offset

	// off and soff, when not nil, give each subject's offset in theta and
	// in the factor, whose blocks vary in size (BlockSizer).
	off, soff []int

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

	// kept, if not nil, is a stochastic fit's control variate, n*G
	// values, for the start to fill (KeptStarter); nil after a start that
	// did not.
	kept []float64

	// The destinations of an estimate's gradients (either may be nil),
	// and whether without the entropy's part (begin).
	nat, euc  []float64
	noEntropy bool

	// kind labels each entry of lambda; it is nil where the family
	// labels its factor by the pattern of one subject's block and the
	// global block (gva's chunked), whose diagonals are at diagLocal and
	// diagGlobal.
	diagLocal, diagGlobal []int

	antithetic bool

	// ch carries the sums through the processes of a group; nil for a fit
	// in one process. The subjects' chunks are numbered from firstChunk
	// among allChunks, and logNorm counts dAll variables.
	ch                    *chain
	firstChunk, allChunks int
	dAll                  int

	// scratch, when not nil, is a buffer of lambda's length that the start
	// may use before Fit fills it (see initMode).
	scratch []float64

	// Vectors of length d; theta, grad and tmp are nil where the family
	// holds a draw's vectors chunk by chunk (gva's chunked), which makes
	// z and v at its first estimate, after the start.
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
// per subject followed by the global ones. With chunked, the family holds
// theta, grad and tmp chunk by chunk, and newBase leaves them nil.
func newBase(t Target, set Settings, pool *parallel.Pool, sh *shard, factorLen, stride int, chunked bool) *base {
	n, r, g := t.Dims()
	nr := n * r
	var off []int
	if sizes := blockSizes(t); sizes != nil {
		off = make([]int, n+1)
		for i, s := range sizes {
			off[i+1] = off[i] + s
		}
		nr = off[n]
	}
	d := nr + g
	c := parallel.NewChunking(n, set.ChunkSize)
	b := &base{
		target: t, n: n, r: r, g: g, d: d, nr: nr, off: off, pool: pool, chunks: c,
		allChunks: c.Len(), dAll: d,
		streams: parallel.NewStreams(set.Seed, c.Len()+1),
		ws:      make([]Workspace, c.Len()),
		lam:     make([]float64, d+factorLen),
		stride:  stride,
		nobs:    n,

		antithetic: set.Antithetic,
	}
	if no, ok := t.(NumObser); ok {
		b.nobs = no.NumObs()
	}
	if sh != nil {
		b.ch, b.firstChunk, b.allChunks = sh.ch, sh.firstChunk, sh.chunks
		b.dAll, b.nobs = sh.n*r+g, sh.nobs
	}
	for k := range b.ws {
		b.ws[k] = t.NewWorkspace()
	}
	if !chunked {
		b.kind = make([]uint8, d+factorLen)
		for _, p := range []*[]float64{&b.z, &b.v, &b.theta, &b.grad, &b.tmp} {
			*p = make([]float64, d)
		}
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
func (b *base) lend(s []float64)  { b.scratch = s }
func (b *base) kinds() []uint8    { return b.kind }

// stepBlocks returns the blocks of the step rules' passes, one per chunk.
func (b *base) stepBlocks() [][]span {
	if b.off != nil {
		blocks := make([][]span, max(1, b.chunks.Len()))
		for k := range b.chunks.Len() {
			lo, hi := b.chunks.Bounds(k)
			blocks[k] = []span{{b.off[lo], b.off[hi]}, {b.d + b.soff[lo], b.d + b.soff[hi]}}
		}
		last := len(blocks) - 1
		blocks[last] = append(blocks[last], span{b.nr, b.d}, span{b.d + b.soff[b.n], len(b.lam)})
		return b.ownGlobal(blocks)
	}
	return b.ownGlobal(stepBlocks(b.chunks, b.r, b.g, b.stride, len(b.lam)))
}

// at returns the offset of subject i's block in theta.
func (b *base) at(i int) int {
	if b.off != nil {
		return b.off[i]
	}
	return i * b.r
}

// ownGlobal moves the global spans, the last two of the last block, into a
// block of their own in every process of a group but the last: each process
// steps the global block, and only the last one's sums count it, as the one
// process holding every subject would.
func (b *base) ownGlobal(blocks [][]span) [][]span {
	if b.ch == nil || b.ch.last {
		return blocks
	}
	k := len(blocks) - 1
	last := blocks[k]
	blocks[k] = last[: len(last)-2 : len(last)-2]
	return append(blocks, last[len(last)-2:])
}

// summed returns how many of the step blocks count in the sums: all but a
// global block of its own (see ownGlobal).
func (b *base) summed(blocks [][]span) int {
	if b.ch == nil || b.ch.last {
		return len(blocks)
	}
	return len(blocks) - 1
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
	rng := b.streams.AtIndex(it, k, uint64(b.firstChunk+k))
	zz := 0.0
	for j := b.at(lo); j < b.at(hi); j++ {
		x := sign * rng.NormFloat64()
		b.z[j] = x
		zz += x * x
	}
	b.partZZ[k] = zz
}

// drawGlobal fills z_g from the global stream and returns z_g'z_g.
func (b *base) drawGlobal() float64 {
	it, sign := b.streamIter()
	rng := b.streams.AtIndex(it, b.chunks.Len(), uint64(b.allChunks))
	zz := 0.0
	for j := b.nr; j < b.d; j++ {
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
		gl = b.grad[b.at(lo):b.at(hi)]
	}
	lp, err := b.target.Local(b.ws[k], lo, hi, b.theta[b.nr:], b.theta[b.at(lo):b.at(hi)], gl, pg)
	b.partLP[k] = lp
	return err
}

// reduce adds up the per-chunk partials in chunk order: it returns the sum
// of the local log densities and of z'z over the subjects, and the sum of
// log determinants, and sets sumG and sumS1. err is the error of the pass
// that made the partials; in a group, every process returns an error if
// one process's pass failed.
func (b *base) reduce(err error) (lp, zz, ld float64, _ error) {
	if b.ch != nil {
		return b.reduceGroup(err)
	}
	if err != nil {
		return 0, 0, 0, err
	}
	lp, zz, ld = b.addPartials(0, 0, 0)
	return lp, zz, ld, nil
}

// reduceGroup is reduce over the processes of a group: the running sums
// arrive from the process before, and this process's chunks are added in
// the same order as in reduce.
func (b *base) reduceGroup(err error) (lp, zz, ld float64, _ error) {
	g := b.g
	acc := b.ch.begin(3 + 2*g)
	v := acc[chainHead:]
	copy(b.sumG, v[3:3+g])
	copy(b.sumS1, v[3+g:])
	lp, zz, ld = b.addPartials(v[0], v[1], v[2])
	v[0], v[1], v[2] = lp, zz, ld
	copy(v[3:3+g], b.sumG)
	copy(v[3+g:], b.sumS1)
	if err := b.ch.end(acc, err); err != nil {
		return 0, 0, 0, err
	}
	copy(b.sumG, v[3:3+g])
	copy(b.sumS1, v[3+g:])
	return v[0], v[1], v[2], nil
}

// addPartials adds the chunks' partials, in chunk order, to lp, zz and ld
// and to sumG and sumS1.
func (b *base) addPartials(lp, zz, ld float64) (float64, float64, float64) {
	if b.ch == nil {
		clear(b.sumG)
		clear(b.sumS1)
	}
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

// logNorm is -d/2 log(2 pi), d counting the variables of every process.
// begin readies an estimate at iteration iter that writes its gradients
// into nat and euc (either may be nil), without the entropy's part when
// noEntropy.
func (b *base) begin(iter uint64, nat, euc []float64, noEntropy bool) {
	b.iter = iter
	b.nat, b.euc, b.noEntropy = nat, euc, noEntropy
	b.grads = nat != nil || euc != nil
}

// addGlobalTerm returns lp, the chunks' sum of the local terms of log p at
// the draw, plus the target's global term there, and sets the gradient's
// global block to the chunks' sum and the global term's.
func (b *base) addGlobalTerm(lp float64) float64 {
	gradG := b.grad[b.nr:]
	copy(gradG, b.sumG)
	return lp + b.target.Global(b.theta[b.nr:], gradG)
}

// addGlobalGrad adds the global block of v into the gradient's.
func (b *base) addGlobalGrad(v []float64) {
	for j := b.nr; j < b.d; j++ {
		b.grad[j] += v[j]
	}
}

// addGrad adds the entries of v of subjects lo..hi-1 into the gradient:
// the entropy's part of grad h, which each family computes its own way.
func (b *base) addGrad(lo, hi int, v []float64) {
	for j := b.at(lo); j < b.at(hi); j++ {
		b.grad[j] += v[j]
	}
}

func (b *base) logNorm() float64 { return -0.5 * float64(b.dAll) * math.Log(2*math.Pi) }

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
	err := b.checkOwnDiag()
	if b.ch != nil {
		err = b.ch.end(b.ch.begin(0), err)
	}
	return err
}

func (b *base) checkOwnDiag() error {
	if b.kind == nil {
		return b.checkPatternDiag()
	}
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

// checkPatternDiag is checkOwnDiag by the positions of the diagonals in
// a subject's block and in the global block.
func (b *base) checkPatternDiag() error {
	check := func(j int) error {
		if x := b.lam[j]; !(x > 0) || math.IsInf(x, 0) {
			return &factorError{index: j - b.d, value: x, n: b.n, r: b.r, g: b.g}
		}
		return nil
	}
	for i := range b.n {
		for _, a := range b.diagLocal {
			if err := check(b.d + i*b.stride + a); err != nil {
				return err
			}
		}
	}
	for _, a := range b.diagGlobal {
		if err := check(b.d + b.n*b.stride + a); err != nil {
			return err
		}
	}
	return nil
}

// reduceG sets sumG to the chunk-ordered sum of partG; err is as for
// reduce.
func (b *base) reduceG(err error) error {
	if b.ch == nil {
		if err != nil {
			return err
		}
		clear(b.sumG)
		b.addG()
		return nil
	}
	acc := b.ch.begin(b.g)
	copy(b.sumG, acc[chainHead:])
	b.addG()
	copy(acc[chainHead:], b.sumG)
	if err := b.ch.end(acc, err); err != nil {
		return err
	}
	copy(b.sumG, acc[chainHead:])
	return nil
}

func (b *base) addG() {
	for k := range b.chunks.Len() {
		for j, x := range b.partG[k] {
			b.sumG[j] += x
		}
	}
}

func (b *base) group() *chain { return b.ch }

func (b *base) globalLen() int {
	if b.soff != nil {
		return b.g + len(b.lam) - b.d - b.soff[b.n]
	}
	return b.g + len(b.lam) - b.d - b.n*b.stride
}

// lastGlobal returns theta_g of the last estimate.
func (b *base) lastGlobal() []float64 { return b.theta[b.nr:] }
