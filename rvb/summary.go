// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/internal/small"
	"github.com/sparsevi/sparsevi/parallel"
)

// MapLocal writes subject i's random effects on the original scale,
//
//	b_i = lambda_i(theta_g) + L_i(theta_g) b~_i,
//
// into b. ws must come from NewWorkspace. For RVB2 the mode is solved from
// RVB1's centre, not from the warm-start modes of Local, so MapLocal may
// run alongside a fit and its result depends on its arguments only. The
// error reports a failed mode solve or a non-positive-definite
// approximation.
func (t *Target) MapLocal(ws any, i int, thetaG, btilde, b []float64) error {
	if i < 0 || i >= t.n {
		panic("rvb: bad index or length in MapLocal")
	}
	r, _, _ := t.blk(i)
	if len(thetaG) != t.g || len(btilde) != r || len(b) != r {
		panic("rvb: bad index or length in MapLocal")
	}
	wk := ws.(*workspace)
	t.setGlobal(wk, thetaG)
	if err := t.prepare(wk, i, thetaG, nil); err != nil {
		return err
	}
	small.LowerMulVec(r, wk.l, btilde, b)
	for k := range b {
		b[k] += wk.center[k]
	}
	return nil
}

// FromOriginal is the inverse of MapLocal: it writes
// b~_i = L_i(theta_g)^-1 (b_i - lambda_i(theta_g)) into btilde.
func (t *Target) FromOriginal(ws any, i int, thetaG, b, btilde []float64) error {
	if i < 0 || i >= t.n {
		panic("rvb: bad index or length in FromOriginal")
	}
	r, _, _ := t.blk(i)
	if len(thetaG) != t.g || len(btilde) != r || len(b) != r {
		panic("rvb: bad index or length in FromOriginal")
	}
	wk := ws.(*workspace)
	t.setGlobal(wk, thetaG)
	if err := t.prepare(wk, i, thetaG, nil); err != nil {
		return err
	}
	for k := range btilde {
		btilde[k] = b[k] - wk.center[k]
	}
	small.LowerSolve(r, wk.l, btilde)
	return nil
}

// ToOriginal maps the local variables of every subject, btilde (n*r,
// subject-major; a nested model's blocks one after another), to the
// original scale b at theta_g, with MapLocal.
func (t *Target) ToOriginal(thetaG, btilde, b []float64) error {
	if len(btilde) != t.at(t.n) || len(b) != t.at(t.n) {
		panic("rvb: bad length in ToOriginal")
	}
	ws := t.NewWorkspace()
	for i := range t.n {
		r, o, _ := t.blk(i)
		if err := t.MapLocal(ws, i, thetaG, btilde[o:o+r], b[o:o+r]); err != nil {
			return err
		}
	}
	return nil
}

// Summary holds posterior means and standard deviations under a fitted RVB
// approximation, on the scale of the model.
type Summary struct {
	// GlobalMean and GlobalSD are those of theta_g = (beta, omega), which
	// the reparametrisation leaves alone: the exact Gaussian marginals of
	// the fitted q.
	GlobalMean, GlobalSD []float64
	// LocalMean and LocalSD are those of the random effects b_i on the
	// original scale (n*r, subject-major; for a nested model each
	// subject's u_a and its v_b, the blocks one after another). Given theta_g, b_i = lambda_i +
	// L_i b~_i is Gaussian with mean lambda_i + L_i mu_i and covariance
	// L_i C_i C_i' L_i'; its marginal, a mixture of these over theta_g, is
	// not. The moments are averaged over Draws draws of theta_g
	// (Rao-Blackwellised: only the spread of the conditional means over
	// theta_g carries Monte Carlo error).
	LocalMean, LocalSD []float64
	// Draws is the number of draws of theta_g used.
	Draws int
	// MaxRelMCSE is the largest Monte Carlo standard error of a LocalMean
	// relative to its LocalSD.
	MaxRelMCSE float64
}

