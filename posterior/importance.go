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

	"github.com/sparsevi/sparsevi/internal/small"
	"github.com/sparsevi/sparsevi/vi"
)

// ImportanceSettings are the settings of ImportanceGlobal. The zero value gives
// the defaults.
type ImportanceSettings struct {
	// Draws is the number of draws of theta_g, each integrating every
	// subject; 0 means DefaultImportanceDraws, or fewer where that many
	// times the number of subjects would exceed MaxSubjectIntegrals (none
	// below vi.MinImportanceDraws: ErrTooManySubjects).
	Draws int
	// Rounds is the largest number of rounds of adaptation after the
	// first, which draws from q's own marginal of theta_g; 0 means
	// DefaultImportanceRounds and a negative value none.
	Rounds int
	// Nodes is the number of quadrature nodes per dimension of every
	// subject; 0 means each subject's own, chosen by Integrator.Adapt at
	// q's mean of theta_g with tolerance Tol nats (0 means
	// DefaultQuadratureTol).
	Nodes int
	Tol   float64
	// Seed seeds the draws.
	Seed uint64
	// LocalDraws is the number of draws of theta_g, resampled from the
	// weighted draws, over which each subject's posterior moments are
	// averaged (GlobalImportance.LocalMean); 0 means
	// DefaultLocalDraws and a negative value none.
	LocalDraws int
	// Workers bounds the goroutines; 0 means GOMAXPROCS.
	Workers int
	// Group, if not nil, joins the processes of a fit over a vi.Group,
	// each holding a target of its own subjects alone and its own Result
	// (the subjects of all of them, in rank order, those of one target):
	// every sum over the subjects is carried through them in rank order,
	// so that each process gets the draws, ratios and Pareto k one
	// process holding every subject would, bit for bit, and LocalMean
	// and LocalCov of its own subjects. Every process but the last must
	// hold a multiple of 32 subjects (a fit's chunks are multiples of
	// 256), and every process must call ImportanceGlobal together.
	Group vi.Group
	// Progress, if not nil, is called between batches of draws with the
	// number of draws evaluated so far in this round and the round's
	// number of draws (round 0 draws from q), and with done = 0 at each
	// step of building a round's proposal (the Laplace approximation).
	Progress func(round, done, total int)
}

// proposalDF is the degrees of freedom of the adapted proposals.
const proposalDF = 5

// adaptMargin is how much lower an adapted proposal's k must be than the
// best so far's for it to be kept.
const adaptMargin = 0.1

// adaptESS is how many effective draws per dimension of theta_g (plus
// one) a round needs for its weighted covariance to be the next
// proposal's; with fewer the last covariance is widened instead.
const adaptESS = 5

// Defaults of ImportanceSettings.
const (
	DefaultImportanceDraws  = 1000
	DefaultImportanceRounds = 4
	DefaultLocalDraws       = 200
	// MaxSubjectIntegrals bounds the default number of draws so that
	// they integrate at most this many subjects in all.
	MaxSubjectIntegrals = 2_000_000
)

// ErrTooManySubjects is returned by ImportanceGlobal when, by default, the
// number of subjects leaves fewer than vi.MinImportanceDraws draws.
var ErrTooManySubjects = errors.New("posterior: too many subjects for importance sampling of theta_g")

// GlobalImportance holds importance draws of theta_g whose ratios have the
// random effects integrated out (an Integrator), from q's marginal of
// theta_g or a t distribution adapted from it.
type GlobalImportance struct {
	// FewestNodes and MostNodes are the fewest and most quadrature nodes
	// per dimension of any subject, and QuadratureError the estimated
	// error of log p(y | theta_g) at q's mean (Integrator.Adapt; NaN for
	// the Laplace approximation where nothing larger was allowed, 0 for
	// nodes set by ImportanceSettings.Nodes).
	FewestNodes, MostNodes int
	QuadratureError        float64
	// QK is the Pareto k of the ratios of q's own marginal of theta_g (a
	// quarter of the draws); K that of the proposal the draws below come
	// from, after Rounds rounds of adaptation.
	QK, K  float64
	Rounds int
	// Mixed reports that the draws are two sets, the second from a t
	// adapted to the first's weights after all of them had k 0.5 or
	// more, weighed over the mixture of the two proposals.
	Mixed bool
	// LogWeights holds log p(y, theta_s) - log r(theta_s) of each draw
	// theta_s of the proposal r (the mixture where Mixed), Global the
	// draws, row by row.
	LogWeights []float64
	Global     []float64
	// LocalMean (n×r) and LocalCov (n×r×r) are each subject's posterior
	// mean and covariance of its local block: the moments given theta_g
	// by the subject's quadrature, averaged over LocalDraws draws
	// resampled systematically from the Pareto-smoothed weights (nil when
	// K is 0.7 or more, or LocalDraws is negative).
	LocalMean, LocalCov []float64
	LocalDraws          int
}

