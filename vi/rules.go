// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
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

// stepper applies a step rule to lambda in place. Every rule first writes its
// step into delta; apply then scales it down if it would shrink a diagonal
// entry of the factor by more than half, and adds it.
type stepper struct {
	opt   Optimizer
	set   Settings
	alpha float64

	lambda []float64
	kinds  []uint8
	prec   bool // the factor is a precision factor (GVA)

	m, v, delta []float64
	t           int
	lastFrac    float64 // the fraction of the rule's step the safeguard let through
	// nu is the root of the moving average, at rate Beta2, of the squared
	// norms of RVB's natural gradients, by which its Snngm normalises.
	nu float64

	pool     *parallel.Pool
	blocks   [][]span
	partial  []float64
	partial2 []float64

	// Per-pass scalars read by the block functions.
	scale, corr1, corr2 float64
	grad                []float64

	passNorm, passSnngm, passAdam, passPGA, passNagm, passRatio, passApply, passRetract func(int) error
}

// newStepper returns the rule opt for lambda, free of whose entries may
// change (Snngm's step grows with their square root).
func newStepper(opt Optimizer, set Settings, lambda []float64, free int, kinds []uint8, prec bool, pool *parallel.Pool, blocks [][]span) *stepper {
	n := len(lambda)
	s := &stepper{
		opt: opt, set: set, lambda: lambda, kinds: kinds, prec: prec, pool: pool,
		m:      make([]float64, n),
		blocks: blocks,
	}
	if opt != Snngm {
		// Snngm steps lambda in its own pass.
		s.delta = make([]float64, n)
	}
	s.partial = make([]float64, len(s.blocks))
	s.partial2 = make([]float64, len(s.blocks))
	switch opt {
	case Adam, NAdam, PGA:
		s.v = make([]float64, n)
	}
	s.alpha = set.Alpha
	if s.alpha <= 0 {
		switch opt {
		case Snngm:
			s.alpha = set.Alpha0 * math.Sqrt(float64(free))
		case Nagm:
			s.alpha = 0.01
		default:
			s.alpha = 1e-3
		}
	}
	s.passNorm = s.normBlock
	s.passSnngm = s.snngmBlock
	s.passAdam = s.adamBlock
	s.passPGA = s.pgaBlock
	s.passNagm = s.nagmBlock
	s.passRatio = s.ratioBlock
	s.passApply = s.applyBlock
	s.passRetract = s.retractBlock
	return s
}

// reset forgets the moments, as after a restart from an earlier state.
func (s *stepper) reset() {
	s.nu = 0
	clear(s.m)
	clear(s.v)
	s.t = 0
}

// needs reports which gradients the rule consumes.
func (s *stepper) needs() (natural, euclidean, noEntropy bool) {
	switch s.opt {
	case Snngm, NAdam:
		return true, false, false
	case Adam, Nagm:
		return false, true, false
	case PGA:
		return false, true, true
	}
	return false, false, false
}

// norm returns the Euclidean norm of g without overflow for entries
// near the largest float64 (a diverging target can give gradients of
// 1e300), reduced in block order.
func (s *stepper) norm(g []float64) (float64, error) {
	s.grad = g
	if err := s.pool.Run(len(s.blocks), s.passNorm); err != nil {
		return 0, err
	}
	var scale, ssq float64
	for k := range len(s.blocks) {
		scale, ssq = addScaled(scale, ssq, s.partial[k], s.partial2[k])
	}
	return scale * math.Sqrt(ssq), nil
}

// normBlock sets the block's partial norm as scale and scaled sum of squares:
// the block's squared norm is partial^2 * partial2.
func (s *stepper) normBlock(k int) error {
	var scale, ssq float64
	for _, sp := range s.blocks[k] {
		sc, sq := scaledSumSq(s.grad[sp.lo:sp.hi])
		scale, ssq = addScaled(scale, ssq, sc, sq)
	}
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

// step advances lambda by one iteration given the gradient g (natural or
// Euclidean as needs reports). For Nagm, fisher maps a Euclidean vector to
// the natural direction. It returns the norm of the step taken.
func (s *stepper) step(g []float64, fisher func(src, dst []float64) error) (float64, error) {
	s.t++
	b1, b2 := s.set.Beta1, s.set.Beta2
	s.corr1 = 1 / (1 - math.Pow(b1, float64(s.t)))
	s.corr2 = 1 / (1 - math.Pow(b2, float64(s.t)))
	s.grad = g
	var pass func(int) error
	switch s.opt {
	case Snngm:
		nrm, err := s.norm(g)
		if err != nil {
			return 0, err
		}
		if nrm == 0 {
			return 0, nil
		}
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
			s.scale = 1 / (s.nu * math.Sqrt(s.corr2))
		}
		pass = s.passSnngm
	case Adam, NAdam:
		pass = s.passAdam
	case PGA:
		pass = s.passPGA
	case Nagm:
		nrm, err := s.norm(g)
		if err != nil {
			return 0, err
		}
		s.scale = 1
		if nrm > s.set.Clip {
			s.scale = s.set.Clip / nrm
		}
		if err := s.pool.Run(len(s.blocks), s.passNagm); err != nil {
			return 0, err
		}
		if err := fisher(s.m, s.delta); err != nil {
			return 0, err
		}
		pass = nil
	default:
		panic("vi: stepper used with " + s.opt.String())
	}
	if pass != nil {
		if err := s.pool.Run(len(s.blocks), pass); err != nil {
			return 0, err
		}
	}
	if s.opt == Snngm {
		// Its pass has taken the step.
		return s.snngmFinish()
	}
	if s.opt == Nagm {
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
	}
	return s.apply()
}