// LocalRelMCSE is the Monte Carlo standard error, relative to the posterior
// standard deviation, that Summarize aims for in every random effect's
// mean: it stops drawing theta_g when every subject is within it, or at the
// caller's maximum number of draws.
const LocalRelMCSE = 0.05

// firstDraws is the number of draws of theta_g of Summarize's first pass;
// every further pass doubles the total.
const firstDraws = 25

// Summarize returns the posterior means and standard deviations of a fit
// of t (vi.Fit with Method vi.BlockDiag on t) whose mean and compressed
// blockdiag factor are mu and factor; posterior.SummarizeRVB takes the
// vi.Result. The random effects' moments use at most maxDraws draws of
// theta_g seeded by seed, fewer when every mean's Monte Carlo error is
// within LocalRelMCSE of its standard deviation. It runs on at most
// workers goroutines (0 for GOMAXPROCS; 1 creates none), and the result
// does not depend on their number. The error reports a mean or factor
// that does not fit t, a failed mode solve, or cancellation of ctx.
func (t *Target) Summarize(ctx context.Context, workers int, mu, factor []float64, maxDraws int, seed uint64) (*Summary, error) {
	return t.SummarizeGroup(ctx, nil, workers, mu, factor, maxDraws, seed)
}

// ErrGroupSummary is the error of SummarizeGroup in the processes whose
// own subjects were summarised when another process's failed.
var ErrGroupSummary = errors.New("rvb: the summaries failed in another process")

