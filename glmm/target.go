// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"fmt"
	"math"

	"github.com/sparsevi/sparsevi/internal/scratch"
)

// log(2 pi)
var log2Pi = math.Log(2 * math.Pi)

// workspace is the scratch space of one concurrent caller of Local.
type workspace struct {
	// Workers write their workspaces once per subject or row: the padding
	// and the single padded buffer behind the slices keep two workspaces
	// off each other's cache lines.
	_ [scratch.Line]byte

	w []float64 // r×r factor W
	u []float64 // W' b
	// scale holds tau^a_l of every crossed level at the theta_g of the
	// current call.
	scale []float64
	eta   []float64 // linear predictors of one subject
	res   []float64 // weighted residuals w_j d1_j of one subject

	// For unit weights and trials: the product of the 1+exp(-|eta|) of the
	// rows since the last flush, and their number.
	prod     float64
	prodRows int

	// theta is the theta_g of w and scale, gen counts its changes, and
	// fixed holds subject fixedI's X beta + offset and crossed effects at
	// generation fixedGen: posterior's quadrature evaluates one subject
	// at many points at one theta_g, which then reuse them.
	theta         []float64
	gen, fixedGen uint64
	fixed         []float64
	fixedI        int

	// subject is the subject PrepareSubject last prepared (-1 for none),
	// c its rows' x'beta (offsets and crossed effects included), ecp and
	// ecm their exp and exp of minus.
	subject     int
	c, ecp, ecm []float64

	_ [scratch.Line]byte
}

// flush returns -log of the pending product of 1+exp(-|eta|) and resets
// it.
func (w *workspace) flush() float64 {
	l := -math.Log(w.prod)
	w.prod, w.prodRows = 1, 0
	return l
}

// NewWorkspace returns scratch space for one concurrent caller of Local and
// LocalHessian. It is a vi.Workspace.
func (mod *Model) NewWorkspace() any {
	r, ni := mod.r, mod.maxNi
	_, _, g := mod.Dims()
	c := scratch.NewCarver(r*r + r + 6*ni + mod.nscale + g)
	return &workspace{w: c.Take(r * r), u: c.Take(r), eta: c.Take(ni), res: c.Take(ni), scale: c.Take(mod.nscale),
		fixed: c.Take(ni), theta: c.Take(g)[:0], fixedI: -1, prod: 1, subject: -1, c: c.Take(ni), ecp: c.Take(ni), ecm: c.Take(ni)}
}

// setGlobal makes w (and scale, with crossed factors) those of thetaG,
// unless they already are.
func (mod *Model) setGlobal(work *workspace, thetaG []float64) {
	if len(work.theta) == len(thetaG) && equalValues(work.theta, thetaG) {
		return
	}
	r, p := mod.r, mod.p
	OmegaToW(thetaG[p:p+NumOmega(r)], r, work.w)
	mod.maskW(work.w)
	if mod.cross != nil {
		mod.crossedScales(thetaG, work.scale)
	}
	work.theta = append(work.theta[:0], thetaG...)
	work.gen++
}

// equalValues reports whether a and b (of one length) hold the same
// values; NaNs differ.
func equalValues(a, b []float64) bool {
	for k, v := range a {
		if v != b[k] {
			return false
		}
	}
	return true
}

// fixedEta writes subject i's X beta + offset, and crossed effects, at
// the theta_g that setGlobal last set into eta; with cache, it keeps
// them for the next call with the same subject and theta_g, or takes
// them from the last.
func (mod *Model) fixedEta(work *workspace, i int, thetaG, eta []float64, cache bool) {
	if cache && work.fixedI == i && work.fixedGen == work.gen {
		copy(eta, work.fixed)
		return
	}
	mod.FixedEta(i, thetaG[:mod.p], eta)
	if mod.cross != nil {
		mod.addCrossed(mod.start[i], thetaG, work.scale, eta)
	}
	if cache {
		work.fixed = append(work.fixed[:0], eta...)
		work.fixedI, work.fixedGen = i, work.gen
	}
}

// Dims returns the number of subjects n, the number of random effects r
// and the size G = p + r(r+1)/2 of theta_g = (beta, omega), plus 1 for psi
// when the family has a dispersion parameter.
func (mod *Model) Dims() (n, r, g int) {
	return mod.n, mod.r, mod.p + NumOmega(mod.r) + mod.nd + mod.ncross
}

