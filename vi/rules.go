// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"errors"
	"math"

	"github.com/sparsevi/sparsevi/parallel"
)

// Entry kinds of the flat variational parameter vector lambda.
const (
	kindMean uint8 = iota // an entry of mu
	kindDiag              // a diagonal entry of the factor
	kindOff               // an off-diagonal entry of the factor
)

// span is a range [lo, hi) of lambda's entries.
type span struct{ lo, hi int }

// stepBlocks cuts lambda into the blocks of the step rules' elementwise
// passes. Block k holds the entries of the subjects of chunk k of c (their
// means and their factor blocks, stride entries each), and the last block
// the global entries as well. The blocks depend on the chunking alone, so
// reductions over them do not depend on the worker count; and as the pool
// gives each worker the same contiguous share of every loop over the
// chunks, the worker that draws and differentiates a chunk's subjects
// mostly updates them too, on lines in its own cache.
func stepBlocks(c parallel.Chunking, r, g, stride, total int) [][]span {
	n := c.N
	d := n*r + g
	blocks := make([][]span, max(1, c.Len()))
	for k := range c.Len() {
		lo, hi := c.Bounds(k)
		blocks[k] = []span{{lo * r, hi * r}, {d + lo*stride, d + hi*stride}}
	}
	last := len(blocks) - 1
	blocks[last] = append(blocks[last], span{n * r, d}, span{d + n*stride, total})
	return blocks
}

// stepCore is what the gradient rules share: lambda with the kinds of its
// entries, the pool and the blocks their passes run over, the blocks'
// partial sums, and the safeguard that a step written into delta passes
// through in apply: it is scaled down if it would shrink a diagonal entry
// of the factor by more than half.
type stepCore struct {
	lambda []float64
	kinds  []uint8
	prec   bool // the factor is a precision factor (GVA)

	pool     *parallel.Pool
	blocks   [][]span
	partial  []float64
	partial2 []float64
	// ch carries the sums over blocks through a group's processes (nil in
	// one process), and the first nsum blocks count in them.
	ch   *chain
	nsum int

	delta    []float64
	lastFrac float64 // the fraction of the rule's step the safeguard let through

	// Per-pass values read by the block functions.
	scale float64
	grad  []float64

	// blocked, when not nil, gives the gradient block by block in place
	// of grad (nil then), into one of the buffers of bufs, which its
	// passes take and give back.
	blocked blockGrader
	bufs    chan []float64

	passNorm, passRatio, passApply func(int) error
}

func newStepCore(fam family, pool *parallel.Pool, delta bool) *stepCore {
	blocks := fam.stepBlocks()
	c := newStepCoreOf(fam.lambda(), fam.kinds(), fam.precision(), pool, blocks, delta)
	c.ch, c.nsum = fam.group(), fam.summed(blocks)
	return c
}

// newStepCoreOf returns the shared state of a rule's step over lambda, with
// room for a step in delta if asked.
func newStepCoreOf(lambda []float64, kinds []uint8, prec bool, pool *parallel.Pool, blocks [][]span, delta bool) *stepCore {
	c := &stepCore{lambda: lambda, kinds: kinds, prec: prec, pool: pool, blocks: blocks,
		partial: make([]float64, len(blocks)), partial2: make([]float64, len(blocks)), nsum: len(blocks)}
	if delta {
		c.delta = make([]float64, len(lambda))
	}
	c.passNorm, c.passRatio, c.passApply = c.normBlock, c.ratioBlock, c.applyBlock
	return c
}

// A blockGrader computes the gradient a rule consumes block by block of
// the rule's passes, when it asks, instead of storing it whole: GVA's
// natural gradient under Snngm (gva.chunked), whose passes then take one
// block's gradient at a time, twice an iteration (the norm, then the
// step). It saves an array of lambda's length (64 bytes a subject with a
// random intercept and 6 global variables).
type blockGrader interface {
	// blockGrad writes the gradient's entries on the spans of step block
	// k, span after span, into buf and returns them.
	blockGrad(k int, buf []float64) []float64
	// blockGradLen returns the largest length blockGrad writes.
	blockGradLen() int
	// spanKinds returns the kinds of the entries of the span sp of a
	// step block: the family keeps no kinds of lambda's length.
	spanKinds(sp span) []uint8
}

