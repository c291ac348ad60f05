// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package arrowhead

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// Dense references for factors with local blocks of variable size: every
// kernel against gonum/mat on the d×d matrices.

type varDims struct {
	sizes []int
	g     int
}

func (s varDims) String() string { return fmt.Sprintf("sizes=%v/g=%d", s.sizes, s.g) }

func allVarDims() []varDims {
	var out []varDims
	for _, sz := range [][]int{{1, 3, 2, 4, 1, 2, 5}, {2}, {4, 1}, {1, 1, 3}} {
		for _, g := range []int{0, 1, 3, 6} {
			out = append(out, varDims{sz, g})
		}
	}
	return append(out, varDims{nil, 2}, varDims{[]int{0, 2, 0, 3}, 2})
}

// varStarts returns the offset of each subject's block in theta.
func (s varDims) starts() []int {
	o := make([]int, len(s.sizes)+1)
	for i, r := range s.sizes {
		o[i+1] = o[i] + r
	}
	return o
}

// pos lists, in storage order, the (row, column) in T of every stored
// element, from the documented layout.
func (s varDims) pos() [][2]int {
	o := s.starts()
	nr := o[len(s.sizes)]
	var p [][2]int
	for i, r := range s.sizes {
		for a := range r {
			for b := 0; b <= a; b++ {
				p = append(p, [2]int{o[i] + a, o[i] + b})
			}
		}
		for k := range s.g {
			for b := range r {
				p = append(p, [2]int{nr + k, o[i] + b})
			}
		}
	}
	for a := range s.g {
		for b := 0; b <= a; b++ {
			p = append(p, [2]int{nr + a, nr + b})
		}
	}
	return p
}

func (s varDims) dim() int { return s.starts()[len(s.sizes)] + s.g }

// onPattern reports whether (i, j) is in the pattern of T.
func (s varDims) onPattern(i, j int) bool {
	for _, ij := range s.pos() {
		if ij == [2]int{i, j} {
			return true
		}
	}
	return false
}

func (s varDims) dense(data []float64) *mat.Dense {
	d := s.dim()
	m := mat.NewDense(max(d, 1), max(d, 1), nil)
	for k, ij := range s.pos() {
		m.Set(ij[0], ij[1], data[k])
	}
	return m
}

func (s varDims) pack(m mat.Matrix) []float64 {
	p := s.pos()
	out := make([]float64, len(p))
	for k, ij := range p {
		out[k] = m.At(ij[0], ij[1])
	}
	return out
}

// restrict keeps the entries of m on the pattern; lower also halves the
// diagonal when half is set.
func (s varDims) restrict(m mat.Matrix, half bool) *mat.Dense {
	d := s.dim()
	out := mat.NewDense(d, d, nil)
	for _, ij := range s.pos() {
		v := m.At(ij[0], ij[1])
		if half && ij[0] == ij[1] {
			v /= 2
		}
		out.Set(ij[0], ij[1], v)
	}
	return out
}

// blockDiag zeroes the cross blocks of m.
func (s varDims) blockDiag(m *mat.Dense) *mat.Dense {
	d := s.dim()
	nr := d - s.g
	out := mat.DenseCopyOf(m)
	for i := nr; i < d; i++ {
		for j := range nr {
			out.Set(i, j, 0)
		}
	}
	return out
}

func randVarFactor(rng *rand.Rand, s varDims) *Factor {
	f := NewVar(s.sizes, s.g)
	for k, ij := range s.pos() {
		if ij[0] == ij[1] {
			f.Data()[k] = 1 + rng.Float64()
		} else {
			f.Data()[k] = 0.6*rng.Float64() - 0.3
		}
	}
	return f
}

