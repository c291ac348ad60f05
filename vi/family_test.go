// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// slopeModel is a Poisson model of 12 subjects with a random intercept and
// slope: r = 2, G = 3 + 3.
func slopeModel(t *testing.T) *glmm.Model {
	t.Helper()
	fr, truth, err := datasets.Simulate(datasets.SimSpec{Family: "poisson", Subjects: 12, Obs: 6, Beta: []float64{0.3, -0.4, 0.5}, RECov: [][]float64{{0.4, 0.05}, {0.05, 0.2}}, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	return poissonModel(t, fr, truth.Formula)
}

// dense returns q's mean and covariance as dense gonum matrices, from
// Lambda as Family lays it out: the arrowhead factor T of the precision
// (GVA) or the block-diagonal factor C of the covariance (BlockDiag), each
// subject's block lower-triangular packed by rows, then (GVA) its rows of
// T_gi, then the global block.
func dense(fam *vi.Family, n, r, g int) *mat.SymDense {
	lam := fam.Lambda()
	d := n*r + g
	L := mat.NewDense(d, d, nil)
	k := d
	tri := func(off, m int) {
		for i := range m {
			for j := 0; j <= i; j++ {
				L.Set(off+i, off+j, lam[k])
				k++
			}
		}
	}
	for i := range n {
		tri(i*r, r)
		if fam.Precision() {
			for a := range g {
				for b := range r {
					L.Set(n*r+a, i*r+b, lam[k])
					k++
				}
			}
		}
	}
	tri(n*r, g)
	if k != len(lam) {
		panic(fmt.Sprintf("layout: %d entries read of %d", k, len(lam)))
	}
	var cov mat.SymDense
	if fam.Precision() {
		var inv mat.Dense
		if err := inv.Inverse(L); err != nil {
			panic(err)
		}
		cov.SymOuterK(1, inv.T())
	} else {
		cov.SymOuterK(1, L)
	}
	return &cov
}

// TestFamily checks the public contract on a Poisson random-slope model,
// for both methods: Kinds against the layout; Estimate's Euclidean
// gradient against central differences of h at the same draw; its natural
// gradient against Fisher applied to the Euclidean one, and its mean part
// against q's dense covariance times the Euclidean mean part; the same
// bits on 1 and 2 workers.
func TestFamily(t *testing.T) {
	m := slopeModel(t)
	n, r, g := m.Dims()
	d := n*r + g
	for _, method := range []vi.Method{vi.GVA, vi.BlockDiag} {
		t.Run(method.String(), func(t *testing.T) {
			fam, err := vi.NewFamily(context.Background(), m, vi.Settings{Method: method, Seed: 3, Workers: 2})
			if err != nil {
				t.Fatal(err)
			}
			defer fam.Close()
			if err := fam.Start(vi.InitMode); err != nil {
				t.Fatal(err)
			}
			if fam.Globals() != g || fam.Precision() != (method == vi.GVA) {
				t.Fatalf("Globals %d, Precision %v", fam.Globals(), fam.Precision())
			}
			kinds := fam.Kinds()
			count := map[vi.Kind]int{}
			for j, k := range kinds {
				count[k]++
				if (j < d) != (k == vi.Mean) {
					t.Fatalf("entry %d of kind %v", j, k)
				}
			}
			if count[vi.Diagonal] != d {
				t.Errorf("%d diagonal entries, want %d", count[vi.Diagonal], d)
			}
			lam := fam.Lambda()
			nat, euc, path := make([]float64, len(lam)), make([]float64, len(lam)), make([]float64, len(lam))
			const iter = 7
			h, err := fam.Estimate(iter, nat, euc, false)
			if err != nil {
				t.Fatal(err)
			}
			if h2, _ := fam.Estimate(iter, nil, path, true); h2 != h {
				t.Errorf("h %v then %v at the same iteration", h, h2)
			}
			// h = log p(theta) - log q(theta), with log q(theta) = c +
			// log|T| - z'z/2 (GVA) or c - log|C| - z'z/2 at the draw
			// theta = theta(lambda, z): its central differences are the
			// path gradient of log p (noEntropy) and that of -log|T| or
			// log|C|, 1/diagonal on the diagonal.
			sign := 1.0
			if fam.Precision() {
				sign = -1
			}
			for _, j := range []int{0, r, d - 1, d, d + 1, d + 2, len(lam) - 1, len(lam) - 4} {
				x := lam[j]
				want := path[j]
				if kinds[j] == vi.Diagonal {
					want += sign / x
				}
				step := 1e-5 * max(1, math.Abs(x))
				lam[j] = x + step
				hp, err1 := fam.Estimate(iter, nil, nil, false)
				lam[j] = x - step
				hm, err2 := fam.Estimate(iter, nil, nil, false)
				lam[j] = x
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				fd := (hp - hm) / (2 * step)
				if math.Abs(fd-want) > 1e-5*max(1, math.Abs(fd)) {
					t.Errorf("entry %d (%v): path gradient and entropy's %.8g, central difference %.8g", j, kinds[j], want, fd)
				}
			}
			// nat = F^-1 euc.
			mapped := make([]float64, len(lam))
			if err := fam.Fisher(euc, mapped); err != nil {
				t.Fatal(err)
			}
			for j := range nat {
				if math.Abs(mapped[j]-nat[j]) > 1e-9*max(1, math.Abs(nat[j])) {
					t.Fatalf("entry %d: natural gradient %.10g, Fisher of the Euclidean %.10g", j, nat[j], mapped[j])
				}
			}
			// The mean's natural gradient is Sigma times its Euclidean one.
			var want mat.VecDense
			want.MulVec(dense(fam, n, r, g), mat.NewVecDense(d, slices.Clone(euc[:d])))
			for j := range d {
				if math.Abs(want.AtVec(j)-nat[j]) > 1e-9*max(1, math.Abs(nat[j])) {
					t.Fatalf("mean entry %d: natural gradient %.10g, dense Sigma times the Euclidean %.10g", j, nat[j], want.AtVec(j))
				}
			}
			// One worker: the same bits.
			one, err := vi.NewFamily(context.Background(), m, vi.Settings{Method: method, Seed: 3, Workers: 1})
			if err != nil {
				t.Fatal(err)
			}
			defer one.Close()
			copy(one.Lambda(), lam)
			nat1 := make([]float64, len(lam))
			h1, err := one.Estimate(iter, nat1, nil, false)
			if err != nil {
				t.Fatal(err)
			}
			if h1 != h || !slices.Equal(nat1, nat) {
				t.Errorf("1 worker: h %v and natural gradient differ from 2 workers' (h %v)", h1, h)
			}
		})
	}
}

// TestFamilyMisuse: what NewFamily and the gradients refuse.
func TestFamilyMisuse(t *testing.T) {
	m := slopeModel(t)
	if _, err := vi.NewFamily(context.Background(), nil, vi.Settings{}); err == nil {
		t.Error("nil target accepted")
	}
	if _, err := vi.NewFamily(context.Background(), m, vi.Settings{Method: vi.BlockDiag, Stochastic: vi.Stochastic{Batch: 4}}); !errors.Is(err, vi.ErrSettings) {
		t.Errorf("stochastic settings: %v", err)
	}
	if _, err := vi.NewFamily(context.Background(), m, vi.Settings{Workers: -1}); !errors.Is(err, vi.ErrSettings) {
		t.Errorf("Workers -1: %v", err)
	}
	fam, err := vi.NewFamily(context.Background(), m, vi.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	defer fam.Close()
	if _, err := fam.Estimate(0, make([]float64, 3), nil, false); err == nil {
		t.Error("a short gradient accepted")
	}
	if err := fam.Fisher(make([]float64, 3), make([]float64, 3)); err == nil {
		t.Error("a short Fisher map accepted")
	}
	if err := fam.Start(vi.Init(9)); !errors.Is(err, vi.ErrSettings) {
		t.Errorf("Init(9): %v", err)
	}
	for _, workers := range []int{1, 2} {
		ctx, cancel := context.WithCancel(context.Background())
		stopped, err := vi.NewFamily(ctx, m, vi.Settings{Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		if _, err := stopped.Estimate(0, nil, nil, false); !errors.Is(err, context.Canceled) {
			t.Errorf("%d workers: Estimate after the context ended: %v", workers, err)
		}
		if err := stopped.Start(vi.InitMode); !errors.Is(err, context.Canceled) {
			t.Errorf("%d workers: Start after the context ended: %v", workers, err)
		}
		stopped.Close()
	}
	lam := fam.Lambda()
	if err := fam.Check(); err != nil {
		t.Fatalf("the paper's start: %v", err)
	}
	for j, k := range fam.Kinds() {
		if k == vi.Diagonal {
			lam[j] = -1
			break
		}
	}
	if err := fam.Check(); err == nil {
		t.Error("a negative diagonal entry passed the check")
	}
}

// Drive q with an optimiser of one's own: here natural-gradient ascent
// with a Robbins–Monro step from the paper's start, on the three group
// means of Fit's example, whose posterior of mu is known in closed form.
func ExampleFamily() {
	m := means{y: []float64{1.2, 0.4, 2.0}}
	fam, err := vi.NewFamily(context.Background(), m, vi.Settings{Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	defer fam.Close()
	lam := fam.Lambda()
	nat := make([]float64, len(lam))
	var bound float64
	const iters, last = 4000, 1000
	for it := range iters {
		h, err := fam.Estimate(uint64(it), nat, nil, false)
		if err != nil {
			log.Fatal(err)
		}
		if it >= iters-last {
			bound += h / last
		}
		step := 1 / (10 + float64(it)/10)
		for j := range lam {
			lam[j] += step * nat[j]
		}
		if err := fam.Check(); err != nil {
			log.Fatal(err)
		}
	}
	n, r, _ := m.Dims()
	prec := float64(len(m.y))/2 + 1.0/100
	// y ~ N(0, 2 I + 100 J): log p(y) in closed form, which the bound
	// reaches, q containing the posterior.
	sum, sq := 0.0, 0.0
	for _, y := range m.y {
		sum, sq = sum+y, sq+y*y
	}
	k := float64(n)
	logp := -0.5 * (k*math.Log(2*math.Pi) + (k-1)*math.Log(2) + math.Log(2+100*k) + 0.5*(sq-100/(2+100*k)*sum*sum))
	fmt.Printf("mu %.2f, exact %.2f; lower bound %.1f, log p(y) %.1f\n", lam[n*r], sum/2/prec, bound, logp)
	// Output:
	// mu 1.19, exact 1.19; lower bound -6.6, log p(y) -6.6
}
