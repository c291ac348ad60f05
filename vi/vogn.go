// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"errors"
	"math"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/internal/scratch"
	"github.com/sparsevi/sparsevi/internal/small"
	"github.com/sparsevi/sparsevi/parallel"
)

// vognFamily is implemented by the families that support VOGN.
type vognFamily interface {
	family
	// vognStep draws theta at iteration iter, updates the precision with
	// the Gauss-Newton outer products of the per-subject gradients, the
	// momentum of grad log p, and the mean, and refactors. It returns
	// h(theta) at the draw.
	vognStep(iter uint64, rule VOGN, alpha float64) (float64, error)
	// vognReset drops the precision and momentum, so that the next step
	// forms them again from lambda's factor.
	vognReset()
}

// vognIterator is the iterator of VOGN: the family's fused step, which
// draws, evaluates, updates the precision and the mean and refactors.
type vognIterator struct {
	f     vognFamily
	rule  VOGN
	alpha float64
	prev  []float64 // lambda before the step, for its norm
}

func (v VOGN) iterator(fam family, _ *parallel.Pool) (iterator, error) {
	f, ok := fam.(vognFamily)
	if !ok {
		return nil, errors.New("vi: VOGN is not available for this method")
	}
	return &vognIterator{f: f, rule: v, alpha: v.Alpha, prev: make([]float64, len(f.lambda()))}, nil
}

func (it *vognIterator) iterate(iter uint64) (h, stepNorm, frac float64, evalErr, err error) {
	lambda := it.f.lambda()
	copy(it.prev, lambda)
	if h, evalErr = it.f.vognStep(iter, it.rule, it.alpha); evalErr != nil {
		return h, 0, 1, evalErr, nil
	}
	for j, x := range lambda {
		it.prev[j] = x - it.prev[j]
	}
	sc, sq := scaledSumSq(it.prev)
	return h, sc * math.Sqrt(sq), 1, nil, nil
}

func (it *vognIterator) divide(f float64) { it.alpha /= f }

// reset drops VOGN's precision and momentum: the next step forms the
// precision again from the factor, which run has restored.
func (it *vognIterator) reset() { it.f.vognReset() }

func (it *vognIterator) state([]float64) ([]float64, error) { return nil, errNoCheckpoint }
func (it *vognIterator) setState([]float64) error           { return errNoCheckpoint }

// vognCore is the state VOGN keeps beside lambda in both families.
type vognCore struct {
	s      []float64 // the precision S in the family's compressed form
	m      []float64 // momentum of grad log p (length d)
	t      int
	priorG []float64   // gradient of log p(theta_g) / n at the draw
	partCC [][]float64 // per chunk: sum_i c_i c_i', packed
	alpha  float64
	b1, b2 float64
	ops    vognOps
	passS  func(int) error // pass on the chunk, made once
}

// vognOps are a family's parts of VOGN's step.
type vognOps struct {
	// drawGlobal draws the family's global block at the draw of z_g.
	drawGlobal func()
	// drawRange draws the blocks of the subjects [lo, hi) and returns the
	// log determinant of their blocks of the factor.
	drawRange func(lo, hi int) float64
	// update updates subject i's blocks of S from its gradients a_i and
	// c_i.
	update func(i int, ai, ci []float64)
	// logDetGlobal returns the log determinant of the factor's global
	// block, the factor being of the precision (GVA) if precision is
	// true, else of the covariance.
	logDetGlobal func() float64
	precision    bool
	// global is the offset of S's global block in vognCore.s.
	global int
}

// wire sets the family's parts of the step.
func (vs *vognCore) wire(b *base, ops vognOps) {
	vs.ops = ops
	vs.passS = func(k int) error { return vs.pass(b, k) }
}

// pass draws the subjects of chunk k, evaluates each one's gradients a_i
// (local) and c_i (global, with its share of the prior), and updates their
// blocks of S.
func (vs *vognCore) pass(b *base, k int) error {
	lo, hi := b.chunks.Bounds(k)
	b.drawChunk(k, lo, hi)
	b.partLD[k] = vs.ops.drawRange(lo, hi)
	return vs.subjects(b, k, lo, hi)
}

func newVOGNCore(b *base, sLen int) vognCore {
	return vognCore{
		s:      make([]float64, sLen),
		m:      make([]float64, b.d),
		priorG: make([]float64, b.g),
		partCC: scratch.Partials(b.chunks.Len(), b.g*(b.g+1)/2),
	}
}

