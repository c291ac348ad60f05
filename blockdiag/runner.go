// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import (
	"github.com/sparsevi/sparsevi/parallel"
)

type op int

const (
	opNone op = iota
	opMulVec
	opMulTransVec
	opSolve
	opSolveTrans
	opAddSolveTrans
	opCovMulVec
	opSample
	opDraw
	opLogDet
	opNatGrad
	opEuclidGrad
	opInvFisher
	opUpdate
	opStep
	opCov
	opCholesky
)

// Runner runs the kernels of a Factor over all of its blocks on a
// parallel.Pool. Each chunk of subjects of the Chunking is one task and the
// global block is one more, numbered Chunking.Len(), so it runs alongside
// the subjects.
//
// The methods of a Runner allocate nothing, and their results do not depend
// on the number of workers. A Runner must not be used concurrently, as its
// pool must not be. If the pool's context is cancelled, a method returns the
// context's error and its destinations are partly written.
type Runner struct {
	f     *Factor
	pool  *parallel.Pool
	chunk parallel.Chunking
	task  func(k int) error

	// Arguments of the loop in progress.
	op      op
	v       [4][]float64
	rho     float64
	streams *parallel.Streams
	iter    uint64
	partial []float64
}

// NewRunner returns a Runner of the kernels of f over the chunks of c on the
// pool p. A nil pool runs the tasks in order on the calling goroutine. It
// panics if c.N is not the number of subjects of f.
func NewRunner(f *Factor, p *parallel.Pool, c parallel.Chunking) *Runner {
	if c.N != f.n {
		panic("blockdiag: chunking does not match the number of subjects")
	}
	if c.Size <= 0 && c.N > 0 {
		panic("blockdiag: chunk size not positive")
	}
	r := &Runner{f: f, pool: p, chunk: c, partial: make([]float64, c.Len()+1)}
	r.task = r.run
	return r
}

// Factor returns the factor of r.
func (r *Runner) Factor() *Factor { return r.f }

// Chunking returns the chunking of r.
func (r *Runner) Chunking() parallel.Chunking { return r.chunk }

func (r *Runner) loop(o op, a, b, c, d []float64) error {
	r.op = o
	r.v = [4][]float64{a, b, c, d}
	tasks := r.chunk.Len() + 1
	var err error
	if r.pool == nil {
		for k := range tasks {
			if e := r.task(k); e != nil {
				err = e
				break
			}
		}
	} else {
		err = r.pool.Run(tasks, r.task)
	}
	r.op = opNone
	r.v = [4][]float64{}
	r.streams = nil
	return err
}

// run is the task of chunk k, or of the global block if k == Chunking.Len().
func (r *Runner) run(k int) error {
	f := r.f
	a, b, c, d := r.v[0], r.v[1], r.v[2], r.v[3]
	if k == r.chunk.Len() {
		switch r.op {
		case opMulVec:
			f.MulVecGlobal(a, b)
		case opMulTransVec:
			f.MulTransVecGlobal(a, b)
		case opSolve:
			f.SolveGlobal(a, b)
		case opSolveTrans:
			f.SolveTransGlobal(a, b)
		case opAddSolveTrans:
			f.AddSolveTransGlobal(a, b)
		case opCovMulVec:
			f.CovMulVecGlobal(a, b)
		case opSample:
			rng := r.streams.At(r.iter, k)
			zg := a[f.n*f.r:]
			for j := range zg {
				zg[j] = rng.NormFloat64()
			}
			f.DrawGlobal(b, c, a)
		case opDraw:
			f.DrawGlobal(a, b, c)
		case opLogDet:
			r.partial[k] = f.LogDetGlobal()
		case opNatGrad:
			f.NatGradGlobal(a, b, c, d)
		case opEuclidGrad:
			f.EuclidGradGlobal(a, b, c)
		case opInvFisher:
			f.InvFisherGlobal(a, b, c, d)
		case opUpdate:
			f.UpdateGlobal(r.rho, a, b, c)
		case opStep:
			f.StepGlobal(r.rho, a, b, c)
		case opCov:
			f.CovGlobal(a)
		case opCholesky:
			return f.CholGlobal(a)
		}
		return nil
	}
	lo, hi := r.chunk.Bounds(k)
	switch r.op {
	case opMulVec:
		f.MulVecRange(lo, hi, a, b)
	case opMulTransVec:
		f.MulTransVecRange(lo, hi, a, b)
	case opSolve:
		f.SolveRange(lo, hi, a, b)
	case opSolveTrans:
		f.SolveTransRange(lo, hi, a, b)
	case opAddSolveTrans:
		f.AddSolveTransRange(lo, hi, a, b)
	case opCovMulVec:
		f.CovMulVecRange(lo, hi, a, b)
	case opSample:
		rng := r.streams.At(r.iter, k)
		zk := a[lo*f.r : hi*f.r]
		for j := range zk {
			zk[j] = rng.NormFloat64()
		}
		f.DrawRange(lo, hi, b, c, a)
	case opDraw:
		f.DrawRange(lo, hi, a, b, c)
	case opLogDet:
		r.partial[k] = f.LogDetRange(lo, hi)
	case opNatGrad:
		f.NatGradRange(lo, hi, a, b, c, d)
	case opEuclidGrad:
		f.EuclidGradRange(lo, hi, a, b, c)
	case opInvFisher:
		f.InvFisherRange(lo, hi, a, b, c, d)
	case opUpdate:
		f.UpdateRange(lo, hi, r.rho, a, b, c)
	case opStep:
		f.StepRange(lo, hi, r.rho, a, b, c)
	case opCov:
		f.CovRange(lo, hi, a)
	case opCholesky:
		return f.CholRange(lo, hi, a)
	}
	return nil
}