// ImportanceGlobal draws theta_g from the marginal of the fitted approximation
// res of target t (a GVA fit of t itself, or an RVB fit of a
// reparametrisation of t: their theta_g is the same) and weighs each draw
// by p(y, theta_g), the random effects integrated out by adaptive
// Gauss–Hermite quadrature, over its density. Unlike ratios over every
// variable, whose spread grows with the number of subjects, these are
// over theta_g alone, so their Pareto k measures how well q's marginal of
// theta_g matches the posterior's.
//
// The first round takes a quarter of the draws from q's marginal (its
// Pareto k is QK). While k is 0.5 or more, further rounds of as many draws
// (at most Rounds) adapt the proposal, a multivariate t with proposalDF
// degrees of freedom: first at the Laplace approximation of theta_g's
// posterior (Integrator.laplace), then at the Pareto-smoothed weighted
// mean and covariance of the last round's draws (the last proposal's
// covariance widened by 1.5 where they have fewer than adaptESS(G+1)
// effective draws). The t's heavier tails keep the weights bounded where
// the posterior's tails are heavier than a Gaussian's (a Gaussian proposal
// of the posterior's own moments gave sds 5-10% too small on six
// subjects). A round replaces the best so far only if its k is lower by
// adaptMargin (a quarter of the draws estimates k to about 0.1, and too
// low more often than too high); the best is topped up to the full number
// of draws from the same proposal. Where k over all of them is still 0.5
// or more and rounds are left, as many draws again come from a t at their
// weighted moments, and the two sets are weighed over the mixture of their
// proposals in proportion to their draws (multiple importance sampling's
// balance heuristic, which bounds every ratio by the better proposal's),
// or the new set alone is kept where the mixture leaves k at 0.5 or more
// and the new set's own is lower.
func ImportanceGlobal(ctx context.Context, res *vi.Result, t LocalTarget, set ImportanceSettings) (*GlobalImportance, error) {
	if res == nil || t == nil {
		return nil, errors.New("posterior: nil result or target")
	}
	n, r, g := t.Dims()
	if res.N != n || res.R != r || res.G != g {
		return nil, fmt.Errorf("posterior: result of dimensions (%d, %d, %d), target (%d, %d, %d)", res.N, res.R, res.G, n, r, g)
	}
	in, err := NewIntegrator(ctx, t, set.Workers)
	if err != nil {
		return nil, err
	}
	defer in.Close()
	if set.Group != nil {
		if err := in.setGroup(set.Group); err != nil {
			return nil, err
		}
	}
	draws := set.Draws
	switch {
	case draws == 0:
		if draws = min(DefaultImportanceDraws, MaxSubjectIntegrals/max(in.total, 1)); draws < vi.MinImportanceDraws {
			return nil, ErrTooManySubjects
		}
	case draws < vi.MinImportanceDraws:
		return nil, fmt.Errorf("posterior: %d importance draws: want at least %d", draws, vi.MinImportanceDraws)
	}
	rounds := set.Rounds
	if rounds == 0 {
		rounds = DefaultImportanceRounds
	}
	mean := append([]float64(nil), res.Mu[n*r:]...)
	cov := res.GlobalCov().RawSymmetric().Data
	var qerr float64
	if set.Nodes != 0 {
		err = in.SetNodes(set.Nodes)
	} else {
		qerr, err = in.Adapt(mean, set.Tol)
	}
	if err != nil {
		return nil, err
	}
	out := &GlobalImportance{QuadratureError: qerr}
	if out.FewestNodes, out.MostNodes, err = in.groupNodes(); err != nil {
		return nil, err
	}
	// Rounds of adaptation take a quarter of the draws each; the proposal
	// kept is then topped up to the full number.
	first := max(draws/4, min(draws, vi.MinImportanceDraws))
	var best struct {
		k          float64
		pr         *proposal
		cov        []float64
		logw, draw []float64
	}
	used := 0 // the rounds run
	for round := 0; ; round++ {
		used = round
		nu := 0 // q itself
		if round > 0 {
			nu = proposalDF
		}
		pr, err := newProposal(mean, cov, nu)
		if err != nil {
			return nil, err
		}
		logw, theta, err := in.draw(ctx, pr, first, set.Seed, uint64(round), roundProgress(set.Progress, round))
		if err != nil {
			return nil, err
		}
		w, k, err := PSIS(logw)
		if err != nil {
			return nil, err
		}
		if round == 0 {
			out.QK = k
		}
		// A quarter of the draws estimates k to about 0.1: a round
		// replaces the best so far only if it is clearly better.
		if round == 0 || k < best.k-adaptMargin {
			best.k, best.pr, best.cov, best.logw, best.draw = k, pr, cov, logw, theta
			out.Rounds = round
		}
		if k < ParetoKGood || round >= rounds {
			break
		}
		switch {
		case round == 0:
			// The Laplace approximation of theta_g's posterior, the
			// random effects integrated out, from q's mean and scale.
			sd := make([]float64, g)
			for c := range g {
				sd[c] = math.Sqrt(cov[c*g+c])
			}
			var tick func()
			if set.Progress != nil {
				tick = func() { set.Progress(round+1, 0, first) }
			}
			m, c, err := in.laplace(ctx, mean, sd, tick)
			if err != nil {
				if e := ctx.Err(); e != nil {
					return nil, e
				}
				if errors.Is(err, vi.ErrGroupStopped) {
					// Another process's context ended: all stop.
					return nil, err
				}
				mean, cov = weightedMoments(theta, w, g)
				break
			}
			mean, cov = m, c
		case EffectiveDraws(w) < float64(adaptESS*(g+1)):
			// Too few effective draws for a covariance: keep the last
			// one, wider.
			mean, _ = weightedMoments(theta, w, g)
			cov = append([]float64(nil), cov...)
			for k := range cov {
				cov[k] *= 1.5 * 1.5
			}
		default:
			mean, cov = weightedMoments(theta, w, g)
		}
	}
	out.LogWeights, out.Global = best.logw, best.draw
	if more := draws - first; more > 0 {
		logw, theta, err := in.draw(ctx, best.pr, more, set.Seed, uint64(1<<16+out.Rounds), roundProgress(set.Progress, out.Rounds))
		if err != nil {
			return nil, err
		}
		out.LogWeights = append(out.LogWeights, logw...)
		out.Global = append(out.Global, theta...)
	}
	w, k, err := PSIS(out.LogWeights)
	if err != nil {
		return nil, err
	}
	if k >= ParetoKGood && used < rounds && len(out.LogWeights) > first {
		// A quarter of the draws can find k below 0.5 where all of them
		// do not (cbpp, penicillin, verbagg and salamanders had 0.31-0.49
		// from q's first 250 and 0.53-0.61 over 1000): as many draws
		// again from a t at the weighted moments of all of them.
		if w, k, err = in.refine(ctx, out, w, k, best.pr, best.cov, set.Seed, used, set.Progress); err != nil {
			return nil, err
		}
	}
	out.K = k
	m := set.LocalDraws
	if m == 0 {
		m = DefaultLocalDraws
	}
	if m > 0 && k < ParetoKBad {
		thetas, weights := resample(out.Global, w, g, m)
		if out.LocalMean, out.LocalCov, err = in.LocalMoments(thetas, weights); err != nil {
			return nil, err
		}
		out.LocalDraws = m
	}
	return out, nil
}