// setBlocked makes the core take the gradient from bg block by block,
// with a buffer for each of the pool's workers.
func (c *stepCore) setBlocked(bg blockGrader) {
	c.blocked = bg
	c.bufs = make(chan []float64, c.pool.Workers())
	for range c.pool.Workers() {
		c.bufs <- make([]float64, bg.blockGradLen())
	}
}

// blockGrad returns the gradient of block k, laid out span after span
// (spanGrad cuts it), and the buffer it holds it in, to be given back by
// release; or, with the gradient stored whole, nils.
func (c *stepCore) blockGrad(k int) (g, buf []float64) {
	if c.blocked == nil {
		return nil, nil
	}
	buf = <-c.bufs
	return c.blocked.blockGrad(k, buf), buf
}

// release gives back a buffer of blockGrad.
func (c *stepCore) release(buf []float64) {
	if buf != nil {
		c.bufs <- buf
	}
}

// spanKinds returns the kinds of the entries of the span sp.
func (c *stepCore) spanKinds(sp span) []uint8 {
	if c.blocked == nil {
		return c.kinds[sp.lo:sp.hi]
	}
	return c.blocked.spanKinds(sp)
}

// spanGrad returns the gradient on the span sp: of the stored gradient,
// or the next len(sp) entries of a block's gradient bg from *off on.
func (c *stepCore) spanGrad(bg []float64, sp span, off *int) []float64 {
	if c.blocked == nil {
		return c.grad[sp.lo:sp.hi]
	}
	o := *off
	*off += sp.hi - sp.lo
	return bg[o:*off]
}

// biasCorrections returns Adam's bias corrections 1/(1 - b^t) of the two
// moments at step t.
func biasCorrections(b1, b2 float64, t int) (c1, c2 float64) {
	return 1 / (1 - math.Pow(b1, float64(t))), 1 / (1 - math.Pow(b2, float64(t)))
}

// gradientStep is the step of a gradient rule: it advances lambda by one
// iteration given the gradient the rule consumes, and returns the step's
// norm.
type gradientStep interface {
	step(g []float64) (float64, error)
	// divide divides the step size by f.
	divide(f float64)
	// reset forgets the moments, as after a restart from an earlier
	// state.
	reset()
	// core returns the shared state, whose lastFrac the iterator reports.
	core() *stepCore
	// state appends the rule's state (its step size and moments) to dst;
	// setState restores it from what state appended.
	state(dst []float64) []float64
	setState(src []float64) error
}

// errRuleState is the error of a rule state of the wrong length.
var errRuleState = errors.New("vi: the checkpoint's rule state does not fit the rule")

func (s *snngmStep) state(dst []float64) []float64 {
	dst = append(dst, s.alpha, float64(s.t), s.nu)
	return append(dst, s.m...)
}

func (s *snngmStep) setState(src []float64) error {
	if len(src) != 3+len(s.m) {
		return errRuleState
	}
	s.alpha, s.t, s.nu = src[0], int(src[1]), src[2]
	copy(s.m, src[3:])
	return nil
}

func (s *adamStep) state(dst []float64) []float64 {
	dst = append(dst, s.alpha, float64(s.t))
	dst = append(dst, s.m...)
	return append(dst, s.v...)
}

func (s *adamStep) setState(src []float64) error {
	if len(src) != 2+len(s.m)+len(s.v) {
		return errRuleState
	}
	s.alpha, s.t = src[0], int(src[1])
	copy(s.m, src[2:2+len(s.m)])
	copy(s.v, src[2+len(s.m):])
	return nil
}

func (s *nagmStep) state(dst []float64) []float64 {
	return append(append(dst, s.alpha), s.m...)
}

