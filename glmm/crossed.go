// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Crossed is a grouping factor crossed with the subjects, with a random
// intercept per level: in (1 | id) + (1 | item) with subjects by id, the
// item effects u_l ~ N(0, tau^2) join the global block, together with
// omega_u = -log tau, the log precision of the effects on the scale of the
// subjects' omega. Any subject may have rows at any level.
//
// The effects are partially non-centred (Papaspiliopoulos, Roberts and
// Skold 2003; for variational Bayes Tan and Nott 2013): theta_g holds
// v_l = u_l / tau^a_l with the prior v_l ~ N(0, tau^(2(1-a_l))), and the
// weight a_l = 1/(1 + tau^2 h_l) in [0, 1] is the share of the prior in the
// precision of u_l given the data, h_l the data's information about it.
// New fixes the weights from the data (a rough tau and h_l by level). A
// level the data inform well is then centred (a_l near 0) and one they
// hardly inform is non-centred (a_l near 1): a Gaussian approximation of
// (v, omega_u) neither collapses tau to zero when the levels say little,
// as the centred form does, nor pins tau down when they say much, as the
// non-centred form does.
type Crossed struct {
	Name      string   // name of the factor; "" means "crossed1", "crossed2", ...
	Index     []int    // level in [0, NumLevels) of each row
	NumLevels int      // number of levels, at least 2
	Levels    []string // NumLevels labels; nil means "1", "2", ...
}

// MaxCrossedLevels is the largest number of levels of all crossed factors
// together that New accepts. Their effects join the global block, so that
// vi's Gaussian approximation holds a dense G×G block and, per subject, a
// block of G rows: memory grows as subjects times levels, and time as G^2
// per iteration. Since the Model is a vi.GlobalSupporter, the rows of
// levels a subject does not meet stay zero and are skipped, and the fit
// is steady however many levels there are (go run ./benchmarks/crossed:
// 30 to 1000 levels); what limits it is time. insteval's 2972 students
// and 1142 crossed levels (G = 1148) took about 13 ms an iteration on a
// quiet machine; from the start refined to the conditional mode
// (QuadraticGiven) the fit needs 100 iterations, where it needed 850.
const MaxCrossedLevels = 2000

// crossFactor is a Crossed as stored. Its design Z (one 1 per row, at the
// row's level) is held as a level index per row, not as a sparse.CSR:
// on insteval's shape (73,421 rows, 1128 levels) gathering Z v took
// 62 µs against CSR's 359 µs and scattering Z' res 53 against 400 µs
// (go test ./glmm -run X -bench CrossedDesign), in 4 bytes a row
// against 24.
type crossFactor struct {
	name   string
	levels []string
	idx    []int32   // level of each stored row
	off    int       // index in theta_g of v_0
	omega  int       // index in theta_g of omega_u
	weight []float64 // a_l, the non-centring weight of each level
	scale  int       // offset of the factor's tau^a_l in a workspace's scale
}

// setCrossed validates and stores the crossed factors, their effects
// placed in theta_g after (beta, omega, psi).
func (mod *Model) setCrossed(cs []Crossed, limit, nobs int, rowName func(int) int) error {
	if limit <= 0 {
		limit = MaxCrossedLevels
	}
	next := mod.p + NumOmega(mod.r) + mod.nd
	for c, cr := range cs {
		name := cr.Name
		if name == "" {
			name = "crossed" + strconv.Itoa(c+1)
		}
		if len(cr.Index) != nobs {
			return &DataError{Column: name, Err: fmt.Errorf("%w: crossed factor has %d entries for %d observations", ErrLength, len(cr.Index), nobs)}
		}
		if cr.NumLevels < 2 {
			return &DataError{Column: name, Err: fmt.Errorf("%w: crossed factor has %d levels, want at least 2", ErrConfig, cr.NumLevels)}
		}
		levels, err := names(cr.Levels, cr.NumLevels, "", name+" Levels")
		if err != nil {
			return err
		}
		f := crossFactor{name: name, levels: levels, idx: make([]int32, nobs), off: next, omega: next + cr.NumLevels}
		for s := range nobs {
			k := mod.dataRow(s)
			l := cr.Index[k]
			if l < 0 || l >= cr.NumLevels {
				return &DataError{Row: rowName(k), Column: name, Err: fmt.Errorf("%w: level index %d is outside [0, %d)", ErrGroup, l, cr.NumLevels)}
			}
			f.idx[s] = int32(l)
		}
		next += cr.NumLevels + 1
		mod.cross = append(mod.cross, f)
	}
	mod.ncross = next - (mod.p + NumOmega(mod.r) + mod.nd)
	if levels := mod.ncross - len(mod.cross); levels > limit {
		big := 0
		for c := range mod.cross {
			if len(mod.cross[c].levels) > len(mod.cross[big].levels) {
				big = c
			}
		}
		f := &mod.cross[big]
		return &DataError{Column: f.name, Err: fmt.Errorf("%w: the factors crossed with %s have %d levels in all (%s %d), at most %d are supported: their effects join the global block, and the fit's time and memory grow as the number of subjects times theirs (the subjects' factor, %s, may have any number of levels)", ErrUnsupportedModel, mod.groupName, levels, f.name, len(f.levels), limit, mod.groupName)}
	}
	return nil
}