// refine draws as many draws as out holds again, from a t at the
// weighted moments of out's draws (weights w, Pareto k k, from prev, the
// proposal of covariance prevCov), and makes out's draws the two sets
// weighed over the mixture of the two proposals or, where that leaves k
// at 0.5 or more and the new set alone has a lower k, the new set alone.
// It returns the weights and k of out's draws.
func (in *Integrator) refine(ctx context.Context, out *GlobalImportance, w []float64, k float64, prev *proposal, prevCov []float64, seed uint64, round int, progress func(round, done, total int)) ([]float64, float64, error) {
	g := in.g
	mean, cov := weightedMoments(out.Global, w, g)
	if EffectiveDraws(w) < float64(adaptESS*(g+1)) {
		// Too few effective draws for a covariance: the last one, wider.
		cov = append([]float64(nil), prevCov...)
		for c := range cov {
			cov[c] *= 1.5 * 1.5
		}
	}
	pr, err := newProposal(mean, cov, proposalDF)
	if err != nil {
		return nil, 0, err
	}
	s := len(out.LogWeights)
	logw, theta, err := in.draw(ctx, pr, s, seed, uint64(1<<17+round), roundProgress(progress, round+1))
	if err != nil {
		return nil, 0, err
	}
	both := append(append([]float64(nil), out.Global...), theta...)
	mixed := mixture(append(append([]float64(nil), out.LogWeights...), logw...), both, []*proposal{prev, pr}, []int{s, s})
	wm, km, err := PSIS(mixed)
	if err != nil {
		return nil, 0, err
	}
	out.Rounds = round + 1
	if km >= ParetoKGood {
		// On penicillin the mixture kept k 0.58, the new set alone
		// had 0.33.
		wn, kn, err := PSIS(logw)
		if err != nil {
			return nil, 0, err
		}
		if kn < km {
			out.LogWeights, out.Global = logw, theta
			return wn, kn, nil
		}
	}
	out.LogWeights, out.Global, out.Mixed = mixed, both, true
	return wm, km, nil
}

