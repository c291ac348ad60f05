// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/james-bowman/sparse"
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
)

// runPool evaluates the log joint and its global gradient over a fixed
// chunking on a pool of the given number of workers, reducing the chunk
// partials in chunk order.
func runPool(t *testing.T, mod *glmm.Model, local, thetaG []float64, workers int) (float64, []float64, []float64) {
	n, r, g := mod.Dims()
	ch := parallel.NewChunking(n, 4)
	pool := parallel.NewPool(context.Background(), workers)
	defer pool.Close()
	ws := make([]any, ch.Len())
	vals := make([]float64, ch.Len())
	gg := make([]float64, ch.Len()*g)
	gl := make([]float64, n*r)
	for k := range ws {
		ws[k] = mod.NewWorkspace()
	}
	err := pool.Run(ch.Len(), func(k int) error {
		lo, hi := ch.Bounds(k)
		var err error
		vals[k], err = mod.Local(ws[k], lo, hi, thetaG, local[lo*r:hi*r], gl[lo*r:hi*r], gg[k*g:(k+1)*g])
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	grad := make([]float64, g)
	total := mod.Global(thetaG, grad)
	for k := range vals {
		total += vals[k]
		for c := range g {
			grad[c] += gg[k*g+c]
		}
	}
	return total, gl, grad
}

func TestPoolBitIdentical(t *testing.T) {
	for _, c := range problemCases() {
		pr := c.problemN(t, 41)
		v1, gl1, gg1 := runPool(t, pr.mod, pr.local, pr.thetaG, 1)
		v2, gl2, gg2 := runPool(t, pr.mod, pr.local, pr.thetaG, 2)
		if v1 != v2 || !slices.Equal(gl1, gl2) || !slices.Equal(gg1, gg2) {
			t.Errorf("%v: 1 and 2 workers differ: %v vs %v", c, v1, v2)
		}
		want, grad := logJoint(t, pr.mod, pr.local, pr.thetaG, true)
		n, r, _ := pr.mod.Dims()
		if math.Abs(v1-want) > 1e-12*math.Abs(want) || !slices.Equal(gl1, grad[:n*r]) {
			t.Errorf("%v: pooled %v, serial %v", c, v1, want)
		}
	}
}

// opaque hides the concrete type of a matrix, so New reads it through At.
type opaque struct{ mat.Matrix }

func TestSparseDenseAgree(t *testing.T) {
	for fi, fam := range allFamilies {
		rng := rand.New(rand.NewPCG(uint64(fi), 11))
		const n, p, r = 30, 14, 2
		cfg := randomConfig(rng, fam, n, p, r, true)
		dense := cfg.X.(*mat.Dense)
		nobs, _ := dense.Dims()
		var ptr, ind []int
		var val []float64
		ptr = append(ptr, 0)
		for k := range nobs {
			for c := range p {
				if v := dense.At(k, c); v != 0 {
					ind, val = append(ind, c), append(val, v)
				}
			}
			ptr = append(ptr, len(ind))
		}
		local, thetaG := randomLocal(rng, n, r), withDispersion(rng, fam, randomGlobal(rng, p, r))

		var models []*glmm.Model
		for _, x := range []mat.Matrix{dense, sparse.NewCSR(nobs, p, ptr, ind, val), opaque{dense}} {
			cfg.X = x
			mod, err := glmm.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if !mod.SparseX() {
				t.Fatalf("%v: a design of density %.2f with %d columns is not stored sparse", fam, float64(len(val))/float64(nobs*p), p)
			}
			models = append(models, mod)
		}
		// The same design stored densely (forced by a small p is not
		// possible here), so compare against the dense reference instead.
		cfg.X = dense
		want := referenceLogJoint(cfg, local, thetaG, 10)
		v0, g0 := logJoint(t, models[0], local, thetaG, true)
		if math.Abs(v0-want) > 1e-12*math.Abs(want) {
			t.Errorf("%v: sparse-stored log joint %v, dense reference %v", fam, v0, want)
		}
		for mi, mod := range models[1:] {
			v, g := logJoint(t, mod, local, thetaG, true)
			if math.Abs(v-v0) > 1e-12*math.Abs(v0) {
				t.Errorf("%v input %d: log joint %v, want %v", fam, mi+1, v, v0)
			}
			for k := range g {
				if math.Abs(g[k]-g0[k]) > 1e-12*math.Max(1, math.Abs(g0[k])) {
					t.Errorf("%v input %d: gradient %d: %v, want %v", fam, mi+1, k, g[k], g0[k])
				}
			}
		}
	}
}

// TestSparseDenseStorage compares a model stored sparse with the same model
// stored densely: an extra dense column makes X too dense for sparse
// storage, and a zero coefficient on it leaves the density unchanged.
func TestSparseDenseStorage(t *testing.T) {
	for fi, fam := range allFamilies {
		rng := rand.New(rand.NewPCG(uint64(fi), 12))
		const n, p, r = 25, 12, 1
		cfg := randomConfig(rng, fam, n, p, r, true)
		local, thetaG := randomLocal(rng, n, r), withDispersion(rng, fam, randomGlobal(rng, p, r))
		sp, err := glmm.New(cfg)
		if err != nil || !sp.SparseX() {
			t.Fatalf("%v: sparse model: %v (sparse %v)", fam, err, sp != nil && sp.SparseX())
		}
		x := cfg.X.(*mat.Dense)
		nobs, _ := x.Dims()
		wide := mat.NewDense(nobs, 2*p, nil)
		for k := range nobs {
			for c := range p {
				wide.Set(k, c, x.At(k, c))
			}
			for c := p; c < 2*p; c++ {
				wide.Set(k, c, rng.NormFloat64())
			}
		}
		cfg.X = wide
		cfg.FixedNames = append(slices.Clone(cfg.FixedNames), cfg.FixedNames...)
		for c := p; c < 2*p; c++ {
			cfg.FixedNames[c] += "'"
		}
		de, err := glmm.New(cfg)
		if err != nil || de.SparseX() {
			t.Fatalf("%v: dense model: %v", fam, err)
		}
		thetaWide := slices.Concat(thetaG[:p], make([]float64, p), thetaG[p:])
		vs, gs := logJoint(t, sp, local, thetaG, true)
		vd, gd := logJoint(t, de, local, thetaWide, true)
		// The prior constant differs with G; compare the rest.
		vs -= sp.PriorConstant()
		vd -= de.PriorConstant()
		if math.Abs(vs-vd) > 1e-12*math.Abs(vd) {
			t.Errorf("%v: sparse %v, dense %v", fam, vs, vd)
		}
		nr := n * r
		gdSame := slices.Concat(gd[:nr+p], gd[nr+2*p:])
		for k := range gs {
			if math.Abs(gs[k]-gdSame[k]) > 1e-12*math.Max(1, math.Abs(gdSame[k])) {
				t.Errorf("%v: gradient %d: sparse %v, dense %v", fam, k, gs[k], gdSame[k])
			}
		}
	}
}

func TestAccessors(t *testing.T) {
	for _, sparseX := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(5, 5))
		const n, r = 12, 2
		p := 4
		if sparseX {
			p = 13
		}
		cfg := randomConfig(rng, glmm.Binomial, n, p, r, sparseX)
		mod, err := glmm.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if mod.SparseX() != sparseX {
			t.Fatalf("SparseX() = %v", mod.SparseX())
		}
		perm := mod.Perm()
		fx, rz := mod.FixedDesign(), mod.RandomDesign()
		if _, isCSR := fx.(*sparse.CSR); isCSR != sparseX {
			t.Errorf("FixedDesign is %T", fx)
		}
		for k, orig := range perm {
			for c := range p {
				if fx.At(k, c) != cfg.X.At(orig, c) {
					t.Fatalf("FixedDesign(%d,%d) differs from data row %d", k, c, orig)
				}
			}
			for c := range r {
				if rz.At(k, c) != cfg.Z.At(orig, c) {
					t.Fatalf("RandomDesign(%d,%d) differs from data row %d", k, c, orig)
				}
			}
		}
		if mod.NumObs() != len(cfg.Y) || len(perm) != len(cfg.Y) || mod.P() != p || mod.R() != r || mod.NumSubjects() != n {
			t.Fatalf("dimensions %d %d %d %d", mod.NumObs(), mod.P(), mod.R(), mod.NumSubjects())
		}
		beta := randomGlobal(rng, p, r)[:p]
		prev, maxNi := 0, 0
		for i := range n {
			lo, hi := mod.SubjectRows(i)
			if lo != prev || hi <= lo {
				t.Fatalf("subject %d rows [%d,%d) after %d", i, lo, hi, prev)
			}
			prev, maxNi = hi, max(maxNi, hi-lo)
			y, m, w := mod.Response(i)
			zi := mod.ZRows(i)
			off := mod.Offsets(i)
			eta := make([]float64, hi-lo)
			mod.FixedEta(i, beta, eta)
			v := make([]float64, hi-lo)
			for j := range v {
				v[j] = rng.NormFloat64()
			}
			xtv := make([]float64, p)
			mod.AddFixedTVec(i, v, xtv)
			wantXtv := make([]float64, p)
			for j := range hi - lo {
				k := perm[lo+j]
				if j > 0 && k < perm[lo+j-1] {
					t.Errorf("subject %d: rows not in data order", i)
				}
				if cfg.Group[k] != i || y[j] != cfg.Y[k] || m[j] != cfg.Trials[k] || w[j] != cfg.Weights[k] || off[j] != cfg.Offset[k] {
					t.Errorf("subject %d stored row %d: data differ from row %d", i, j, k)
				}
				want := cfg.Offset[k]
				for c := range p {
					want += cfg.X.At(k, c) * beta[c]
					wantXtv[c] += cfg.X.At(k, c) * v[j]
				}
				if math.Abs(eta[j]-want) > 1e-14*math.Max(1, math.Abs(want)) {
					t.Errorf("subject %d row %d: FixedEta %v, want %v", i, j, eta[j], want)
				}
				for c := range r {
					if zi[j*r+c] != cfg.Z.At(k, c) {
						t.Errorf("subject %d row %d: Z differs", i, j)
					}
				}
			}
			for c := range p {
				if math.Abs(xtv[c]-wantXtv[c]) > 1e-13 {
					t.Errorf("subject %d: AddFixedTVec[%d] = %v, want %v", i, c, xtv[c], wantXtv[c])
				}
			}
			var sc float64
			for j := range y {
				sc += w[j] * glmm.Binomial.Constant(y[j], m[j])
			}
			if math.Abs(sc-mod.SubjectConstant(i)) > 1e-12*math.Max(1, math.Abs(sc)) {
				t.Errorf("subject %d: constant %v, want %v", i, mod.SubjectConstant(i), sc)
			}
		}
		if prev != mod.NumObs() || maxNi != mod.MaxSubjectObs() {
			t.Errorf("rows cover %d of %d; max n_i %d, want %d", prev, mod.NumObs(), mod.MaxSubjectObs(), maxNi)
		}
		if names := mod.GlobalNames(); len(names) != p+glmm.NumOmega(r) || names[0] != "x0" || names[p] != "log W[z0,z0]" || names[p+1] != "W[z1,z0]" {
			t.Errorf("GlobalNames = %q", names)
		}
		if mod.Family() != glmm.Binomial || mod.PriorSD() != 10 || mod.GroupName() != "subject" || mod.GroupLevels()[3] != "s3" || mod.RandomNames()[1] != "z1" || mod.FixedNames()[1] != "x1" {
			t.Error("metadata differ from the config")
		}
	}
}

