// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"fmt"
	"math"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/scratch"
	"github.com/sparsevi/sparsevi/internal/small"
)

// log(2 pi)
var log2Pi = math.Log(2 * math.Pi)

// workspace is the scratch space of one concurrent caller of Local.
type workspace struct {
	// Workers write their workspaces per subject: the padding and the
	// single padded buffer behind the slices keep two workspaces off each
	// other's cache lines.
	_ [scratch.Line]byte

	// Set from theta_g once per call (for a nested model, Omega and
	// logNorm for each subject's order by forSubject).
	w, omega []float64 // W and Omega = W W', r×r
	logNorm  float64   // -(r/2) log 2 pi + sum_k omega_kk

	// A nested model's two precisions exp(2 omega_a), exp(2 omega_b),
	// its omegas, and the sums of its Gamma's diagonal over the subjects
	// of a call: gA of u_a's entries, gB of the v_b's, kB their number.
	pa, pb, oa, ob float64
	gA, gB, kB     float64

	// r is the order the per-subject slices below are cut to
	// (forSubject); mats and vecs hold the r×r ones and the r ones, to be
	// cut again.
	r          int
	mats, vecs []*[]float64
	z          []float64 // Z_i, set by prepare
	zbuf       []float64 // room for a nested model's Z_i

	// Per subject, r×r.
	prec, rf, rinv []float64 // P, its Cholesky factor R and R^-1
	lam, l         []float64 // Lambda = P^-1 and L = chol(Lambda)
	s, tm          []float64 // S and T of RVB.md §4
	ls             []float64 // L S (a nested model's)
	gam            []float64 // Gamma, summed over the subjects of a call

	// Per subject, r.
	center  []float64 // lambda_i (RVB1) or the mode (RVB2)
	logDetL float64   // log|L_i|, set by prepare
	b, av   []float64 // b_i and a_i (then a~_i)
	c, v    []float64 // c_i = L' a_i and Lambda a~_i
	dir     []float64 // Newton step
	bn      []float64 // Newton trial point
	grad    []float64 // gradient of the conditional log density

	// Per observation of a subject.
	eta0 []float64 // X_i beta + offset_i
	eta  []float64
	d1   []float64 // weighted first derivative at the last evaluation
	hw   []float64 // weighted -second derivative (RVB2: at the mode)
	k3   []float64 // weighted -third derivative at the mode (RVB2)
	row  []float64 // chain-rule weights to beta

	mws any // the model's workspace, for the crossed effects in eta0

	// What setGlobal and prepare last computed, for a Model's RVB1
	// Target (cached): the theta_g of setGlobal (globOK once set), and the
	// subject and theta_g of prepare (prepI -1 when it holds nothing).
	// Evaluated again at the same theta_g, as a stochastic fit's visit
	// evaluates a subject at two local draws for each global one, a
	// subject costs no second prepare: RVB1's is a function of i and
	// theta_g alone, so the values are those of a fresh one, bit for bit.
	globG, prepG []float64
	globOK       bool
	prepI        int

	_ [scratch.Line]byte
}

// NewWorkspace returns scratch space for one concurrent caller of Local,
// MapLocal or FromOriginal.
func (t *Target) NewWorkspace() any {
	r, ni := t.rmax, t.src.MaxSubjectObs()
	nz := 0
	if t.nm != nil {
		nz = ni * r
	}
	mk := scratch.NewCarver(11*r*r + 8*r + 6*ni + nz).Take
	ws := &workspace{
		w: mk(r * r), omega: mk(r * r),
		prec: mk(r * r), rf: mk(r * r), rinv: mk(r * r), lam: mk(r * r), l: mk(r * r),
		s: mk(r * r), tm: mk(r * r), gam: mk(r * r), ls: mk(r * r),
		center: mk(r), b: mk(r), av: mk(r), c: mk(r), v: mk(r), dir: mk(r), bn: mk(r), grad: mk(r),
		eta0: mk(ni), eta: mk(ni), d1: mk(ni), hw: mk(ni), k3: mk(ni), row: mk(ni),
		zbuf:  mk(nz),
		mws:   t.src.NewWorkspace(),
		r:     r,
		prepI: -1,
	}
	if t.cached() {
		ws.globG, ws.prepG = make([]float64, t.g), make([]float64, t.g)
	}
	if t.nm != nil {
		ws.mats = []*[]float64{&ws.omega, &ws.prec, &ws.rf, &ws.rinv, &ws.lam, &ws.l, &ws.s, &ws.tm, &ws.gam, &ws.ls}
		ws.vecs = []*[]float64{&ws.center, &ws.b, &ws.av, &ws.c, &ws.v, &ws.dir, &ws.bn, &ws.grad}
	}
	return ws
}