// resample returns m draws of the rows of theta (g columns) by systematic
// resampling with weights w (summing to 1) at the points (j+1/2)/m, each
// distinct row once with its share of the m as weight.
func resample(theta, w []float64, g, m int) (rows, weights []float64) {
	var cum float64
	j := 0
	for s, ws := range w {
		cum += ws
		c := 0
		for j < m && (float64(j)+0.5)/float64(m) < cum {
			c++
			j++
		}
		if c > 0 {
			rows = append(rows, theta[s*g:(s+1)*g]...)
			weights = append(weights, float64(c)/float64(m))
		}
	}
	if j < m {
		// Rounding left the last points beyond the total: the last row.
		s := len(w) - 1
		rows = append(rows, theta[s*g:(s+1)*g]...)
		weights = append(weights, float64(m-j)/float64(m))
	}
	return rows, weights
}

// proposal is a proposal of theta_g: N(mean, cov), or for nu > 0 a
// multivariate t with nu degrees of freedom and scale cov.
type proposal struct {
	nu     int
	mean   []float64
	l      []float64 // the Cholesky factor of cov
	logDet float64   // log |l|
}

// newProposal returns the proposal of mean, cov (g×g, full) and nu.
func newProposal(mean, cov []float64, nu int) (*proposal, error) {
	g := len(mean)
	pr := &proposal{nu: nu, mean: mean, l: make([]float64, g*g)}
	if !small.Chol(g, cov, pr.l) {
		return nil, errors.New("posterior: the proposal's covariance of theta_g is not positive definite")
	}
	for c := range g {
		pr.logDet += math.Log(pr.l[c*g+c])
	}
	return pr, nil
}

// logDensityZ returns the log density at mean + l z, zz = z'z.
func (pr *proposal) logDensityZ(zz float64) float64 {
	fg := float64(len(pr.mean))
	if pr.nu > 0 {
		fn := float64(pr.nu)
		a, _ := math.Lgamma((fn + fg) / 2)
		b, _ := math.Lgamma(fn / 2)
		return a - b - 0.5*fg*math.Log(fn*math.Pi) - 0.5*(fn+fg)*math.Log1p(zz/fn) - pr.logDet
	}
	return -0.5*fg*math.Log(2*math.Pi) - 0.5*zz - pr.logDet
}

// logDensity returns the log density at theta, z (length g) its scratch.
func (pr *proposal) logDensity(theta, z []float64) float64 {
	for c := range z {
		z[c] = theta[c] - pr.mean[c]
	}
	small.LowerSolve(len(z), pr.l, z)
	var zz float64
	for _, v := range z {
		zz += v * v
	}
	return pr.logDensityZ(zz)
}