// Global returns the log prior density of theta_g with its normalising
// constant: N(0, sigma0^2) on each of beta, omega, psi and the omega_u of
// the crossed factors, and N(0, 1) on each standardised crossed effect.
// It adds its gradient into grad (unless grad is nil).
func (mod *Model) Global(thetaG, grad []float64) float64 {
	_, _, g := mod.Dims()
	if len(thetaG) != g || (grad != nil && len(grad) != g) {
		panic("glmm: bad length in Global")
	}
	prec := 1 / (mod.priorSD * mod.priorSD)
	var ss float64
	add := func(k int, v float64) {
		ss += v * v
		if grad != nil {
			grad[k] -= v * prec
		}
	}
	top := mod.p + NumOmega(mod.r) + mod.nd
	for k, v := range thetaG[:top] {
		add(k, v)
	}
	for c := range mod.cross {
		k := mod.cross[c].omega
		add(k, thetaG[k])
	}
	return mod.PriorConstant() - 0.5*ss*prec + mod.crossedPrior(thetaG, grad)
}

// Local returns the sum over subjects i in [lo, hi) of
//
//	log p(y_i | b_i, beta) + log p(b_i | omega),
//
// every constant included (the family's data constants and -r/2 log 2 pi).
// local holds b_lo, ..., b_{hi-1}. Unless gradLocal is nil, the gradients
// with respect to those b_i are written into gradLocal and the gradient with
// respect to theta_g is added into gradG. ws must come from NewWorkspace. A
// non-finite log density or gradient is reported as an error naming the
// subject; Local allocates nothing otherwise.
func (mod *Model) Local(ws any, lo, hi int, thetaG, local, gradLocal, gradG []float64) (float64, error) {
	r, p := mod.r, mod.p
	_, _, g := mod.Dims()
	if lo < 0 || hi > mod.n || lo > hi || len(thetaG) != g || len(local) != (hi-lo)*r {
		panic("glmm: bad range or length in Local")
	}
	grad := gradLocal != nil
	if grad && (len(gradLocal) != len(local) || len(gradG) != g) {
		panic("glmm: bad gradient length in Local")
	}
	work := ws.(*workspace)
	no := NumOmega(r)
	omega := thetaG[p : p+no]
	var psi float64
	if mod.nd == 1 {
		psi = thetaG[p+no]
	}
	mod.setGlobal(work, thetaG)
	w := work.w
	// Per subject: -(r/2) log 2 pi + (1/2) log |W W'|, with the log
	// determinant the sum of the diagonal of W*.
	logNorm := -0.5 * float64(r) * log2Pi
	for l := range r {
		logNorm += omega[OmegaIndex(l, l, r)]
	}
	var gomega []float64
	var gpsi float64
	if grad {
		gomega = gradG[p : p+no]
	}
	u := work.u
	// A call that failed may have left a product pending.
	work.prod, work.prodRows = 1, 0
	var total float64
	for i := lo; i < hi; i++ {
		b := local[(i-lo)*r : (i-lo+1)*r]
		var gb []float64
		if grad {
			gb = gradLocal[(i-lo)*r : (i-lo+1)*r]
			clear(gb)
		}
		ll, check := mod.subjectLik(work, i, thetaG, psi, b, gb, gradG, &gpsi, hi == lo+1)

		// Random-effect density: -1/2 |W' b|^2.
		var uu float64
		for l := range r {
			var s float64
			for k := l; k < r; k++ {
				s += w[k*r+l] * b[k]
			}
			u[l] = s
			uu += s * s
		}
		li := ll + mod.subjectConst(i) + logNorm - 0.5*uu
		if grad {
			// d/db = ... - W W' b = ... - W u.
			for k := range r {
				var s float64
				for l := 0; l <= k; l++ {
					s += w[k*r+l] * u[l]
				}
				gb[k] -= s
				check += gb[k]
			}
			// d/dW*_kl = -b_k u_l below the diagonal; 1 - b_k u_k W_kk on it
			// (the 1 from log|W|, W_kk from the exp).
			idx := 0
			for l := range r {
				gomega[idx] += 1 - b[l]*u[l]*w[l*r+l]
				idx++
				for k := l + 1; k < r; k++ {
					if mod.omegaFree == nil || mod.omegaFree[idx] {
						gomega[idx] -= b[k] * u[l]
					}
					idx++
				}
			}
		}
		if math.IsNaN(li+check) || math.IsInf(li+check, 0) {
			return total, fmt.Errorf("glmm: %s %q: log density %v is not finite (gradient check %v)", mod.groupName, mod.groupLevels[i], li, check)
		}
		total += li
	}
	if mod.unitWM {
		total += work.flush()
	}
	if grad && mod.nd == 1 {
		if math.IsNaN(gpsi) || math.IsInf(gpsi, 0) {
			return total, fmt.Errorf("glmm: gradient in log(%s) %v is not finite", mod.family.DispersionName(), gpsi)
		}
		gradG[p+no] += gpsi
	}
	return total, nil
}

