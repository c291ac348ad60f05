// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"errors"
	"math"
	"slices"
)

// ParetoKGood and ParetoKBad bound the Pareto shape k of ParetoK: below
// ParetoKGood the approximation is close to the posterior in its tails
// and importance sampling could refine it; above ParetoKBad the importance
// ratios have no finite variance (Vehtari, Simpson, Gelman, Yao and Gabry,
// "Pareto smoothed importance sampling", 2024; for variational inference
// Yao, Vehtari, Simpson and Gelman, "Yes, but did it work?", 2018) and the
// approximation is far from the posterior somewhere, often in the spread
// of the variance parameters.
// ParetoKWarn is the shape above which the ratios do not even have a
// finite mean: q misses a part of the posterior's mass outright. glmmfit
// warns above it; between ParetoKBad and it, which on data sets of a few
// hundred variables the estimate of k crosses from one seed to the next
// (epilepsy: 0.68 to 0.86), it only reports k.
const (
	ParetoKGood = 0.5
	ParetoKBad  = 0.7
	ParetoKWarn = 1
)

// ErrFewDraws is returned by ParetoK for fewer draws than it needs.
var ErrFewDraws = errors.New("posterior: too few draws for the Pareto fit")

// ParetoK returns the shape k of the generalized Pareto distribution
// fitted to the largest importance ratios exp(logw) (the largest
// min(S/5, 3 sqrt(S)) of S draws, less the largest ratio left out), and
// the number of ratios in the tail. logw are log p(theta) - log q(theta)
// at independent draws from q, such as vi's Result.LogWeights. The fit is
// Zhang and Stephens's (2009) posterior-mean estimate of the shape with a
// weak prior towards 0.5 worth 10 observations, as the PSIS paper
// recommends. Ratios that are all equal (q is the posterior) give -Inf.
func ParetoK(logw []float64) (k float64, tail int, err error) {
	s := len(logw)
	if s < 20 {
		return math.NaN(), 0, ErrFewDraws
	}
	for _, v := range logw {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return math.NaN(), 0, errors.New("posterior: a log weight is not finite")
		}
	}
	w := slices.Clone(logw)
	slices.Sort(w)
	m := int(math.Ceil(min(0.2*float64(s), 3*math.Sqrt(float64(s)))))
	top, cut := w[s-1], w[s-m-1]
	x := make([]float64, m)
	for i, v := range w[s-m:] {
		// Ratios relative to the largest, less the cut-off's: the
		// exceedances of the tail, in increasing order.
		x[i] = math.Exp(v-top) - math.Exp(cut-top)
	}
	if x[m-1] <= 0 {
		return math.Inf(-1), m, nil
	}
	k, _ = gpdFit(x)
	return k, m, nil
}

// PSIS returns the Pareto-smoothed importance weights of the draws whose
// log ratios are logw, normalised to sum to 1, with the shape k of
// ParetoK: the largest ratios are replaced by the expected order
// statistics of the generalized Pareto distribution fitted to them (never
// above the largest ratio), which keeps a few draws from taking all the
// weight. The weights mean something only for k below ParetoKBad.
func PSIS(logw []float64) (w []float64, k float64, err error) {
	k, m, err := ParetoK(logw)
	if err != nil {
		return nil, k, err
	}
	s := len(logw)
	order := make([]int, s)
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpFloat(logw[a], logw[b]) })
	top := logw[order[s-1]]
	w = make([]float64, s)
	for i, v := range logw {
		w[i] = math.Exp(v - top)
	}
	if !math.IsInf(k, -1) {
		cut := math.Exp(logw[order[s-m-1]] - top)
		x := make([]float64, m)
		for i, j := range order[s-m:] {
			x[i] = w[j] - cut
		}
		kk, sigma := gpdFit(x)
		for i, j := range order[s-m:] {
			p := (float64(i) + 0.5) / float64(m)
			q := -sigma * math.Log1p(-p)
			if kk != 0 {
				q = sigma / kk * math.Expm1(-kk*math.Log1p(-p))
			}
			w[j] = min(cut+q, 1)
		}
	}
	var sum float64
	for _, v := range w {
		sum += v
	}
	for i := range w {
		w[i] /= sum
	}
	return w, k, nil
}

// cmpFloat orders two floats.
func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// EffectiveDraws returns 1/sum(w^2), the number of independent draws the
// normalised weights w are worth.
func EffectiveDraws(w []float64) float64 {
	var s float64
	for _, v := range w {
		s += v * v
	}
	return 1 / s
}

