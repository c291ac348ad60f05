// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/parallel"
)

// TestBinaryWindows checks that every string of up to L bits is a window
// of the sequence, at the position its bits give.
func TestBinaryWindows(t *testing.T) {
	for l := 1; l <= maxBinaryRun; l++ {
		w := newBinaryWindows(l)
		if len(w.seq) != 1<<l+l-1 {
			t.Fatalf("L=%d: sequence of %d values, want %d", l, len(w.seq), 1<<l+l-1)
		}
		b := make([]uint8, l)
		for bits := range 1 << l {
			for j := range b {
				b[j] = uint8(bits >> j & 1)
			}
			for n := 1; n <= l; n++ {
				v := w.view(uint32(bits)&(1<<n-1), n)
				if len(v) != n {
					t.Fatalf("L=%d: view of %d bytes has %d values", l, n, len(v))
				}
				for j, x := range v {
					if math.Float64bits(x) != math.Float64bits(float64(b[j])) {
						t.Fatalf("L=%d, bits %b, n=%d: value %d is %v, want %d", l, bits, n, j, x, b[j])
					}
				}
				if n < l && bits>>n != 0 {
					break // the shorter prefixes were seen with zeros above
				}
			}
		}
	}
}

// binaryConfig returns a random-slope model of 0/1 responses with
// subjects of 1 to 9 rows, given in shuffled order unless inOrder.
func binaryConfig(seed uint64, fam Family, inOrder bool) Config {
	return binaryConfigR(seed, fam, inOrder, 2)
}

// binaryConfigR is binaryConfig with r random effects, 1 or 2.
func binaryConfigR(seed uint64, fam Family, inOrder bool, r int) Config {
	rng := rand.New(rand.NewPCG(seed, 16))
	const n, p = 40, 3
	var group []int
	for i := range n {
		for range 1 + rng.IntN(9) {
			group = append(group, i)
		}
	}
	if !inOrder {
		rng.Shuffle(len(group), func(a, b int) { group[a], group[b] = group[b], group[a] })
	}
	nobs := len(group)
	x, z := mat.NewDense(nobs, p, nil), mat.NewDense(nobs, r, nil)
	cfg := Config{Family: fam, Y: make([]float64, nobs), X: x, Z: z, Group: group, NumGroups: n}
	if fam == Binomial {
		cfg.Trials = make([]float64, nobs)
	}
	for k := range nobs {
		x.Set(k, 0, 1)
		z.Set(k, 0, 1)
		for c := 1; c < p; c++ {
			x.Set(k, c, rng.NormFloat64())
		}
		if r > 1 {
			z.Set(k, 1, rng.Float64())
		}
		cfg.Y[k] = float64(rng.IntN(2))
		if cfg.Trials != nil {
			cfg.Trials[k] = float64(1 + rng.IntN(3))
		}
	}
	return cfg
}

// floatTwin returns a copy of mod that holds its responses as float64.
func floatTwin(mod *Model) *Model {
	tw := *mod
	tw.y = make([]float64, mod.nobs)
	for j := range tw.y {
		tw.y[j] = mod.yAt(j)
	}
	tw.yb, tw.ywin = nil, nil
	return &tw
}

// TestBinaryResponse checks that a model holding its 0/1 responses as
// bits, from Y or from Binary, computes bit for bit what the same model
// holding them as float64 does.
func TestBinaryResponse(t *testing.T) {
	for _, fam := range []Family{Bernoulli, Binomial} {
		for _, c := range []struct {
			inOrder bool
			r       int
		}{{true, 2}, {false, 2}, {true, 1}, {false, 1}} {
			inOrder := c.inOrder
			cfg := binaryConfigR(uint64(fam)+7, fam, inOrder, c.r)
			bcfg := cfg
			bcfg.Y, bcfg.Binary = nil, make([]uint8, len(cfg.Y))
			for k, y := range cfg.Y {
				bcfg.Binary[k] = uint8(y)
			}
			for name, c := range map[string]Config{"Y": cfg, "Binary": bcfg} {
				mod, err := New(c)
				if err != nil {
					t.Fatal(err)
				}
				if mod.yb == nil || mod.y != nil {
					t.Fatalf("%v %s in order %v: responses not held as bits", fam, name, inOrder)
				}
				compareModels(t, mod, floatTwin(mod))
			}
		}
	}
	// Not 0/1, or too many rows of a subject: float64.
	cfg := binaryConfig(3, Binomial, true)
	cfg.Y[0] = 2
	cfg.Trials[0] = 3
	if mod, err := New(cfg); err != nil || mod.yb != nil {
		t.Errorf("binomial y = 2: err %v, bits %v", err, mod != nil && mod.yb != nil)
	}
	// Subjects of 16 rows, most across two words of bits: bits still.
	cfg = binaryConfig(3, Bernoulli, true)
	for k := range cfg.Group {
		cfg.Group[k] = k / maxBinaryRun
	}
	cfg.NumGroups = cfg.Group[len(cfg.Group)-1] + 1
	mod, err := New(cfg)
	if err != nil || mod.yb == nil {
		t.Fatalf("%d rows a subject: err %v, bits %v", maxBinaryRun, err, mod != nil && mod.yb != nil)
	}
	compareModels(t, mod, floatTwin(mod))
	for k := range cfg.Group {
		cfg.Group[k] = k / (maxBinaryRun + 1)
	}
	cfg.NumGroups = cfg.Group[len(cfg.Group)-1] + 1
	if mod, err := New(cfg); err != nil || mod.yb != nil {
		t.Errorf("%d rows a subject: err %v, bits %v", maxBinaryRun+1, err, mod != nil && mod.yb != nil)
	}
	cfg.Y[0] = math.Copysign(0, -1) // -0 is not +0 as bits
	cfg.Group = binaryConfig(3, Bernoulli, true).Group
	cfg.NumGroups = 40
	if mod, err := New(cfg); err != nil || mod.yb != nil {
		t.Errorf("y = -0: err %v, bits %v", err, mod != nil && mod.yb != nil)
	}
}

