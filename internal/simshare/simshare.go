// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package simshare simulates GLMM data whose models can be built over any
// range of the subjects, the shares of a fit over a vi.Group, and links
// goroutines into such a group: for the tests of glmm, vi and mpi.
package simshare

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
)

// Data is a simulated GLMM: rows grouped by subject, in subject order.
type Data struct {
	Family  glmm.Family
	X, Z    [][]float64 // per row
	Y       []float64
	Subject []int // per row, increasing
	N       int   // subjects
}

// New simulates n subjects of 4 to 9 rows each, with fixed effects for an
// intercept, a covariate and time: a Bernoulli random intercept (r = 1)
// for glmm.Bernoulli, a Poisson random intercept and slope in time (r = 2)
// for glmm.Poisson, a Gaussian random intercept for glmm.Gaussian.
func New(family glmm.Family, n int, seed uint64) *Data {
	rng := rand.New(rand.NewPCG(seed, 1))
	d := &Data{Family: family, N: n}
	for i := range n {
		b0, b1 := 0.8*rng.NormFloat64(), 0.3*rng.NormFloat64()
		for t := range 4 + rng.IntN(6) {
			tt := float64(t) / 4
			x1 := rng.NormFloat64()
			var y float64
			z := []float64{1}
			if family == glmm.Gaussian {
				y = 2 + 0.5*x1 + 3*b0 + 0.7*rng.NormFloat64()
			} else if family == glmm.Poisson {
				z = []float64{1, tt}
				// Poisson by counting exponential gaps within 1.
				rate := math.Exp(0.2 + 0.3*x1 + 0.2*tt + b0 + b1*tt)
				for l := rng.ExpFloat64() / rate; l <= 1; l += rng.ExpFloat64() / rate {
					y++
				}
			} else if rng.Float64() < 1/(1+math.Exp(0.3-0.5*x1-b0)) {
				y = 1
			}
			d.X = append(d.X, []float64{1, x1, tt})
			d.Z = append(d.Z, z)
			d.Y = append(d.Y, y)
			d.Subject = append(d.Subject, i)
		}
	}
	return d
}

// Model returns the model of the subjects [lo, hi), numbered from 0.
func (d *Data) Model(lo, hi int) (*glmm.Model, error) {
	var x, z, y []float64
	var group []int
	for j, i := range d.Subject {
		if i < lo || i >= hi {
			continue
		}
		x = append(x, d.X[j]...)
		z = append(z, d.Z[j]...)
		y = append(y, d.Y[j])
		group = append(group, i-lo)
	}
	p, r := len(d.X[0]), len(d.Z[0])
	return glmm.New(glmm.Config{Family: d.Family, Y: y,
		X: mat.NewDense(len(y), p, x), Z: mat.NewDense(len(y), r, z),
		Group: group, NumGroups: hi - lo})
}

// Group is one of a group of goroutines linked by channels in rank order,
// a vi.Group in one process: the reference for a Group over MPI.
type Group struct {
	rank, size int
	links      []chan []float64 // links[r] carries r's values to r+1
	final      []chan []float64 // final[r] carries the last's values to r
}

// NewGroups returns the size members of a new group, by rank.
func NewGroups(size int) []*Group {
	links := make([]chan []float64, size)
	final := make([]chan []float64, size)
	for r := range size {
		links[r] = make(chan []float64, 1)
		final[r] = make(chan []float64, 1)
	}
	gs := make([]*Group, size)
	for r := range size {
		gs[r] = &Group{rank: r, size: size, links: links, final: final}
	}
	return gs
}

// Rank returns the member's rank.
func (g *Group) Rank() int { return g.rank }

// Size returns the number of members.
func (g *Group) Size() int { return g.size }

// Receive overwrites acc with the values of the member before; the first
// leaves acc as it is.
func (g *Group) Receive(acc []float64) error {
	if g.rank > 0 {
		copy(acc, <-g.links[g.rank-1])
	}
	return nil
}

// Pass hands acc to the next member and overwrites it with the last one's
// values.
func (g *Group) Pass(acc []float64) error {
	if g.rank < g.size-1 {
		g.links[g.rank] <- slices.Clone(acc)
		copy(acc, <-g.final[g.rank])
		return nil
	}
	for r := range g.size - 1 {
		g.final[r] <- slices.Clone(acc)
	}
	return nil
}

// SameBits reports whether a and b hold the same bits, and if not the
// first index at which they differ (-1 for different lengths).
func SameBits(a, b []float64) (int, bool) {
	if len(a) != len(b) {
		return -1, false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return i, false
		}
	}
	return 0, true
}