func TestVarLayout(t *testing.T) {
	for _, s := range allVarDims() {
		f := randVarFactor(rand.New(rand.NewPCG(1, 2)), s)
		d := s.dim()
		if f.Dim() != d || len(f.Data()) != LenVar(s.sizes, s.g) || !f.Variable() {
			t.Fatalf("%v: Dim %d, len %d", s, f.Dim(), len(f.Data()))
		}
		want := s.dense(f.Data())
		td := f.ToTriDense()
		csr := f.ToCSR()
		for i := range d {
			for j := range d {
				if f.At(i, j) != want.At(i, j) || td.At(i, j) != want.At(i, j) || csr.At(i, j) != want.At(i, j) {
					t.Fatalf("%v: (%d,%d) At %v, ToTriDense %v, ToCSR %v, want %v", s, i, j, f.At(i, j), td.At(i, j), csr.At(i, j), want.At(i, j))
				}
			}
		}
		o := s.starts()
		for i, r := range s.sizes {
			if gr, go_ := f.Block(i); gr != r || go_ != o[i] {
				t.Fatalf("%v: Block(%d) = %d, %d", s, i, gr, go_)
			}
			if len(f.Local(i)) != r*(r+1)/2 || len(f.Cross(i)) != r*s.g {
				t.Fatalf("%v: views of subject %d", s, i)
			}
		}
		var ld float64
		for _, k := range f.DiagIndices() {
			ld += math.Log(f.Data()[k])
		}
		var dl float64
		for i := range d {
			dl += math.Log(want.At(i, i))
		}
		if math.Abs(ld-dl) > 1e-12 || math.Abs(f.LogDet()-dl) > 1e-12 {
			t.Fatalf("%v: log det %v, %v, want %v", s, ld, f.LogDet(), dl)
		}
	}
}

func TestVarSolves(t *testing.T) {
	for _, s := range allVarDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(3, uint64(len(s.sizes)*10+s.g)))
			f := randVarFactor(rng, s)
			d := s.dim()
			if d == 0 {
				return
			}
			tt := s.dense(f.Data())
			td := s.blockDiag(tt)
			mu, z, gr := randVec(rng, d), randVec(rng, d), randVec(rng, d)
			theta, u := make([]float64, d), make([]float64, d)
			drawAll(f, theta, u, mu, z)
			var x, wu, wv, wy mat.VecDense
			if err := x.SolveVec(tt.T(), mat.NewVecDense(d, append([]float64(nil), z...))); err != nil {
				t.Fatal(err)
			}
			if err := wu.SolveVec(td.T(), mat.NewVecDense(d, append([]float64(nil), z...))); err != nil {
				t.Fatal(err)
			}
			wantTheta := make([]float64, d)
			for i := range d {
				wantTheta[i] = mu[i] + x.AtVec(i)
			}
			checkClose(t, "draw theta", theta, wantTheta, 1e-12)
			checkClose(t, "draw u", u, wu.RawVector().Data, 1e-12)

			st := make([]float64, d)
			solveTransAll(f, st, z)
			checkClose(t, "solve T'", st, x.RawVector().Data, 1e-12)

			v := make([]float64, d)
			solveAll(f, v, gr)
			if err := wv.SolveVec(tt, mat.NewVecDense(d, append([]float64(nil), gr...))); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "solve T", v, wv.RawVector().Data, 1e-12)

			y := make([]float64, d)
			mulAll(f, y, gr)
			wy.MulVec(tt, mat.NewVecDense(d, gr))
			checkClose(t, "T x", y, wy.RawVector().Data, 1e-12)

			// Natural gradient: T halfdiag(T_d' restrict(-u v')).
			var uv, h, want mat.Dense
			uv.Outer(-1, mat.NewVecDense(d, u), mat.NewVecDense(d, v))
			h.Mul(td.T(), s.restrict(&uv, false))
			want.Mul(tt, s.restrict(&h, true))
			nat := make([]float64, len(f.Data()))
			natGradAll(f, nat, z, v)
			checkClose(t, "natural gradient", nat, s.pack(&want), 1e-12)

			// Euclidean gradient: -(theta - mu) v' on the pattern.
			dx := make([]float64, d)
			for i := range d {
				dx[i] = theta[i] - mu[i]
			}
			var xv mat.Dense
			xv.Outer(-1, mat.NewVecDense(d, dx), mat.NewVecDense(d, v))
			euc := make([]float64, len(f.Data()))
			euclidGradAll(f, euc, theta, mu, u, v)
			checkClose(t, "Euclidean gradient", euc, s.pack(&xv), 1e-12)
		})
	}
}

