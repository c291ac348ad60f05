// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// NewData holds rows to predict, coded as the model's own design (as
// formula.Design's NewData, NewOffset and NewCrossed code them).
type NewData struct {
	// X (rows×p; nil when p = 0) and Z (rows×r) are the fixed- and
	// random-effect designs of the rows.
	X, Z mat.Matrix
	// Group is the subject of each row where Known says it is one of the
	// model's; other rows belong to new subjects.
	Group []int
	Known []bool
	// Offset is added to each row's linear predictor on the data's scale;
	// nil for none.
	Offset []float64
	// Crossed holds, for each crossed factor of the model, the level of
	// each row, or -1 for a level the model has not seen.
	Crossed [][]int
	// ResponseCenter and ResponseScale map a linear predictor fitted to a
	// standardised gaussian response back to the data's scale: center +
	// scale eta. Zero values mean 0 and 1.
	ResponseCenter, ResponseScale float64
	// Trials is the number of trials of each row for the binomial family
	// (formula.Design's NewTrials), of which a new observation draws its
	// successes; nil, or NaN for a row, where it is not known.
	Trials []float64
}

// PredictSettings are the settings of Predict.
type PredictSettings struct {
	// Draws is the number of draws of q; 0 means 2000.
	Draws int
	// Seed seeds them.
	Seed uint64
	// Level is the probability of the intervals; 0 means 0.95.
	Level float64
	// Correction, unless nil, is an importance correction of theta_g of
	// the fit (ImportanceGlobal; its Pareto k must be below ParetoKBad)
	// whose posterior the predictions are drawn from instead of q's:
	// theta_g from its weighted draws, resampled systematically into
	// Draws draws, and each known subject's random effects given that
	// theta_g from the Gaussian with their conditional mean and
	// covariance, by the subject's quadrature.
	Correction *GlobalImportance
	// Workers bounds the goroutines of a correction's integrals and of
	// the summaries of the rows' draws; 0 means GOMAXPROCS.
	Workers int
	// FixedOnly predicts every row with its random effects at zero, from
	// the fixed effects alone: lme4's predict with re.form = NA, brms's
	// with re_formula = NA. (A new subject's prediction, over the random
	// effects' distribution, is what NewData's Known false gives.)
	FixedOnly bool
}

// Predictions holds, for each row, the posterior mean, sd and interval of
// its linear predictor, of its mean response, and of a new observation of
// the response (the posterior predictive distribution, with the family's
// own noise: what brms's predict gives, where the mean is its fitted).
// For the binomial family the mean is the probability of a success and
// the new observation the number of successes in the row's trials
// (NewData.Trials); Y, YSD, YLo and YHi are NaN for a row whose trials
// are not known. The interval of a count (every family but gaussian) has
// whole ends, the quantiles of its draws' distribution function
// (countQuantile), and covers at least its level.
type Predictions struct {
	Eta, EtaSD, EtaLo, EtaHi     []float64
	Mean, MeanSD, MeanLo, MeanHi []float64
	Y, YSD, YLo, YHi             []float64
}

// predictCheckEvery is how many draws Predict makes between looks at its
// context.
const predictCheckEvery = 4096

// predictBatch is the number of row-draws Predict holds at once: rows are
// predicted in batches of predictBatch/draws, so that memory does not grow
// with rows times draws.
var predictBatch = 1 << 20

// predictRowChunk is the number of rows whose draws a worker of Predict
// summarises at a time.
const predictRowChunk = 16