// TestBinaryConfigErrors checks New's errors for Config.Binary.
func TestBinaryConfigErrors(t *testing.T) {
	cfg := binaryConfig(5, Bernoulli, true)
	bin := make([]uint8, len(cfg.Y))
	for _, tc := range []struct {
		name string
		edit func(c *Config)
		want error
	}{
		{"both", func(c *Config) { c.Binary = bin }, ErrConfig},
		{"poisson", func(c *Config) { c.Y, c.Binary, c.Family = nil, bin, Poisson }, ErrConfig},
		{"two", func(c *Config) { c.Y, c.Binary = nil, slices.Clone(bin); c.Binary[3] = 2 }, ErrResponse},
	} {
		c := cfg
		tc.edit(&c)
		if _, err := New(c); !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}
}

// compareModels checks that a and b give the same results bit for bit:
// the log density and its gradients, the Hessians, the start, the
// subjects' densities and quadratures, the responses and the
// fingerprint.
func compareModels(t *testing.T, a, b *Model) {
	t.Helper()
	n, r, g := a.Dims()
	rng := rand.New(rand.NewPCG(1, 2))
	thetaG := make([]float64, g)
	local := make([]float64, n*r)
	for k := range thetaG {
		thetaG[k] = 0.3 * rng.NormFloat64()
	}
	for k := range local {
		local[k] = rng.NormFloat64()
	}
	same := func(what string, x, y []float64) {
		t.Helper()
		if len(x) != len(y) {
			t.Fatalf("%s: lengths %d and %d", what, len(x), len(y))
		}
		for k := range x {
			if math.Float64bits(x[k]) != math.Float64bits(y[k]) {
				t.Fatalf("%s[%d]: %v and %v", what, k, x[k], y[k])
			}
		}
	}
	var out [2][]float64
	for m, mod := range []*Model{a, b} {
		ws := mod.NewWorkspace()
		gl, gg := make([]float64, n*r), make([]float64, g)
		lp, err := mod.Local(ws, 0, n, thetaG, local, gl, gg)
		if err != nil {
			t.Fatal(err)
		}
		o := append(append([]float64{lp, mod.Global(thetaG, gg)}, gl...), gg...)
		h := make([]float64, r*r)
		for i := range n {
			mod.LocalHessian(ws, i, thetaG, local[i*r:i*r+r], h)
			o = append(o, h...)
			y, _, _ := mod.Response(i)
			o = append(o, y...)
			if r == 1 && mod.PrepareSubject(ws, i, thetaG) {
				g1, h1 := make([]float64, 1), make([]float64, 1)
				ld, err := mod.SubjectLogDensity(ws, local[i:i+1], g1, h1)
				if err != nil {
					t.Fatal(err)
				}
				v, _ := mod.SubjectLogDensity(ws, local[i:i+1], nil, nil)
				x, lw := []float64{-1, 0.5, 2}, []float64{0, -0.1, -0.2}
				s0, s1, s2, ok := mod.SubjectQuadrature(ws, local[i], 1.5, x, lw, nil, ld)
				if !ok && mod.unitWM {
					t.Fatalf("subject %d: no quadrature", i)
				}
				o = append(o, ld, g1[0], h1[0], v, s0, s1, s2)
			}
		}
		theta, prec := make([]float64, n*r+g), make([]float64, arrowhead.Len(n, r, g))
		pool := parallel.NewPool(context.Background(), 2)
		err = mod.Start(pool, theta, prec)
		pool.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[m] = append(append(o, theta...), prec...)
	}
	same("results", out[0], out[1])
	if a.Fingerprint() != b.Fingerprint() {
		t.Fatal("fingerprints differ")
	}
}
