// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior_test

import (
	"context"
	"errors"
	"fmt"
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

// TestImportanceGlobalGroup runs the correction over 2 and 3 goroutine
// processes, each with a model of its own subjects alone and its own
// Result of a fit over the group, and alone over the whole model: the
// draws, their ratios, the Pareto ks and rounds are bit-identical, and
// each process's subjects' corrected moments are the whole model's. q's
// factor is scaled so that its marginal is too narrow and the proposal is
// adapted (the Laplace step's sums included), for a Bernoulli random
// intercept (the quadrature's one-dimensional sums) and a Poisson random
// slope.
func TestImportanceGlobalGroup(t *testing.T) {
	const chunk = parallel.DefaultChunkSize
	for _, fam := range []glmm.Family{glmm.Bernoulli, glmm.Poisson} {
		d := simshare.New(fam, 2*chunk+60, 8)
		set := vi.Settings{Method: vi.GVA, Seed: 2, MaxIter: 200, Workers: 1}
		narrow := func(res *vi.Result) {
			for k := range res.Factor {
				res.Factor[k] *= 2
			}
		}
		whole, err := d.Model(0, d.N)
		if err != nil {
			t.Fatal(err)
		}
		res, err := vi.Fit(context.Background(), whole, set)
		if err != nil {
			t.Fatal(err)
		}
		narrow(res)
		iset := posterior.ImportanceSettings{Draws: 200, Tol: 1, LocalDraws: 50, Seed: 5, Workers: 2}
		want, err := posterior.ImportanceGlobal(context.Background(), res, whole, iset)
		if err != nil {
			t.Fatal(err)
		}
		if want.Rounds == 0 {
			t.Fatalf("%v: q's marginal (k %.2f) was not adapted: the test wants the Laplace step", fam, want.QK)
		}
		_, r, _ := whole.Dims()
		for _, bounds := range [][]int{{0, chunk, d.N}, {0, chunk, 2 * chunk, d.N}} {
			got := make([]*posterior.GlobalImportance, len(bounds)-1)
			errs := overGroup(d, bounds, set, func(k int, grp vi.Group, m *glmm.Model, res *vi.Result) (err error) {
				narrow(res)
				is := iset
				is.Group = grp
				got[k], err = posterior.ImportanceGlobal(context.Background(), res, m, is)
				return err
			})
			for k, g := range got {
				where := fmt.Sprintf("%v, process %d of %d", fam, k, len(got))
				if errs[k] != nil {
					t.Fatalf("%s: %v", where, errs[k])
				}
				if g.QK != want.QK || g.K != want.K || g.Rounds != want.Rounds || g.Mixed != want.Mixed || g.QuadratureError != want.QuadratureError ||
					g.FewestNodes != want.FewestNodes || g.MostNodes != want.MostNodes {
					t.Errorf("%s: k %v, %v after %d rounds, quadrature error %v; alone %v, %v after %d, %v", where, g.QK, g.K, g.Rounds, g.QuadratureError, want.QK, want.K, want.Rounds, want.QuadratureError)
				}
				lo, hi := bounds[k], bounds[k+1]
				for _, c := range []struct {
					what      string
					got, want []float64
				}{
					{"log ratios", g.LogWeights, want.LogWeights},
					{"draws", g.Global, want.Global},
					{"local means", g.LocalMean, want.LocalMean[lo*r : hi*r]},
					{"local covariances", g.LocalCov, want.LocalCov[lo*r*r : hi*r*r]},
				} {
					if i, ok := simshare.SameBits(c.got, c.want); !ok {
						t.Errorf("%s: %s differ from those alone at %d", where, c.what, i)
					}
				}
			}
		}
	}
}

// TestImportanceGlobalGroupStops: where one process's context has ended,
// every process of the correction returns an error (that process the
// context's, the other vi.ErrGroupStopped) instead of waiting for it.
func TestImportanceGlobalGroupStops(t *testing.T) {
	const chunk = parallel.DefaultChunkSize
	d := simshare.New(glmm.Bernoulli, chunk+40, 9)
	set := vi.Settings{Method: vi.GVA, Seed: 2, MaxIter: 100, Workers: 1}
	errs := overGroup(d, []int{0, chunk, d.N}, set, func(k int, grp vi.Group, m *glmm.Model, res *vi.Result) error {
		ctx := context.Background()
		if k == 1 {
			c, cancel := context.WithCancel(ctx)
			cancel()
			ctx = c
		}
		_, err := posterior.ImportanceGlobal(ctx, res, m, posterior.ImportanceSettings{Draws: 100, Seed: 1, Group: grp})
		return err
	})
	if !errors.Is(errs[1], context.Canceled) || !errors.Is(errs[0], vi.ErrGroupStopped) {
		t.Errorf("errors %v and %v, want the other process stopped and the context's", errs[0], errs[1])
	}
}

// overGroup fits, in a goroutine process for each share [bounds[k],
// bounds[k+1]) of d's subjects, a model of the share alone over a group
// with set, then runs after on the process's model and Result; it returns
// each process's error.
func overGroup(d *simshare.Data, bounds []int, set vi.Settings, after func(k int, grp vi.Group, m *glmm.Model, res *vi.Result) error) []error {
	groups := simshare.NewGroups(len(bounds) - 1)
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for k, grp := range groups {
		wg.Go(func() {
			m, err := d.Model(bounds[k], bounds[k+1])
			if err != nil {
				errs[k] = err
				return
			}
			s := set
			s.Group = grp
			res, err := vi.Fit(context.Background(), m, s)
			if err != nil {
				errs[k] = err
				return
			}
			errs[k] = after(k, grp, m, res)
		})
	}
	wg.Wait()
	return errs
}