func (s *nagmStep) setState(src []float64) error {
	if len(src) != 1+len(s.m) {
		return errRuleState
	}
	s.alpha = src[0]
	copy(s.m, src[1:])
	return nil
}

// snngmStep is Snngm's step: it updates the momentum and takes the step in
// one pass over lambda, and takes back what the safeguard disallows.
type snngmStep struct {
	*stepCore
	rule  Snngm
	alpha float64
	m     []float64
	t     int
	// nu is the root of the moving average, at rate Beta2, of the squared
	// norms of RVB's natural gradients, by which its Snngm normalises.
	nu    float64
	corr1 float64

	passStep, passRetract func(int) error
}

func (s Snngm) iterator(fam family, pool *parallel.Pool) (iterator, error) {
	return newGradientIterator(fam, newSnngmStep(newStepCore(fam, pool, false), s), true, false), nil
}

func newSnngmStep(c *stepCore, rule Snngm) *snngmStep {
	st := &snngmStep{stepCore: c, rule: rule, alpha: rule.Alpha, m: make([]float64, len(c.lambda))}
	st.passStep, st.passRetract = st.snngmBlock, st.retractBlock
	return st
}

func (s *snngmStep) core() *stepCore  { return s.stepCore }
func (s *snngmStep) divide(f float64) { s.alpha /= f }

func (s *snngmStep) reset() {
	s.nu = 0
	clear(s.m)
	s.t = 0
}

func (s *snngmStep) step(g []float64) (float64, error) {
	s.t++
	b2 := s.rule.Beta2
	var corr2 float64
	s.corr1, corr2 = biasCorrections(s.rule.Beta1, b2, s.t)
	nrm, err := s.norm(g)
	if err != nil {
		return 0, err
	}
	if nrm == 0 {
		return 0, nil
	}
	s.grad = g
	s.scale = 1 / nrm
	if !s.prec {
		// RVB divides by the recent root mean square norm rather
		// than by this gradient's norm: the step is then linear in
		// the gradient over the average's span, and so unbiased.
		// g/||g|| is not: when a rare draw carries most of the mean
		// (a variance component with a flat likelihood towards zero
		// and a cliff the other way, whose log precision q
		// spreads over both), it weighs no more than a typical draw,
		// the momentum follows the median draw instead of the mean,
		// and q drifts down the bound (reliability TestRVBFlatVariance).
		// The normalised size of one gradient is still at most
		// 1/sqrt(1-Beta2), about 32: a wild draw cannot throw lambda.
		s.nu = math.Hypot(math.Sqrt(b2)*s.nu, math.Sqrt(1-b2)*nrm)
		s.scale = 1 / (s.nu * math.Sqrt(corr2))
	}
	if err := s.pool.Run(len(s.blocks), s.passStep); err != nil {
		return 0, err
	}
	return s.finish()
}

// norm returns the Euclidean norm of g without overflow for entries
// near the largest float64 (a diverging target can give gradients of
// 1e300), reduced in block order.
func (s *stepCore) norm(g []float64) (float64, error) {
	s.grad = g
	if err := s.pool.Run(len(s.blocks), s.passNorm); err != nil {
		return 0, err
	}
	var scale, ssq float64
	var acc []float64
	if s.ch != nil {
		acc = s.ch.begin(2)
		scale, ssq = acc[chainHead], acc[chainHead+1]
	}
	for k := range s.nsum {
		scale, ssq = addScaled(scale, ssq, s.partial[k], s.partial2[k])
	}
	if s.ch != nil {
		acc[chainHead], acc[chainHead+1] = scale, ssq
		if err := s.ch.end(acc, nil); err != nil {
			return 0, err
		}
		scale, ssq = acc[chainHead], acc[chainHead+1]
	}
	return scale * math.Sqrt(ssq), nil
}

// normBlock sets the block's partial norm as scale and scaled sum of squares:
// the block's squared norm is partial^2 * partial2.
func (s *stepCore) normBlock(k int) error {
	var scale, ssq float64
	bg, buf := s.blockGrad(k)
	off := 0
	for _, sp := range s.blocks[k] {
		sc, sq := scaledSumSq(s.spanGrad(bg, sp, &off))
		scale, ssq = addScaled(scale, ssq, sc, sq)
	}
	s.release(buf)
	s.partial[k], s.partial2[k] = scale, ssq
	return nil
}