// Predict draws the linear predictor of every row of nd from the fit res
// of target t to the GLMM m (m itself, or an rvb.Target of it):
// conditional on the subject's random effects for the model's subjects,
// and over the random-effect distribution N(0, Sigma(omega)) for new
// subjects, whose random effects (and those of new levels of crossed
// factors) are drawn once per draw of q, the same for every new row, so
// that identical rows get identical predictions. Both integrate over q, or
// over the posterior of PredictSettings.Correction, by Monte Carlo; the
// draws depend only on the seed.
func Predict(ctx context.Context, res *vi.Result, t vi.Target, m *glmm.Model, nd NewData, set PredictSettings) (*Predictions, error) {
	if res == nil || t == nil || m == nil {
		return nil, errors.New("posterior: nil result, target or model")
	}
	rt, _ := t.(*rvb.Target)
	draws, level, err := predictDraws(set)
	if err != nil {
		return nil, err
	}
	n, r, g := m.Dims()
	p := m.P()
	if nd.Z == nil || len(nd.Group) != len(nd.Known) || len(nd.Crossed) != m.NumCrossed() || nd.Trials != nil && len(nd.Trials) != len(nd.Known) {
		return nil, errors.New("posterior: Predict: the new data do not match the model")
	}
	er := newEtaRows(nd.X, nd.Offset, nd.ResponseCenter, nd.ResponseScale)
	theta := make([]float64, n*r+g)
	var smp interface {
		draw(k uint64, theta []float64, subjects []int) error
	} = newSampler(res, rt, set.Seed, predictStream)
	var cs *correctedSampler
	if set.Correction != nil {
		if cs, err = newCorrectedSampler(ctx, res, m, set.Correction, draws, set.Seed, set.Workers); err != nil {
			return nil, err
		}
		defer cs.close()
		smp = cs
	}
	zk := make([]float64, r)
	bNew := make([]float64, r)
	uNew := make([]float64, len(nd.Crossed))
	beta := make([]float64, p)
	var chol mat.Cholesky
	var lower mat.TriDense
	var need []int
	batch := func(lo, hi int) error {
		// Only the subjects of the batch's rows need their random effects.
		need = nil
		seen := make(map[int]bool)
		for k := lo; k < hi && !set.FixedOnly; k++ {
			if i := nd.Group[k]; nd.Known[k] && !seen[i] {
				seen[i] = true
				need = append(need, i)
			}
		}
		slices.Sort(need)
		if cs != nil {
			return cs.prepare(need)
		}
		return nil
	}
	return predictBatches(ctx, len(nd.Known), draws, level, set.Workers, m.Mean, response{fam: m.Family(), trials: nd.Trials}, set.Seed, batch, func(s, lo, hi int, etaDraws []float64) (float64, error) {
		if err := smp.draw(uint64(s), theta, need); err != nil {
			return 0, err
		}
		copy(beta, theta[n*r:n*r+p])
		omega := slices.Clone(theta[n*r+p : n*r+p+glmm.NumOmega(r)])
		m.MaskOmega(omega)
		if !chol.Factorize(glmm.RECov(omega, r)) {
			return 0, fmt.Errorf("posterior: draw %d: random-effect covariance is not positive definite", s)
		}
		chol.LTo(&lower)
		// A new subject's random effects: one draw per draw of q,
		// the same for every new row.
		s1, s2 := parallel.StreamSeed(set.Seed, newSubjectStream, uint64(s))
		rng := rand.New(rand.NewPCG(s1, s2))
		for j := range zk {
			zk[j] = rng.NormFloat64()
		}
		for j := range r {
			bNew[j] = 0
			for l := 0; l <= j; l++ {
				bNew[j] += lower.At(j, l) * zk[l]
			}
		}
		// A new level of a crossed factor: one draw of its effect
		// per draw of q, from N(0, exp(-2 omega_u)).
		for c := range nd.Crossed {
			_, _, _, omega := m.CrossedFactor(c)
			uNew[c] = math.Exp(-theta[n*r+omega]) * rng.NormFloat64()
		}
		for k := lo; k < hi; k++ {
			eta := er.fixed(k, beta)
			if set.FixedOnly {
				etaDraws[(k-lo)*draws+s] = er.onDataScale(k, eta)
				continue
			}
			b := bNew
			if nd.Known[k] {
				b = theta[nd.Group[k]*r : (nd.Group[k]+1)*r]
			}
			for j := range r {
				eta += nd.Z.At(k, j) * b[j]
			}
			for c, idx := range nd.Crossed {
				if l := idx[k]; l >= 0 {
					_, _, first, omega := m.CrossedFactor(c)
					a := m.CrossedWeights(c)[l]
					eta += math.Exp(-a*theta[n*r+omega]) * theta[n*r+first+l]
				} else {
					eta += uNew[c]
				}
			}
			etaDraws[(k-lo)*draws+s] = er.onDataScale(k, eta)
		}
		return dispersionOf(m, theta[n*r:], nd.ResponseScale), nil
	})
}

