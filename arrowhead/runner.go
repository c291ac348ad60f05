// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"github.com/sparsevi/sparsevi/parallel"
)

// Runner runs the range kernels of a Factor over all subjects, chunk by
// chunk on a parallel.Pool, and reduces the partial sums of the chunks in
// chunk order. Its results are therefore bit-identical for any number of
// workers: they depend on the Chunking only.
//
// The chunks are handed to the workers as contiguous blocks, one block of
// consecutive chunks per worker, so that a worker meets the same part of
// the factor in every call and finds it in its own caches. On the 2-core
// machine of the benchmarks this is markedly faster than interleaving the
// chunks between workers; the price is that a worker slowed down by other
// processes is not relieved by the others.
//
// A Runner keeps the partial sums and its loop bodies between calls, so
// once it has run an operation for a given Factor shape that operation
// allocates nothing. A Runner must not be used by several goroutines at
// once. Every method returns the error of the pool (a cancelled context) or
// of the kernel.
type Runner struct {
	pool   *parallel.Pool
	chunks parallel.Chunking

	part []float64 // per-chunk partial sums, chunk k at part[k*wid:]
	wid  int       // stride of part, whole cache lines apart
	tmp  []float64 // total of the partial sums, or other global scratch

	// Blocked schedule: blocks of consecutive chunks, one per worker.
	blocks  int
	fn      func(int) error
	blockFn func(int) error

	// Arguments of the loop in progress.
	f              *Factor
	v1, v2, v3, v4 []float64
	dst            []float64
	alpha          float64

	// Loop bodies, built once so that Run allocates nothing.
	drawFn, transFn  func(int) error
	solveFn, mulFn   func(int) error
	natFn, euclidFn  func(int) error
	stepFn           func(int) error
	fisherFn, covFn  func(int) error
	cholFn, logdetFn func(int) error
	addFn            func(int) error
}

// NewRunner returns a Runner over the chunks of c on pool p.
func NewRunner(p *parallel.Pool, c parallel.Chunking) *Runner {
	r := &Runner{pool: p, chunks: c}
	r.blocks = max(1, min(p.Workers(), c.Len()))
	r.blockFn = func(b int) error {
		ctx := r.pool.Context()
		lo, hi := blockBounds(b, r.blocks, r.chunks.Len())
		for k := lo; k < hi; k++ {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := r.fn(k); err != nil {
				return err
			}
		}
		return nil
	}
	r.drawFn = func(k int) error {
		lo, hi := r.chunks.Bounds(k)
		r.f.DrawRange(lo, hi, r.v1, r.v2, r.v3, r.v4)
		return nil
	}
	r.transFn = func(k int) error {
		lo, hi := r.chunks.Bounds(k)
		r.f.SolveTransRange(lo, hi, r.v1, r.v2)
		return nil
	}
	r.solveFn = func(k int) error {
		lo, hi := r.chunks.Bounds(k)
		s := r.partial(k)
		clear(s)
		r.f.SolveRange(lo, hi, r.v1, r.v2, s)
		return nil
	}
	r.mulFn = func(k int) error {
		lo, hi := r.chunks.Bounds(k)
		s := r.partial(k)
		clear(s)
		r.f.MulVecRange(lo, hi, r.v1, r.v2, s)
		return nil
	}
	r.natFn = func(k int) error {
		lo, hi := r.chunks.Bounds(k)
		r.f.NatGradRange(lo, hi, r.dst, r.v1, r.v2, r.tmp)
		return nil
	}
	r.stepFn = func(k int) error {
		lo, hi := r.chunks.Bounds(k)
		r.f.NatGradStepRange(lo, hi, r.alpha, r.v1, r.v2, r.tmp)
		return nil
	}
	r.euclidFn = func(k int) error {
		lo, hi := r.chunks.Bounds(k)
		r.f.EuclidGradRange(lo, hi, r.dst, r.v1, r.v2, r.v3, r.v4)
		return nil
	}
	r.fisherFn = func(k int) error {
		lo, hi := r.chunks.Bounds(k)
		r.f.InvFisherRange(lo, hi, r.dst, r.v1)
		return nil
	}
	r.covFn = func(k int) error {
		lo, hi := r.chunks.Bounds(k)
		r.f.CovRange(lo, hi, r.v1, r.v2)
		return nil
	}
	r.cholFn = func(k int) error {
		lo, hi := r.chunks.Bounds(k)
		s := r.partial(k)
		clear(s)
		return r.f.CholRange(lo, hi, r.v1, s)
	}
	r.logdetFn = func(k int) error {
		lo, hi := r.chunks.Bounds(k)
		r.partial(k)[0] = r.f.LogDetRange(lo, hi)
		return nil
	}
	r.addFn = func(k int) error {
		lo, hi := r.chunks.Bounds(k)
		r.f.AddScaledRange(lo, hi, r.alpha, r.dst)
		return nil
	}
	return r
}