func TestOmegaHelpers(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for r := 1; r <= 4; r++ {
		omega := randomGlobal(rng, 0, r)
		w := make([]float64, r*r)
		glmm.OmegaToW(omega, r, w)
		// Column-major vech of W*, read here by walking columns.
		idx := 0
		for l := range r {
			for k := range r {
				want := 0.0
				switch {
				case k == l:
					want = math.Exp(omega[idx])
				case k > l:
					want = omega[idx]
				}
				if k >= l {
					if glmm.OmegaIndex(k, l, r) != idx {
						t.Errorf("r=%d: OmegaIndex(%d,%d) = %d, want %d", r, k, l, glmm.OmegaIndex(k, l, r), idx)
					}
					idx++
				}
				if w[k*r+l] != want {
					t.Errorf("r=%d: W[%d,%d] = %v, want %v", r, k, l, w[k*r+l], want)
				}
			}
		}
		back := make([]float64, len(omega))
		glmm.WToOmega(w, r, back)
		for k := range back {
			if math.Abs(back[k]-omega[k]) > 1e-15 {
				t.Errorf("r=%d: WToOmega(OmegaToW) differs at %d", r, k)
			}
		}
		wd := mat.NewDense(r, r, w)
		var want mat.Dense
		want.Mul(wd, wd.T())
		prec := glmm.Precision(omega, r)
		if !mat.EqualApprox(prec, &want, 1e-14) {
			t.Errorf("r=%d: Precision differs from W W'", r)
		}
		cov := glmm.RECov(omega, r)
		var prod mat.Dense
		prod.Mul(cov, prec)
		eye := mat.NewDiagDense(r, slices.Repeat([]float64{1}, r))
		if !mat.EqualApprox(&prod, eye, 1e-12) {
			t.Errorf("r=%d: RECov × Precision = %v", r, mat.Formatted(&prod))
		}
		sd, corr := glmm.RESDCorr(omega, r)
		for a := range r {
			if math.Abs(sd[a]-math.Sqrt(cov.At(a, a))) > 1e-15 || math.Abs(corr.At(a, a)-1) > 1e-15 {
				t.Errorf("r=%d: sd or corr diagonal wrong at %d", r, a)
			}
			for b := range r {
				if math.Abs(corr.At(a, b)*sd[a]*sd[b]-cov.At(a, b)) > 1e-14 {
					t.Errorf("r=%d: corr[%d,%d] inconsistent", r, a, b)
				}
			}
		}
	}
	got := glmm.OmegaNames([]string{"(Intercept)", "visit"})
	want := []string{"log W[(Intercept),(Intercept)]", "W[visit,(Intercept)]", "log W[visit,visit]"}
	if !slices.Equal(got, want) || glmm.NumOmega(3) != 6 {
		t.Errorf("OmegaNames = %q", got)
	}
}

