// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/mat"
)

const tol = 1e-10

// fixture is a random instance: a factor, its dense copy built from the
// layout rule, and random vectors.
type fixture struct {
	s              size
	f              *Factor
	c              *mat.Dense // dense C
	d              int
	x, mu, z, g    []float64
	run            whole
	origData, aRaw []float64
}

func newFixture(t testing.TB, s size, seed uint64) *fixture {
	rng := newRand(seed)
	f := randFactor(rng, s, false)
	d := s.n*s.r + s.g
	fx := &fixture{
		s: s, f: f, c: denseFromComp(s, f.Data()), d: d,
		x: randVec(rng, d), mu: randVec(rng, d), z: randVec(rng, d), g: randVec(rng, d),
		run:      whole{f},
		origData: append([]float64(nil), f.Data()...),
		aRaw:     randVec(rng, Len(s.n, s.r, s.g)),
	}
	return fx
}

// covDense returns C C'.
func (fx *fixture) covDense() *mat.Dense {
	var s mat.Dense
	s.Mul(fx.c, fx.c.T())
	return &s
}

// natGradDense is the paper's Algorithm 1b computed naively on dense d×d
// matrices and then restricted to the pattern (section 6.1 of the earlier
// version): Gbar = lower(A) on the pattern, H = C' Gbar, N = C halfdiag(H).
func (fx *fixture) natGradDense(a *mat.Dense) *mat.Dense {
	gbar := mat.DenseCopyOf(a)
	maskPattern(fx.s, gbar)
	return natGradVar(fx.c, gbar, fx.d)
}

func outer(u, v []float64) *mat.Dense {
	m := mat.NewDense(len(u), len(v), nil)
	m.Outer(1, mat.NewVecDense(len(u), u), mat.NewVecDense(len(v), v))
	return m
}