// forSubject prepares ws for a subject whose block has order r: for a
// nested model it cuts the per-subject slices to r and sets Omega =
// diag(exp(2 omega_a), exp(2 omega_b) I) and the log normalising
// constant of b_i; for a Model, whose blocks all have order r, setGlobal
// has done both.
func (t *Target) forSubject(ws *workspace, r int) {
	if t.nm == nil {
		return
	}
	if r != ws.r {
		ws.r = r
		for _, p := range ws.mats {
			*p = (*p)[:r*r]
		}
		for _, p := range ws.vecs {
			*p = (*p)[:r]
		}
	}
	clear(ws.omega)
	ws.omega[0] = ws.pa
	for q := 1; q < r; q++ {
		ws.omega[q*r+q] = ws.pb
	}
	ws.logNorm = -0.5*float64(r)*log2Pi + ws.oa + float64(r-1)*ws.ob
}

// setGlobal sets W, Omega and the log normalising constant of b_i from
// theta_g's omega; for a nested model its two precisions, which
// forSubject lays out for each subject.
func (t *Target) setGlobal(ws *workspace, thetaG []float64) {
	r := t.r
	if t.nm != nil {
		ws.oa, ws.ob = thetaG[t.p], thetaG[t.p+1]
		ws.pa, ws.pb = math.Exp(2*ws.oa), math.Exp(2*ws.ob)
		return
	}
	if ws.globG != nil {
		if ws.globOK && sameBits(ws.globG, thetaG) {
			return
		}
		copy(ws.globG, thetaG)
		ws.globOK = true
	}
	omega := thetaG[t.p : t.p+glmm.NumOmega(r)]
	glmm.OmegaToW(omega, r, ws.w)
	for u := range r {
		for v := 0; v <= u; v++ {
			s := 0.0
			for k := 0; k <= v; k++ {
				s += ws.w[u*r+k] * ws.w[v*r+k]
			}
			ws.omega[u*r+v] = s
			ws.omega[v*r+u] = s
		}
	}
	ws.logNorm = -0.5 * float64(r) * log2Pi
	for l := range r {
		ws.logNorm += omega[glmm.OmegaIndex(l, l, r)]
	}
}

// Local returns the sum over the subjects i in [lo, hi) of the log density
// of (y_i, b~_i) given theta_g, Jacobian and constants included:
//
//	log p(y_i | b_i, beta) + log p(b_i | omega) + log|L_i|,
//	b_i = lambda_i(theta_g) + L_i(theta_g) b~_i.
//
// local holds b~_lo, ..., b~_{hi-1}. Unless gradLocal is nil, the gradients
// with respect to those blocks are written into gradLocal and the gradient
// with respect to theta_g is added into gradG. ws must come from
// NewWorkspace. A non-finite value, or an RVB2 mode solve that fails, is
// an error naming the subject; Local allocates nothing.
func (t *Target) Local(ws any, lo, hi int, thetaG, local, gradLocal, gradG []float64) (float64, error) {
	p := t.p
	if lo < 0 || hi > t.n || lo > hi || len(thetaG) != t.g || len(local) != t.at(hi)-t.at(lo) {
		panic("rvb: bad range or length in Local")
	}
	grad := gradLocal != nil
	if grad && (len(gradLocal) != len(local) || len(gradG) != t.g) {
		panic("rvb: bad gradient length in Local")
	}
	wk := ws.(*workspace)
	t.setGlobal(wk, thetaG)
	if grad {
		clear(wk.gam)
		wk.gA, wk.gB, wk.kB = 0, 0, 0
	}
	base := t.at(lo)
	var total float64
	for i := lo; i < hi; i++ {
		r, o, _ := t.blk(i)
		o -= base
		bt := local[o : o+r]
		if err := t.prepare(wk, i, thetaG, t.warm); err != nil {
			return total, err
		}
		var gl, gg []float64
		if grad {
			gl = gradLocal[o : o+r]
			gg = gradG
		}
		li := t.subject(wk, i, thetaG, bt, gl, gg)
		if grad && t.nm != nil {
			t.foldGamma(wk)
		}
		if math.IsNaN(li) || math.IsInf(li, 0) {
			return total, t.subjectError(i, fmt.Errorf("log density %v is not finite", li))
		}
		if grad {
			for _, v := range gl {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return total, t.subjectError(i, fmt.Errorf("gradient %v is not finite", gl))
				}
			}
		}
		total += li
	}
	if grad {
		t.addOmegaGrad(wk, hi-lo, gradG[p:])
	}
	return total, nil
}