// dispersionOf returns the dispersion of m's family on the data's scale
// at the global block thetaG, its response fitted at scale (0 means 1):
// the residual sd for gaussian, phi for negbinomial, 0 for the others.
func dispersionOf(m interface {
	Family() glmm.Family
	Dispersion() (int, bool)
}, thetaG []float64, scale float64) float64 {
	j, ok := m.Dispersion()
	if !ok {
		return 0
	}
	d := math.Exp(thetaG[j])
	if m.Family() == glmm.Gaussian && scale != 0 {
		d *= scale
	}
	return d
}

// etaRows computes the parts of new rows' linear predictors that every
// model has: x'beta and the offset, and for a gaussian response fitted
// standardised the map to the data's scale, center + scale eta*, with
// the offset as the data give it.
type etaRows struct {
	x             mat.Matrix // nil without fixed effects
	offset        []float64  // nil for none
	center, scale float64
	scaled        bool
}

// newEtaRows returns the etaRows of the design x and offset of new rows,
// for a response fitted at center and scale (0 and 0 mean 0 and 1).
func newEtaRows(x mat.Matrix, offset []float64, center, scale float64) etaRows {
	if scale == 0 {
		scale = 1
	}
	return etaRows{x: x, offset: offset, center: center, scale: scale, scaled: center != 0 || scale != 1}
}

// fixed returns row k's x'beta, with its offset unless the response is
// scaled.
func (e etaRows) fixed(k int, beta []float64) float64 {
	eta := 0.0
	if e.x != nil {
		for j := range beta {
			eta += e.x.At(k, j) * beta[j]
		}
	}
	if e.offset != nil && !e.scaled {
		eta += e.offset[k]
	}
	return eta
}

// onDataScale returns row k's linear predictor on the data's scale, eta
// being the model's.
func (e etaRows) onDataScale(k int, eta float64) float64 {
	if e.scaled {
		eta = e.center + e.scale*eta
		if e.offset != nil {
			eta += e.offset[k]
		}
	}
	return eta
}

// predictDraws returns the number of draws and the level of set, with
// their defaults, or an error if they are out of range.
func predictDraws(set PredictSettings) (draws int, level float64, err error) {
	draws, level = set.Draws, set.Level
	if draws == 0 {
		draws = 2000
	}
	if level == 0 {
		level = 0.95
	}
	if draws < 2 || !(level > 0 && level < 1) {
		return 0, 0, fmt.Errorf("posterior: Predict with %d draws at level %v: want at least 2 draws and a level in (0, 1)", draws, level)
	}
	return draws, level, nil
}

// countQuantile returns the p-quantile of the draws sorted as the
// inverse of their distribution function, the smallest draw with at
// least a share p of the draws at or below it: a draw itself, so that an
// interval of counts has whole ends (an interpolated quantile put an end
// between two counts), and covers at least its level.
func countQuantile(sorted []float64, p float64) float64 {
	k := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(k, 0), len(sorted)-1)]
}

// response is the family of new observations and, for binomial, the
// numbers of trials of the rows.
type response struct {
	fam    glmm.Family
	trials []float64
}

// rowTrials returns row k's number of trials: 1 for a family without
// trials, NaN where they are not known.
func (r response) rowTrials(k int) float64 {
	switch {
	case r.fam != glmm.Binomial:
		return 1
	case r.trials == nil:
		return math.NaN()
	}
	return r.trials[k]
}