func TestGlobal(t *testing.T) {
	pr := newProblem(t, 2, glmm.Poisson, 4, 2, 2)
	sigma := 2.5
	cfg := pr.cfg
	cfg.PriorSD = sigma
	mod, err := glmm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	grad := []float64{1, 2, 3, 4, 5}
	got := mod.Global(pr.thetaG, grad)
	want := 0.0
	for k, v := range pr.thetaG {
		want += -0.5*math.Log(2*math.Pi*sigma*sigma) - v*v/(2*sigma*sigma)
		if g := float64(k+1) - v/(sigma*sigma); math.Abs(grad[k]-g) > 1e-15 {
			t.Errorf("gradient %d: %v, want %v", k, grad[k], g)
		}
	}
	if math.Abs(got-want) > 1e-14*math.Abs(want) {
		t.Errorf("Global = %v, want %v", got, want)
	}
}

// validConfig returns a small valid config with a named intercept and
// covariate, rows numbered from 11.
func validConfig() glmm.Config {
	x := mat.NewDense(6, 2, []float64{1, 0.5, 1, -1, 1, 2, 1, 0, 1, 1.5, 1, -0.5})
	z := mat.NewDense(6, 1, []float64{1, 1, 1, 1, 1, 1})
	return glmm.Config{
		Family:      glmm.Binomial,
		Y:           []float64{1, 0, 3, 2, 0, 1},
		Trials:      []float64{2, 1, 4, 2, 3, 1},
		X:           x,
		Z:           z,
		Group:       []int{0, 1, 2, 0, 1, 2},
		NumGroups:   3,
		FixedNames:  []string{"(Intercept)", "age"},
		RandomNames: []string{"(Intercept)"},
		GroupName:   "herd",
		GroupLevels: []string{"h1", "h2", "h3"},
		Rows:        []int{11, 12, 13, 14, 15, 16},
	}
}