// scaledSumSq returns the squared norm of g as scale^2 * ssq. The plain sum
// of squares serves unless it overflowed or underflowed; then g is summed
// again, scaled by its largest entry.
func scaledSumSq(g []float64) (scale, ssq float64) {
	for _, x := range g {
		ssq += x * x
	}
	switch {
	case math.IsNaN(ssq):
		return math.NaN(), 1
	case ssq > minSumSq && ssq < maxSumSq:
		return 1, ssq
	}
	// Overflow, underflow (possibly to zero) or an all-zero g.
	for _, x := range g {
		scale = math.Max(scale, math.Abs(x))
	}
	ssq = 0
	if math.IsInf(scale, 0) {
		ssq = 1
	} else if scale > 0 {
		for _, x := range g {
			y := x / scale
			ssq += y * y
		}
	}
	return scale, ssq
}

// Sums of squares between these bounds lost nothing to underflow or
// overflow.
const (
	minSumSq = 1e-280
	maxSumSq = 1e280
)

// addScaled combines two (scale, ssq) pairs representing scale^2 * ssq.
func addScaled(s1, q1, s2, q2 float64) (float64, float64) {
	switch {
	case math.IsNaN(s1) || math.IsNaN(s2):
		return math.NaN(), 1
	case s2 == 0:
		return s1, q1
	case s1 == 0:
		return s2, q2
	case s1 >= s2:
		r := s2 / s1
		return s1, q1 + q2*r*r
	default:
		r := s1 / s2
		return s2, q2 + q1*r*r
	}
}

// snngmBlock updates the momentum and takes the block's whole step at
// once, recording the safeguard's ratio (see ratioBlock) in partial and the
// step's squared norm in partial2: one pass over lambda instead of three,
// as the ratio rarely binds. When it does, retractBlock takes back the
// part of the step it disallows.
func (s *snngmStep) snngmBlock(k int) error {
	frac, ss := 1.0, 0.0
	bg, buf := s.blockGrad(k)
	off := 0
	for _, sp := range s.blocks[k] {
		frac, ss = s.snngmSpan(sp.lo, sp.hi, s.spanGrad(bg, sp, &off), s.spanKinds(sp), frac, ss)
	}
	s.release(buf)
	if math.IsNaN(ss) {
		frac = math.NaN()
	}
	s.partial[k], s.partial2[k] = frac, ss
	return nil
}

// snngmSpan is snngmBlock on the entries [lo, hi), whose gradient is g
// and kinds kd, carrying the ratio frac and the sum of squares ss.
func (s *snngmStep) snngmSpan(lo, hi int, g []float64, kd []uint8, frac, ss float64) (float64, float64) {
	b := s.rule.Beta1
	c := s.alpha * s.corr1
	b1, sc := 1-b, s.scale
	// Local slices of one length: the loop then keeps them in registers
	// and needs no bounds checks.
	mom := s.m[lo:hi]
	grad := g[:len(mom)]
	lam := s.lambda[lo:hi][:len(mom)]
	kinds := kd[:len(mom)]
	for j, mj := range mom {
		m := b*mj + b1*grad[j]*sc
		mom[j] = m
		d := c * m
		x := lam[j]
		if kinds[j] == kindDiag && d < 0 && x+d < x/2 {
			frac = min(frac, -x/(2*d))
		}
		lam[j] = x + d
		ss += d * d
	}
	return frac, ss
}

// retractBlock takes back the fraction s.scale of Snngm's step.
func (s *snngmStep) retractBlock(k int) error {
	c := s.scale * s.alpha * s.corr1
	for _, sp := range s.blocks[k] {
		for j := sp.lo; j < sp.hi; j++ {
			s.lambda[j] -= c * s.m[j]
		}
	}
	return nil
}

