// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/parallel"
)

// stepper runs natural-gradient steps of Algorithm 2S the way a fitting loop
// does, for a synthetic target log p(theta) = -|theta - c|^2/2, in one pass
// over the subject chunks per step. The pass is software-pipelined: a chunk
// first completes the previous step's mean update mu_i += rho x_i, where
// x = T^-T v with the moved T (x_g was set at the end of that step), then
// draws z_i and theta_i, evaluates the gradient, computes v_i and moves T_i
// and T_gi. Every block of T is then read and written once per step. flush
// completes the last mean update. As in Runner, each worker takes one block
// of consecutive chunks.
//
// With store set the direction N is written to its own storage and then
// added, as step rules with momentum or norms need; otherwise T moves in
// place.
type stepper struct {
	f      *Factor
	pool   *parallel.Pool
	chunks parallel.Chunking
	st     *parallel.Streams // one stream per chunk, then one for theta_g
	rho    float64
	store  bool

	mu, c, z, theta, u, v, x []float64
	dir                      []float64 // the direction N, if stored
	part                     []float64 // per-chunk partial sums of T_gi w_i
	pw                       int       // stride of part: whole cache lines apart
	sum, tz                  []float64
	iter                     uint64
	pending, flushing        bool

	blocks        int
	pass, blockFn func(int) error
}

func newStepper(f *Factor, pool *parallel.Pool, chunkSize int, seed uint64, store bool) *stepper {
	n, r, g := f.Dims()
	d := f.Dim()
	c := parallel.NewChunking(n, chunkSize)
	s := &stepper{
		f: f, pool: pool, chunks: c, st: parallel.NewStreams(seed, c.Len()+1), rho: 0.01, store: store,
		mu: make([]float64, d), c: make([]float64, d), z: make([]float64, d),
		theta: make([]float64, d), u: make([]float64, d), v: make([]float64, d), x: make([]float64, d),
		pw: (g+7)/8*8 + 8, sum: make([]float64, g), tz: make([]float64, g),
		blocks: max(1, min(pool.Workers(), c.Len())),
	}
	if store {
		s.dir = make([]float64, len(f.Data()))
	}
	s.part = make([]float64, c.Len()*s.pw)
	for i := range s.c {
		s.c[i] = math.Sin(float64(i))
	}
	s.pass = func(k int) error {
		lo, hi := s.chunks.Bounds(k)
		if s.pending {
			// The previous step's mean update, with the moved T.
			s.f.SolveTransRange(lo, hi, s.x, s.v)
			for j := lo * r; j < hi*r; j++ {
				s.mu[j] += s.rho * s.x[j]
			}
		}
		if s.flushing {
			return nil
		}
		rng := s.st.At(s.iter, k)
		z := s.z[lo*r : hi*r]
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		s.f.DrawRange(lo, hi, s.theta, s.u, s.mu, s.z)
		// The target's local gradient, written into v.
		for j := lo * r; j < hi*r; j++ {
			s.v[j] = s.c[j] - s.theta[j]
		}
		// v = T^-1 (grad log p + T z) = T^-1 grad log p + z.
		part := s.part[k*s.pw : k*s.pw+g]
		clear(part)
		s.f.SolveRange(lo, hi, s.v, s.v, part)
		for j := lo * r; j < hi*r; j++ {
			s.v[j] += s.z[j]
		}
		// T_gi has entered the partial sum: it may move now.
		if s.store {
			s.f.NatGradRange(lo, hi, s.dir, s.z, s.v, s.tz)
			s.f.AddScaledRange(lo, hi, s.rho, s.dir)
		} else {
			s.f.NatGradStepRange(lo, hi, s.rho, s.z, s.v, s.tz)
		}
		return nil
	}
	s.blockFn = func(b int) error {
		lo, hi := blockBounds(b, s.blocks, s.chunks.Len())
		for k := lo; k < hi; k++ {
			if err := s.pass(k); err != nil {
				return err
			}
		}
		return nil
	}
	return s
}

func (s *stepper) step() error {
	n, r, g := s.f.Dims()
	nr := n * r
	rng := s.st.At(s.iter, s.chunks.Len())
	for j := nr; j < len(s.z); j++ {
		s.z[j] = rng.NormFloat64()
	}
	s.f.DrawGlobal(s.theta, s.u, s.mu, s.z)
	s.f.GlobalMul(s.tz, s.z[nr:])
	if err := s.pool.Run(s.blocks, s.blockFn); err != nil {
		return err
	}
	clear(s.sum)
	for k := range s.chunks.Len() {
		for j, p := range s.part[k*s.pw : k*s.pw+g] {
			s.sum[j] += p
		}
	}
	for j := nr; j < len(s.v); j++ {
		s.v[j] = s.c[j] - s.theta[j]
	}
	s.f.SolveGlobal(s.v, s.v, s.sum)
	for j := nr; j < len(s.v); j++ {
		s.v[j] += s.z[j]
	}
	if s.store {
		s.f.NatGradGlobal(s.dir, s.z, s.v, s.tz)
		s.f.AddScaledGlobal(s.rho, s.dir)
	} else {
		s.f.NatGradStepGlobal(s.rho, s.z, s.v, s.tz)
	}
	// x_g = T_g^-T v_g with the moved T_g; the local x_i follow in the next
	// pass.
	s.f.SolveTransGlobal(s.x, s.v)
	for j := nr; j < len(s.mu); j++ {
		s.mu[j] += s.rho * s.x[j]
	}
	s.pending = true
	s.iter++
	return nil
}