func TestNewValidation(t *testing.T) {
	if _, err := glmm.New(validConfig()); err != nil {
		t.Fatalf("valid config: %v", err)
	}
	col := func(cfg *glmm.Config, vals ...float64) {
		x := mat.NewDense(6, 3, nil)
		for k := range 6 {
			x.Set(k, 0, cfg.X.At(k, 0))
			x.Set(k, 1, cfg.X.At(k, 1))
			x.Set(k, 2, vals[k])
		}
		cfg.X = x
		cfg.FixedNames = append(cfg.FixedNames, "dup")
	}
	for _, c := range []struct {
		name   string
		edit   func(*glmm.Config)
		target error
		want   []string // substrings of the message
	}{
		{"trials length", func(c *glmm.Config) { c.Trials = c.Trials[:5] }, glmm.ErrLength, []string{"Trials", "5", "6"}},
		{"group length", func(c *glmm.Config) { c.Group = c.Group[:4] }, glmm.ErrLength, []string{"Group"}},
		{"X rows", func(c *glmm.Config) { c.X = mat.NewDense(5, 2, nil) }, glmm.ErrLength, []string{"X"}},
		{"names length", func(c *glmm.Config) { c.FixedNames = c.FixedNames[:1] }, glmm.ErrLength, []string{"FixedNames"}},
		{"no Z", func(c *glmm.Config) { c.Z = nil }, glmm.ErrConfig, []string{"random-effect"}},
		{"bad family", func(c *glmm.Config) { c.Family = 0 }, glmm.ErrConfig, []string{"family"}},
		{"negative prior sd", func(c *glmm.Config) { c.PriorSD = -1 }, glmm.ErrConfig, []string{"prior"}},
		{"group out of range", func(c *glmm.Config) { c.Group[2] = 3 }, glmm.ErrGroup, []string{"row 13", `"herd"`, "3"}},
		{"negative group", func(c *glmm.Config) { c.Group[0] = -1 }, glmm.ErrGroup, []string{"row 11"}},
		{"successes exceed trials", func(c *glmm.Config) { c.Y[3] = 3 }, glmm.ErrResponse, []string{"row 14", "exceed"}},
		{"zero trials", func(c *glmm.Config) { c.Trials[1] = 0; c.Y[1] = 0 }, glmm.ErrResponse, []string{"row 12", "trials"}},
		{"fractional successes", func(c *glmm.Config) { c.Y[4] = 0.5 }, glmm.ErrResponse, []string{"row 15"}},
		{"NaN response", func(c *glmm.Config) { c.Y[5] = math.NaN() }, glmm.ErrNonFinite, []string{"row 16", "NaN"}},
		{"bernoulli 2", func(c *glmm.Config) { c.Family = glmm.Bernoulli; c.Trials = nil; c.Y = []float64{0, 1, 2, 0, 1, 0} }, glmm.ErrResponse, []string{"row 13", "0 or 1"}},
		{"poisson negative", func(c *glmm.Config) { c.Family = glmm.Poisson; c.Trials = nil; c.Y[1] = -2 }, glmm.ErrResponse, []string{"row 12", "-2"}},
		{"rows default to positions", func(c *glmm.Config) { c.Rows = nil; c.Y[3] = 3 }, glmm.ErrResponse, []string{"row 4"}},
		{"NaN in X", func(c *glmm.Config) { c.X.(*mat.Dense).Set(2, 1, math.NaN()) }, glmm.ErrNonFinite, []string{"row 13", `"age"`}},
		{"Inf in Z", func(c *glmm.Config) { c.Z.(*mat.Dense).Set(4, 0, math.Inf(1)) }, glmm.ErrNonFinite, []string{"row 15", `"(Intercept)"`}},
		{"NaN offset", func(c *glmm.Config) { c.Offset = make([]float64, 6); c.Offset[1] = math.NaN() }, glmm.ErrNonFinite, []string{"row 12", "offset"}},
		{"Inf weight", func(c *glmm.Config) { c.Weights = []float64{1, 1, 1, 1, 1, math.Inf(1)} }, glmm.ErrNonFinite, []string{"row 16", "weight"}},
		{"negative weight", func(c *glmm.Config) { c.Weights = []float64{1, 1, -1, 1, 1, 1} }, glmm.ErrConfig, []string{"row 13", "negative weight"}},
		{"huge weight", func(c *glmm.Config) { c.Weights = []float64{1, 1e300, 1, 1, 1, 1} }, glmm.ErrConfig, []string{"row 12", `"weights"`, "weight 1e+300 exceeds 1e+12"}},
		{"weight just past the limit", func(c *glmm.Config) { c.Weights = []float64{1, 1, 1, 1, 1, glmm.MaxWeight * 1.5} }, glmm.ErrConfig, []string{"row 16", "exceeds"}},
		{"empty subject", func(c *glmm.Config) { c.Group[1], c.Group[4] = 0, 2 }, glmm.ErrEmptySubject, []string{`"h2"`, "no rows"}},
		{"duplicate column", func(c *glmm.Config) { col(c, 0.5, -1, 2, 0, 1.5, -0.5) }, glmm.ErrRankDeficient, []string{`"dup"`, `"age"`}},
		{"constant column", func(c *glmm.Config) { col(c, 3, 3, 3, 3, 3, 3) }, glmm.ErrRankDeficient, []string{`"dup"`, `"(Intercept)"`}},
		{"linear combination", func(c *glmm.Config) { col(c, 1.5, 0, 3, 1, 2.5, 0.5) }, glmm.ErrRankDeficient, []string{`"dup"`, `"(Intercept)", "age"`}},
		{"zero column", func(c *glmm.Config) { col(c, 0, 0, 0, 0, 0, 0) }, glmm.ErrRankDeficient, []string{`"dup"`, "all zero"}},
	} {
		cfg := validConfig()
		c.edit(&cfg)
		_, err := glmm.New(cfg)
		if err == nil {
			t.Errorf("%s: no error", c.name)
			continue
		}
		var de *glmm.DataError
		if !errors.Is(err, c.target) || !errors.As(err, &de) {
			t.Errorf("%s: %v does not wrap %v in a DataError", c.name, err, c.target)
		}
		for _, s := range c.want {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s: %q does not mention %s", c.name, err, s)
			}
		}
	}
}

