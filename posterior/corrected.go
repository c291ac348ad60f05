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
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/vi"
)

// correctedSampler draws from the posterior that an importance correction
// of theta_g (ImportanceGlobal) stands for: theta_g from its weighted
// draws, resampled systematically into as many draws as are asked for,
// and each subject's random effects, given that theta_g, from the Gaussian
// with their conditional mean and covariance by the subject's quadrature.
// prepare computes those moments for a set of subjects before draw uses
// them.
type correctedSampler struct {
	in      *Integrator
	n, r, g int
	rows    []float64 // the distinct resampled draws of theta_g
	of      []int     // the row of each draw
	seed    uint64
	pcg     *rand.PCG
	rng     *rand.Rand
	z       []float64
	// The prepared subjects and, per row and prepared subject, the
	// conditional mean (r) and the Cholesky factor of the conditional
	// covariance (r×r).
	pos        map[int]int
	need       []int
	mean, chol []float64
}

// newCorrectedSampler returns a sampler of draws draws from the correction
// imp of the fit res of t, whose Pareto k must be below ParetoKBad; each
// subject's quadrature is adapted at q's mean of theta_g, as
// ImportanceGlobal adapts it.
func newCorrectedSampler(ctx context.Context, res *vi.Result, t LocalTarget, imp *GlobalImportance, draws int, seed uint64, workers int) (*correctedSampler, error) {
	n, r, g := t.Dims()
	if len(imp.LogWeights) == 0 || len(imp.Global) != len(imp.LogWeights)*g {
		return nil, errors.New("posterior: the correction's draws do not match the model")
	}
	w, k, err := PSIS(imp.LogWeights)
	if err != nil {
		return nil, err
	}
	if !(k < ParetoKBad) {
		return nil, fmt.Errorf("posterior: the correction's Pareto k is %.2f, not below %v: its weights cannot be trusted", k, ParetoKBad)
	}
	in, err := NewIntegrator(ctx, t, workers)
	if err != nil {
		return nil, err
	}
	if _, err := in.Adapt(res.Mu[n*r:], 0); err != nil {
		in.Close()
		return nil, err
	}
	rows, weights := resample(imp.Global, w, g, draws)
	cs := &correctedSampler{in: in, n: n, r: r, g: g, rows: rows, seed: seed, z: make([]float64, r), pos: make(map[int]int)}
	for j, wj := range weights {
		for range int(math.Round(wj * float64(draws))) {
			cs.of = append(cs.of, j)
		}
	}
	if len(cs.of) != draws {
		panic("posterior: resampling lost draws")
	}
	cs.pcg = rand.NewPCG(0, 0)
	cs.rng = rand.New(cs.pcg)
	return cs, nil
}

// close releases the sampler's workers.
func (cs *correctedSampler) close() { cs.in.Close() }

// prepare computes the conditional moments of the listed subjects given
// every row, the rows in parallel.
func (cs *correctedSampler) prepare(subjects []int) error {
	r, g := cs.r, cs.g
	cs.need = append(cs.need[:0], subjects...)
	clear(cs.pos)
	for k, i := range subjects {
		cs.pos[i] = k
	}
	rows := len(cs.rows) / g
	size := rows * len(subjects)
	cs.mean = append(cs.mean[:0], make([]float64, size*r)...)
	cs.chol = append(cs.chol[:0], make([]float64, size*r*r)...)
	in := cs.in
	return in.pool.Run(rows, func(j int) error {
		sc := <-in.free
		defer func() { in.free <- sc }()
		th := cs.rows[j*g : (j+1)*g]
		for k, i := range cs.need {
			if err := in.moments(sc, i, th); err != nil {
				return err
			}
			at := j*len(cs.need) + k
			copy(cs.mean[at*r:(at+1)*r], sc.m)
			for a := range r {
				for c := range r {
					sc.sec[a*r+c] -= sc.m[a] * sc.m[c]
				}
			}
			if !small.Chol(r, sc.sec, cs.chol[at*r*r:(at+1)*r*r]) {
				return in.subjectError(i, "the conditional covariance of its random effects is not positive definite")
			}
		}
		return nil
	})
}

// draw writes draw k of theta_g, and of the random effects of the listed
// subjects (all prepared), into theta (length n*r + G). A subject's
// random effects have their own stream for each draw, as sampler's.
func (cs *correctedSampler) draw(k uint64, theta []float64, subjects []int) error {
	n, r, g := cs.n, cs.r, cs.g
	j := cs.of[k]
	copy(theta[n*r:], cs.rows[j*g:(j+1)*g])
	for _, i := range subjects {
		p, ok := cs.pos[i]
		if !ok {
			panic("posterior: a subject's moments were not prepared")
		}
		s1, s2 := parallel.StreamSeed(cs.seed, correctedStream<<40|k, uint64(i+1))
		cs.pcg.Seed(s1, s2)
		for a := range r {
			cs.z[a] = cs.rng.NormFloat64()
		}
		at := j*len(cs.need) + p
		b := theta[i*r : (i+1)*r]
		small.LowerMulVec(r, cs.chol[at*r*r:(at+1)*r*r], cs.z, b)
		for a := range r {
			b[a] += cs.mean[at*r+a]
		}
	}
	return nil
}