// flush completes the mean update of the last step.
func (s *stepper) flush() error {
	if !s.pending {
		return nil
	}
	s.flushing = true
	err := s.pool.Run(s.blocks, s.blockFn)
	s.flushing, s.pending = false, false
	return err
}

// TestStep checks one fused step against the dense Algorithm 2S: grad h =
// grad log p + T z, v = T^-1 grad h, T <- T + rho T Hbar, mu <- mu + rho
// T_new^-T v.
func TestStep(t *testing.T) {
	for _, tc := range []struct {
		s     dims
		store bool
	}{
		{dims{1, 1, 1}, true}, {dims{5, 2, 3}, true}, {dims{17, 3, 4}, true}, {dims{33, 2, 9}, true},
		{dims{1, 1, 1}, false}, {dims{5, 2, 3}, false}, {dims{17, 3, 4}, false}, {dims{33, 2, 9}, false}, {dims{9, 1, 5}, false},
	} {
		s := tc.s
		t.Run(fmt.Sprintf("%v/store=%v", s, tc.store), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(60, seedOf(s)))
			f := randFactor(rng, s)
			d := f.Dim()
			pool := parallel.NewPool(context.Background(), 2)
			defer pool.Close()
			st := newStepper(f, pool, 4, 7, tc.store)
			copy(st.mu, randVec(rng, d))
			mu0 := append([]float64(nil), st.mu...)
			t0, td := denseOf(f), blockDiagOf(f)
			if err := st.step(); err != nil {
				t.Fatal(err)
			}
			if err := st.flush(); err != nil {
				t.Fatal(err)
			}
			z := st.z

			// Dense Algorithm 2S from the z the step drew.
			var x, u, tz, v mat.VecDense
			if err := x.SolveVec(t0.T(), mat.NewVecDense(d, append([]float64(nil), z...))); err != nil {
				t.Fatal(err)
			}
			if err := u.SolveVec(td.T(), mat.NewVecDense(d, append([]float64(nil), z...))); err != nil {
				t.Fatal(err)
			}
			tz.MulVec(t0, mat.NewVecDense(d, z))
			gh := mat.NewVecDense(d, nil)
			for i := range d {
				theta := mu0[i] + x.AtVec(i)
				gh.SetVec(i, st.c[i]-theta+tz.AtVec(i))
			}
			if err := v.SolveVec(t0, gh); err != nil {
				t.Fatal(err)
			}
			var uv, h, n mat.Dense
			uv.Outer(-1, &u, &v)
			h.Mul(td.T(), restrict(s, &uv))
			n.Mul(t0, lowerOf(&h, true))
			var t1 mat.Dense
			t1.Scale(st.rho, &n)
			t1.Add(&t1, t0)
			checkClose(t, "T after the step", f.Data(), packDense(s, &t1), tol)
			var m mat.VecDense
			if err := m.SolveVec(t1.T(), &v); err != nil {
				t.Fatal(err)
			}
			want := make([]float64, d)
			for i := range want {
				want[i] = mu0[i] + st.rho*m.AtVec(i)
			}
			checkClose(t, "mu after the step", st.mu, want, tol)
		})
	}
}

// TestStepPipelined: the one-pass pipelined loop gives the iterates of the
// plain sequence of whole-vector Runner operations bit for bit.
func TestStepPipelined(t *testing.T) {
	s := dims{23, 2, 3}
	for _, store := range []bool{false, true} {
		for _, w := range []int{1, 2, 3} {
			rng := rand.New(rand.NewPCG(61, 0))
			f := randFactor(rng, s)
			g := New(s.n, s.r, s.g)
			g.CopyFrom(f)
			d := f.Dim()
			pool := parallel.NewPool(context.Background(), w)
			st := newStepper(f, pool, 4, 9, store)
			run := NewRunner(pool, st.chunks)
			mu, z := make([]float64, d), make([]float64, d)
			theta, u, v, x := make([]float64, d), make([]float64, d), make([]float64, d), make([]float64, d)
			dir := make([]float64, len(g.Data()))
			const steps = 4
			for it := range uint64(steps) {
				if err := st.step(); err != nil {
					t.Fatal(err)
				}
				// The same draws, then the operations one after the other.
				for k := range st.chunks.Len() {
					lo, hi := st.chunks.Bounds(k)
					rng := st.st.At(it, k)
					for j := lo * s.r; j < hi*s.r; j++ {
						z[j] = rng.NormFloat64()
					}
				}
				rng := st.st.At(it, st.chunks.Len())
				for j := s.n * s.r; j < d; j++ {
					z[j] = rng.NormFloat64()
				}
				must(t, run.Draw(g, theta, u, mu, z))
				for j := range v {
					v[j] = st.c[j] - theta[j]
				}
				must(t, run.Solve(g, v, v))
				for j := range v {
					v[j] += z[j]
				}
				if store {
					must(t, run.NatGrad(g, dir, z, v))
					must(t, run.AddScaled(g, st.rho, dir))
				} else {
					must(t, run.NatGradStep(g, st.rho, z, v))
				}
				must(t, run.SolveTrans(g, x, v))
				for j := range mu {
					mu[j] += st.rho * x[j]
				}
			}
			must(t, st.flush())
			pool.Close()
			for _, c := range []struct {
				what      string
				got, want []float64
			}{{"T", f.Data(), g.Data()}, {"mu", st.mu, mu}} {
				for i := range c.got {
					if math.Float64bits(c.got[i]) != math.Float64bits(c.want[i]) {
						t.Fatalf("store=%v workers=%d: %s[%d] = %v, want %v", store, w, c.what, i, c.got[i], c.want[i])
					}
				}
			}
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