// TestMaxWeightAccepted: the largest weight is still a weight.
func TestMaxWeightAccepted(t *testing.T) {
	cfg := validConfig()
	cfg.Weights = []float64{1, 1, glmm.MaxWeight, 1, 1, 1}
	if _, err := glmm.New(cfg); err != nil {
		t.Errorf("weight MaxWeight: %v", err)
	}
}

// TestRankNearCollinear checks that a design that is nearly but not exactly
// collinear is accepted.
func TestRankNearCollinear(t *testing.T) {
	cfg := validConfig()
	x := mat.NewDense(6, 3, nil)
	for k := range 6 {
		x.Set(k, 0, 1)
		x.Set(k, 1, cfg.X.At(k, 1))
		x.Set(k, 2, cfg.X.At(k, 1)+1e-4*float64(k*k))
	}
	cfg.X = x
	cfg.FixedNames = []string{"a", "b", "c"}
	if _, err := glmm.New(cfg); err != nil {
		t.Errorf("nearly collinear design rejected: %v", err)
	}
	// Columns of extreme scale are neither zero nor dependent: 1e-300
	// squared underflows, 1e300 squared overflows.
	for _, c := range []float64{1e-300, 1e300} {
		xs := mat.DenseCopyOf(x)
		for k := range 6 {
			xs.Set(k, 1, c*x.At(k, 1))
		}
		cfg.X = xs
		if _, err := glmm.New(cfg); err != nil {
			t.Errorf("a column times %g rejected: %v", c, err)
		}
	}
	// p = 0 is allowed.
	cfg.X, cfg.FixedNames = nil, nil
	mod, err := glmm.New(cfg)
	if err != nil || mod.P() != 0 {
		t.Errorf("no fixed effects: %v", err)
	}
}