// begin starts an iteration with the rule's settings.
func (vs *vognCore) begin(rule VOGN, alpha float64) {
	vs.b1, vs.b2, vs.alpha = rule.Beta1, rule.Beta2, alpha
	vs.t++
}

// priorShare evaluates log p(theta_g) at the draw in b.theta and shares
// its gradient out over the subjects in priorG; it returns the log density.
func (vs *vognCore) priorShare(b *base) float64 {
	clear(vs.priorG)
	lpg := b.target.Global(b.theta[b.n*b.r:], vs.priorG)
	for j := range vs.priorG {
		vs.priorG[j] /= float64(max(1, b.n))
	}
	return lpg
}

// evaluate starts an iteration at iter with the rule's settings, draws
// theta, evaluates every subject (passS, which updates their blocks of S)
// and the prior, updates S's global block, and sets b.grad to the
// bias-corrected momentum of the gradient of log p, for the family to
// solve with the refactored S. It returns h = log p - log q at the draw.
func (vs *vognCore) evaluate(b *base, iter uint64, rule VOGN, alpha float64) (float64, error) {
	vs.begin(rule, alpha)
	b.iter = iter
	zzg := b.drawGlobal()
	vs.ops.drawGlobal()
	lpg := vs.priorShare(b)
	// VOGN is not offered over a Group (Settings.validate), so these
	// sums are one process's.
	lp, zz, ld, err := b.reduce(b.pool.Run(b.chunks.Len(), vs.passS))
	if err != nil {
		return 0, err
	}
	ld += vs.ops.logDetGlobal()
	if !vs.ops.precision {
		// log q has -log|C| for a covariance factor C.
		ld = -ld
	}
	h := lp + lpg - (b.logNorm() + ld - 0.5*(zz+zzg))
	vs.globalGradient(b)
	vs.emaGlobal(vs.s[vs.ops.global:])
	vs.momentum(b.grad)
	return h, nil
}

// subjects evaluates the subjects [lo, hi) of chunk k at the draw in
// b.theta, passes each one's gradients to update, and adds the c_i c_i'
// into partCC[k] and the log densities into b.partLP[k].
func (vs *vognCore) subjects(b *base, k, lo, hi int) error {
	cc := vs.partCC[k]
	clear(b.partG[k])
	clear(cc)
	var lp float64
	for i := lo; i < hi; i++ {
		ai, ci, li, err := b.vognSubject(k, i, vs.priorG)
		if err != nil {
			return err
		}
		lp += li
		vs.ops.update(i, ai, ci)
		small.PackedAddOuter(cc, ci)
	}
	b.partLP[k] = lp
	return nil
}

// globalGradient sets the global part of b.grad to the gradient of log p:
// the subjects' sum in b.sumG and the prior's.
func (vs *vognCore) globalGradient(b *base) {
	gradG := b.grad[b.n*b.r:]
	copy(gradG, b.sumG)
	for j := range gradG {
		gradG[j] += vs.priorG[j] * float64(max(1, b.n))
	}
}

// emaGlobal sets sg, the global block of S, to b2 sg + (1-b2) sum_k partCC[k].
func (vs *vognCore) emaGlobal(sg []float64) {
	for j := range sg {
		var x float64
		for k := range vs.partCC {
			x += vs.partCC[k][j]
		}
		sg[j] = vs.b2*sg[j] + (1-vs.b2)*x
	}
}

// momentum replaces grad by the bias-corrected momentum of the gradients.
func (vs *vognCore) momentum(grad []float64) {
	c1 := 1 / (1 - math.Pow(vs.b1, float64(vs.t)))
	for j := range vs.m {
		vs.m[j] = vs.b1*vs.m[j] + (1-vs.b1)*grad[j]
		grad[j] = vs.m[j] * c1
	}
}

// vognState is the state VOGN keeps beside lambda for GVA.
type vognState struct {
	vognCore
	sumCC   []float64
	passCh  func(int) error
	passSol func(int) error
	passMu  func(int) error
}