// foldGamma adds a nested model's subject's Gamma, in ws.gam, into the
// sums of its diagonal that the gradient in omega_a and omega_b needs,
// and clears it.
func (t *Target) foldGamma(ws *workspace) {
	r := ws.r
	ws.gA += ws.gam[0]
	for q := 1; q < r; q++ {
		ws.gB += ws.gam[q*r+q]
	}
	ws.kB += float64(r - 1)
	clear(ws.gam)
}

// subjectError wraps err with the name of subject i.
func (t *Target) subjectError(i int, err error) error {
	if t.nm != nil {
		outer, _ := t.nm.FactorNames()
		return fmt.Errorf("rvb: %s %q (subject %d): %w", outer, t.nm.SubjectLevel(i), i, err)
	}
	return fmt.Errorf("rvb: %s %q (subject %d): %w", t.m.GroupName(), t.m.GroupLevels()[i], i, err)
}

// warmStart is RVB2's state from the last solve of each subject: the mode
// and what a first-order prediction of the next mode needs. Subject i's
// entries are read and written only by the caller evaluating subject i.
type warmStart struct {
	mode  []float64 // laid out as the locals, NaN before the first solve
	lam   []float64 // r_i×r_i per subject: Lambda at the mode
	omega []float64 // r_i×r_i per subject: Omega of the solve
	eta0  []float64 // per stored row: X beta + offset of the solve
	hw    []float64 // per stored row: curvature weight at the mode
}

func newWarmStart(nr, nsq, nobs int) *warmStart {
	w := &warmStart{
		mode: make([]float64, nr), lam: make([]float64, nsq), omega: make([]float64, nsq),
		eta0: make([]float64, nobs), hw: make([]float64, nobs),
	}
	w.reset()
	return w
}

// reset forgets every mode.
func (w *warmStart) reset() {
	for j := range w.mode {
		w.mode[j] = math.NaN()
	}
}

// prepare sets, for subject i at theta_g (and the Omega of setGlobal),
// its GlobalEta (X_i beta + offset_i and crossed effects), the centre lambda_i, Lambda_i = P_i^-1 and
// L_i = chol(Lambda_i); for RVB2 also the curvature terms at the mode.
// RVB2 starts Newton's method from a prediction from the subject's last
// solve in warm, if there is one, and records this solve there; a nil warm
// means a cold start. A cached Target's workspace (cached) skips the
// work when it last prepared the same subject at the same theta_g.
func (t *Target) prepare(ws *workspace, i int, thetaG []float64, warm *warmStart) error {
	if ws.prepG != nil {
		if ws.prepI == i && sameBits(ws.prepG, thetaG) {
			return nil
		}
		ws.prepI = -1
		if err := t.prepareAnew(ws, i, thetaG, warm); err != nil {
			return err
		}
		ws.prepI = i
		copy(ws.prepG, thetaG)
		return nil
	}
	return t.prepareAnew(ws, i, thetaG, warm)
}

// cached reports a Target whose workspaces keep setGlobal's and
// prepare's last results: a Model's RVB1 Target, whose prepare depends on
// the subject and theta_g alone (RVB2's on its warm start too).
func (t *Target) cached() bool { return t.method == RVB1 && t.nm == nil }

// sameBits reports whether a and b, of equal length, hold the same bits.
func sameBits(a, b []float64) bool {
	for j, x := range a {
		if math.Float64bits(x) != math.Float64bits(b[j]) {
			return false
		}
	}
	return true
}