// NumCrossed returns the number of crossed factors.
func (mod *Model) NumCrossed() int { return len(mod.cross) }

// CrossedFactor returns crossed factor c's name, its level labels, the
// index in theta_g of its first effect u_0 (the effects are contiguous)
// and that of omega_u, its log precision. The slice must not be modified.
func (mod *Model) CrossedFactor(c int) (name string, levels []string, first, omega int) {
	f := &mod.cross[c]
	return f.name, f.levels, f.off, f.omega
}

// crossedWeights sets the non-centring weights a_l = 1/(1 + tau^2 h_l)
// from the data: each level's information h_l about its effect at the
// level the level's data alone give (rowsLevel, with beta = 0), and tau^2
// the spread of those levels less their mean sampling variance (at least
// a tenth of their spread).
func (mod *Model) crossedWeights() {
	scale := 0
	for c := range mod.cross {
		f := &mod.cross[c]
		nl := len(f.levels)
		byLevel := make([][]int, nl)
		for j, l := range f.idx {
			byLevel[l] = append(byLevel[l], j)
		}
		lev := make([]float64, nl)
		info := make([]float64, nl)
		var mean, noise float64
		cnt := 0
		for l, rows := range byLevel {
			eta := make([]float64, len(rows))
			for k, j := range rows {
				eta[k] = mod.offset(j)
			}
			lev[l] = mod.rowsLevel(0, 0, rows, eta)
			info[l] = mod.levelInfo(rows, lev[l])
			if !math.IsNaN(lev[l]) && info[l] > 0 {
				mean += lev[l]
				noise += 1 / info[l]
				cnt++
			}
		}
		tau2 := 1.0
		if cnt > 1 {
			mean /= float64(cnt)
			var ss float64
			for l, v := range lev {
				if !math.IsNaN(v) && info[l] > 0 {
					ss += (v - mean) * (v - mean)
				}
			}
			spread := ss / float64(cnt-1)
			tau2 = max(spread-noise/float64(cnt), 0.1*spread)
			if !(tau2 > 0) || math.IsInf(tau2, 0) {
				tau2 = 1
			}
		}
		f.weight = make([]float64, nl)
		for l, h := range info {
			f.weight[l] = 1 / (1 + tau2*max(h, 0))
		}
		f.scale = scale
		scale += nl
	}
	mod.nscale = scale
}

// levelInfo returns the data's information about a constant added to the
// linear predictors of the stored rows at level eta: sum w m mu(1-mu) for
// the binomial families, sum w mu for the counts, sum w / s^2 for the
// Gaussian with s^2 the rows' own variance about their mean (1 when there
// is none).
func (mod *Model) levelInfo(rows []int, eta float64) float64 {
	if math.IsNaN(eta) {
		return 0
	}
	var h, sw, sy, syy float64
	for _, j := range rows {
		w := mod.weight(j)
		switch mod.family {
		case Poisson, NegBinomial:
			h += w * math.Exp(min(eta+mod.offset(j), MaxPoissonEta))
		case Gaussian:
			y := mod.y[j] - mod.offset(j)
			sw += w
			sy += w * y
			syy += w * y * y
		default:
			if mod.link.binary() {
				h += w * linkInfo(mod.link, mod.trials(j), eta+mod.offset(j))
				continue
			}
			p := logistic(eta + mod.offset(j))
			h += w * mod.trials(j) * p * (1 - p)
		}
	}
	if mod.family == Gaussian {
		v := 1.0
		if sw > 0 {
			if vv := syy/sw - (sy/sw)*(sy/sw); vv > 0 {
				v = vv
			}
		}
		h = sw / v
	}
	return h
}

// crossedScales writes tau^a_l = exp(-a_l omega_u) for every level of
// every crossed factor into dst (length nscale).
func (mod *Model) crossedScales(thetaG, dst []float64) {
	for c := range mod.cross {
		f := &mod.cross[c]
		w := thetaG[f.omega]
		for l, a := range f.weight {
			dst[f.scale+l] = math.Exp(-a * w)
		}
	}
}

// CrossedWeights returns the non-centring weights a_l of crossed factor
// c's levels (see Crossed). The slice must not be modified.
func (mod *Model) CrossedWeights(c int) []float64 { return mod.cross[c].weight }

// addCrossed adds the crossed effects u_l = tau^a_l v_l to the linear
// predictors eta of stored rows s, s+1, ..., with scale from
// crossedScales.
func (mod *Model) addCrossed(s int, thetaG, scale, eta []float64) {
	for c := range mod.cross {
		f := &mod.cross[c]
		v := thetaG[f.off:f.omega]
		sc := scale[f.scale : f.scale+len(v)]
		for j, l := range f.idx[s : s+len(eta)] {
			eta[j] += sc[l] * v[l]
		}
	}
}