func (f *gva) vognInit() {
	if f.vs != nil {
		return
	}
	n, r, g := f.n, f.r, f.g
	vs := &vognState{
		vognCore: newVOGNCore(f.base, arrowhead.Len(n, r, g)),
		sumCC:    make([]float64, g*(g+1)/2),
	}
	// S = T T' at the start.
	sum := make([]float64, g*(g+1)/2)
	f.t.PrecRange(0, n, vs.s, sum)
	f.t.PrecGlobal(vs.s, sum)
	vs.wire(f.base, vognOps{
		drawGlobal: func() { f.t.DrawGlobal(f.theta, f.tmp, f.lam[:f.d], f.z) },
		drawRange: func(lo, hi int) float64 {
			f.t.DrawRange(lo, hi, f.theta, f.tmp, f.lam[:f.d], f.z)
			return f.t.LogDetRange(lo, hi)
		},
		update:       f.vognUpdate,
		logDetGlobal: f.t.LogDetGlobal,
		precision:    true,
		global:       n * arrowhead.Stride(r, g),
	})
	vs.passCh = f.vognCholPass
	vs.passSol = f.solvePass
	vs.passMu = f.vognMuPass
	f.vs = vs
}

// vognUpdate updates subject i's local and cross blocks of S.
func (f *gva) vognUpdate(i int, ai, ci []float64) {
	vs := f.vs
	r, g := f.r, f.g
	tri := r * (r + 1) / 2
	stride := tri + g*r
	b2 := vs.b2
	small.PackedEMAOuter(vs.s[i*stride:i*stride+tri], ai, b2)
	sgi := vs.s[i*stride+tri : (i+1)*stride]
	for a := range g {
		for b := range r {
			sgi[a*r+b] = b2*sgi[a*r+b] + (1-b2)*ci[a]*ai[b]
		}
	}
}

// vognSubject evaluates the target at subject i of chunk k, at theta: it
// writes a_i, the gradient in b_i, into grad and adds the gradient in
// theta_g into partG[k]. It returns a_i, c_i (that gradient plus the
// subject's share priorG of the prior's, in partS1[k]) and the log density.
func (b *base) vognSubject(k, i int, priorG []float64) (ai, ci []float64, li float64, err error) {
	r, nr := b.r, b.n*b.r
	ci = b.partS1[k]
	clear(ci)
	ai = b.grad[i*r : (i+1)*r]
	li, err = b.target.Local(b.ws[k], i, i+1, b.theta[nr:], b.theta[i*r:(i+1)*r], ai, ci)
	if err != nil {
		return nil, nil, 0, err
	}
	pg := b.partG[k]
	for j := range ci {
		pg[j] += ci[j]
		ci[j] += priorG[j]
	}
	return ai, ci, li, nil
}

// vognCholPass factorises the chunk's blocks of S into T.
func (f *gva) vognCholPass(k int) error {
	lo, hi := f.chunks.Bounds(k)
	sum := f.vs.partCC[k]
	clear(sum)
	return f.t.CholRange(lo, hi, f.vs.s, sum)
}

func (f *gva) vognMuPass(k int) error {
	lo, hi := f.chunks.Bounds(k)
	f.t.SolveTransRange(lo, hi, f.tmp, f.v)
	a := f.vs.alpha
	for j := lo * f.r; j < hi*f.r; j++ {
		f.lam[j] += a * f.tmp[j]
	}
	return nil
}

func (f *gva) vognStep(iter uint64, rule VOGN, alpha float64) (float64, error) {
	f.vognInit()
	vs := f.vs
	h, err := vs.evaluate(f.base, iter, rule, alpha)
	if err != nil {
		return 0, err
	}
	d, nr := f.d, f.n*f.r
	// Refactor S = T T'.
	if err := f.pool.Run(f.chunks.Len(), vs.passCh); err != nil {
		return 0, err
	}
	clear(vs.sumCC)
	for k := range vs.partCC {
		for j, x := range vs.partCC[k] {
			vs.sumCC[j] += x
		}
	}
	if err := f.t.CholGlobal(vs.s, vs.sumCC); err != nil {
		return 0, err
	}
	// mu += alpha S^-1 m^ = alpha T^-T T^-1 m^.
	if err := f.reduceG(f.pool.Run(f.chunks.Len(), vs.passSol)); err != nil {
		return 0, err
	}
	f.t.SolveGlobal(f.v, f.grad, f.sumG)
	f.t.SolveTransGlobal(f.tmp, f.v)
	for j := nr; j < d; j++ {
		f.lam[j] += alpha * f.tmp[j]
	}
	if err := f.pool.Run(f.chunks.Len(), vs.passMu); err != nil {
		return 0, err
	}
	return h, nil
}

func (f *gva) vognReset() { f.vs = nil }
