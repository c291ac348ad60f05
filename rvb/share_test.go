// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package rvb

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/simshare"
	"github.com/sparsevi/sparsevi/parallel"
)

// TestShareAtStart builds the Target by NewShareAtStart in 2 and 3
// goroutine processes and asks for the bits of NewAtStart's: the expansion
// of every row, and StartShare's entries of each process's subjects and of
// the global block against Start's.
func TestShareAtStart(t *testing.T) {
	const c = glmm.StartChunk
	for _, method := range []Method{RVB1, RVB2} {
		for _, family := range []glmm.Family{glmm.Bernoulli, glmm.Poisson} {
			d := simshare.New(family, 2*c+90, 5)
			m, whole, theta, prec := wholeStart(t, d, method)
			n, r, g := m.Dims()
			for _, bounds := range [][]int{{0, c, n}, {0, c, 2 * c, n}} {
				groups := simshare.NewGroups(len(bounds) - 1)
				targets := make([]*Target, len(groups))
				thetas := make([][]float64, len(groups))
				precs := make([][]float64, len(groups))
				errs := make([]error, len(groups))
				var wg sync.WaitGroup
				for k, grp := range groups {
					m, err := d.Model(0, d.N) // each process its own model
					if err != nil {
						t.Fatal(err)
					}
					thetas[k] = make([]float64, len(theta))
					precs[k] = make([]float64, len(prec))
					wg.Go(func() {
						pool := parallel.NewPool(context.Background(), 1)
						defer pool.Close()
						if targets[k], errs[k] = NewShareAtStart(pool, grp, bounds[k], bounds[k+1], m, method); errs[k] != nil {
							return
						}
						errs[k] = targets[k].StartShare(pool, grp, bounds[k], bounds[k+1], thetas[k], precs[k])
					})
				}
				wg.Wait()
				for k := range groups {
					if errs[k] != nil {
						t.Fatal(errs[k])
					}
					lo, hi := bounds[k], bounds[k+1]
					where := fmt.Sprintf("%v %v, bounds %v, process %d", method, family, bounds, k)
					for _, e := range []struct {
						what      string
						got, want []float64
					}{{"expansion weights", targets[k].hw, whole.hw}, {"expansion offsets", targets[k].qw, whole.qw}} {
						if i, ok := simshare.SameBits(e.got, e.want); !ok {
							t.Fatalf("%s: %s differ at %d", where, e.what, i)
						}
					}
					simshare.CheckStartShare(t, where, lo, hi, n, r, g, thetas[k], precs[k], theta, prec)
				}
			}
		}
	}
}

// TestGroupAtStart builds the Target by NewGroupAtStart in 1, 2 and 3
// goroutine processes, each from a model of its own subjects alone, and
// asks for the bits of NewAtStart's on the whole model: the expansion of
// each process's rows, and StartGroup's start of its subjects and of the
// global block against Start's.
func TestGroupAtStart(t *testing.T) {
	const c = glmm.StartChunk
	for _, method := range []Method{RVB1, RVB2} {
		for _, family := range []glmm.Family{glmm.Bernoulli, glmm.Poisson} {
			d := simshare.New(family, 2*c+90, 5)
			m, whole, theta, prec := wholeStart(t, d, method)
			n, r, g := m.Dims()
			for _, bounds := range [][]int{{0, n}, {0, c, n}, {0, c, 2 * c, n}} {
				groups := simshare.NewGroups(len(bounds) - 1)
				targets := make([]*Target, len(groups))
				thetas := make([][]float64, len(groups))
				precs := make([][]float64, len(groups))
				errs := make([]error, len(groups))
				var wg sync.WaitGroup
				for k, grp := range groups {
					lo, hi := bounds[k], bounds[k+1]
					part, err := d.Model(lo, hi)
					if err != nil {
						t.Fatal(err)
					}
					thetas[k] = make([]float64, (hi-lo)*r+g)
					precs[k] = make([]float64, arrowhead.Len(hi-lo, r, g))
					wg.Go(func() {
						pool := parallel.NewPool(context.Background(), 1)
						defer pool.Close()
						if targets[k], errs[k] = NewGroupAtStart(pool, grp, part, method); errs[k] != nil {
							return
						}
						errs[k] = targets[k].StartGroup(pool, grp, thetas[k], precs[k])
					})
				}
				wg.Wait()
				for k := range groups {
					if errs[k] != nil {
						t.Fatal(errs[k])
					}
					lo, hi := bounds[k], bounds[k+1]
					where := fmt.Sprintf("%v %v, bounds %v, process %d", method, family, bounds, k)
					first, _ := m.SubjectRows(lo)
					_, last := m.SubjectRows(hi - 1)
					for _, e := range []struct {
						what      string
						got, want []float64
					}{{"expansion weights", targets[k].hw, whole.hw[first:last]}, {"expansion offsets", targets[k].qw, whole.qw[first:last]}} {
						if i, ok := simshare.SameBits(e.got, e.want); !ok {
							t.Fatalf("%s: %s differ at %d", where, e.what, i)
						}
					}
					simshare.CheckStartPart(t, where, lo, hi, n, r, g, thetas[k], precs[k], theta, prec)
				}
			}
		}
	}
}

// wholeStart returns the model of all of d's subjects, its Target by
// NewAtStart and the Target's Start.
func wholeStart(t *testing.T, d *simshare.Data, method Method) (m *glmm.Model, whole *Target, theta, prec []float64) {
	t.Helper()
	m, err := d.Model(0, d.N)
	if err != nil {
		t.Fatal(err)
	}
	n, r, g := m.Dims()
	pool := parallel.NewPool(context.Background(), 2)
	defer pool.Close()
	if whole, err = NewAtStart(pool, m, method); err != nil {
		t.Fatal(err)
	}
	theta = make([]float64, n*r+g)
	prec = make([]float64, arrowhead.Len(n, r, g))
	if err := whole.Start(pool, theta, prec); err != nil {
		t.Fatal(err)
	}
	return m, whole, theta, prec
}