// WeightedMarginal returns the summary of the draws x under the
// normalised weights w: their weighted mean and standard deviation and
// quantiles of the weighted empirical distribution, with the Monte Carlo
// standard errors of self-normalised importance sampling.
func WeightedMarginal(name string, x, w []float64) Marginal {
	var mean float64
	for i, v := range x {
		mean += w[i] * v
	}
	var ss float64
	for i, v := range x {
		ss += w[i] * (v - mean) * (v - mean)
	}
	order := make([]int, len(x))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmpFloat(x[a], x[b]) })
	q := func(p float64) float64 {
		// The first draw at which the cumulative weight, taken at the
		// middle of each draw's weight, reaches p.
		var c float64
		for i, j := range order {
			next := c + w[j]
			if (c+next)/2 >= p {
				if i == 0 {
					return x[j]
				}
				prev := order[i-1]
				mid := c - w[prev]/2
				f := (p - mid) / ((c+next)/2 - mid)
				return x[prev] + f*(x[j]-x[prev])
			}
			c = next
		}
		return x[order[len(order)-1]]
	}
	sd := math.Sqrt(ss)
	// Self-normalised importance sampling's delta-method variances: of the
	// mean sum w²(x-mean)², of the variance sum w²((x-mean)²-sd²)², and of
	// the weighted CDF at a quantile sum w²(1{x<=q}-p)², which maps to the
	// quantile through the quantile function itself.
	var vm, vv float64
	for i, v := range x {
		d := (v - mean) * (v - mean)
		vm += w[i] * w[i] * d
		vv += w[i] * w[i] * (d - ss) * (d - ss)
	}
	qe := func(p float64) float64 {
		at := q(p)
		var vf float64
		for i, v := range x {
			ind := -p
			if v <= at {
				ind = 1 - p
			}
			vf += w[i] * w[i] * ind * ind
		}
		d := math.Sqrt(vf)
		return (q(min(p+d, 1)) - q(max(p-d, 0))) / 2
	}
	mc := MonteCarloError{Mean: math.Sqrt(vm), SD: math.Sqrt(vv) / (2 * sd), Q025: qe(0.025), Q50: qe(0.5), Q975: qe(0.975)}
	return Marginal{Name: name, Mean: mean, SD: sd, Q025: q(0.025), Q50: q(0.5), Q975: q(0.975), MCSE: mc}
}

// gpdFit returns the shape and scale of the generalized Pareto
// distribution fitted to the exceedances x (sorted, positive largest) by
// Zhang and Stephens's estimate, the shape regularised towards 0.5 as the
// PSIS paper does (the scale is that of the unregularised fit).
func gpdFit(x []float64) (k, sigma float64) {
	n := len(x)
	const prior = 3
	grid := 30 + int(math.Sqrt(float64(n)))
	quartile := x[int(float64(n)/4+0.5)-1]
	if quartile <= 0 {
		// A tail of mostly zeros: use the smallest positive exceedance.
		for _, v := range x {
			if v > 0 {
				quartile = v
				break
			}
		}
	}
	thetas := make([]float64, grid)
	logLik := make([]float64, grid)
	for j := range grid {
		// Candidate values of theta = -k/sigma, all below 1/max(x).
		t := 1/x[n-1] + (1-math.Sqrt(float64(grid)/(float64(j+1)-0.5)))/(prior*quartile)
		thetas[j] = t
		kj := meanLog1p(-t, x)
		// The profile log-likelihood of theta, with k at its maximum.
		logLik[j] = float64(n) * (math.Log(-t/kj) - kj - 1)
	}
	mx := slices.Max(logLik)
	var norm, mean float64
	for j, l := range logLik {
		wj := math.Exp(l - mx)
		norm += wj
		mean += wj * thetas[j]
	}
	theta := mean / norm
	k = meanLog1p(-theta, x)
	sigma = -k / theta
	return (float64(n)*k + 10*0.5) / float64(n+10), sigma
}

// meanLog1p returns the mean of log1p(a x_i).
func meanLog1p(a float64, x []float64) float64 {
	var s float64
	for _, v := range x {
		s += math.Log1p(a * v)
	}
	return s / float64(len(x))
}

// LogMarginal returns the importance-sampling estimate of log p(y) from
// logw, the log ratios log p(y, theta_s) - log q(theta_s) at independent
// draws theta_s of q: the log of their mean, with its standard error by
// the delta method, sd(w) / (mean(w) sqrt(S)). The estimate is consistent
// and, as the log of an unbiased estimate, biased down by about se²/2; it
// is trustworthy when the Pareto k of the same ratios (ParetoK) is below
// ParetoKBad, where the ratios have a finite variance. It returns
// ErrFewDraws for fewer than two draws.
func LogMarginal(logw []float64) (logp, se float64, err error) {
	s := len(logw)
	if s < 2 {
		return 0, 0, ErrFewDraws
	}
	top := math.Inf(-1)
	for _, v := range logw {
		top = max(top, v)
	}
	if math.IsInf(top, 0) || math.IsNaN(top) {
		return math.NaN(), math.NaN(), nil
	}
	// Ratios scaled by the largest, so that none overflows.
	var sum, sumSq float64
	for _, v := range logw {
		w := math.Exp(v - top)
		sum += w
		sumSq += w * w
	}
	mean := sum / float64(s)
	variance := max(sumSq/float64(s)-mean*mean, 0) * float64(s) / float64(s-1)
	return top + math.Log(mean), math.Sqrt(variance/float64(s)) / mean, nil
}