func TestOperationsAgainstDense(t *testing.T) {
	type result struct{ got, want []float64 }
	ops := []struct {
		name string
		fn   func(t *testing.T, fx *fixture) []result
	}{
		{"MulVec", func(t *testing.T, fx *fixture) []result {
			dst := make([]float64, fx.d)
			check(t, fx.run.MulVec(dst, fx.x))
			return []result{{dst, mulDense(fx.c, fx.x)}}
		}},
		{"MulTransVec", func(t *testing.T, fx *fixture) []result {
			dst := make([]float64, fx.d)
			check(t, fx.run.MulTransVec(dst, fx.x))
			return []result{{dst, mulDense(fx.c.T(), fx.x)}}
		}},
		{"Solve", func(t *testing.T, fx *fixture) []result {
			dst := make([]float64, fx.d)
			check(t, fx.run.Solve(dst, fx.x))
			var y mat.VecDense
			check(t, y.SolveVec(fx.c, mat.NewVecDense(fx.d, fx.x)))
			return []result{{dst, vecOf(&y)}}
		}},
		{"SolveTrans", func(t *testing.T, fx *fixture) []result {
			dst := make([]float64, fx.d)
			check(t, fx.run.SolveTrans(dst, fx.x))
			var y mat.VecDense
			check(t, y.SolveVec(fx.c.T(), mat.NewVecDense(fx.d, fx.x)))
			return []result{{dst, vecOf(&y)}}
		}},
		{"CovMulVec", func(t *testing.T, fx *fixture) []result {
			dst := make([]float64, fx.d)
			check(t, fx.run.CovMulVec(dst, fx.x))
			return []result{{dst, mulDense(fx.covDense(), fx.x)}}
		}},
		{"InPlace", func(t *testing.T, fx *fixture) []result {
			// Every vector kernel documented as safe in place.
			var out []result
			for _, k := range []struct {
				run  func(dst, x []float64) error
				want []float64
			}{
				{fx.run.MulVec, mulDense(fx.c, fx.x)},
				{fx.run.MulTransVec, mulDense(fx.c.T(), fx.x)},
				{fx.run.CovMulVec, mulDense(fx.covDense(), fx.x)},
			} {
				v := append([]float64(nil), fx.x...)
				check(t, k.run(v, v))
				out = append(out, result{v, k.want})
			}
			for _, solve := range []func(dst, x []float64) error{fx.run.Solve, fx.run.SolveTrans} {
				// Solving in place and multiplying back recovers x.
				v := append([]float64(nil), fx.x...)
				check(t, solve(v, v))
				a := mat.Matrix(fx.c)
				if len(out) == 4 {
					a = fx.c.T()
				}
				out = append(out, result{mulDense(a, v), fx.x})
			}
			// Draw with theta aliasing mu, then z.
			want := mulDense(fx.c, fx.z)
			for i := range want {
				want[i] += fx.mu[i]
			}
			th := append([]float64(nil), fx.mu...)
			check(t, fx.run.Draw(th, th, fx.z))
			th2 := append([]float64(nil), fx.z...)
			check(t, fx.run.Draw(th2, fx.mu, th2))
			return append(out, result{th, want}, result{th2, want})
		}},
		{"Draw", func(t *testing.T, fx *fixture) []result {
			theta := make([]float64, fx.d)
			check(t, fx.run.Draw(theta, fx.mu, fx.z))
			want := mulDense(fx.c, fx.z)
			for i := range want {
				want[i] += fx.mu[i]
			}
			return []result{{theta, want}}
		}},
		{"LogDet", func(t *testing.T, fx *fixture) []result {
			got, err := fx.run.LogDet()
			check(t, err)
			want, sign := mat.LogDet(fx.c)
			if sign != 1 {
				t.Errorf("determinant sign %v for positive diagonal", sign)
			}
			return []result{{[]float64{got}, []float64{want}}}
		}},
		{"NatGrad", func(t *testing.T, fx *fixture) []result {
			dMu := make([]float64, fx.d)
			dC := make([]float64, len(fx.f.Data()))
			check(t, fx.run.NatGrad(dMu, dC, fx.z, fx.g))
			nd := fx.natGradDense(outer(fx.g, fx.z))
			return []result{
				{dMu, mulDense(fx.covDense(), fx.g)},
				{dC, compFromDense(fx.s, nd)},
				{offPattern(fx.s, nd), make([]float64, fx.d*fx.d)}, // C Hbar keeps the pattern
			}
		}},
		{"NatGradAliasMu", func(t *testing.T, fx *fixture) []result {
			v := append([]float64(nil), fx.g...)
			dC := make([]float64, len(fx.f.Data()))
			check(t, fx.run.NatGrad(v, dC, fx.z, v))
			nd := fx.natGradDense(outer(fx.g, fx.z))
			return []result{{v, mulDense(fx.covDense(), fx.g)}, {dC, compFromDense(fx.s, nd)}}
		}},
		{"EuclidGrad", func(t *testing.T, fx *fixture) []result {
			dC := make([]float64, len(fx.f.Data()))
			check(t, fx.run.EuclidGrad(dC, fx.z, fx.g))
			return []result{{dC, compFromDense(fx.s, outer(fx.g, fx.z))}}
		}},
		{"InvFisher", func(t *testing.T, fx *fixture) []result {
			dMu := make([]float64, fx.d)
			dC := make([]float64, len(fx.f.Data()))
			check(t, fx.run.InvFisher(dMu, dC, fx.x, fx.aRaw))
			nd := fx.natGradDense(denseFromComp(fx.s, fx.aRaw))
			// In place too.
			mu2 := append([]float64(nil), fx.x...)
			a2 := append([]float64(nil), fx.aRaw...)
			check(t, fx.run.InvFisher(mu2, a2, mu2, a2))
			return []result{
				{dMu, mulDense(fx.covDense(), fx.x)},
				{dC, compFromDense(fx.s, nd)},
				{mu2, dMu}, {a2, dC},
			}
		}},
		{"Cov", func(t *testing.T, fx *fixture) []result {
			dst := make([]float64, len(fx.f.Data()))
			check(t, fx.run.Cov(dst))
			sd := fx.covDense()
			out := []result{{dst, compFromDense(fx.s, sd)}}
			var blk mat.SymDense
			for i := range fx.s.n {
				if fx.s.r == 0 {
					break
				}
				blk.Reset()
				fx.f.LocalCovTo(i, &blk)
				got := mat.DenseCopyOf(&blk)
				want := sd.Slice(i*fx.s.r, (i+1)*fx.s.r, i*fx.s.r, (i+1)*fx.s.r)
				out = append(out, result{got.RawMatrix().Data, mat.DenseCopyOf(want).RawMatrix().Data})
			}
			if fx.s.g > 0 {
				blk.Reset()
				fx.f.GlobalCovTo(&blk)
				nr := fx.s.n * fx.s.r
				out = append(out, result{mat.DenseCopyOf(&blk).RawMatrix().Data, mat.DenseCopyOf(sd.Slice(nr, fx.d, nr, fx.d)).RawMatrix().Data})
			}
			// Cross covariances between blocks are zero.
			out = append(out, result{offPatternSym(fx.s, sd), make([]float64, fx.d*fx.d)})
			return out
		}},
		{"Export", func(t *testing.T, fx *fixture) []result {
			tri := fx.f.ToTriDense()
			csr := fx.f.ToCSR()
			if csr.NNZ() != Len(fx.s.n, fx.s.r, fx.s.g) {
				t.Errorf("CSR has %d entries, want %d", csr.NNZ(), Len(fx.s.n, fx.s.r, fx.s.g))
			}
			if r, c := csr.Dims(); r != fx.d || c != fx.d {
				t.Errorf("CSR is %d×%d, want %d×%d", r, c, fx.d, fx.d)
			}
			want := fx.c.RawMatrix().Data
			at := make([]float64, fx.d*fx.d)
			for i := range fx.d {
				for j := range fx.d {
					at[i*fx.d+j] = fx.f.At(i, j)
				}
			}
			return []result{
				{mat.DenseCopyOf(tri).RawMatrix().Data, want},
				{mat.DenseCopyOf(csr).RawMatrix().Data, want},
				{at, want},
			}
		}},
	}
	for _, s := range sizes() {
		for _, op := range ops {
			t.Run(s.String()+"/"+op.name, func(t *testing.T) {
				fx := newFixture(t, s, uint64(100*s.n+10*s.r+s.g))
				for k, res := range op.fn(t, fx) {
					if e := relErr(res.got, res.want); !(e <= tol) {
						t.Errorf("result %d: relative error %.3g\ngot  %v\nwant %v", k, e, short(res.got), short(res.want))
					}
				}
			})
		}
	}
}