// finish completes a Snngm step from the blocks' partials: it shortens the
// step if the safeguard requires it and returns its norm.
func (s *snngmStep) finish() (float64, error) {
	frac, ss, err := s.allowedFraction(s.partial2)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(frac) {
		return frac, nil
	}
	if frac < 1 {
		s.scale = 1 - frac
		if err := s.pool.Run(len(s.blocks), s.passRetract); err != nil {
			return 0, err
		}
	}
	return frac * math.Sqrt(ss), nil
}

// allowedFraction returns the smallest of the blocks' safeguard ratios in
// partial, NaN if one is NaN, and records it as lastFrac; and, unless add
// is nil, the sum of its blocks' values.
func (s *stepCore) allowedFraction(add []float64) (frac, sum float64, err error) {
	frac = 1.0
	var acc []float64
	if s.ch != nil {
		acc = s.ch.begin(2)
		if s.ch.rank > 0 {
			frac, sum = acc[chainHead], acc[chainHead+1]
		}
	}
	for _, p := range s.partial[:s.nsum] {
		if math.IsNaN(p) {
			frac = p
			break
		}
		frac = min(frac, p)
	}
	if add != nil {
		for _, p := range add[:s.nsum] {
			sum += p
		}
	}
	if s.ch != nil {
		acc[chainHead], acc[chainHead+1] = frac, sum
		if err := s.ch.end(acc, nil); err != nil {
			return 0, 0, err
		}
		frac, sum = acc[chainHead], acc[chainHead+1]
	}
	s.lastFrac = frac
	return frac, sum, nil
}

// adamStep is the step of Adam and NAdam (the same rule on the Euclidean
// and on the natural gradient) and of PGA.
type adamStep struct {
	*stepCore
	rule         Adam
	alpha        float64
	m, v         []float64
	t            int
	corr1, corr2 float64
	pass         func(int) error
}

func newAdamStep(fam family, pool *parallel.Pool, rule Adam, prox bool) *adamStep {
	n := len(fam.lambda())
	st := &adamStep{stepCore: newStepCore(fam, pool, true), rule: rule, alpha: rule.Alpha,
		m: make([]float64, n), v: make([]float64, n)}
	st.pass = st.adamBlock
	if prox {
		st.pass = st.pgaBlock
	}
	return st
}

func (a Adam) iterator(fam family, pool *parallel.Pool) (iterator, error) {
	return newGradientIterator(fam, newAdamStep(fam, pool, a, false), false, false), nil
}

func (a NAdam) iterator(fam family, pool *parallel.Pool) (iterator, error) {
	return newGradientIterator(fam, newAdamStep(fam, pool, Adam(a), false), true, false), nil
}

func (a PGA) iterator(fam family, pool *parallel.Pool) (iterator, error) {
	return newGradientIterator(fam, newAdamStep(fam, pool, Adam(a), true), false, true), nil
}

func (s *adamStep) core() *stepCore  { return s.stepCore }
func (s *adamStep) divide(f float64) { s.alpha /= f }

func (s *adamStep) reset() {
	clear(s.m)
	clear(s.v)
	s.t = 0
}

func (s *adamStep) step(g []float64) (float64, error) {
	s.t++
	s.corr1, s.corr2 = biasCorrections(s.rule.Beta1, s.rule.Beta2, s.t)
	s.grad = g
	if err := s.pool.Run(len(s.blocks), s.pass); err != nil {
		return 0, err
	}
	return s.apply()
}

func (s *adamStep) adamBlock(k int) error {
	b1, b2, eps := s.rule.Beta1, s.rule.Beta2, s.rule.Eps
	for _, sp := range s.blocks[k] {
		for j := sp.lo; j < sp.hi; j++ {
			g := s.grad[j]
			s.m[j] = b1*s.m[j] + (1-b1)*g
			s.v[j] = b2*s.v[j] + (1-b2)*g*g
			s.delta[j] = s.alpha * s.m[j] * s.corr1 / (math.Sqrt(s.v[j]*s.corr2) + eps)
		}
	}
	return nil
}