// TestVarInvFisher checks InvFisherRange and InvFisherGlobal against the
// dense Theorem 4: G_i = A_i + T_i^-T T_gi' B_gi, N = T halfdiag(T_d' G).
func TestVarInvFisher(t *testing.T) {
	for _, s := range allVarDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, uint64(len(s.sizes)*10+s.g)))
			f := randVarFactor(rng, s)
			d := s.dim()
			if d == 0 {
				return
			}
			a := randVec(rng, len(f.Data()))
			gm := s.dense(a)
			tt := s.dense(f.Data())
			o := s.starts()
			nr := d - s.g
			for i, r := range s.sizes {
				if s.g == 0 || r == 0 {
					continue
				}
				lo, hi := o[i], o[i]+r
				var m, y mat.Dense
				m.Mul(tt.Slice(nr, d, lo, hi).T(), gm.Slice(nr, d, lo, hi))
				if err := y.Solve(tt.Slice(lo, hi, lo, hi).T(), &m); err != nil {
					t.Fatal(err)
				}
				blk := gm.Slice(lo, hi, lo, hi).(*mat.Dense)
				blk.Add(blk, &y)
			}
			var h, want mat.Dense
			h.Mul(s.blockDiag(tt).T(), s.restrict(gm, false))
			want.Mul(tt, s.restrict(&h, true))
			got := make([]float64, len(a))
			invFisherAll(f, got, a)
			checkClose(t, "inverse Fisher", got, s.pack(&want), 1e-11)
		})
	}
}

func TestVarCovChol(t *testing.T) {
	for _, s := range allVarDims() {
		t.Run(s.String(), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(7, uint64(len(s.sizes)*10+s.g)))
			f := randVarFactor(rng, s)
			d := s.dim()
			if d == 0 {
				return
			}
			tt := s.dense(f.Data())
			var prec mat.Dense
			prec.Mul(tt, tt.T())
			sigma := denseInverse(t, &prec)
			nr := d - s.g
			cg := make([]float64, s.g*s.g)
			local := make([]float64, f.CovLen())
			cross := make([]float64, nr*s.g)
			covAll(f, cg, local, cross)
			checkClose(t, "Cov(theta_g)", cg, sub(sigma, nr, d, nr, d), 1e-11)
			local2 := make([]float64, f.CovLen())
			f.LocalCovRange(0, len(s.sizes), cg, local2)
			o := s.starts()
			for i, r := range s.sizes {
				c := f.CovOffset(i)
				w := sub(sigma, o[i], o[i]+r, o[i], o[i]+r)
				checkClose(t, "Cov(theta_i)", local[c:c+r*r], w, 1e-11)
				checkClose(t, "LocalCovRange", local2[c:c+r*r], w, 1e-11)
				checkClose(t, "Cov(theta_i, theta_g)", cross[o[i]*s.g:(o[i]+r)*s.g], sub(sigma, o[i], o[i]+r, nr, d), 1e-11)
				var dst mat.SymDense
				f.LocalCovTo(i, &dst)
				if r > 0 {
					checkClose(t, "LocalCovTo", mat.DenseCopyOf(&dst).RawMatrix().Data, w, 1e-11)
				}
			}

			// PrecRange writes T T' in the storage; CholRange recovers T.
			sdat := make([]float64, len(f.Data()))
			sum := make([]float64, s.g*(s.g+1)/2)
			f.PrecRange(0, len(s.sizes), sdat, sum)
			f.PrecGlobal(sdat, sum)
			checkClose(t, "T T'", sdat, s.pack(&prec), 1e-12)
			c := NewVar(s.sizes, s.g)
			if err := cholAll(c, sdat); err != nil {
				t.Fatal(err)
			}
			checkClose(t, "chol(T T')", c.Data(), f.Data(), 1e-10)
		})
	}
}