func check(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func short(v []float64) []float64 { return v[:min(len(v), 12)] }

// offPattern returns the entries of m off the pattern of C, zeros elsewhere.
func offPattern(s size, m mat.Matrix) []float64 {
	r, c := m.Dims()
	out := make([]float64, r*c)
	for i := range r {
		for j := range c {
			if !onPattern(s, i, j) {
				out[i*c+j] = m.At(i, j)
			}
		}
	}
	return out
}

// offPatternSym returns the entries of m outside the diagonal blocks.
func offPatternSym(s size, m mat.Matrix) []float64 {
	r, c := m.Dims()
	out := make([]float64, r*c)
	for i := range r {
		for j := range c {
			if !onPattern(s, i, j) && !onPattern(s, j, i) {
				out[i*c+j] = m.At(i, j)
			}
		}
	}
	return out
}

// TestRangeKernelsTouchOnlyTheirBlocks runs each range kernel on a middle
// range of subjects and checks that entries outside it are unchanged and
// entries inside equal those of the whole-vector computation.
func TestRangeKernelsTouchOnlyTheirBlocks(t *testing.T) {
	s := size{17, 3, 4}
	fx := newFixture(t, s, 5)
	f := fx.f
	lo, hi := 5, 11
	nt := Len(s.n, s.r, s.g)
	sentinel := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = -1234.5 + float64(i)
		}
		return v
	}
	type kern struct {
		name  string
		vec   bool // the output is a vector (else compressed)
		rng   func(out []float64)
		whole func(out []float64)
	}
	ks := []kern{
		{"MulVec", true, func(o []float64) { f.MulVecRange(lo, hi, o, fx.x) }, func(o []float64) { check(t, fx.run.MulVec(o, fx.x)) }},
		{"MulTransVec", true, func(o []float64) { f.MulTransVecRange(lo, hi, o, fx.x) }, func(o []float64) { check(t, fx.run.MulTransVec(o, fx.x)) }},
		{"Solve", true, func(o []float64) { f.SolveRange(lo, hi, o, fx.x) }, func(o []float64) { check(t, fx.run.Solve(o, fx.x)) }},
		{"SolveTrans", true, func(o []float64) { f.SolveTransRange(lo, hi, o, fx.x) }, func(o []float64) { check(t, fx.run.SolveTrans(o, fx.x)) }},
		{"CovMulVec", true, func(o []float64) { f.CovMulVecRange(lo, hi, o, fx.x) }, func(o []float64) { check(t, fx.run.CovMulVec(o, fx.x)) }},
		{"Draw", true, func(o []float64) { f.DrawRange(lo, hi, o, fx.mu, fx.z) }, func(o []float64) { check(t, fx.run.Draw(o, fx.mu, fx.z)) }},
		{"NatGradMu", true, func(o []float64) { f.NatGradRange(lo, hi, o, make([]float64, nt), fx.z, fx.g) }, func(o []float64) { check(t, fx.run.NatGrad(o, make([]float64, nt), fx.z, fx.g)) }},
		{"NatGradC", false, func(o []float64) { f.NatGradRange(lo, hi, make([]float64, fx.d), o, fx.z, fx.g) }, func(o []float64) { check(t, fx.run.NatGrad(make([]float64, fx.d), o, fx.z, fx.g)) }},
		{"EuclidGrad", false, func(o []float64) { f.EuclidGradRange(lo, hi, o, fx.z, fx.g) }, func(o []float64) { check(t, fx.run.EuclidGrad(o, fx.z, fx.g)) }},
		{"InvFisherC", false, func(o []float64) { f.InvFisherRange(lo, hi, make([]float64, fx.d), o, fx.x, fx.aRaw) }, func(o []float64) { check(t, fx.run.InvFisher(make([]float64, fx.d), o, fx.x, fx.aRaw)) }},
		{"Cov", false, func(o []float64) { f.CovRange(lo, hi, o) }, func(o []float64) { check(t, fx.run.Cov(o)) }},
	}
	for _, k := range ks {
		n, per := nt, s.r*(s.r+1)/2
		if k.vec {
			n, per = fx.d, s.r
		}
		got, want := sentinel(n), sentinel(n)
		k.rng(got)
		k.whole(want)
		for i := range n {
			inside := i >= lo*per && i < hi*per
			if inside && got[i] != want[i] {
				t.Errorf("%s: entry %d = %v, whole-vector kernel gives %v", k.name, i, got[i], want[i])
			}
			if !inside && got[i] != sentinel(n)[i] {
				t.Errorf("%s: entry %d outside [%d,%d) changed to %v", k.name, i, lo, hi, got[i])
			}
		}
	}
	if !sameBits(f.Data(), fx.origData) {
		t.Error("read-only kernels changed the factor")
	}
}