// snngmBlock updates the momentum and takes the block's whole step at
// once, recording the safeguard's ratio (see ratioBlock) in partial and the
// step's squared norm in partial2: one pass over lambda instead of three,
// as the ratio rarely binds. When it does, retractBlock takes back the
// part of the step it disallows.
func (s *stepper) snngmBlock(k int) error {
	frac, ss := 1.0, 0.0
	for _, sp := range s.blocks[k] {
		frac, ss = s.snngmSpan(sp.lo, sp.hi, frac, ss)
	}
	if math.IsNaN(ss) {
		frac = math.NaN()
	}
	s.partial[k], s.partial2[k] = frac, ss
	return nil
}

// snngmSpan is snngmBlock on the entries [lo, hi), carrying the ratio frac
// and the sum of squares ss.
func (s *stepper) snngmSpan(lo, hi int, frac, ss float64) (float64, float64) {
	b := s.set.Beta1
	c := s.alpha * s.corr1
	b1, sc := 1-b, s.scale
	// Local slices of one length: the loop then keeps them in registers
	// and needs no bounds checks.
	mom := s.m[lo:hi]
	grad := s.grad[lo:hi][:len(mom)]
	lam := s.lambda[lo:hi][:len(mom)]
	kinds := s.kinds[lo:hi][:len(mom)]
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
func (s *stepper) retractBlock(k int) error {
	c := s.scale * s.alpha * s.corr1
	for _, sp := range s.blocks[k] {
		for j := sp.lo; j < sp.hi; j++ {
			s.lambda[j] -= c * s.m[j]
		}
	}
	return nil
}

// snngmFinish completes a Snngm step from the blocks' partials: it
// shortens the step if the safeguard requires it and returns its norm.
func (s *stepper) snngmFinish() (float64, error) {
	frac := s.allowedFraction()
	if math.IsNaN(frac) {
		return frac, nil
	}
	if frac < 1 {
		s.scale = 1 - frac
		if err := s.pool.Run(len(s.blocks), s.passRetract); err != nil {
			return 0, err
		}
	}
	var ss float64
	for _, p := range s.partial2 {
		ss += p
	}
	return frac * math.Sqrt(ss), nil
}

// allowedFraction returns the smallest of the blocks' safeguard ratios in
// partial, NaN if one is NaN, and records it as lastFrac.
func (s *stepper) allowedFraction() float64 {
	frac := 1.0
	for _, p := range s.partial {
		if math.IsNaN(p) {
			frac = p
			break
		}
		frac = min(frac, p)
	}
	s.lastFrac = frac
	return frac
}

func (s *stepper) adamBlock(k int) error {
	b1, b2, eps := s.set.Beta1, s.set.Beta2, s.set.Eps
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
func (s *stepper) pgaBlock(k int) error {
	b1, b2, eps := s.set.Beta1, s.set.Beta2, s.set.Eps
	for _, sp := range s.blocks[k] {
		s.pgaSpan(sp.lo, sp.hi, b1, b2, eps)
	}
	return nil
}

func (s *stepper) pgaSpan(lo, hi int, b1, b2, eps float64) {
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

func (s *stepper) nagmBlock(k int) error {
	b := s.set.Beta1
	for _, sp := range s.blocks[k] {
		for j := sp.lo; j < sp.hi; j++ {
			s.m[j] = b*s.m[j] + (1-b)*s.grad[j]*s.scale
		}
	}
	return nil
}

// ratioBlock finds the largest fraction of delta that shrinks no diagonal
// entry by more than half.
func (s *stepper) ratioBlock(k int) error {
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

func (s *stepper) applyBlock(k int) error {
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

// apply adds the (possibly shortened) step to lambda and returns its norm.
func (s *stepper) apply() (float64, error) {
	if err := s.pool.Run(len(s.blocks), s.passRatio); err != nil {
		return 0, err
	}
	frac := s.allowedFraction()
	if math.IsNaN(frac) {
		return frac, nil
	}
	s.scale = frac
	if err := s.pool.Run(len(s.blocks), s.passApply); err != nil {
		return 0, err
	}
	var ss float64
	for _, p := range s.partial {
		ss += p
	}
	return math.Sqrt(ss), nil
}

// gradientIterator is the iterator of the gradient rules: the family's
// estimate of h and its gradients, then the stepper's step.
type gradientIterator struct {
	fam            family
	st             *stepper
	nat, euc, grad []float64
	noEnt          bool
}

func newGradientIterator(fam family, set Settings, pool *parallel.Pool) *gradientIterator {
	lambda := fam.lambda()
	it := &gradientIterator{fam: fam, st: newStepper(set.Optimizer, set, lambda, fam.free(), fam.kinds(), fam.precision(), pool, fam.stepBlocks())}
	wantNat, wantEuc, noEnt := it.st.needs()
	if wantNat {
		it.nat = make([]float64, len(lambda))
	}
	if wantEuc {
		it.euc = make([]float64, len(lambda))
	}
	it.grad, it.noEnt = it.nat, noEnt
	if it.grad == nil {
		it.grad = it.euc
	}
	return it
}

func (it *gradientIterator) iterate(iter uint64) (h, stepNorm, frac float64, evalErr, err error) {
	h, evalErr = it.fam.estimate(iter, it.nat, it.euc, it.noEnt)
	if evalErr != nil || math.IsNaN(h) || math.IsInf(h, 0) {
		return h, 0, 1, evalErr, nil
	}
	stepNorm, err = it.st.step(it.grad, it.fam.fisher)
	return h, stepNorm, it.st.lastFrac, nil, err
}

func (it *gradientIterator) divide(f float64) { it.st.alpha /= f }

func (it *gradientIterator) reset() { it.st.reset() }