// pgaBlock is ProxGenAdam: uncorrected moments, then a proximal step for
// the entropy term on each diagonal entry (supplement S5.2).
func (s *adamStep) pgaBlock(k int) error {
	b1, b2, eps := s.rule.Beta1, s.rule.Beta2, s.rule.Eps
	for _, sp := range s.blocks[k] {
		s.pgaSpan(sp.lo, sp.hi, b1, b2, eps)
	}
	return nil
}

func (s *adamStep) pgaSpan(lo, hi int, b1, b2, eps float64) {
	for j := lo; j < hi; j++ {
		g := s.grad[j]
		s.m[j] = b1*s.m[j] + (1-b1)*g
		s.v[j] = b2*s.v[j] + (1-b2)*g*g
		gamma := s.alpha / (math.Sqrt(s.v[j]) + eps)
		d := gamma * s.m[j]
		if s.kinds[j] == kindDiag {
			c := s.lambda[j] + d
			var next float64
			if s.prec {
				if c*c > 4*gamma {
					next = (c + math.Copysign(math.Sqrt(c*c-4*gamma), c)) / 2
				} else {
					next = c
				}
			} else {
				next = (c + math.Copysign(math.Sqrt(c*c+4*gamma), c)) / 2
			}
			d = next - s.lambda[j]
		}
		s.delta[j] = d
	}
}

// nagmStep is Nagm's step: the momentum of the clipped Euclidean gradient,
// mapped to the natural direction by the family's Fisher map.
type nagmStep struct {
	*stepCore
	rule   Nagm
	alpha  float64
	m      []float64
	fisher func(src, dst []float64) error
	pass   func(int) error
}

func (a Nagm) iterator(fam family, pool *parallel.Pool) (iterator, error) {
	st := &nagmStep{stepCore: newStepCore(fam, pool, true), rule: a, alpha: a.Alpha, m: make([]float64, len(fam.lambda())), fisher: fam.fisher}
	st.pass = st.nagmBlock
	return newGradientIterator(fam, st, false, false), nil
}

func (s *nagmStep) core() *stepCore  { return s.stepCore }
func (s *nagmStep) divide(f float64) { s.alpha /= f }
func (s *nagmStep) reset()           { clear(s.m) }

func (s *nagmStep) step(g []float64) (float64, error) {
	nrm, err := s.norm(g)
	if err != nil {
		return 0, err
	}
	s.scale = 1
	if nrm > s.rule.Clip {
		s.scale = s.rule.Clip / nrm
	}
	if err := s.pool.Run(len(s.blocks), s.pass); err != nil {
		return 0, err
	}
	if err := s.fisher(s.m, s.delta); err != nil {
		return 0, err
	}
	for j, kind := range s.kinds {
		switch kind {
		case kindDiag:
			s.delta[j] *= s.alpha / 10
		case kindOff:
			s.delta[j] *= s.alpha / 100
		default:
			s.delta[j] *= s.alpha
		}
	}
	return s.apply()
}

func (s *nagmStep) nagmBlock(k int) error {
	b := s.rule.Beta1
	for _, sp := range s.blocks[k] {
		for j := sp.lo; j < sp.hi; j++ {
			s.m[j] = b*s.m[j] + (1-b)*s.grad[j]*s.scale
		}
	}
	return nil
}

// ratioBlock finds the largest fraction of delta that shrinks no diagonal
// entry by more than half.
func (s *stepCore) ratioBlock(k int) error {
	frac := 1.0
	for _, sp := range s.blocks[k] {
		for j := sp.lo; j < sp.hi; j++ {
			if s.kinds[j] != kindDiag {
				continue
			}
			d, c := s.delta[j], s.lambda[j]
			if math.IsNaN(d) {
				s.partial[k] = math.NaN()
				return nil
			}
			if d < 0 && c+d < c/2 {
				frac = min(frac, -c/(2*d))
			}
		}
	}
	s.partial[k] = frac
	return nil
}