func TestSetters(t *testing.T) {
	for _, s := range sizes() {
		f := New(s.n, s.r, s.g)
		d := s.n*s.r + s.g
		if n, r, g := f.Shape(); n != s.n || r != s.r || g != s.g || f.Dim() != d {
			t.Fatalf("%v: Dims = %d %d %d, Dim = %d", s, n, r, g, f.Dim())
		}
		f.SetBlockScales(2, 0.25)
		for i := range d {
			for j := range d {
				want := 0.0
				if i == j && i < s.n*s.r {
					want = 2
				} else if i == j {
					want = 0.25
				}
				if f.At(i, j) != want {
					t.Fatalf("%v: SetBlockScales entry (%d,%d) = %v, want %v", s, i, j, f.At(i, j), want)
				}
			}
		}
		f.SetIdentity(3)
		if ld, want := f.LogDetRange(0, s.n)+f.LogDetGlobal(), float64(d)*math.Log(3); math.Abs(ld-want) > 1e-12 {
			t.Errorf("%v: log|3 I| = %v, want %v", s, ld, want)
		}
		g := randFactor(newRand(1), s, true)
		f.CopyFrom(g)
		if !sameBits(f.Data(), g.Data()) {
			t.Errorf("%v: CopyFrom did not copy", s)
		}
		// Data, Subject and Global alias the storage.
		if s.n > 0 && s.r > 0 {
			f.Local(s.n - 1)[0] = 42
			if f.At((s.n-1)*s.r, (s.n-1)*s.r) != 42 {
				t.Errorf("%v: Subject does not alias the factor", s)
			}
		}
		if s.g > 0 {
			f.Global()[len(f.Global())-1] = 7
			if f.At(d-1, d-1) != 7 {
				t.Errorf("%v: Global does not alias the factor", s)
			}
		}
		w := Wrap(s.n, s.r, s.g, f.Data())
		if &w.Data()[0] != &f.Data()[0] {
			t.Errorf("%v: Wrap copied its data", s)
		}
	}
}