// subjectLik returns sum_j w_j LogLik(y_j, m_j, eta_j, psi) over subject
// i's rows and, when gb is not nil, adds sum_j z_j res_j into gb, sum_j x_j
// res_j into gbeta, res_j = w_j d1_j, and the derivative in psi into gpsi.
// check is the sum of the residuals, whose finiteness vouches for the
// gradient.
//
// It works in three passes over the rows (linear predictors, family terms,
// gradients) so that the exponentials of different rows, the bulk of the
// cost, are independent and overlap in the processor.
func (mod *Model) subjectLik(work *workspace, i int, thetaG []float64, psi float64, b, gb, gradG []float64, gpsi *float64, cache bool) (ll, check float64) {
	s, e := mod.start[i], mod.start[i+1]
	eta := work.eta[:e-s]
	mod.fixedEta(work, i, thetaG, eta, cache)
	r := mod.r
	zs := mod.zRange(s, e)
	if r == 1 {
		b0 := b[0]
		for j := range eta {
			eta[j] += zs[j] * b0
		}
	} else {
		for j := range eta {
			zr := zs[j*r : j*r+r]
			t := eta[j]
			for k, v := range zr {
				t += v * b[k]
			}
			eta[j] = t
		}
	}

	ys, ms, ws := mod.yRange(s, e), rowRange(mod.m, mod.ones, s, e), rowRange(mod.w, mod.ones, s, e)
	ms, ws = ms[:len(ys)], ws[:len(ys)]
	eta = eta[:len(ys)]
	res := work.res[:len(ys)]
	if mod.unitWM {
		// Every row has w = m = 1 (Bernoulli data without weights): the
		// rows below with those values, and the log of the product of the
		// 1+e taken once for many subjects (Local flushes it at the end).
		prod, rows := work.prod, work.prodRows
		for j, y := range ys {
			et := eta[j]
			a := math.Abs(et)
			ex := math.Exp(-a)
			d := 1 + ex
			q := 1 / d
			ll -= 0.5*(a-et) + (1-y)*et
			prod *= d
			rows++
			res[j] = y - (0.5 + math.Copysign(0.5*(1-ex)*q, et))
		}
		work.prod, work.prodRows = prod, rows
		if rows >= 512 {
			ll += work.flush()
		}
	} else if mod.family == Gaussian {
		// -(y - eta)^2/(2 sigma^2) - log sigma, with one exp per subject.
		prec := math.Exp(-2 * psi)
		var sw, ss float64
		for j, y := range ys {
			d := y - eta[j]
			wd := ws[j] * d
			ss += wd * d
			sw += ws[j]
			res[j] = wd * prec
		}
		ll = -0.5*ss*prec - sw*psi
		if gb != nil {
			*gpsi += ss*prec - sw
		}
	} else if mod.family == NegBinomial {
		for j, y := range ys {
			et := eta[j]
			ll += ws[j] * NegBinomial.LogLik(y, 1, et, psi)
			d1, _, _ := nbTerms(y, et, psi)
			res[j] = ws[j] * d1
			if gb != nil {
				*gpsi += ws[j] * NegBinomial.PsiDeriv(y, 1, et, psi)
			}
		}
	} else if mod.link.binary() {
		for j, y := range ys {
			et := eta[j]
			ll += ws[j] * LinkLogLik(mod.link, y, ms[j], et)
			d1, _, _ := LinkDerivs(mod.link, y, ms[j], et)
			res[j] = ws[j] * d1
		}
	} else if mod.family == Poisson {
		for j, y := range ys {
			et := eta[j]
			mu := math.Exp(min(et, MaxPoissonEta))
			ll += ws[j] * (y*et - mu)
			res[j] = ws[j] * (y - mu)
		}
	} else {
		// LogLik = -(m log(1+e) + m max(-eta, 0) + (m-y) eta) with
		// e = exp(-|eta|), and the mean 1/2 + sign(eta)(1-e)/(2(1+e)):
		// Family.LogLik and Derivs rearranged to have no data-dependent
		// branch (the sign of eta is random in a fit). These lose relative
		// accuracy where the terms nearly cancel, but keep the absolute
		// accuracy (a few 1e-16 per row) that a sum needs. When every row
		// of the subject has the same w m (Bernoulli data without weights,
		// binomial data with equal trials), the sum of w m log(1+e) over
		// the rows is taken as w m times the log of the product of the
		// 1+e, each in (1, 2]: one log per subject instead of per row.
		// The product is flushed every 512 rows, far from overflow.
		wm := mod.wmOf(i)
		common := !math.IsNaN(wm)
		prod := 1.0
		for j, y := range ys {
			et := eta[j]
			m, wt := ms[j], ws[j]
			a := math.Abs(et)
			ex := math.Exp(-a)
			d := 1 + ex
			q := 1 / d
			l := -(m*0.5*(a-et) + (m-y)*et)
			if common {
				prod *= d
				if j&511 == 511 {
					ll -= wm * math.Log(prod)
					prod = 1
				}
			} else {
				l -= m * math.Log(d)
			}
			ll += wt * l
			mu := 0.5 + math.Copysign(0.5*(1-ex)*q, et)
			res[j] = wt * (y - m*mu)
		}
		if common {
			ll -= wm * math.Log(prod)
		}
	}
	if gb == nil {
		return ll, 0
	}

	for j, v := range res {
		check += v
		if r == 1 {
			gb[0] += zs[j] * v
		} else {
			for k, z := range zs[j*r : j*r+r] {
				gb[k] += z * v
			}
		}
	}
	mod.AddFixedTVec(i, res, gradG[:mod.p])
	if mod.cross != nil {
		mod.addCrossedGrad(s, thetaG, work.scale, res, gradG)
	}
	return ll, check
}