// prepareAnew is prepare without the cache.
func (t *Target) prepareAnew(ws *workspace, i int, thetaG []float64, warm *warmStart) error {
	r, o, sq := t.blk(i)
	t.forSubject(ws, r)
	ws.z = t.zRows(ws, i)
	lo, hi := t.src.SubjectRows(i)
	eta0 := ws.eta0[:hi-lo]
	t.src.GlobalEta(ws.mws, i, thetaG, eta0)
	if t.method == RVB1 {
		ai := t.a[sq : sq+r*r]
		for k := range ws.prec {
			ws.prec[k] = ws.omega[k] + ai[k]
		}
		if !small.Chol(r, ws.prec, ws.rf) {
			return t.subjectError(i, fmt.Errorf("precision Omega + Z'HZ %v is not positive definite", ws.prec))
		}
		t.rvb1Center(ws, i, ws.center)
	} else if err := t.mode2(ws, i, warm); err != nil {
		return err
	}
	if r == 1 {
		// Scalars: Lambda = 1/P, L = sqrt(Lambda); P > 0 was checked by
		// its factorisation.
		ws.lam[0] = 1 / ws.prec[0]
		ws.l[0] = math.Sqrt(ws.lam[0])
	} else {
		small.LowerInv(r, ws.rf, ws.rinv)
		small.InvFromChol(r, ws.rinv, ws.lam)
		if !small.Chol(r, ws.lam, ws.l) {
			return t.subjectError(i, fmt.Errorf("covariance Lambda %v is not positive definite", ws.lam))
		}
	}
	if !(ws.l[0] > 0) || math.IsInf(ws.l[0], 0) {
		return t.subjectError(i, fmt.Errorf("covariance Lambda %v is not positive definite", ws.lam))
	}
	// log|L_i|, a term of every evaluation of the subject at this
	// theta_g: once here rather than at each (a cached prepare serves
	// several).
	ws.logDetL = 0
	for k := range r {
		ws.logDetL += math.Log(ws.l[k*r+k])
	}
	if t.method == RVB2 && warm != nil {
		copy(warm.mode[o:o+r], ws.center)
		copy(warm.lam[sq:sq+r*r], ws.lam)
		copy(warm.omega[sq:sq+r*r], ws.omega)
		copy(warm.eta0[lo:hi], eta0)
		copy(warm.hw[lo:hi], ws.hw[:hi-lo])
	}
	return nil
}

// rvb1Center writes lambda_i = P_i^-1 Z_i' (qw - hw eta0) into dst, with
// the Cholesky factor of P_i in ws.rf.
func (t *Target) rvb1Center(ws *workspace, i int, dst []float64) {
	r := ws.r
	lo, hi := t.src.SubjectRows(i)
	z := ws.z
	clear(dst)
	hw, qw := t.hw[lo:hi], t.qw[lo:hi]
	for j, e0 := range ws.eta0[:hi-lo] {
		k := qw[j] - hw[j]*e0
		for u, zu := range z[j*r : j*r+r] {
			dst[u] += zu * k
		}
	}
	small.SolveChol(r, ws.rf, dst)
}

// predict writes into ws.center the first-order prediction of subject i's
// mode from its last solve: the mode b moves by
// -Lambda (Z' H d(X beta + offset) + dOmega b).
func (t *Target) predict(ws *workspace, i int, warm *warmStart) {
	r, o, sq := t.blk(i)
	lo, hi := t.src.SubjectRows(i)
	z := ws.z
	b := warm.mode[o : o+r]
	om := warm.omega[sq : sq+r*r]
	v := ws.grad
	for u := range r {
		s := 0.0
		for q := range r {
			s += (ws.omega[u*r+q] - om[u*r+q]) * b[q]
		}
		v[u] = s
	}
	hw, e0 := warm.hw[lo:hi], warm.eta0[lo:hi]
	for j, e := range ws.eta0[:hi-lo] {
		d := hw[j] * (e - e0[j])
		for u, zu := range z[j*r : j*r+r] {
			v[u] += zu * d
		}
	}
	small.SymMulVec(r, warm.lam[sq:sq+r*r], v, ws.center)
	for u := range r {
		ws.center[u] = b[u] - ws.center[u]
	}
}

// mode2 solves for RVB2's centre, the mode of subject i's conditional
// density, from the prediction of warm (if there is one) and else from
// RVB1's centre.
func (t *Target) mode2(ws *workspace, i int, warm *warmStart) error {
	r, o, sq := t.blk(i)
	if warm != nil && !math.IsNaN(warm.mode[o]) {
		t.predict(ws, i, warm)
		if t.newton(ws, i) == nil {
			return nil
		}
	}
	// A cold start: RVB1's centre is a Newton step from the expansion
	// point, usually close to the mode.
	ai := t.a[sq : sq+r*r]
	for k := range ws.prec {
		ws.prec[k] = ws.omega[k] + ai[k]
	}
	clear(ws.center)
	if small.Chol(r, ws.prec, ws.rf) {
		t.rvb1Center(ws, i, ws.center)
	}
	err := t.newton(ws, i)
	if err != nil {
		// A last resort from zero, the prior mean.
		clear(ws.center)
		if t.newton(ws, i) != nil {
			return t.subjectError(i, err)
		}
	}
	return nil
}

