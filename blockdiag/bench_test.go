// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/parallel"
)

// stepBench holds one instance of the benchmark of a whole iteration of
// Algorithm 1S on the synthetic target N(c, I): draw z from the chunk's
// stream, theta = mu + C z, grad h = -(theta - c) + C^-T z, the natural
// gradient, and the update, all fused in one pass over the chunks, the
// global block being one more task.
type stepBench struct {
	f                          *Factor
	chunk                      parallel.Chunking
	streams                    *parallel.Streams
	iter                       uint64
	rho                        float64
	c, mu, z, theta, grad, dMu []float64
	dC                         []float64
	fused                      bool
}

func newStepBench(n, r, g int, fused bool) *stepBench {
	f := New(n, r, g)
	f.SetIdentity(1)
	d := f.Dim()
	chunk := parallel.NewChunking(n, 0)
	return &stepBench{
		f: f, chunk: chunk, streams: parallel.NewStreams(1, chunk.Len()+1), rho: 0.01,
		c: randVec(newRand(2), d), mu: make([]float64, d), z: make([]float64, d),
		theta: make([]float64, d), grad: make([]float64, d), dMu: make([]float64, d),
		dC: make([]float64, Len(n, r, g)), fused: fused,
	}
}

func (sb *stepBench) task(k int) error {
	f := sb.f
	n, r, _ := f.Dims()
	var lo, hi, vlo, vhi int
	if k == sb.chunk.Len() {
		vlo, vhi = n*r, f.Dim()
	} else {
		lo, hi = sb.chunk.Bounds(k)
		vlo, vhi = lo*r, hi*r
	}
	rng := sb.streams.At(sb.iter, k)
	z := sb.z[vlo:vhi]
	for j := range z {
		z[j] = rng.NormFloat64()
	}
	global := k == sb.chunk.Len()
	if global {
		f.DrawGlobal(sb.theta, sb.mu, sb.z)
	} else {
		f.DrawRange(lo, hi, sb.theta, sb.mu, sb.z)
	}
	// The synthetic grad log p, then grad h = grad log p + C^-T z.
	g, th, c := sb.grad[vlo:vhi], sb.theta[vlo:vhi], sb.c[vlo:vhi]
	for j := range g {
		g[j] = c[j] - th[j]
	}
	if global {
		f.AddSolveTransGlobal(sb.grad, sb.z)
	} else {
		f.AddSolveTransRange(lo, hi, sb.grad, sb.z)
	}
	switch {
	case global && sb.fused:
		f.StepGlobal(sb.rho, sb.mu, sb.z, sb.grad)
	case global:
		f.NatGradGlobal(sb.dMu, sb.dC, sb.z, sb.grad)
		f.UpdateGlobal(sb.rho, sb.mu, sb.dMu, sb.dC)
	case sb.fused:
		f.StepRange(lo, hi, sb.rho, sb.mu, sb.z, sb.grad)
	default:
		f.NatGradRange(lo, hi, sb.dMu, sb.dC, sb.z, sb.grad)
		f.UpdateRange(lo, hi, sb.rho, sb.mu, sb.dMu, sb.dC)
	}
	return nil
}

func benchmarkStep(b *testing.B, fused bool) {
	for _, n := range []int{1e3, 1e4, 1e5, 1e6} {
		for _, r := range []int{1, 2} {
			for _, g := range []int{5, 10} {
				for _, workers := range []int{1, 2} {
					b.Run(fmt.Sprintf("n=%d/r=%d/G=%d/workers=%d", n, r, g, workers), func(b *testing.B) {
						if n >= 1e6 && testing.Short() {
							b.Skip("n = 10^6 only without -short")
						}
						sb := newStepBench(n, r, g, fused)
						p := parallel.NewPool(context.Background(), workers)
						defer p.Close()
						task := sb.task
						// The pool sizes its per-chunk error slots on first use.
						if err := p.Run(sb.chunk.Len()+1, task); err != nil {
							b.Fatal(err)
						}
						b.ReportAllocs()
						for b.Loop() {
							sb.iter++
							if err := p.Run(sb.chunk.Len()+1, task); err != nil {
								b.Fatal(err)
							}
						}
						b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/subject")
						if !isFinite(sb.mu) || !isFinite(sb.f.Data()) {
							b.Fatal("the iteration diverged")
						}
					})
				}
			}
		}
	}
}

// BenchmarkStep times one iteration with the direction stored (as Snngm
// and the other step rules need it) and then applied.
func BenchmarkStep(b *testing.B) { benchmarkStep(b, false) }

// BenchmarkStepFused times one iteration with StepRange, which applies the
// direction without storing it.
func BenchmarkStepFused(b *testing.B) { benchmarkStep(b, true) }

func isFinite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

// BenchmarkKernels times the range kernels alone over 10^5 subjects on one
// goroutine.
func BenchmarkKernels(b *testing.B) {
	const n = 100000
	for _, r := range []int{1, 2, 3} {
		f := randFactor(newRand(1), size{n, r, 5}, false)
		d, nt := f.Dim(), len(f.Data())
		x, y, z := randVec(newRand(2), d), make([]float64, d), randVec(newRand(3), d)
		dC, aC := make([]float64, nt), randVec(newRand(4), nt)
		spd := make([]float64, nt)
		f.CovRange(0, n, spd)
		g := New(n, r, 5)
		for _, k := range []struct {
			name string
			fn   func()
		}{
			{"MulVec", func() { f.MulVecRange(0, n, y, x) }},
			{"SolveTrans", func() { f.SolveTransRange(0, n, y, x) }},
			{"AddSolveTrans", func() { f.AddSolveTransRange(0, n, y, x) }},
			{"Draw", func() { f.DrawRange(0, n, y, x, z) }},
			{"LogDet", func() { _ = f.LogDetRange(0, n) }},
			{"NatGrad", func() { f.NatGradRange(0, n, y, dC, z, x) }},
			{"InvFisher", func() { f.InvFisherRange(0, n, y, dC, x, aC) }},
			{"Cholesky", func() { _ = g.CholRange(0, n, spd) }},
		} {
			b.Run(fmt.Sprintf("%s/r=%d", k.name, r), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					k.fn()
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/n, "ns/subject")
			})
		}
	}
}
