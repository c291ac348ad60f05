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
	k = gpdShape(x)
	return k, m, nil
}

// gpdShape returns the shape of the generalized Pareto distribution fitted
// to the exceedances x (sorted, positive largest) by Zhang and Stephens's
// estimate, regularised towards 0.5 as the PSIS paper does.
func gpdShape(x []float64) float64 {
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
	theta := make([]float64, grid)
	logLik := make([]float64, grid)
	for j := range grid {
		// Candidate values of theta = -k/sigma, all below 1/max(x).
		t := 1/x[n-1] + (1-math.Sqrt(float64(grid)/(float64(j+1)-0.5)))/(prior*quartile)
		theta[j] = t
		kj := meanLog1p(-t, x)
		// The profile log-likelihood of theta, with k at its maximum.
		logLik[j] = float64(n) * (math.Log(-t/kj) - kj - 1)
	}
	mx := slices.Max(logLik)
	var norm, mean float64
	for j, l := range logLik {
		wj := math.Exp(l - mx)
		norm += wj
		mean += wj * theta[j]
	}
	k := meanLog1p(-mean/norm, x)
	return (float64(n)*k + 10*0.5) / float64(n+10)
}

// meanLog1p returns the mean of log1p(a x_i).
func meanLog1p(a float64, x []float64) float64 {
	var s float64
	for _, v := range x {
		s += math.Log1p(a * v)
	}
	return s / float64(len(x))
}