// ModeError reports an RVB2 mode solve that failed.
type ModeError struct {
	Iter int     // Newton iterations done
	Step float64 // max norm of the last Newton step
	// Reason says what stopped the solve.
	Reason string
}

func (e *ModeError) Error() string {
	return fmt.Sprintf("conditional mode of the random effects not found: %s after %d Newton iterations (last step %.3g)", e.Reason, e.Iter, e.Step)
}

// evalCond evaluates subject i's conditional log density
// f(b) = log p(y_i | b, beta) - b' Omega b / 2 (without constants) at b,
// and stores the weighted derivatives per observation in ws.d1, ws.hw,
// ws.k3.
func (t *Target) evalCond(ws *workspace, i int, b []float64) float64 {
	lo, hi := t.src.SubjectRows(i)
	n := hi - lo
	eta := ws.eta[:n]
	t.linPred(ws, i, b, eta)
	f := t.rows(i, eta, ws.d1[:n], ws.hw[:n], ws.k3[:n])
	return f - 0.5*small.Quad(ws.r, ws.omega, b)
}

// linPred writes eta0 + Z_i b into eta.
func (t *Target) linPred(ws *workspace, i int, b, eta []float64) {
	r := ws.r
	z := ws.z
	eta0 := ws.eta0[:len(eta)]
	if t.nm != nil {
		// Two nonzeros a row: u_a and the row's v_b.
		for j, q := range t.nm.RowInner(i)[:len(eta)] {
			eta[j] = eta0[j] + b[0] + b[1+q]
		}
		return
	}
	if r == 1 {
		b0 := b[0]
		for j, e := range eta0 {
			eta[j] = e + z[j]*b0
		}
		return
	}
	for j, e := range eta0 {
		for u, zu := range z[j*r : j*r+r] {
			e += zu * b[u]
		}
		eta[j] = e
	}
}

// rows returns subject i's weighted log-likelihood (without its data
// constant) at the linear predictors eta, and writes the weighted first
// derivatives into d1 and, unless hw is nil, minus the weighted second
// and third derivatives into hw and k3.
func (t *Target) rows(i int, eta, d1, hw, k3 []float64) float64 {
	y, m, w := t.src.Response(i)
	n := len(eta)
	y, m, w, d1 = y[:n], m[:n], w[:n], d1[:n]
	var ll float64
	if t.link != glmm.CanonicalLink {
		for j, et := range eta {
			ll += w[j] * glmm.LinkLogLik(t.link, y[j], m[j], et)
			a1, a2, a3 := glmm.LinkDerivs(t.link, y[j], m[j], et)
			d1[j] = w[j] * a1
			if hw != nil {
				hw[j] = -w[j] * a2
				k3[j] = -w[j] * a3
			}
		}
		return ll
	}
	if t.fam == glmm.Poisson {
		for j, et := range eta {
			mu := math.Exp(min(et, glmm.MaxPoissonEta))
			ll += w[j] * (y[j]*et - mu)
			d1[j] = w[j] * (y[j] - mu)
			if hw != nil {
				hw[j] = w[j] * mu
				k3[j] = w[j] * mu
			}
		}
		return ll
	}
	// Logistic, with e = exp(-|eta|) and q = 1/(1+e): the mean is
	// p = 1/2 + sign(eta)(1-e) q/2, p(1-p) = e q^2, 2p-1 = sign(eta)(1-e) q,
	// and log p(y | eta) = y eta - m max(eta, 0) - m log(1+e). These have
	// no branch on the sign of eta, which is random in a fit, and keep the
	// absolute accuracy a sum needs; the first derivative keeps relative
	// accuracy too.
	// When every row has the same w m, the sum of w m log(1+e) is taken as
	// w m times the log of the product of the 1+e, each in (1, 2]: one
	// log per subject instead of one per row, flushed every 512 rows, far
	// from overflow.
	if t.unit {
		// Bernoulli without weights: w = m = 1.
		prod := 1.0
		for j, et := range eta {
			e := math.Exp(-math.Abs(et))
			d := 1 + e
			q := 1 / d
			sg := math.Copysign(1, et)
			eq := e * q // min(p, 1-p)
			ll += y[j]*et - max(et, 0)
			prod *= d
			if j&511 == 511 {
				ll -= math.Log(prod)
				prod = 1
			}
			// y - p as (y - [eta >= 0]) + sign(eta) min(p, 1-p): the
			// first term is exact, so a subject far in the tail, whose
			// mode solve sees only these tiny gradients, keeps their
			// relative accuracy (y - 1/2 - (2p-1)/2 cancels to 1e-16).
			d1[j] = (y[j] - 0.5 - 0.5*sg) + sg*eq
			if hw != nil {
				v := eq * q
				hw[j] = v
				k3[j] = -v * (sg * ((1 - e) * q))
			}
		}
		return ll - math.Log(prod)
	}
	wm := t.commonWM[i]
	common := !math.IsNaN(wm)
	prod := 1.0
	for j, et := range eta {
		mj, wj := m[j], w[j]
		e := math.Exp(-math.Abs(et))
		d := 1 + e
		q := 1 / d
		sg := math.Copysign(1, et)
		ll += wj * (y[j]*et - mj*max(et, 0))
		if common {
			prod *= d
			if j&511 == 511 {
				ll -= wm * math.Log(prod)
				prod = 1
			}
		} else {
			ll -= wj * mj * math.Log1p(e)
		}
		d1[j] = wj * ((y[j] - mj*(0.5+0.5*sg)) + mj*sg*(e*q)) // as for unit rows
		if hw != nil {
			v := wj * mj * e * q * q
			hw[j] = v
			k3[j] = -v * (sg * ((1 - e) * q))
		}
	}
	if common {
		ll -= wm * math.Log(prod)
	}
	return ll
}