// Chunking returns the chunking of the subjects used by r.
func (r *Runner) Chunking() parallel.Chunking { return r.chunks }

// Pool returns the pool r runs on.
func (r *Runner) Pool() *parallel.Pool { return r.pool }

// begin records the arguments of a loop and makes room for partial sums of
// the given width per chunk and global scratch of length tmp.
func (r *Runner) begin(f *Factor, width, tmp int) {
	if r.chunks.N != f.n {
		panic(badChunks)
	}
	r.f = f
	if width > 0 {
		// Keep every chunk's partial sum on cache lines of its own, so
		// that workers on neighbouring chunks do not share a line.
		width = (width+7)/8*8 + 8
	}
	r.wid = width
	if need := r.chunks.Len() * width; cap(r.part) < need {
		r.part = make([]float64, need)
	}
	if cap(r.tmp) < tmp {
		r.tmp = make([]float64, tmp)
	}
	r.tmp = r.tmp[:tmp]
}

// end drops the references to the caller's slices.
func (r *Runner) end() {
	r.f = nil
	r.v1, r.v2, r.v3, r.v4, r.dst = nil, nil, nil, nil, nil
}

// partial returns the partial sum of chunk k, of the length of r.tmp.
func (r *Runner) partial(k int) []float64 {
	return r.part[k*r.wid : k*r.wid+len(r.tmp)]
}

// reduce sums the partial sums of the chunks in chunk order into r.tmp.
func (r *Runner) reduce() {
	clear(r.tmp)
	for k := range r.chunks.Len() {
		for j, v := range r.partial(k) {
			r.tmp[j] += v
		}
	}
}

// run calls fn for every chunk, block by block. A failing chunk ends its
// block; the pool reports the error of the lowest block, which holds the
// lowest failing chunk.
func (r *Runner) run(fn func(int) error) error {
	if r.chunks.Len() == 0 {
		return r.pool.Context().Err()
	}
	r.fn = fn
	err := r.pool.Run(r.blocks, r.blockFn)
	r.fn = nil
	return err
}

// blockBounds returns the chunks [lo, hi) of block b of nb blocks over
// chunks chunks.
func blockBounds(b, nb, chunks int) (lo, hi int) {
	return b * chunks / nb, (b + 1) * chunks / nb
}

// Draw sets theta = mu + T^-T z and u = T_d^-T z (u_i = T_i^-T z_i,
// u_g = T_g^-T z_g) with DrawGlobal and DrawRange. theta and u must not
// share storage with each other or with mu or z.
func (r *Runner) Draw(f *Factor, theta, u, mu, z []float64) error {
	r.begin(f, 0, 0)
	defer r.end()
	f.DrawGlobal(theta, u, mu, z)
	r.v1, r.v2, r.v3, r.v4 = theta, u, mu, z
	return r.run(r.drawFn)
}

// SolveTrans sets x = T^-T w. x and w may be the same slice.
func (r *Runner) SolveTrans(f *Factor, x, w []float64) error {
	r.begin(f, 0, 0)
	defer r.end()
	f.SolveTransGlobal(x, w)
	r.v1, r.v2 = x, w
	return r.run(r.transFn)
}

// Solve sets v = T^-1 g. v and g may be the same slice.
func (r *Runner) Solve(f *Factor, v, g []float64) error {
	r.begin(f, f.g, f.g)
	defer r.end()
	r.v1, r.v2 = v, g
	if err := r.run(r.solveFn); err != nil {
		return err
	}
	r.reduce()
	f.SolveGlobal(v, g, r.tmp)
	return nil
}

// Mul sets y = T x. y and x may be the same slice.
func (r *Runner) Mul(f *Factor, y, x []float64) error {
	r.begin(f, f.g, f.g)
	defer r.end()
	r.v1, r.v2 = y, x
	if err := r.run(r.mulFn); err != nil {
		return err
	}
	r.reduce()
	f.MulVecGlobal(y, x, r.tmp)
	return nil
}

