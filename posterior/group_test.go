// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior_test

import (
	"context"
	"reflect"
	"sync"
	"testing"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/simshare"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// effects returns the subjects' means and sds without their labels, which
// simshare's models number from 1 in each process.
func effects(s []posterior.SubjectEffects) [][]float64 {
	var out [][]float64
	for _, e := range s {
		out = append(out, e.Mean, e.SD)
	}
	return out
}

// TestSummarizeFitGroup fits a Poisson random slope over 2 goroutine
// processes, each with a model of its own subjects alone, summarises each
// process's fit with SummarizeFitGroup, and asks for SummarizeFit's
// summaries of the same fit in one process: the fixed effects, omega, the
// random-effect sds and correlations, and each process's subjects, by GVA
// and by RVB1.
func TestSummarizeFitGroup(t *testing.T) {
	const chunk = parallel.DefaultChunkSize
	d := simshare.New(glmm.Poisson, 2*chunk+60, 5)
	bounds := []int{0, chunk, d.N}
	for _, c := range []struct {
		name string
		rm   rvb.Method // 0: GVA of the model itself
	}{{"gva", 0}, {"rvb1", rvb.RVB1}} {
		rm := c.rm
		t.Run(c.name, func(t *testing.T) {
			// target returns the model of [lo, hi) and what is fitted:
			// the model, or its RVB Target started with the processes grp
			// links (nil alone).
			target := func(grp vi.Group, lo, hi int) (*glmm.Model, vi.Target, vi.Method) {
				m, err := d.Model(lo, hi)
				if err != nil {
					t.Fatal(err)
				}
				if rm == 0 {
					return m, m, vi.GVA
				}
				pool := parallel.NewPool(context.Background(), 1)
				defer pool.Close()
				var rt *rvb.Target
				if grp == nil {
					rt, err = rvb.NewAtStart(pool, m, rm)
				} else {
					rt, err = rvb.NewGroupAtStart(pool, grp, m, rm)
				}
				if err != nil {
					t.Error(err)
				}
				return m, rt, vi.BlockDiag
			}
			const draws = 400
			m, tg, meth := target(nil, 0, d.N)
			set := vi.Settings{Method: meth, Seed: 2, MaxIter: 300, Workers: 1}
			res, err := vi.Fit(context.Background(), tg, set)
			if err != nil {
				t.Fatal(err)
			}
			want, err := posterior.SummarizeFit(context.Background(), res, tg, m, draws, 7)
			if err != nil {
				t.Fatal(err)
			}
			groups := simshare.NewGroups(len(bounds) - 1)
			got := make([]*posterior.Summary, len(groups))
			errs := make([]error, len(groups))
			var wg sync.WaitGroup
			for k, grp := range groups {
				wg.Go(func() {
					m, tk, _ := target(grp, bounds[k], bounds[k+1])
					s := set
					s.Group = grp
					res, err := vi.Fit(context.Background(), tk, s)
					if err != nil {
						errs[k] = err
						return
					}
					got[k], errs[k] = posterior.SummarizeFitGroup(context.Background(), grp, res, tk, m, draws, 7)
				})
			}
			wg.Wait()
			for k, s := range got {
				if errs[k] != nil {
					t.Fatalf("process %d: %v", k, errs[k])
				}
				for _, c := range []struct {
					what      string
					got, want any
				}{
					{"fixed effects", s.Fixed, want.Fixed},
					{"omega", s.Omega, want.Omega},
					{"sds", s.SD, want.SD},
					{"correlations", s.Corr, want.Corr},
					{"subjects", effects(s.Subjects), effects(want.Subjects[bounds[k]:bounds[k+1]])},
				} {
					if !reflect.DeepEqual(c.got, c.want) {
						t.Errorf("process %d: %s differ from the summaries of the fit alone", k, c.what)
					}
				}
			}
		})
	}
}