// TestDenseXKeptInOrder: the data of rows that come grouped by subject are
// kept, not copied, and no permutation is stored (New allocates at least
// 90% of the size of X, Y and a permutation less than for the same rows
// interleaved; Z, a column of ones, is stored in neither); both orders
// give the same model, Perm the identity, and ZRows and RandomDesign
// ones.
func TestDenseXKeptInOrder(t *testing.T) {
	const n, per, p = 2000, 5, 3
	rng := rand.New(rand.NewPCG(12, 1))
	xs := make([][]float64, n*per)
	ys := make([]float64, n*per)
	for k := range xs {
		xs[k] = []float64{1, rng.NormFloat64(), rng.NormFloat64()}
		ys[k] = float64(rng.IntN(2))
	}
	config := func(row func(i, j int) int) glmm.Config {
		x := mat.NewDense(n*per, p, nil)
		z := mat.NewDense(n*per, 1, nil)
		y := make([]float64, n*per)
		group := make([]int, n*per)
		for i := range n {
			for j := range per {
				k := row(i, j)
				x.SetRow(k, xs[i*per+j])
				z.Set(k, 0, 1)
				y[k] = ys[i*per+j]
				group[k] = i
			}
		}
		return glmm.Config{Family: glmm.Bernoulli, Y: y, X: x, Z: z, Group: group, NumGroups: n}
	}
	build := func(cfg glmm.Config) (*glmm.Model, uint64) {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		m, err := glmm.New(cfg)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		return m, after.TotalAlloc - before.TotalAlloc
	}
	grouped, inOrder := build(config(func(i, j int) int { return i*per + j }))
	interleaved, shuffled := build(config(func(i, j int) int { return j*n + i }))
	// The 0/1 response is stored as bytes in both orders, a byte an
	// observation.
	size := uint64(n * per * (p + 1) * 8)
	t.Logf("New allocated %d bytes with the rows in order, %d interleaved (X and a permutation are %d)", inOrder, shuffled, size)
	if inOrder+size*9/10 > shuffled {
		t.Errorf("New allocated %d bytes with the rows in order and %d interleaved: X and a permutation (%d bytes) were not kept", inOrder, shuffled, size)
	}
	// In order New allocates the model's few vectors of subjects (40
	// bytes a subject: start, constants, weights, levels), the response's
	// byte an observation and less than the observations' 8 bytes of Z.
	if perSubject := uint64(n * 40); inOrder > perSubject+uint64(n*per)+uint64(n*per*8)/2 {
		t.Errorf("New allocated %d bytes with the rows in order: Z, a column of ones, was stored", inOrder)
	}
	for _, m := range []*glmm.Model{grouped, interleaved} {
		if z := m.RandomDesign(); mat.Sum(z) != float64(n*per) {
			t.Errorf("RandomDesign sums to %v, not to the %d observations", mat.Sum(z), n*per)
		}
		for i := range n {
			for _, v := range m.ZRows(i) {
				if v != 1 {
					t.Fatalf("ZRows(%d) = %v", i, m.ZRows(i))
				}
			}
		}
	}
	for k, v := range grouped.Perm() {
		if v != k {
			t.Fatalf("rows in order: Perm()[%d] = %d", k, v)
		}
	}
	// DataRow reads Perm without making it.
	for _, m := range []*glmm.Model{grouped, interleaved} {
		for k, v := range m.Perm() {
			if got := m.DataRow(k); got != v {
				t.Fatalf("DataRow(%d) = %d, Perm()[%d] = %d", k, got, k, v)
			}
		}
	}
	if a := testing.AllocsPerRun(10, func() { grouped.DataRow(3) }); a != 0 {
		t.Errorf("DataRow allocated %v times", a)
	}
	if msg := sameLocal(rng, grouped, interleaved); msg != "" {
		t.Errorf("rows in order and interleaved: %s", msg)
	}
	if grouped.Fingerprint() != interleaved.Fingerprint() {
		t.Errorf("the fingerprints of the same model in two orders differ")
	}
}

