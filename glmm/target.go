package glmm

import (
	"fmt"
	"math"
)

// log(2 pi)
var log2Pi = math.Log(2 * math.Pi)

// workspace is the scratch space of one concurrent caller of Local.
type workspace struct {
	w   []float64 // r×r factor W
	u   []float64 // W' b
	eta []float64 // linear predictor of one subject (LocalHessian)
	d2  []float64 // second derivatives of one subject (LocalHessian)
}

// NewWorkspace returns scratch space for one concurrent caller of Local and
// LocalHessian. It is a vi.Workspace.
func (mod *Model) NewWorkspace() any {
	return &workspace{
		w:   make([]float64, mod.r*mod.r),
		u:   make([]float64, mod.r),
		eta: make([]float64, mod.maxNi),
		d2:  make([]float64, mod.maxNi),
	}
}

// Dims returns the number of subjects n, the number of random effects r
// and the size G = p + r(r+1)/2 of theta_g = (beta, omega).
func (mod *Model) Dims() (n, r, g int) { return mod.n, mod.r, mod.p + NumOmega(mod.r) }

// Global returns the log prior density of theta_g = (beta, omega),
// log N(theta_g; 0, sigma0^2 I_G) with its normalising constant, and adds its
// gradient -theta_g/sigma0^2 into grad (unless grad is nil).
func (mod *Model) Global(thetaG, grad []float64) float64 {
	_, _, g := mod.Dims()
	if len(thetaG) != g || (grad != nil && len(grad) != g) {
		panic("glmm: bad length in Global")
	}
	prec := 1 / (mod.priorSD * mod.priorSD)
	var ss float64
	for k, v := range thetaG {
		ss += v * v
		if grad != nil {
			grad[k] -= v * prec
		}
	}
	return mod.PriorConstant() - 0.5*ss*prec
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
	beta, omega := thetaG[:p], thetaG[p:]
	w := work.w
	OmegaToW(omega, r, w)
	// Per subject: -(r/2) log 2 pi + (1/2) log |W W'|, with the log
	// determinant the sum of the diagonal of W*.
	logNorm := -0.5 * float64(r) * log2Pi
	for l := range r {
		logNorm += omega[OmegaIndex(l, l, r)]
	}
	var gbeta, gomega []float64
	if grad {
		gbeta, gomega = gradG[:p], gradG[p:]
	}
	u := work.u
	var total float64
	for i := lo; i < hi; i++ {
		b := local[(i-lo)*r : (i-lo+1)*r]
		var gb []float64
		if grad {
			gb = gradLocal[(i-lo)*r : (i-lo+1)*r]
			clear(gb)
		}
		ll, check := mod.subjectLik(i, beta, b, gb, gbeta)

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
		li := ll + mod.subjConst[i] + logNorm - 0.5*uu
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
					gomega[idx] -= b[k] * u[l]
					idx++
				}
			}
		}
		if math.IsNaN(li+check) || math.IsInf(li+check, 0) {
			return total, fmt.Errorf("glmm: %s %q: log density %v is not finite (gradient check %v)", mod.groupName, mod.groupLevels[i], li, check)
		}
		total += li
	}
	return total, nil
}

// subjectLik returns sum_j w_j LogLik(y_j, m_j, eta_j) over subject i's rows
// and, when gb is not nil, adds sum_j z_j res_j into gb and sum_j x_j res_j
// into gbeta, res_j = w_j d1_j. check is the sum of the residuals, whose
// finiteness vouches for the gradient.
func (mod *Model) subjectLik(i int, beta, b, gb, gbeta []float64) (ll, check float64) {
	p, r := mod.p, mod.r
	s, e := mod.start[i], mod.start[i+1]
	ys, ms, ws, offs := mod.y[s:e], mod.m[s:e], mod.w[s:e], mod.off[s:e]
	zs := mod.z[s*r : e*r]
	b = b[:r]
	var xs []float64
	if !mod.sparseX {
		xs = mod.x[s*p : e*p]
		beta = beta[:p]
		if gb != nil {
			gbeta = gbeta[:p]
		}
	}
	poisson := mod.family == Poisson
	for j, y := range ys {
		eta := offs[j]
		if mod.sparseX {
			for t := mod.xptr[s+j]; t < mod.xptr[s+j+1]; t++ {
				eta += mod.xval[t] * beta[mod.xind[t]]
			}
		} else {
			for k, v := range xs[j*p : j*p+p] {
				eta += v * beta[k]
			}
		}
		zr := zs[j*r : j*r+r]
		for k, v := range zr {
			eta += v * b[k]
		}
		m, wt := ms[j], ws[j]
		var l, d1 float64
		if poisson {
			mu := math.Exp(min(eta, MaxPoissonEta))
			l, d1 = y*eta-mu, y-mu
		} else {
			l, d1 = logisticEval(y, m, eta)
		}
		ll += wt * l
		if gb == nil {
			continue
		}
		res := wt * d1
		check += res
		if mod.sparseX {
			for t := mod.xptr[s+j]; t < mod.xptr[s+j+1]; t++ {
				gbeta[mod.xind[t]] += mod.xval[t] * res
			}
		} else {
			for k, v := range xs[j*p : j*p+p] {
				gbeta[k] += v * res
			}
		}
		for k, v := range zr {
			gb[k] += v * res
		}
	}
	return ll, check
}

// logisticEval returns Bernoulli/binomial LogLik and its first derivative
// with one exp and one log1p and no data-dependent branch (the sign of eta
// is random in a fit, so a branch on it mispredicts half the time).
//
// With a = |eta|, e = exp(-a), q = 1/(1+e) and c the count on eta's side
// (y if eta >= 0, else m-y):
//
//	LogLik = -(m log1p(e) + (m-c) a),  d1 = sign(eta) (c e - (m-c)) q,
//
// the forms of logisticLogLik and Family.Derivs rearranged. c and the
// sign come from the sign bit of eta; y and m are integers, so
// c = y + neg (m - 2y) is exact.
func logisticEval(y, m, eta float64) (l, d1 float64) {
	bits := math.Float64bits(eta)
	sign := bits & (1 << 63)
	a := math.Float64frombits(bits &^ (1 << 63))
	ex := math.Exp(-a)
	q := 1 / (1 + ex)
	c := y + float64(sign>>63)*(m-2*y)
	v := m - c
	l = -(m*math.Log1p(ex) + v*a)
	d1 = math.Float64frombits(math.Float64bits((c*ex-v)*q) ^ sign)
	return l, d1
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
	w := work.w
	OmegaToW(thetaG[p:], r, w)
	s, e := mod.start[i], mod.start[i+1]
	eta := work.eta[:e-s]
	mod.FixedEta(i, thetaG[:p], eta)
	for k := range h {
		h[k] = 0
	}
	for j := s; j < e; j++ {
		zr := mod.z[j*r : j*r+r]
		et := eta[j-s]
		for k, v := range zr {
			et += v * thetaI[k]
		}
		_, d2, _ := mod.family.Derivs(mod.y[j], mod.m[j], et)
		d2 *= mod.w[j]
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