// condGradPrec sets ws.grad to the gradient of the conditional log density
// and ws.prec to its negative Hessian, from the derivatives stored by the
// last evalCond at b.
func (t *Target) condGradPrec(ws *workspace, i int, b []float64) {
	r := ws.r
	lo, hi := t.src.SubjectRows(i)
	z := ws.z
	small.SymMulVec(r, ws.omega, b, ws.grad)
	for k := range ws.grad {
		ws.grad[k] = -ws.grad[k]
	}
	copy(ws.prec, ws.omega)
	if t.nm != nil {
		// Z_i's rows have two nonzeros, at u_a and the row's v_b: each
		// adds to three entries of the lower triangle, not r(r+1)/2.
		for j, q := range t.nm.RowInner(i)[:hi-lo] {
			c := 1 + int(q)
			d, h := ws.d1[j], ws.hw[j]
			ws.grad[0] += d
			ws.grad[c] += d
			ws.prec[0] += h
			ws.prec[c*r] += h
			ws.prec[c*r+c] += h
		}
	} else {
		for j := range hi - lo {
			zj := z[j*r : j*r+r]
			d, h := ws.d1[j], ws.hw[j]
			for u, zu := range zj {
				ws.grad[u] += zu * d
				hz := h * zu
				for v := 0; v <= u; v++ {
					ws.prec[u*r+v] += hz * zj[v]
				}
			}
		}
	}
	for u := range r {
		for v := range u {
			ws.prec[v*r+u] = ws.prec[u*r+v]
		}
	}
}