// TestColumnsX: a design given as Columns, with the intercept as a nil
// column, makes the same model as the same design given dense (the same
// fingerprint and log density, to the bit), and is kept without a copy
// when the rows come grouped by subject.
func TestColumnsX(t *testing.T) {
	const n, per = 1500, 4
	rng := rand.New(rand.NewPCG(13, 2))
	nobs := n * per
	cols := [][]float64{nil, make([]float64, nobs), make([]float64, nobs)}
	dense := mat.NewDense(nobs, 3, nil)
	y, group := make([]float64, nobs), make([]int, nobs)
	for k := range nobs {
		cols[1][k], cols[2][k] = rng.NormFloat64(), float64(rng.IntN(3))
		dense.SetRow(k, []float64{1, cols[1][k], cols[2][k]})
		y[k], group[k] = float64(rng.IntN(2)), k/per
	}
	z := mat.NewDense(nobs, 1, nil)
	for k := range nobs {
		z.Set(k, 0, 1+0.1*float64(k%per))
	}
	cfg := glmm.Config{Family: glmm.Bernoulli, Y: y, Z: z, Group: group, NumGroups: n}
	cfg.X = dense
	want, err := glmm.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cfg.X = &glmm.Columns{Rows: nobs, Cols: cols}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := glmm.New(cfg)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	// Beyond its vectors of subjects (under 48 bytes a subject), less
	// than half the columns' size.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(n*48)+uint64(nobs*2*8)/2 {
		t.Errorf("New allocated %d bytes for columns of %d: they were copied", alloc, nobs*2*8)
	}
	if _, ok := got.FixedDesign().(*glmm.Columns); !ok {
		t.Errorf("FixedDesign is a %T, not the columns kept", got.FixedDesign())
	}
	if got.Fingerprint() != want.Fingerprint() {
		t.Errorf("the fingerprints of the design as columns and dense differ")
	}
	if msg := sameLocal(rng, want, got); msg != "" {
		t.Errorf("dense and as columns: %s", msg)
	}
}

// sameLocal returns "" if two models of the same data give the same log
// density and gradient of theta_g to the bit at a random point, else the
// difference.
func sameLocal(rng *rand.Rand, a, b *glmm.Model) string {
	n, r, g := a.Dims()
	thetaG := make([]float64, g)
	for k := range thetaG {
		thetaG[k] = 0.3 * rng.NormFloat64()
	}
	local := make([]float64, n*r)
	for k := range local {
		local[k] = rng.NormFloat64()
	}
	ga, gb := make([]float64, g), make([]float64, g)
	la, _ := a.Local(a.NewWorkspace(), 0, n, thetaG, local, nil, ga)
	lb, _ := b.Local(b.NewWorkspace(), 0, n, thetaG, local, nil, gb)
	if la != lb || !slices.Equal(ga, gb) {
		return fmt.Sprintf("log density %v and gradient %v, against %v and %v", la, ga, lb, gb)
	}
	return ""
}
