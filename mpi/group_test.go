// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build mpi && cgo

package mpi

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/simshare"
	"github.com/sparsevi/sparsevi/vi"
)

// TestGroupFit fits a model over the processes of the job, each holding
// its share of the subjects, and checks every process's share against the
// fit of all the subjects in that process alone, bit for bit: a Bernoulli
// random intercept and a Poisson random slope, by GVA and by the
// block-diagonal family.
func TestGroupFit(t *testing.T) {
	const chunk = 16
	cases := []struct {
		family glmm.Family
		method vi.Method
		n      int
	}{
		{glmm.Bernoulli, vi.GVA, 150},
		{glmm.Bernoulli, vi.BlockDiag, 150},
		{glmm.Poisson, vi.GVA, 100},
		{glmm.Poisson, vi.BlockDiag, 100},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%v/%v", c.family, c.method), func(t *testing.T) {
			d := simshare.New(c.family, c.n, 11)
			set := vi.Settings{Method: c.method, Init: vi.InitPaper, Seed: 5, ChunkSize: chunk, MaxIter: 400, Workers: 2}
			all, err := d.Model(0, d.N)
			if err != nil {
				t.Fatal(err)
			}
			one, err := vi.Fit(context.Background(), all, set)
			if err != nil {
				t.Fatal(err)
			}
			var bounds []int
			var res *vi.Result
			onMPI(func() {
				if bounds, err = SubjectBounds(d.N, chunk, Size()); err != nil {
					return
				}
				var grp *Group
				if grp, err = NewGroup(); err != nil {
					return
				}
				var m *glmm.Model
				if m, err = d.Model(bounds[Rank()], bounds[Rank()+1]); err != nil {
					return
				}
				s := set
				s.Group = grp
				res, err = vi.Fit(context.Background(), m, s)
			})
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := bounds[Rank()], bounds[Rank()+1]
			r, g := one.R, one.G
			local := (len(one.Factor) - g*(g+1)/2) / d.N
			if res.Iterations != one.Iterations || res.Status != one.Status {
				t.Fatalf("%d iterations (%v), alone %d (%v)", res.Iterations, res.Status, one.Iterations, one.Status)
			}
			for _, ck := range []struct {
				name      string
				got, want []float64
			}{
				{"means", res.Mu[:(hi-lo)*r], one.Mu[lo*r : hi*r]},
				{"global means", res.Mu[(hi-lo)*r:], one.Mu[d.N*r:]},
				{"factor", res.Factor[:(hi-lo)*local], one.Factor[lo*local : hi*local]},
				{"global factor", res.Factor[(hi-lo)*local:], one.Factor[d.N*local:]},
				{"bound", []float64{res.LowerBound}, []float64{one.LowerBound}},
				{"log weights", res.LogWeights, one.LogWeights},
			} {
				if len(ck.got) != len(ck.want) {
					t.Fatalf("%s: %d values, alone %d", ck.name, len(ck.got), len(ck.want))
				}
				for i := range ck.got {
					if math.Float64bits(ck.got[i]) != math.Float64bits(ck.want[i]) {
						t.Fatalf("%s differ at %d: %v, alone %v", ck.name, i, ck.got[i], ck.want[i])
					}
				}
			}
		})
	}
}