// TestVarEqualSizes checks that a factor of variable size whose blocks all
// have order 3 (no fast path) gives the fixed-size factor's results bit for
// bit.
func TestVarEqualSizes(t *testing.T) {
	const n, r, g = 5, 3, 4
	rng := rand.New(rand.NewPCG(9, 9))
	fx := randFactor(rng, dims{n, r, g})
	fv := WrapVar([]int{r, r, r, r, r}, g, append([]float64(nil), fx.Data()...))
	d := fx.Dim()
	mu, z, gr := randVec(rng, d), randVec(rng, d), randVec(rng, d)
	run := func(f *Factor) []float64 {
		theta, u, v := make([]float64, d), make([]float64, d), make([]float64, d)
		drawAll(f, theta, u, mu, z)
		solveAll(f, v, gr)
		nat := make([]float64, len(f.Data()))
		natGradAll(f, nat, z, v)
		fi := make([]float64, len(f.Data()))
		invFisherAll(f, fi, nat)
		out := append(append(append(theta, u...), v...), nat...)
		return append(append(out, fi...), f.LogDet())
	}
	a, b := run(fx), run(fv)
	if k := firstBitDiff(a, b); k >= 0 {
		t.Fatalf("variable-size factor of equal blocks differs at %d: %v vs %v", k, a[k], b[k])
	}
}

// TestSymVar: a variable-size Sym over PrecRange's output reads T T' as
// the dense product gives it on the pattern, and zero off it; filling one
// element by element with its setters gives the same storage; and with
// equal sizes it reads as WrapSym's.
func TestSymVar(t *testing.T) {
	rng := rand.New(rand.NewPCG(55, 1))
	for _, s := range allVarDims() {
		f := randVarFactor(rng, s)
		prec := make([]float64, len(f.Data()))
		sum := make([]float64, s.g*(s.g+1)/2)
		f.PrecRange(0, len(s.sizes), prec, sum)
		f.PrecGlobal(prec, sum)
		T := s.dense(f.Data())
		var want mat.Dense
		want.Mul(T, T.T())
		sym := WrapSymVar(s.sizes, s.g, prec)
		filled := WrapSymVar(s.sizes, s.g, make([]float64, len(prec)))
		d := s.dim()
		if sym.SymmetricDim() != d {
			t.Fatalf("%v: order %d, want %d", s, sym.SymmetricDim(), d)
		}
		o := s.starts()
		nr := o[len(s.sizes)]
		subject := func(j int) (int, int) {
			for i := range s.sizes {
				if j < o[i+1] {
					return i, j - o[i]
				}
			}
			panic("not local")
		}
		for i := range d {
			for j := range d {
				w := 0.0
				if s.onPattern(max(i, j), min(i, j)) {
					w = want.At(i, j)
				}
				if got := sym.At(i, j); math.Abs(got-w) > tol*(1+math.Abs(w)) {
					t.Errorf("%v: S[%d,%d] = %v, want %v", s, i, j, got, w)
				}
				if j > i || !s.onPattern(i, j) {
					continue
				}
				v := want.At(i, j)
				switch {
				case i < nr:
					si, a := subject(i)
					_, b := subject(j)
					filled.SetLocal(si, b, a, v)
				case j < nr:
					sj, b := subject(j)
					if (i+j)%2 == 0 {
						filled.SetCross(sj, i-nr, b, v)
					} else {
						filled.AddCross(sj, i-nr, b, v)
					}
				case (i+j)%2 == 0:
					filled.SetGlobal(j-nr, i-nr, v)
				default:
					filled.AddGlobal(i-nr, j-nr, v)
				}
			}
		}
		checkClose(t, s.String()+": set element by element", filled.Data(), prec, tol)
		if !mat.Equal(SymOf(WrapVar(s.sizes, s.g, prec)), sym) {
			t.Errorf("%v: SymOf the Factor over the same storage reads otherwise", s)
		}
		for i := range s.sizes {
			lo, _ := f.Span(i, i+1)
			if len(sym.Local(i)) > 0 && &sym.Local(i)[0] != &prec[lo] {
				t.Errorf("%v: subject %d's block is not at the Factor's offset %d", s, i, lo)
			}
		}
	}
	// Equal sizes: WrapSym's reading.
	sizes := []int{2, 2, 2}
	data := make([]float64, LenVar(sizes, 3))
	for k := range data {
		data[k] = rng.Float64()
	}
	if !mat.Equal(WrapSymVar(sizes, 3, data), WrapSym(3, 2, 3, data)) {
		t.Error("equal sizes: WrapSymVar reads otherwise than WrapSym")
	}
	if !mat.Equal(SymOf(Wrap(3, 2, 3, data)), WrapSym(3, 2, 3, data)) {
		t.Error("SymOf a fixed-size Factor reads otherwise than WrapSym")
	}
}