// predictBatches returns the summaries of rows rows' draws of eta, of
// mean(eta) and of a new observation of resp (newResponseDraws
// with seed), at level, a batch of rows [lo, hi) at a time: batch
// prepares the batch, then draw writes draw s of its rows, row k's at
// etaDraws[(k-lo)*draws+s], and returns the draw's dispersion
// (dispersionOf), for each s in turn, and each row's draws are summarised
// on up to workers goroutines (0 means GOMAXPROCS), its new observations
// drawn there.
func predictBatches(ctx context.Context, rows, draws int, level float64, workers int, mean func(float64) float64, resp response, seed uint64,
	batch func(lo, hi int) error, draw func(s, lo, hi int, etaDraws []float64) (disp float64, err error)) (*Predictions, error) {
	pr := &Predictions{}
	for _, col := range []*[]float64{&pr.Eta, &pr.EtaSD, &pr.EtaLo, &pr.EtaHi, &pr.Mean, &pr.MeanSD, &pr.MeanLo, &pr.MeanHi, &pr.Y, &pr.YSD, &pr.YLo, &pr.YHi} {
		*col = make([]float64, rows)
	}
	size := max(1, predictBatch/draws)
	etaDraws := make([]float64, min(size, rows)*draws)
	meanDraws := make([]float64, len(etaDraws))
	yDraws := make([]float64, len(etaDraws))
	disp := make([]float64, draws)
	alpha := (1 - level) / 2
	// Each row's draws are summarised on its own: rows in chunks on a
	// pool, batchLo being the first row of the batch held.
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	pool := parallel.NewPool(ctx, workers)
	defer pool.Close()
	var batchLo, batchHi int
	summarise := func(c int) error {
		rd := newResponseDraws(resp.fam, seed, draws)
		for k := batchLo + c*predictRowChunk; k < min(batchHi, batchLo+(c+1)*predictRowChunk); k++ {
			eta := etaDraws[(k-batchLo)*draws : (k-batchLo+1)*draws]
			trials := resp.rowTrials(k)
			y := yDraws[(k-batchLo)*draws : (k-batchLo+1)*draws]
			if !math.IsNaN(trials) {
				// Before eta's draws are sorted: draw s of the
				// response goes with draw s of eta and of the
				// dispersion.
				for s, e := range eta {
					y[s] = rd.draw(s, k, mean(e), disp[s], trials)
				}
			}
			slices.Sort(eta)
			pr.Eta[k], pr.EtaSD[k] = meanSD(eta)
			pr.EtaLo[k], pr.EtaHi[k] = quantile(eta, alpha), quantile(eta, 1-alpha)
			// The mean is a non-decreasing function of eta, so that
			// the means of the sorted draws come sorted: the sort
			// below only guards against rounding.
			mu := meanDraws[(k-batchLo)*draws : (k-batchLo+1)*draws]
			for s, e := range eta {
				mu[s] = mean(e)
			}
			if !slices.IsSorted(mu) {
				slices.Sort(mu)
			}
			pr.Mean[k], pr.MeanSD[k] = meanSD(mu)
			pr.MeanLo[k], pr.MeanHi[k] = quantile(mu, alpha), quantile(mu, 1-alpha)
			if math.IsNaN(trials) {
				pr.Y[k], pr.YSD[k], pr.YLo[k], pr.YHi[k] = math.NaN(), math.NaN(), math.NaN(), math.NaN()
				continue
			}
			slices.Sort(y)
			pr.Y[k], pr.YSD[k] = meanSD(y)
			if resp.fam == glmm.Gaussian {
				pr.YLo[k], pr.YHi[k] = quantile(y, alpha), quantile(y, 1-alpha)
			} else {
				pr.YLo[k], pr.YHi[k] = countQuantile(y, alpha), countQuantile(y, 1-alpha)
			}
		}
		return nil
	}
	for lo := 0; lo < rows; lo += size {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(rows, lo+size)
		if err := batch(lo, hi); err != nil {
			return nil, err
		}
		for s := range draws {
			if s%predictCheckEvery == predictCheckEvery-1 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			d, err := draw(s, lo, hi, etaDraws)
			if err != nil {
				return nil, err
			}
			disp[s] = d
		}
		batchLo, batchHi = lo, hi
		if err := pool.Run((hi-lo+predictRowChunk-1)/predictRowChunk, summarise); err != nil {
			return nil, err
		}
	}
	return pr, nil
}