// PrecSolve sets x = (T T')^-1 b = T^-T T^-1 b, the product of the
// covariance with b; it is the mean part of the inverse Fisher map. x and
// b may be the same slice.
func (r *Runner) PrecSolve(f *Factor, x, b []float64) error {
	if err := r.Solve(f, x, b); err != nil {
		return err
	}
	return r.SolveTrans(f, x, x)
}

// NatGrad writes into dst (compressed storage) the factor part of the
// natural-gradient direction of Algorithm 2S from the draw z and
// v = T^-1 grad h, with NatGradGlobal and NatGradRange. The mean part is
// T^-T v (SolveTrans).
func (r *Runner) NatGrad(f *Factor, dst, z, v []float64) error {
	r.begin(f, 0, f.g)
	defer r.end()
	f.NatGradGlobal(dst, z, v, r.tmp)
	r.dst, r.v1, r.v2 = dst, z, v
	return r.run(r.natFn)
}

// NatGradStep moves T along the natural-gradient direction of Algorithm 2S
// from the draw z and v = T^-1 grad h without storing the direction,
// T <- T + rho*N, with NatGradStepGlobal and NatGradStepRange.
func (r *Runner) NatGradStep(f *Factor, rho float64, z, v []float64) error {
	r.begin(f, 0, f.g)
	defer r.end()
	f.NatGradStepGlobal(rho, z, v, r.tmp)
	r.v1, r.v2, r.alpha = z, v, rho
	return r.run(r.stepFn)
}

// EuclidGrad writes into dst (compressed storage) the Euclidean gradient of
// one draw with respect to the entries of T, with EuclidGradGlobal and
// EuclidGradRange.
func (r *Runner) EuclidGrad(f *Factor, dst, theta, mu, u, v []float64) error {
	r.begin(f, 0, 0)
	defer r.end()
	f.EuclidGradGlobal(dst, u, v)
	r.dst, r.v1, r.v2, r.v3, r.v4 = dst, theta, mu, u, v
	return r.run(r.euclidFn)
}

// InvFisher writes into dst the factor part of F^-1 a for a Euclidean
// gradient a on the pattern of T, both in compressed storage, with
// InvFisherGlobal and InvFisherRange. dst must not share storage with a.
func (r *Runner) InvFisher(f *Factor, dst, a []float64) error {
	r.begin(f, 0, 0)
	defer r.end()
	f.InvFisherGlobal(dst, a)
	r.dst, r.v1 = dst, a
	return r.run(r.fisherFn)
}

// Cov writes the marginal covariances of N(mu, (T T')^-1): Cov(theta_g)
// into global (g×g), and for every subject Cov(theta_i) into local (r×r at
// local[i*r*r:]) and Cov(theta_i, theta_g) into cross (r×g at
// cross[i*r*g:]); see CovGlobal and CovRange.
func (r *Runner) Cov(f *Factor, global, local, cross []float64) error {
	r.begin(f, 0, 0)
	defer r.end()
	f.CovGlobal(global)
	r.v1, r.v2 = local, cross
	return r.run(r.covFn)
}

// Chol overwrites f with the Cholesky factor of the symmetric positive
// definite arrowhead matrix S given in compressed storage s, which may be
// f.Data(). If a block is not positive definite it returns a
// *NotPositiveDefiniteError naming the lowest failing subject, or -1 for
// the global block, and f is unspecified.
func (r *Runner) Chol(f *Factor, s []float64) error {
	w := f.g * (f.g + 1) / 2
	r.begin(f, w, w)
	defer r.end()
	r.v1 = s
	if err := r.run(r.cholFn); err != nil {
		return err
	}
	r.reduce()
	return f.CholGlobal(s, r.tmp)
}

// LogDet returns log|det T|, summed over chunks in chunk order.
func (r *Runner) LogDet(f *Factor) (float64, error) {
	r.begin(f, 1, 1)
	defer r.end()
	if err := r.run(r.logdetFn); err != nil {
		return 0, err
	}
	r.reduce()
	return r.tmp[0] + f.LogDetGlobal(), nil
}

// AddScaled sets T = T + alpha*N for N in compressed storage n.
func (r *Runner) AddScaled(f *Factor, alpha float64, n []float64) error {
	r.begin(f, 0, 0)
	defer r.end()
	r.dst, r.alpha = n, alpha
	if err := r.run(r.addFn); err != nil {
		return err
	}
	f.AddScaledGlobal(alpha, n)
	return nil
}