// newton runs damped Newton from ws.center to the mode of subject i's
// conditional density, halving each step until the density does not
// decrease, and extending full steps that do not contract (see below).
// Once a step is below the tolerance it takes it without a
// check (the density is flat to rounding there) and stops. On success
// ws.center is the mode and ws.prec, ws.rf, ws.hw and ws.k3 are the
// precision, its factor and the curvature terms there.
func (t *Target) newton(ws *workspace, i int) error {
	r := ws.r
	b := ws.center
	f := t.evalCond(ws, i, b)
	step := math.Inf(1)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return &ModeError{Reason: "non-finite density at the start", Step: step}
	}
	prev := math.Inf(1) // the last Newton step's size
	for it := range t.maxNewton {
		t.condGradPrec(ws, i, b)
		if !small.Chol(r, ws.prec, ws.rf) {
			return &ModeError{Iter: it, Step: step, Reason: "non-positive-definite Hessian"}
		}
		copy(ws.dir, ws.grad)
		small.SolveChol(r, ws.rf, ws.dir)
		step = 0
		for _, d := range ws.dir {
			step = max(step, math.Abs(d))
		}
		if !(step <= math.MaxFloat64) {
			return &ModeError{Iter: it, Step: step, Reason: "non-finite Newton step"}
		}
		if step <= t.tol {
			for k := range b {
				b[k] += ws.dir[k]
			}
			t.evalCond(ws, i, b)
			t.condGradPrec(ws, i, b)
			if !small.Chol(r, ws.prec, ws.rf) {
				return &ModeError{Iter: it + 1, Step: step, Reason: "non-positive-definite Hessian at the mode"}
			}
			return nil
		}
		// Rounding in f: a change below this is no change.
		slack := 1e-13 * (1 + math.Abs(f))
		accepted := false
		s := 1.0
		for ; s > 0x1p-60; s /= 2 {
			for k := range b {
				ws.bn[k] = b[k] + s*ws.dir[k]
			}
			fn := t.evalCond(ws, i, ws.bn)
			if fn >= f-slack {
				copy(b, ws.bn)
				f = fn
				accepted = true
				break
			}
		}
		if !accepted {
			return &ModeError{Iter: it, Step: step, Reason: "no step increases the density"}
		}
		if s == 1 && step >= 0.5*prev {
			// Newton is not contracting: in a likelihood's exponential
			// tail (all-1 Bernoulli data under a tiny Omega) it moves
			// about one unit per step towards a mode far out, where the
			// density's changes are below its rounding. Doubling the step
			// while the slope along it stays positive (so that, the
			// density being concave, it increases) stays short of the
			// mode and halves the distance to it.
			inc := 1.0
			for range 60 {
				for k := range b {
					ws.bn[k] = b[k] + inc*ws.dir[k]
				}
				fn := t.evalCond(ws, i, ws.bn)
				if math.IsNaN(fn) || math.IsInf(fn, 0) || !(t.slope(ws, i, ws.bn, ws.dir) > 0) {
					t.evalCond(ws, i, b) // the derivatives at b again
					break
				}
				copy(b, ws.bn)
				f = fn
				inc *= 2
			}
		}
		prev = step
	}
	return &ModeError{Iter: t.maxNewton, Step: step, Reason: "iteration limit reached"}
}

// slope returns the derivative of subject i's conditional log density at
// b along dir, from the derivatives stored by the last evalCond at b.
func (t *Target) slope(ws *workspace, i int, b, dir []float64) float64 {
	r := ws.r
	z := ws.z
	var s float64
	for j, d := range ws.d1[:len(z)/r] {
		for u, zu := range z[j*r : j*r+r] {
			s += d * zu * dir[u]
		}
	}
	for u := range r {
		for v := range r {
			s -= dir[u] * ws.omega[u*r+v] * b[v]
		}
	}
	return s
}