// SummarizeGroup is Summarize in one process of a fit over a vi.Group,
// each holding a Target of its own subjects alone (as
// NewGroupAtStart's): the largest Monte Carlo error of the random
// effects' means, by which every process decides to draw more, is carried
// through the processes by carrier (nil for one process), so that the global
// summaries and each process's subjects' are those Summarize gives the
// whole Target. A process whose summaries fail returns its own error; the
// others return ErrGroupSummary, wrapping the context's error where a
// context ended. Every process must call it together.
func (t *Target) SummarizeGroup(ctx context.Context, carrier parallel.Carrier, workers int, mu, factor []float64, maxDraws int, seed uint64) (*Summary, error) {
	n, _, g := t.Dims()
	nr := t.at(n)
	c := t.factorOf(factor)
	if len(mu) != nr+g || c == nil {
		return nil, fmt.Errorf("rvb: mean and factor of lengths %d and %d do not fit the target's (%d, %d)", len(mu), len(factor), nr+g, t.factorLen())
	}
	if maxDraws < 2 {
		return nil, fmt.Errorf("rvb: %d draws, want at least 2", maxDraws)
	}
	s := &Summary{
		GlobalMean: append([]float64(nil), mu[nr:]...),
		GlobalSD:   make([]float64, g),
		LocalMean:  make([]float64, nr),
		LocalSD:    make([]float64, nr),
	}
	small.PackedRowSumSq(g, c.Global(), s.GlobalSD)
	for a, v := range s.GlobalSD {
		s.GlobalSD[a] = math.Sqrt(v)
	}

	// The global draws, shared by every chunk of subjects.
	rng := rand.New(rand.NewPCG(seed, 0x72766273756d))
	thetaG := make([]float64, maxDraws*g)
	theta := make([]float64, nr+g)
	z := make([]float64, nr+g)
	for k := range maxDraws {
		for a := nr; a < nr+g; a++ {
			z[a] = rng.NormFloat64()
		}
		c.DrawGlobal(theta, mu, z)
		copy(thetaG[k*g:(k+1)*g], theta[nr:])
	}

	chunks := parallel.NewChunking(n, 0)
	// Per random effect: Welford's running mean and sum of squares of the
	// conditional means, and the running sum of the conditional variances,
	// written by its subject's chunk only.
	m2 := s.LocalSD
	condVar := make([]float64, nr)
	// Each chunk reads and writes only its own subjects' warm starts.
	var warm *warmStart
	if t.method == RVB2 {
		warm = newWarmStart(nr, t.sqLen(), t.src.NumObs())
	}
	pass := func(d0, d1 int) error {
		return parallel.For(ctx, workers, chunks, func(k, lo, hi int) error {
			ws := t.NewWorkspace().(*workspace)
			mean, vars := make([]float64, t.rmax), make([]float64, t.rmax)
			for d := d0; d < d1; d++ {
				if err := ctx.Err(); err != nil {
					return err
				}
				tg := thetaG[d*g : (d+1)*g]
				t.setGlobal(ws, tg)
				for i := lo; i < hi; i++ {
					if err := t.prepare(ws, i, tg, warm); err != nil {
						return fmt.Errorf("%w (draw %d)", err, d)
					}
					r, o, _ := t.blk(i)
					mean, vars := mean[:r], vars[:r]
					// Given theta_g: mean lambda_i + L_i mu_i, covariance
					// (L_i C_i)(L_i C_i)'.
					small.LowerMulVec(r, ws.l, mu[o:o+r], mean)
					small.LowerPackedRowSumSq(r, ws.l, c.Local(i), vars)
					for a, v := range vars {
						x := mean[a] + ws.center[a]
						mu := &s.LocalMean[o+a]
						delta := x - *mu
						*mu += delta / float64(d+1)
						m2[o+a] += delta * (x - *mu)
						condVar[o+a] += v
					}
				}
			}
			return nil
		})
	}
	done := 0
	// acc carries the largest error so far and a failure: 1 for an
	// ended context, 2 for any other.
	acc := make([]float64, 2)
	for done < maxDraws {
		next := min(maxDraws, max(firstDraws, 2*done))
		err := pass(done, next)
		if carrier == nil && err != nil {
			return nil, err
		}
		done = next
		s.MaxRelMCSE = maxRelMCSE(m2, condVar, done)
		if carrier != nil {
			clear(acc)
			if err := carrier.Receive(acc); err != nil {
				return nil, err
			}
			acc[0] = max(acc[0], s.MaxRelMCSE)
			switch {
			case err != nil && ctx.Err() != nil:
				acc[1] = max(acc[1], 1)
			case err != nil:
				acc[1] = 2
			}
			if err := carrier.Pass(acc); err != nil {
				return nil, err
			}
			switch {
			case err != nil:
				return nil, err
			case acc[1] == 1:
				return nil, fmt.Errorf("%w: %w", ErrGroupSummary, context.Canceled)
			case acc[1] != 0:
				return nil, ErrGroupSummary
			}
			s.MaxRelMCSE = acc[0]
		}
		if s.MaxRelMCSE <= LocalRelMCSE {
			break
		}
	}
	s.Draws = done
	k := float64(done)
	for j, v := range m2 {
		s.LocalSD[j] = math.Sqrt(condVar[j]/k + v/(k-1))
	}
	return s, nil
}

// factorLen returns the length of the compressed blockdiag factor of a
// fit of t.
func (t *Target) factorLen() int {
	if t.sizes != nil {
		return blockdiag.LenVar(t.sizes, t.g)
	}
	return blockdiag.Len(t.n, t.r, t.g)
}

// factorOf lays the blockdiag factor of a fit of t over factor, nil if
// its length does not fit.
func (t *Target) factorOf(factor []float64) *blockdiag.Factor {
	if len(factor) != t.factorLen() {
		return nil
	}
	if t.sizes != nil {
		return blockdiag.WrapVar(t.sizes, t.g, factor)
	}
	return blockdiag.Wrap(t.n, t.r, t.g, factor)
}

// maxRelMCSE returns the largest Monte Carlo standard error of a mean from
// k draws relative to the standard deviation: the spread of the
// conditional means (m2, summed squares) over k, against the total
// variance.
func maxRelMCSE(m2, condVar []float64, k int) float64 {
	if k < 2 {
		return math.Inf(1)
	}
	fk := float64(k)
	var worst float64
	for j, v := range m2 {
		between := v / (fk - 1)
		total := condVar[j]/fk + between
		if total > 0 {
			worst = max(worst, between/fk/total)
		}
	}
	return math.Sqrt(worst)
}