// addCrossedGrad adds, from the residuals res of stored rows s, s+1, ...,
// the gradient in the crossed effects v_l (tau^a_l res) and in omega_u
// (-a_l u_l res).
func (mod *Model) addCrossedGrad(s int, thetaG, scale, res, gradG []float64) {
	for c := range mod.cross {
		f := &mod.cross[c]
		v := thetaG[f.off:f.omega]
		g := gradG[f.off:f.omega]
		sc := scale[f.scale : f.scale+len(v)]
		var gw float64
		for j, l := range f.idx[s : s+len(res)] {
			t := sc[l] * res[j]
			g[l] += t
			gw -= t * f.weight[l] * v[l]
		}
		gradG[f.omega] += gw
	}
}

// crossedPrior returns the log density of the crossed effects,
// sum_c sum_l log N(v_l; 0, tau^(2(1-a_l))), and adds its gradient into
// grad (unless nil).
func (mod *Model) crossedPrior(thetaG, grad []float64) float64 {
	var lp float64
	for c := range mod.cross {
		f := &mod.cross[c]
		w := thetaG[f.omega]
		var gw float64
		for l, v := range thetaG[f.off:f.omega] {
			b := 1 - f.weight[l]
			prec := math.Exp(2 * b * w)
			lp += b*w - 0.5*(log2Pi+prec*v*v)
			if grad != nil {
				grad[f.off+l] -= prec * v
				gw += b * (1 - prec*v*v)
			}
		}
		if grad != nil {
			grad[f.omega] += gw
		}
	}
	return lp
}

// GlobalSupport appends to dst the indices in theta_g on which subject i's
// log density depends: beta, omega and psi, then for each crossed factor
// the effects of the levels its rows meet and the factor's omega_u. It
// makes Model a vi.GlobalSupporter.
func (mod *Model) GlobalSupport(i int, dst []int) []int {
	for j := range mod.p + NumOmega(mod.r) + mod.nd {
		dst = append(dst, j)
	}
	s, e := mod.start[i], mod.start[i+1]
	for c := range mod.cross {
		f := &mod.cross[c]
		k := len(dst)
		for _, l := range f.idx[s:e] {
			dst = append(dst, f.off+int(l))
		}
		slices.Sort(dst[k:])
		dst = append(dst[:k], slices.Compact(dst[k:])...)
		dst = append(dst, f.omega)
	}
	return dst
}

// GlobalEta writes into dst the part of subject i's linear predictors that
// theta_g alone determines: X_i beta + offset_i and, with crossed factors,
// their effects. Subject i's linear predictors are dst + Z_i b_i. ws must
// come from NewWorkspace. Without crossed factors it is FixedEta.
func (mod *Model) GlobalEta(ws any, i int, thetaG, dst []float64) {
	_, _, g := mod.Dims()
	if i < 0 || i >= mod.n || len(thetaG) != g || len(dst) != mod.start[i+1]-mod.start[i] {
		panic("glmm: bad index or length in GlobalEta")
	}
	if mod.cross == nil {
		mod.FixedEta(i, thetaG[:mod.p], dst)
		return
	}
	work := ws.(*workspace)
	mod.setGlobal(work, thetaG)
	mod.fixedEta(work, i, thetaG, dst, false)
}

// AddGlobalEtaGrad adds into gradG the gradient in theta_g of v'e, e
// subject i's GlobalEta at thetaG: X_i' v in beta and, with crossed
// factors, the gradient in their effects and omega_u. Without crossed
// factors it is AddFixedTVec on gradG's beta.
func (mod *Model) AddGlobalEtaGrad(ws any, i int, thetaG, v, gradG []float64) {
	_, _, g := mod.Dims()
	if i < 0 || i >= mod.n || len(thetaG) != g || len(gradG) != g || len(v) != mod.start[i+1]-mod.start[i] {
		panic("glmm: bad index or length in AddGlobalEtaGrad")
	}
	mod.AddFixedTVec(i, v, gradG[:mod.p])
	if mod.cross == nil {
		return
	}
	work := ws.(*workspace)
	mod.setGlobal(work, thetaG)
	mod.addCrossedGrad(mod.start[i], thetaG, work.scale, v, gradG)
}

// QuadraticGiven appends to dst the indices in theta_g of the variance
// parameters, omega, psi and each crossed factor's omega_u, and reports
// whether the model is Gaussian with crossed factors. Given those, its log
// density is quadratic in the random effects, beta and the crossed
// effects v_l (the linear predictor is linear in them, the priors
// Gaussian), and Start's precision there is the negative Hessian, with no
// coupling to the variance parameters. It makes Model a
// vi.QuadraticStarter: the fit's start then moves the effects to their
// joint conditional mode, which Start's factor-by-factor updates of the
// crossed effects approach slowly (on insteval the start's bound rose by
// 3.5 nats), and the variance parameters by a Newton step towards the
// stationarity of q's mean (3.3 nats more). Models without crossed
// factors keep their start as it is.
func (mod *Model) QuadraticGiven(dst []int) ([]int, bool) {
	if mod.family != Gaussian || mod.cross == nil {
		return dst, false
	}
	for j := range NumOmega(mod.r) + mod.nd {
		dst = append(dst, mod.p+j)
	}
	for c := range mod.cross {
		dst = append(dst, mod.cross[c].omega)
	}
	return dst, true
}