// mixture returns the log ratios of draws theta (rows of g) over the
// mixture of the proposals in proportion to their draws, counts[j] of
// them from prs[j] in that order, given their log ratios logw over their
// own proposals: multiple importance sampling's balance heuristic. No
// draw's ratio exceeds its own proposal's over that proposal's share, so
// the better proposal bounds the ratios of the other's draws.
func mixture(logw, theta []float64, prs []*proposal, counts []int) []float64 {
	g := len(prs[0].mean)
	s := len(logw)
	out := make([]float64, s)
	z, lr := make([]float64, g), make([]float64, len(prs))
	d := 0
	for j, cnt := range counts {
		for range cnt {
			th := theta[d*g : (d+1)*g]
			top := math.Inf(-1)
			for k, pr := range prs {
				lr[k] = math.Log(float64(counts[k])/float64(s)) + pr.logDensity(th, z)
				top = max(top, lr[k])
			}
			var sum float64
			for _, v := range lr {
				sum += math.Exp(v - top)
			}
			// log p = logw + log r_j.
			out[d] = logw[d] + prs[j].logDensity(th, z) - top - math.Log(sum)
			d++
		}
	}
	return out
}

// draw returns the log ratios log p(y, theta) - log r(theta) at s draws
// theta of the proposal r, and the draws. A draw at which the integrand is
// not finite gets a log ratio of -Inf.
func (in *Integrator) draw(ctx context.Context, pr *proposal, s int, seed, round uint64, progress func(done, total int)) (logw, theta []float64, err error) {
	g, nu := in.g, pr.nu
	rng := rand.New(rand.NewPCG(seed, 0x1a9<<32|round))
	z := make([]float64, g)
	logq := make([]float64, s)
	theta = make([]float64, s*g)
	for d := range s {
		var zz float64
		for c := range z {
			z[c] = rng.NormFloat64()
		}
		if nu > 0 {
			// z / sqrt(u / nu) with u ~ chi-squared(nu).
			var u float64
			for range nu {
				x := rng.NormFloat64()
				u += x * x
			}
			f := math.Sqrt(float64(nu) / u)
			for c := range z {
				z[c] *= f
			}
		}
		for c := range z {
			zz += z[c] * z[c]
		}
		th := theta[d*g : (d+1)*g]
		small.LowerMulVec(g, pr.l, z, th)
		for c := range th {
			th[c] += pr.mean[c]
		}
		logq[d] = pr.logDensityZ(zz)
	}
	logw = make([]float64, s)
	for lo := 0; lo < s; lo += progressBatch {
		hi := min(lo+progressBatch, s)
		if err := in.logLiks(ctx, theta[lo*g:hi*g], logw[lo:hi]); err != nil {
			return nil, nil, err
		}
		if progress != nil {
			progress(hi, s)
		}
	}
	for d := range logw {
		logw[d] += in.t.Global(theta[d*g:(d+1)*g], nil) - logq[d]
	}
	return logw, theta, nil
}

// progressBatch is the number of draws between calls of
// ImportanceSettings.Progress.
const progressBatch = 64

// roundProgress binds a round to Progress.
func roundProgress(p func(round, done, total int), round int) func(done, total int) {
	if p == nil {
		return nil
	}
	return func(done, total int) { p(round, done, total) }
}

// Newton steps of laplace.
const (
	laplaceSteps = 6    // at most this many
	laplaceDecr  = 1e-3 // stop when g'H^-1 g falls below this
	laplaceH     = 0.2  // central differences this many of q's sds apart
)

