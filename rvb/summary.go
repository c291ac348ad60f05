// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/internal/small"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/vi"
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
	r := t.r
	if i < 0 || i >= t.n || len(thetaG) != t.g || len(btilde) != r || len(b) != r {
		panic("rvb: bad index or length in MapLocal")
	}
	wk := ws.(*workspace)
	t.setGlobal(wk, thetaG[t.p:])
	if err := t.prepare(wk, i, thetaG[:t.p], nil); err != nil {
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
	r := t.r
	if i < 0 || i >= t.n || len(thetaG) != t.g || len(btilde) != r || len(b) != r {
		panic("rvb: bad index or length in FromOriginal")
	}
	wk := ws.(*workspace)
	t.setGlobal(wk, thetaG[t.p:])
	if err := t.prepare(wk, i, thetaG[:t.p], nil); err != nil {
		return err
	}
	for k := range btilde {
		btilde[k] = b[k] - wk.center[k]
	}
	small.LowerSolve(r, wk.l, btilde)
	return nil
}

// ToOriginal maps the local variables of every subject, btilde (n*r,
// subject-major), to the original scale b at theta_g, with MapLocal.
func (t *Target) ToOriginal(thetaG, btilde, b []float64) error {
	if len(btilde) != t.n*t.r || len(b) != t.n*t.r {
		panic("rvb: bad length in ToOriginal")
	}
	ws := t.NewWorkspace()
	r := t.r
	for i := range t.n {
		if err := t.MapLocal(ws, i, thetaG, btilde[i*r:(i+1)*r], b[i*r:(i+1)*r]); err != nil {
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
	// original scale (n*r, subject-major), estimated from Draws draws of
	// q mapped through b_i = lambda_i(theta_g) + L_i(theta_g) b~_i: the
	// marginal of b_i is not Gaussian.
	LocalMean, LocalSD []float64
	Draws              int
}

// Summarize returns the posterior means and standard deviations of a fit
// of t (vi.Fit with Method vi.RVB on t), the random effects from the given
// number of draws of q seeded by seed. The result does not depend on the
// number of processors. The error reports a result that does not fit t, a
// failed mode solve, or cancellation of ctx.
func Summarize(ctx context.Context, res *vi.Result, t *Target, draws int, seed uint64) (*Summary, error) {
	n, r, g := t.Dims()
	if res.Method != vi.RVB {
		return nil, fmt.Errorf("rvb: result of method %v, want %v", res.Method, vi.RVB)
	}
	if res.N != n || res.R != r || res.G != g || len(res.Mu) != n*r+g || len(res.Factor) != blockdiag.Len(n, r, g) {
		return nil, fmt.Errorf("rvb: result of dimensions (%d, %d, %d) does not fit the target's (%d, %d, %d)", res.N, res.R, res.G, n, r, g)
	}
	if draws < 2 {
		return nil, fmt.Errorf("rvb: %d draws, want at least 2", draws)
	}
	c := blockdiag.Wrap(n, r, g, res.Factor)
	nr := n * r
	s := &Summary{
		GlobalMean: append([]float64(nil), res.Mu[nr:]...),
		GlobalSD:   make([]float64, g),
		LocalMean:  make([]float64, nr),
		LocalSD:    make([]float64, nr),
		Draws:      draws,
	}
	cg := c.Global()
	for a := range g {
		var v float64
		for k := 0; k <= a; k++ {
			x := cg[a*(a+1)/2+k]
			v += x * x
		}
		s.GlobalSD[a] = math.Sqrt(v)
	}

	// The global draws, shared by every chunk of subjects.
	rng := rand.New(rand.NewPCG(seed, 0x72766273756d))
	thetaG := make([]float64, draws*g)
	zg := make([]float64, g)
	theta := make([]float64, nr+g)
	z := make([]float64, nr+g)
	for k := range draws {
		for a := range zg {
			zg[a] = rng.NormFloat64()
		}
		copy(z[nr:], zg)
		c.DrawGlobal(theta, res.Mu, z)
		copy(thetaG[k*g:(k+1)*g], theta[nr:])
	}

	chunks := parallel.NewChunking(n, 0)
	streams := parallel.NewStreams(seed, chunks.Len())
	// Welford's running moments per subject, written by its chunk only.
	m2 := s.LocalSD
	// Each chunk reads and writes only its own subjects' warm starts.
	var warm *warmStart
	if t.method == RVB2 {
		warm = newWarmStart(n, r, t.m.NumObs())
	}
	err := parallel.For(ctx, 0, chunks, func(k, lo, hi int) error {
		ws := t.NewWorkspace().(*workspace)
		bt := make([]float64, (hi-lo)*r)
		zl := make([]float64, (hi-lo)*r)
		b := make([]float64, r)
		for d := range draws {
			if err := ctx.Err(); err != nil {
				return err
			}
			st := streams.At(uint64(d), k)
			for j := range zl {
				zl[j] = st.NormFloat64()
			}
			tg := thetaG[d*g : (d+1)*g]
			t.setGlobal(ws, tg[t.p:])
			for i := lo; i < hi; i++ {
				off := (i - lo) * r
				ci := c.Subject(i)
				// b~_i = mu_i + C_i z_i.
				for a := range r {
					v := res.Mu[i*r+a]
					for q := 0; q <= a; q++ {
						v += ci[a*(a+1)/2+q] * zl[off+q]
					}
					bt[off+a] = v
				}
				if err := t.prepare(ws, i, tg[:t.p], warm); err != nil {
					return fmt.Errorf("%w (draw %d)", err, d)
				}
				small.LowerMulVec(r, ws.l, bt[off:off+r], b)
				for a := range r {
					x := b[a] + ws.center[a]
					mean := &s.LocalMean[i*r+a]
					delta := x - *mean
					*mean += delta / float64(d+1)
					m2[i*r+a] += delta * (x - *mean)
				}
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for j, v := range m2 {
		s.LocalSD[j] = math.Sqrt(v / float64(draws-1))
	}
	return s, nil
}