// LocalHessian writes into h (r×r, row-major) the Hessian of
// log p(y_i | b_i, beta) + log p(b_i | omega) with respect to b_i = thetaI:
//
//	sum_j w_j d2_j z_j z_j' - W W'.
func (mod *Model) LocalHessian(ws any, i int, thetaG, thetaI, h []float64) {
	r, p := mod.r, mod.p
	_, _, g := mod.Dims()
	if i < 0 || i >= mod.n || len(thetaG) != g || len(thetaI) != r || len(h) != r*r {
		panic("glmm: bad index or length in LocalHessian")
	}
	work := ws.(*workspace)
	mod.setGlobal(work, thetaG)
	w := work.w
	no := NumOmega(r)
	var psi float64
	if mod.nd == 1 {
		psi = thetaG[p+no]
	}
	s, e := mod.start[i], mod.start[i+1]
	eta := work.eta[:e-s]
	mod.fixedEta(work, i, thetaG, eta, true)
	clear(h)
	for j := s; j < e; j++ {
		zr := mod.zRange(j, j+1)
		et := eta[j-s]
		for k, v := range zr {
			et += v * thetaI[k]
		}
		_, d2, _ := mod.derivs(mod.yAt(j), mod.trials(j), et, psi)
		d2 *= mod.weight(j)
		for a, za := range zr {
			for c := 0; c <= a; c++ {
				h[a*r+c] += d2 * za * zr[c]
			}
		}
	}
	// Subtract W W', then mirror the lower triangle.
	for a := range r {
		for c := 0; c <= a; c++ {
			var sum float64
			for k := 0; k <= c; k++ {
				sum += w[a*r+k] * w[c*r+k]
			}
			h[a*r+c] -= sum
			h[c*r+a] = h[a*r+c]
		}
	}
}