// laplace returns the mode of log p(y, theta_g), the random effects
// integrated out, and minus the inverse of its Hessian there, by Newton's
// method from theta (the Hessian of theta for every step) with the
// gradient and Hessian by central differences
// (steps laplaceH sd apart); a Newton step that does not raise the log
// density is halved, and a Hessian that is not negative definite is
// damped; tick, unless nil, is called before each gradient. It returns an
// error when even damping leaves it indefinite or an evaluation fails.
func (in *Integrator) laplace(ctx context.Context, theta, sd []float64, tick func()) (mode, cov []float64, err error) {
	g := in.g
	f := func(th []float64) (float64, error) {
		ll, err := in.LogLik(th)
		if err != nil {
			return 0, err
		}
		return ll + in.t.Global(th, nil), nil
	}
	x := append([]float64(nil), theta...)
	fx, err := f(x)
	if err != nil {
		return nil, nil, err
	}
	grad, hess, l := make([]float64, g), make([]float64, g*g), make([]float64, g*g)
	y, step := make([]float64, g), make([]float64, g)
	// derivs sets grad and, with hessian, the negated Hessian at x.
	derivs := func(hessian bool) error {
		if tick != nil {
			tick()
		}
		fp, fm := make([]float64, g), make([]float64, g)
		for c := range g {
			copy(y, x)
			y[c] = x[c] + laplaceH*sd[c]
			if fp[c], err = f(y); err != nil {
				return err
			}
			y[c] = x[c] - laplaceH*sd[c]
			if fm[c], err = f(y); err != nil {
				return err
			}
			grad[c] = (fp[c] - fm[c]) / (2 * laplaceH * sd[c])
			hess[c*g+c] = -(fp[c] - 2*fx + fm[c]) / (laplaceH * sd[c] * laplaceH * sd[c])
		}
		if !hessian {
			return nil
		}
		// A cross term from the steps along both axes together, with
		// the axes' own points: f(x+u+v) + f(x-u-v) - f(x+u) - f(x-u)
		// - f(x+v) - f(x-v) + 2 f(x) = 2 u'Hv to fourth order, two
		// evaluations where the four corners take four.
		for c := range g {
			for e := range c {
				hc, he := laplaceH*sd[c], laplaceH*sd[e]
				var v [2]float64
				for k, sgn := range [2]float64{1, -1} {
					copy(y, x)
					y[c] += sgn * hc
					y[e] += sgn * he
					if v[k], err = f(y); err != nil {
						return err
					}
				}
				h := -(v[0] + v[1] - fp[c] - fm[c] - fp[e] - fm[e] + 2*fx) / (2 * hc * he)
				hess[c*g+e], hess[e*g+c] = h, h
			}
		}
		return nil
	}
	// factor factors minus the Hessian, adding multiples of q's
	// precision's diagonal (1e-3, 1e-2, ...) where it is not positive
	// definite: away from the mode, or along a direction the data leave
	// flat, as the correlation of two random effects can be.
	damped := make([]float64, g*g)
	factor := func() bool {
		if small.Chol(g, hess, l) {
			return true
		}
		for lambda := 1e-3; lambda <= 1e3; lambda *= 10 {
			copy(damped, hess)
			for c := range g {
				damped[c*g+c] += lambda / (sd[c] * sd[c])
			}
			if small.Chol(g, damped, l) {
				return true
			}
		}
		return false
	}
	// The Hessian of the start serves every Newton step (its cross terms
	// cost G(G-1) evaluations, the gradient 2G); it is estimated again at
	// the mode for the proposal.
	if err := derivs(true); err != nil {
		return nil, nil, err
	}
	if !factor() {
		return nil, nil, errors.New("posterior: the Hessian of theta_g's log posterior is not negative definite")
	}
	for it := range laplaceSteps {
		if it > 0 {
			if err := derivs(false); err != nil {
				return nil, nil, err
			}
		}
		copy(step, grad)
		small.SolveChol(g, l, step)
		decr := 0.0
		for c := range g {
			decr += step[c] * grad[c]
		}
		if decr < laplaceDecr {
			break
		}
		t := 1.0
		for range 20 {
			for c := range g {
				y[c] = x[c] + t*step[c]
			}
			fy, err := f(y)
			if err == nil && fy > fx {
				copy(x, y)
				fx = fy
				break
			}
			t /= 2
		}
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
	}
	if err := derivs(true); err != nil {
		return nil, nil, err
	}
	if !factor() {
		return nil, nil, errors.New("posterior: the Hessian of theta_g's log posterior is not negative definite")
	}
	linv := make([]float64, g*g)
	cov = make([]float64, g*g)
	small.LowerInv(g, l, linv)
	small.InvFromChol(g, linv, cov)
	return x, cov, nil
}

// weightedMoments returns the mean and covariance (g×g, full) of the s
// draws theta (s×g) under the weights w, which sum to 1.
func weightedMoments(theta, w []float64, g int) (mean, cov []float64) {
	mean = make([]float64, g)
	for d, wd := range w {
		for c := range g {
			mean[c] += wd * theta[d*g+c]
		}
	}
	cov = make([]float64, g*g)
	for d, wd := range w {
		th := theta[d*g : (d+1)*g]
		for c := range g {
			for e := 0; e <= c; e++ {
				cov[c*g+e] += wd * (th[c] - mean[c]) * (th[e] - mean[e])
			}
		}
	}
	for c := range g {
		for e := 0; e < c; e++ {
			cov[e*g+c] = cov[c*g+e]
		}
	}
	return mean, cov
}
