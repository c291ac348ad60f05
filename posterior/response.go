// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"math"
	"math/rand/v2"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
)

// responseDraws draws new observations of a response given their means:
// one for each row k and draw s, from a stream of its own for each pair,
// so that the draws do not depend on how Predict batches the rows.
type responseDraws struct {
	fam         glmm.Family
	seed, draws uint64
	pcg         rand.PCG
	rng         *rand.Rand
}

// newResponseDraws returns the responseDraws of family fam for draws
// draws.
func newResponseDraws(fam glmm.Family, seed uint64, draws int) *responseDraws {
	d := &responseDraws{fam: fam, seed: seed, draws: uint64(draws)}
	d.rng = rand.New(&d.pcg)
	return d
}

// draw returns a new observation of row k in draw s given its mean mu,
// disp, the draw's dispersion on the data's scale (the residual sd for
// gaussian, the shape phi for negbinomial: variance mu + mu^2/phi), and
// trials, the row's number of trials (binomial; mu is then the
// probability of a success, and the draw the number of successes).
func (d *responseDraws) draw(s, k int, mu, disp, trials float64) float64 {
	d.pcg.Seed(parallel.StreamSeed(d.seed, responseStream, uint64(k)*d.draws+uint64(s)))
	switch d.fam {
	case glmm.Gaussian:
		return mu + disp*d.rng.NormFloat64()
	case glmm.Bernoulli:
		if d.rng.Float64() < mu {
			return 1
		}
		return 0
	case glmm.Binomial:
		if !(mu >= 0 && mu <= 1) {
			return math.NaN()
		}
		return distuv.Binomial{N: trials, P: mu, Src: &d.pcg}.Rand()
	case glmm.NegBinomial:
		// A Poisson mean drawn from Gamma(phi, rate phi/mu).
		if mu > 0 && !math.IsInf(mu, 1) {
			mu = distuv.Gamma{Alpha: disp, Beta: disp / mu, Src: &d.pcg}.Rand()
		}
	}
	if !(mu > 0 && mu <= maxPoissonDraw) {
		return mu // 0, +Inf or NaN, or beyond whole counts
	}
	return distuv.Poisson{Lambda: mu, Src: &d.pcg}.Rand()
}

// maxPoissonDraw is the largest mean of which a Poisson count is drawn:
// beyond it float64 does not hold every whole number.
const maxPoissonDraw = 1 << 53