func (s *stepCore) applyBlock(k int) error {
	var ss float64
	for _, sp := range s.blocks[k] {
		for j := sp.lo; j < sp.hi; j++ {
			d := s.scale * s.delta[j]
			s.lambda[j] += d
			ss += d * d
		}
	}
	s.partial[k] = ss
	return nil
}

// apply adds the step in delta, shortened if the safeguard requires it,
// to lambda and returns its norm.
func (s *stepCore) apply() (float64, error) {
	if err := s.pool.Run(len(s.blocks), s.passRatio); err != nil {
		return 0, err
	}
	frac, _, err := s.allowedFraction(nil)
	if err != nil {
		return 0, err
	}
	if math.IsNaN(frac) {
		return frac, nil
	}
	s.scale = frac
	if err := s.pool.Run(len(s.blocks), s.passApply); err != nil {
		return 0, err
	}
	ss, err := s.sumBlocks(s.partial)
	if err != nil {
		return 0, err
	}
	return math.Sqrt(ss), nil
}

// sumBlocks returns the sum of the blocks' values p in block order.
func (s *stepCore) sumBlocks(p []float64) (float64, error) {
	var sum float64
	var acc []float64
	if s.ch != nil {
		acc = s.ch.begin(1)
		sum = acc[chainHead]
	}
	for _, x := range p[:s.nsum] {
		sum += x
	}
	if s.ch != nil {
		acc[chainHead] = sum
		if err := s.ch.end(acc, nil); err != nil {
			return 0, err
		}
		sum = acc[chainHead]
	}
	return sum, nil
}

// gradientIterator is the iterator of the gradient rules: the family's
// estimate of h and the gradient the rule consumes, then the rule's step.
type gradientIterator struct {
	fam            family
	st             gradientStep
	nat, euc, grad []float64
	noEnt          bool
	// blocked is the family when it gives the natural gradient block by
	// block (Snngm's step on GVA's chunked family); grad is then nil.
	blocked blockedFamily
}

// A blockedFamily can give its natural gradient block by block of its
// step blocks (blockGrader) when it says so.
type blockedFamily interface {
	blockGrader
	// blockedNatural reports whether the family gives its natural
	// gradient block by block.
	blockedNatural() bool
	// estimateBlocked is estimate with the natural gradient left for
	// blockGrad to compute.
	estimateBlocked(iter uint64) (float64, error)
}

// newGradientIterator returns the iterator of step st, which consumes the
// natural gradient or the Euclidean one (of E_q log p alone with
// noEntropy).
func newGradientIterator(fam family, st gradientStep, natural, noEntropy bool) *gradientIterator {
	it := &gradientIterator{fam: fam, st: st, noEnt: noEntropy}
	// Snngm's passes alone take the gradient block by block.
	_, snngm := st.(*snngmStep)
	if bf, ok := fam.(blockedFamily); ok && snngm && natural && !noEntropy && bf.blockedNatural() {
		it.blocked = bf
		st.core().setBlocked(bf)
		return it
	}
	g := make([]float64, len(fam.lambda()))
	it.grad = g
	if natural {
		it.nat = g
	} else {
		it.euc = g
	}
	return it
}

func (it *gradientIterator) iterate(iter uint64) (h, stepNorm, frac float64, evalErr, err error) {
	if it.blocked != nil {
		h, evalErr = it.blocked.estimateBlocked(iter)
	} else {
		h, evalErr = it.fam.estimate(iter, it.nat, it.euc, it.noEnt)
	}
	if evalErr != nil || math.IsNaN(h) || math.IsInf(h, 0) {
		return h, 0, 1, evalErr, nil
	}
	stepNorm, err = it.st.step(it.grad)
	return h, stepNorm, it.st.core().lastFrac, nil, err
}

func (it *gradientIterator) divide(f float64) { it.st.divide(f) }

func (it *gradientIterator) state(dst []float64) ([]float64, error) { return it.st.state(dst), nil }
func (it *gradientIterator) setState(src []float64) error           { return it.st.setState(src) }

func (it *gradientIterator) reset() { it.st.reset() }