// TestLogDet checks log|det C| against the sum of the logarithms of the
// absolute diagonal entries: with negative diagonals (the sign of a column
// of C does not change q), and over many blocks whose diagonals span the
// floating-point range, near 1, zero, infinite or NaN.
func TestLogDet(t *testing.T) {
	for _, s := range []size{{3, 2, 4}, {17, 3, 9}} {
		f := randFactor(newRand(9), s, true)
		want, _ := mat.LogDet(denseFromComp(s, f.Data()))
		got := f.LogDetRange(0, s.n) + f.LogDetGlobal()
		if math.Abs(got-want) > tol*math.Abs(want) {
			t.Errorf("%v: log|det C| = %v, want %v", s, got, want)
		}
	}
	rng := newRand(4)
	for _, tc := range []struct {
		name string
		draw func() float64
		want func(sum float64) bool
	}{
		{"wide range", func() float64 { return math.Ldexp(rng.Float64()+0.5, rng.IntN(1800)-900) }, nil},
		{"near one", func() float64 { return 1 + 1e-6*rng.NormFloat64() }, nil},
		{"negative", func() float64 { return -math.Exp(rng.NormFloat64()) }, nil},
		{"subnormal", func() float64 { return 5e-320 * (1 + rng.Float64()) }, nil},
	} {
		for _, s := range []size{{5000, 2, 3}, {3000, 1, 700}, {0, 1, 1}} {
			f := New(s.n, s.r, s.g)
			var want float64
			for _, c := range [][]float64{f.Data()[:s.n*s.r*(s.r+1)/2], f.Global()} {
				m := s.r
				if len(c) == len(f.Global()) {
					m = s.g
				}
				for b := 0; b+m*(m+1)/2 <= len(c); b += m * (m + 1) / 2 {
					for a := range m {
						v := tc.draw()
						c[b+a*(a+1)/2+a] = v
						if a := math.Abs(v); a >= 0x1p-1022 {
							want += math.Log(a)
						} else {
							// Scaled into the normal range: math.Log on
							// amd64 is inaccurate for subnormal arguments.
							want += math.Log(a*0x1p100) - 100*math.Ln2
						}
					}
				}
			}
			got := f.LogDetRange(0, s.n) + f.LogDetGlobal()
			if math.Abs(got-want) > 1e-12*max(1, math.Abs(want)) {
				t.Errorf("%s %v: log|det C| = %v, want %v", tc.name, s, got, want)
			}
		}
	}
	for _, tc := range []struct {
		v    float64
		want float64
	}{{0, math.Inf(-1)}, {math.Inf(1), math.Inf(1)}, {math.NaN(), math.NaN()}} {
		f := New(2000, 2, 2)
		f.SetIdentity(1)
		f.Local(1500)[2] = tc.v
		got := f.LogDetRange(0, 2000)
		if !(got == tc.want || math.IsNaN(got) && math.IsNaN(tc.want)) {
			t.Errorf("diagonal %v: log|det C| = %v, want %v", tc.v, got, tc.want)
		}
	}
}

func TestPanics(t *testing.T) {
	f := New(3, 2, 4)
	d := f.Dim()
	good, short := make([]float64, d), make([]float64, d-1)
	comp := make([]float64, Len(3, 2, 4))
	for _, tc := range []struct {
		name string
		fn   func()
	}{
		{"Len negative", func() { Len(-1, 2, 3) }},
		{"Wrap length", func() { Wrap(3, 2, 4, comp[1:]) }},
		{"range hi", func() { f.MulVecRange(0, 4, good, good) }},
		{"range order", func() { f.MulVecRange(2, 1, good, good) }},
		{"vector length", func() { f.DrawRange(0, 3, good, short, good) }},
		{"global vector length", func() { f.SolveTransGlobal(short, good) }},
		{"compressed length", func() { f.NatGradRange(0, 3, good, comp[1:], good, good) }},
		{"subject index", func() { f.Local(3) }},
		{"At", func() { f.At(d, 0) }},
		{"CopyFrom", func() { f.CopyFrom(New(3, 2, 5)) }},
		{"cov dst", func() { f.LocalCovTo(0, mat.NewSymDense(3, nil)) }},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			tc.fn()
		}()
	}
}

// TestDiagIndices: DiagIndices gives the positions in Data of C's
// diagonal, row by row.
func TestDiagIndices(t *testing.T) {
	for _, s := range sizes() {
		f := randFactor(newRand(53), s, false)
		idx := f.DiagIndices()
		if len(idx) != f.Dim() {
			t.Fatalf("%v: %d indices for order %d", s, len(idx), f.Dim())
		}
		for d, j := range idx {
			if f.Data()[j] != f.At(d, d) {
				t.Errorf("%v: Data()[%d] = %v, C[%d,%d] = %v", s, j, f.Data()[j], d, d, f.At(d, d))
			}
		}
	}
}

// TestFactorIsMatrix: as a mat.Matrix a Factor reads as the dense matrix
// built from the layout rule, transposed too.
func TestFactorIsMatrix(t *testing.T) {
	for _, s := range sizes() {
		f := randFactor(newRand(56), s, false)
		var _ mat.Matrix = f
		if r, c := f.Dims(); r != f.Dim() || c != f.Dim() {
			t.Errorf("%v: Dims %d×%d, want %d×%d", s, r, c, f.Dim(), f.Dim())
		}
		want := denseFromComp(s, f.Data())
		if !mat.Equal(f, want) || !mat.Equal(f.T(), want.T()) {
			t.Errorf("%v: the Factor as a mat.Matrix differs from its dense copy", s)
		}
	}
}