// subject evaluates subject i at b~ = bt after prepare: it returns the log
// density and, unless gl is nil, writes the local gradient into gl, adds
// the gradient in theta_g through its GlobalEta (beta and crossed effects)
// into gradG and adds subject i's term of Gamma into
// ws.gam.
func (t *Target) subject(ws *workspace, i int, thetaG, bt, gl, gradG []float64) float64 {
	r := ws.r
	lo, hi := t.src.SubjectRows(i)
	n := hi - lo
	z := ws.z
	b := ws.b
	small.LowerMulVec(r, ws.l, bt, b)
	for k := range b {
		b[k] += ws.center[k]
	}
	e := ws.d1[:n]
	eta := ws.eta[:n]
	t.linPred(ws, i, b, eta)
	ll := t.rows(i, eta, e, nil, nil)
	// a = Z' e - Omega b.
	small.SymMulVec(r, ws.omega, b, ws.av)
	for k := range ws.av {
		ws.av[k] = -ws.av[k]
	}
	if t.nm != nil {
		for j, q := range t.nm.RowInner(i)[:n] {
			ws.av[0] += e[j]
			ws.av[1+q] += e[j]
		}
	} else {
		for j, d := range e {
			for u, zu := range z[j*r : j*r+r] {
				ws.av[u] += zu * d
			}
		}
	}
	val := ll + t.src.SubjectConstant(i) + ws.logNorm - 0.5*small.Quad(r, ws.omega, b) + ws.logDetL
	if gl == nil {
		return val
	}
	// c = L' a.
	small.LowerTMulVec(r, ws.l, ws.av, ws.c)
	copy(gl, ws.c)
	// T = Lambda + L S L', S the symmetric matrix with S_uv = c_max(u,v)
	// bt_min(u,v): the derivative of L through Lambda.
	for u := range r {
		for v := 0; v <= u; v++ {
			s := ws.c[u] * bt[v]
			ws.s[u*r+v], ws.s[v*r+u] = s, s
		}
	}
	if t.nm != nil {
		// A nested block grows with its levels of b: L S, then
		// (L S) L', in O(r^3) rather than the O(r^4) of the sum below,
		// which a Model's small blocks keep.
		for u := range r {
			for q := range r {
				s := 0.0
				for k := 0; k <= u; k++ {
					s += ws.l[u*r+k] * ws.s[k*r+q]
				}
				ws.ls[u*r+q] = s
			}
		}
		for u := range r {
			for v := 0; v <= u; v++ {
				s := ws.lam[u*r+v]
				for q := 0; q <= v; q++ {
					s += ws.ls[u*r+q] * ws.l[v*r+q]
				}
				ws.tm[u*r+v], ws.tm[v*r+u] = s, s
			}
		}
	} else {
		for u := range r {
			for v := 0; v <= u; v++ {
				s := ws.lam[u*r+v]
				for k := 0; k <= u; k++ {
					lk := ws.l[u*r+k]
					if lk == 0 {
						continue
					}
					for q := 0; q <= v; q++ {
						s += lk * ws.s[k*r+q] * ws.l[v*r+q]
					}
				}
				ws.tm[u*r+v], ws.tm[v*r+u] = s, s
			}
		}
	}
	row := ws.row[:n]
	hw := t.hw[lo:hi]
	if t.method == RVB2 {
		// The centre moves H_i through eta at the mode: u_j =
		// z_j' T z_j kappa'''_j / 2 enters the beta gradient directly and
		// a~ = a - Z' u is the total derivative in the mode.
		hw = ws.hw[:n]
		k3 := ws.k3[:n]
		if t.nm != nil {
			// z_j' T z_j = T_00 + 2 T_0c + T_cc for the nonzeros 0
			// and c of a nested row.
			for j, q := range t.nm.RowInner(i)[:n] {
				c := 1 + int(q)
				uj := 0.5 * (ws.tm[0] + 2*ws.tm[c*r] + ws.tm[c*r+c]) * k3[j]
				row[j] = e[j] - uj
				ws.av[0] -= uj
				ws.av[c] -= uj
			}
		} else {
			for j := range n {
				zj := z[j*r : j*r+r]
				uj := 0.5 * small.Quad(r, ws.tm, zj) * k3[j]
				row[j] = e[j] - uj
				for q, zq := range zj {
					ws.av[q] -= zq * uj
				}
			}
		}
	} else {
		copy(row, e)
	}
	// d lambda / d beta = -Lambda Z' H X, so beta gains
	// -X' H Z Lambda a~.
	small.SymMulVec(r, ws.lam, ws.av, ws.v)
	if t.nm != nil {
		for j, q := range t.nm.RowInner(i)[:n] {
			row[j] -= hw[j] * (ws.v[0] + ws.v[1+q])
		}
	} else {
		for j := range n {
			zj := z[j*r : j*r+r]
			s := 0.0
			for u, zu := range zj {
				s += zu * ws.v[u]
			}
			row[j] -= hw[j] * s
		}
	}
	t.src.AddGlobalEtaGrad(ws.mws, i, thetaG, row, gradG)
	// Gamma += b b' + T + v lambda' + lambda v'.
	for u := range r {
		for q := range r {
			ws.gam[u*r+q] += b[u]*b[q] + ws.tm[u*r+q] + ws.v[u]*ws.center[q] + ws.center[u]*ws.v[q]
		}
	}
	return val
}

// addOmegaGrad adds into gomega the gradient in omega of cnt subjects'
// terms, d = -tr(Gamma dOmega)/2 + cnt sum_k omega_kk, through
// dOmega = dW W' + W dW'.
func (t *Target) addOmegaGrad(ws *workspace, cnt int, gomega []float64) {
	if t.nm != nil {
		// Omega = diag(exp(2 omega_a), exp(2 omega_b) I): dOmega is
		// 2 exp(2 omega) along the effects of each scale.
		gomega[0] += float64(cnt) - ws.pa*ws.gA
		gomega[1] += ws.kB - ws.pb*ws.gB
		return
	}
	r := t.r
	idx := 0
	for l := range r {
		for k := l; k < r; k++ {
			// (Gamma W)_kl.
			s := 0.0
			for q := l; q < r; q++ {
				s += ws.gam[k*r+q] * ws.w[q*r+l]
			}
			if k == l {
				gomega[idx] += float64(cnt) - s*ws.w[l*r+l]
			} else {
				gomega[idx] -= s
			}
			idx++
		}
	}
}
