package arrowhead

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/parallel"
)

// stepper runs whole natural-gradient steps of Algorithm 2S the way a
// fitting loop does: the range kernels fused into two passes over the
// subject chunks, with a synthetic target log p(theta) = -|theta - c|^2/2.
type stepper struct {
	f      *Factor
	pool   *parallel.Pool
	chunks parallel.Chunking
	st     *parallel.Streams // one stream per chunk, then one for theta_g
	rho    float64

	mu, c, z, theta, u, gp, v []float64
	dir                       []float64 // the direction N, compressed
	part                      []float64 // per-chunk partial sums of T_gi w_i
	pw                        int       // stride of part: whole cache lines apart
	sum, tz                   []float64
	iter                      uint64

	pass1, pass2 func(int) error
}

func newStepper(f *Factor, pool *parallel.Pool, chunkSize int, seed uint64) *stepper {
	n, _, g := f.Dims()
	d := f.Order()
	c := parallel.NewChunking(n, chunkSize)
	s := &stepper{
		f: f, pool: pool, chunks: c, st: parallel.NewStreams(seed, c.Len()+1), rho: 0.01,
		mu: make([]float64, d), c: make([]float64, d), z: make([]float64, d),
		theta: make([]float64, d), u: make([]float64, d), gp: make([]float64, d),
		v: make([]float64, d), dir: make([]float64, len(f.Data())),
		pw: (g+7)/8*8 + 8, sum: make([]float64, g), tz: make([]float64, g),
	}
	s.part = make([]float64, c.Len()*s.pw)
	for i := range s.c {
		s.c[i] = math.Sin(float64(i))
	}
	_, r, _ := f.Dims()
	s.pass1 = func(k int) error {
		lo, hi := s.chunks.Bounds(k)
		rng := s.st.At(s.iter, k)
		z := s.z[lo*r : hi*r]
		for j := range z {
			z[j] = rng.NormFloat64()
		}
		s.f.DrawRange(lo, hi, s.theta, s.u, s.mu, s.z)
		// The target's local gradient.
		for j := lo * r; j < hi*r; j++ {
			s.gp[j] = s.c[j] - s.theta[j]
		}
		// v = T^-1 (grad log p + T z) = T^-1 grad log p + z.
		part := s.part[k*s.pw : k*s.pw+g]
		clear(part)
		s.f.SolveRange(lo, hi, s.v, s.gp, part)
		for j := lo * r; j < hi*r; j++ {
			s.v[j] += s.z[j]
		}
		return nil
	}
	s.pass2 = func(k int) error {
		lo, hi := s.chunks.Bounds(k)
		s.f.NatGradRange(lo, hi, s.dir, s.z, s.v, s.tz)
		s.f.AddScaledRange(lo, hi, s.rho, s.dir)
		// mu <- mu + rho T_new^-T v; theta is free again and holds T_new^-T v.
		s.f.SolveTransRange(lo, hi, s.theta, s.v)
		for j := lo * r; j < hi*r; j++ {
			s.mu[j] += s.rho * s.theta[j]
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
	if err := s.pool.Run(s.chunks.Len(), s.pass1); err != nil {
		return err
	}
	clear(s.sum)
	for k := range s.chunks.Len() {
		for j, p := range s.part[k*s.pw : k*s.pw+g] {
			s.sum[j] += p
		}
	}
	for j := nr; j < len(s.gp); j++ {
		s.gp[j] = s.c[j] - s.theta[j]
	}
	s.f.SolveGlobal(s.v, s.gp, s.sum)
	for j := nr; j < len(s.v); j++ {
		s.v[j] += s.z[j]
	}
	s.f.NatGradGlobal(s.dir, s.tz, s.z, s.v) // tz = T_g z_g before T_g moves
	s.f.AddScaledGlobal(s.rho, s.dir)
	s.f.SolveTransGlobal(s.theta, s.v)
	for j := nr; j < len(s.mu); j++ {
		s.mu[j] += s.rho * s.theta[j]
	}
	if err := s.pool.Run(s.chunks.Len(), s.pass2); err != nil {
		return err
	}
	s.iter++
	return nil
}

// TestStep checks one fused step against the dense Algorithm 2S: grad h =
// grad log p + T z, v = T^-1 grad h, T <- T + rho T Hbar, mu <- mu + rho
// T_new^-T v.
func TestStep(t *testing.T) {
	for _, s := range []dims{{1, 1, 1}, {5, 2, 3}, {17, 3, 4}, {33, 2, 9}} {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(60, seedOf(s)))
			f := randFactor(rng, s)
			d := f.Order()
			pool := parallel.NewPool(context.Background(), 2)
			defer pool.Close()
			st := newStepper(f, pool, 4, 7)
			copy(st.mu, randVec(rng, d))
			mu0 := append([]float64(nil), st.mu...)
			t0, td := denseOf(f), blockDiagOf(f)
			if err := st.step(); err != nil {
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