// CheckStartShare fails t unless the entries of the subjects [lo, hi) and
// of the global block of a start (theta, and prec in arrowhead form, over
// n subjects of r variables and a global block of g) hold the bits of
// wantTheta's and wantPrec's.
func CheckStartShare(t testing.TB, where string, lo, hi, n, r, g int, theta, prec, wantTheta, wantPrec []float64) {
	t.Helper()
	stride := arrowhead.Stride(r, g)
	for _, c := range []struct {
		what      string
		got, want []float64
	}{
		{"local means", theta[lo*r : hi*r], wantTheta[lo*r : hi*r]},
		{"global means", theta[n*r:], wantTheta[n*r:]},
		{"local precision", prec[lo*stride : hi*stride], wantPrec[lo*stride : hi*stride]},
		{"global precision", prec[n*stride:], wantPrec[n*stride:]},
	} {
		if i, ok := SameBits(c.got, c.want); !ok {
			t.Fatalf("%s: %s differ at %d (lengths %d, %d)", where, c.what, i, len(c.got), len(c.want))
		}
	}
}

// CheckStart is CheckStartShare, or with part, the same check of the start
// of a target of the subjects [lo, hi) alone (theta and prec laid out for
// hi-lo subjects) against a whole target's start.
func CheckStart(t testing.TB, where string, part bool, lo, hi, n, r, g int, theta, prec, wantTheta, wantPrec []float64) {
	t.Helper()
	if !part {
		CheckStartShare(t, where, lo, hi, n, r, g, theta, prec, wantTheta, wantPrec)
		return
	}
	stride := arrowhead.Stride(r, g)
	m := hi - lo
	all := make([]float64, len(wantTheta))
	allPrec := make([]float64, len(wantPrec))
	copy(all[lo*r:hi*r], theta[:m*r])
	copy(all[n*r:], theta[m*r:])
	copy(allPrec[lo*stride:hi*stride], prec[:m*stride])
	copy(allPrec[n*stride:], prec[m*stride:])
	CheckStartShare(t, where, lo, hi, n, r, g, all, allPrec, wantTheta, wantPrec)
}

// A Starter is a start that processes share: glmm.Model's, rvb.Target's.
type Starter interface {
	Dims() (n, r, g int)
	StartShare(pool *parallel.Pool, c parallel.Carrier, lo, hi int, theta, prec []float64) error
	StartGroup(pool *parallel.Pool, c parallel.Carrier, theta, prec []float64) error
}

// CheckStopped starts, in three goroutine processes that share the n
// subjects split at glmm.StartChunk and twice it, the Starters that build
// returns, one process's pool cancelled, and asks that every process
// returns: the cancelled one with its context's error, the others with
// parallel.ErrProcessStopped. It does so with part false (each process
// holds the whole model and starts its subjects [lo, hi): StartShare) and
// true (it holds those subjects alone: StartGroup), each process cancelled
// in turn. A process left waiting for a sum fails the test by go test's
// timeout.
func CheckStopped(t testing.TB, n int, build func(part bool, lo, hi int, grp *Group) (Starter, error)) {
	t.Helper()
	c := glmm.StartChunk
	bounds := []int{0, c, 2 * c, n}
	size := len(bounds) - 1
	for _, part := range []bool{false, true} {
		for stop := range size {
			errs := make([]error, size)
			var wg sync.WaitGroup
			for k, grp := range NewGroups(size) {
				wg.Go(func() {
					errs[k] = startStopped(part, k == stop, bounds[k], bounds[k+1], grp, build)
				})
			}
			wg.Wait()
			for k, err := range errs {
				want := parallel.ErrProcessStopped
				if k == stop {
					want = context.Canceled
				}
				if !errors.Is(err, want) {
					t.Errorf("part %v, process %d stopped: process %d returned %v, want %v", part, stop, k, err, want)
				}
			}
		}
	}
}

// startStopped builds a process's Starter and starts it on a pool whose
// context is cancelled if stop.
func startStopped(part, stop bool, lo, hi int, grp *Group, build func(part bool, lo, hi int, grp *Group) (Starter, error)) error {
	s, err := build(part, lo, hi, grp)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if stop {
		cancel()
	}
	pool := parallel.NewPool(ctx, 1)
	defer pool.Close()
	n, r, g := s.Dims()
	theta := make([]float64, n*r+g)
	prec := make([]float64, arrowhead.Len(n, r, g))
	if part {
		return s.StartGroup(pool, grp, theta, prec)
	}
	return s.StartShare(pool, grp, lo, hi, theta, prec)
}