// MulVec sets dst = C x. dst may alias x.
func (r *Runner) MulVec(dst, x []float64) error {
	r.f.checkVec(dst, x)
	return r.loop(opMulVec, dst, x, nil, nil)
}

// MulTransVec sets dst = C' x. dst may alias x.
func (r *Runner) MulTransVec(dst, x []float64) error {
	r.f.checkVec(dst, x)
	return r.loop(opMulTransVec, dst, x, nil, nil)
}

// Solve sets dst = C^-1 x. dst may alias x.
func (r *Runner) Solve(dst, x []float64) error {
	r.f.checkVec(dst, x)
	return r.loop(opSolve, dst, x, nil, nil)
}

// SolveTrans sets dst = C^-T x. dst may alias x.
func (r *Runner) SolveTrans(dst, x []float64) error {
	r.f.checkVec(dst, x)
	return r.loop(opSolveTrans, dst, x, nil, nil)
}

// AddSolveTrans adds C^-T x to dst. dst must not alias x.
func (r *Runner) AddSolveTrans(dst, x []float64) error {
	r.f.checkVec(dst, x)
	return r.loop(opAddSolveTrans, dst, x, nil, nil)
}

// CovMulVec sets dst = C C' x. dst may alias x.
func (r *Runner) CovMulVec(dst, x []float64) error {
	r.f.checkVec(dst, x)
	return r.loop(opCovMulVec, dst, x, nil, nil)
}

// Sample fills z with standard normal draws and sets theta = mu + C z. The
// draws of chunk k come from st.At(iter, k) and those of the global block
// from st.At(iter, Chunking.Len()), so st needs Chunking.Len()+1 streams.
// theta may alias mu.
func (r *Runner) Sample(st *parallel.Streams, iter uint64, z, theta, mu []float64) error {
	r.f.checkVec(z, theta, mu)
	if st.Len() < r.chunk.Len()+1 {
		panic("blockdiag: too few random streams")
	}
	r.streams, r.iter = st, iter
	return r.loop(opSample, z, theta, mu, nil)
}

// Draw sets theta = mu + C z. theta may alias mu or z.
func (r *Runner) Draw(theta, mu, z []float64) error {
	r.f.checkVec(theta, mu, z)
	return r.loop(opDraw, theta, mu, z, nil)
}

// LogDet returns log|det C|, the sum of the chunks' partial sums in chunk
// order followed by the global block's.
func (r *Runner) LogDet() (float64, error) {
	if err := r.loop(opLogDet, nil, nil, nil, nil); err != nil {
		return 0, err
	}
	var s float64
	for _, v := range r.partial {
		s += v
	}
	return s, nil
}

// NatGrad computes the natural gradient of Algorithm 1S from one draw; see
// NatGradRange.
func (r *Runner) NatGrad(dMu, dC, z, gradH []float64) error {
	r.f.checkVec(dMu, z, gradH)
	r.f.checkComp(dC)
	return r.loop(opNatGrad, dMu, dC, z, gradH)
}

// EuclidGrad sets dC = lower(gradH z') on the pattern of C; see
// EuclidGradRange.
func (r *Runner) EuclidGrad(dC, z, gradH []float64) error {
	r.f.checkVec(z, gradH)
	r.f.checkComp(dC)
	return r.loop(opEuclidGrad, dC, z, gradH, nil)
}

// InvFisher applies the inverse Fisher information to a Euclidean gradient;
// see InvFisherRange.
func (r *Runner) InvFisher(dMu, dC, aMu, aC []float64) error {
	r.f.checkVec(dMu, aMu)
	r.f.checkComp(dC, aC)
	return r.loop(opInvFisher, dMu, dC, aMu, aC)
}

// Update sets C <- C + rho dC and mu <- mu + rho dMu.
func (r *Runner) Update(rho float64, mu, dMu, dC []float64) error {
	r.f.checkVec(mu, dMu)
	r.f.checkComp(dC)
	r.rho = rho
	return r.loop(opUpdate, mu, dMu, dC, nil)
}

// Step performs the update of Algorithm 1S; see StepRange. It overwrites
// gradH with C' gradH (C before the step).
func (r *Runner) Step(rho float64, mu, z, gradH []float64) error {
	r.f.checkVec(mu, z, gradH)
	r.rho = rho
	return r.loop(opStep, mu, z, gradH, nil)
}

// Cov stores in the compressed dst the lower triangles of the covariance
// blocks C_k C_k'.
func (r *Runner) Cov(dst []float64) error {
	r.f.checkComp(dst)
	return r.loop(opCov, dst, nil, nil, nil)
}

// Chol sets C to the block-diagonal Cholesky factor of the symmetric
// block-diagonal matrix whose lower triangles are in the compressed s; s may
// alias the factor's storage. A block that is not positive definite gives a
// *NotPositiveDefiniteError; if several fail, the error names the lowest subject, or
// the global block if no subject fails.
func (r *Runner) Chol(s []float64) error {
	r.f.checkComp(s)
	return r.loop(opCholesky, s, nil, nil, nil)
}
