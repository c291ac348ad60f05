// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/sparsevi/sparsevi/vi"
)

// TestChunkedGVA: GVA under Snngm with a draw held chunk by chunk and the
// natural gradient computed block by block (gvaChunks) fits bit for bit
// what the family storing them whole fits: the state, the final bound,
// the importance draws and the trace, for 1, 2 and 3 random effects (the
// kernels' three paths), chunks that do and do not divide the subjects,
// and 1 to 3 workers; and the chunked family is the one Fit takes for
// Snngm alone.
func TestChunkedGVA(t *testing.T) {
	for _, c := range []struct {
		family string
		n      int
		cov    [][]float64
	}{
		{"bernoulli", 700, [][]float64{{1}}},
		{"poisson", 300, [][]float64{{0.5, 0.1}, {0.1, 0.3}}},
		{"poisson", 130, [][]float64{{0.4, 0, 0}, {0, 0.2, 0}, {0, 0, 0.1}}},
	} {
		m := simModel(t, c.family, c.n, c.cov, 11)
		for _, chunk := range []int{0, 64} {
			workers := []int{1, 2, 3}
			if testing.Short() {
				workers = workers[1:2]
			}
			for _, workers := range workers {
				name := fmt.Sprintf("%s r=%d chunk %d, %d workers", c.family, len(c.cov), chunk, workers)
				set := vi.Settings{Method: vi.GVA, Seed: 5, Workers: workers, ChunkSize: chunk, MaxIter: 300}
				var res [2]*vi.Result
				for k, on := range []bool{false, true} {
					was := vi.SetChunkedGVA(on)
					r, err := vi.Fit(context.Background(), m, set)
					vi.SetChunkedGVA(was)
					if err != nil {
						t.Fatalf("%s, chunked %v: %v", name, on, err)
					}
					res[k] = r
				}
				sameResults(t, name, res[0], res[1])
			}
		}
	}
	// Which family Fit builds.
	m := simModel(t, "bernoulli", 50, [][]float64{{1}}, 11)
	for _, rule := range vi.Rules() {
		chunked, stored := vi.ChunkedFamily(m, vi.Settings{Method: vi.GVA, Rule: rule})
		_, snngm := rule.(vi.Snngm)
		if chunked != snngm || stored == snngm {
			t.Errorf("%v: chunked %v, a draw stored whole %v", rule, chunked, stored)
		}
	}
}

// TestChunkedGVACheck: the chunked family, which labels its factor's
// entries by the pattern of one subject's block, finds the same first
// bad diagonal entry as the family that labels every entry.
func TestChunkedGVACheck(t *testing.T) {
	for _, cov := range [][][]float64{{{1}}, {{0.5, 0.1}, {0.1, 0.3}}} {
		m := simModel(t, "poisson", 20, cov, 11)
		n, r, g := m.Dims()
		stride := r*(r+1)/2 + g*r
		last := n*stride + g*(g+1)/2 - 1 // the global block's last diagonal entry
		for _, c := range []struct {
			j int
			x float64
		}{{0, 0}, {0, math.NaN()}, {1, -1}, {5*stride + r*(r+1)/2 - 1, math.Inf(1)}, {(n - 1) * stride, -2}, {n * stride, 0}, {last, -1}, {last - 1, -1}} {
			chunked, stored := vi.CheckFactorBoth(m, c.j, c.x)
			if (stored == nil) != (c.j == 1 || c.j == last-1) {
				t.Errorf("r=%d, entry %d = %v: stored family's check %v", r, c.j, c.x, stored)
			}
			if fmt.Sprint(chunked) != fmt.Sprint(stored) {
				t.Errorf("r=%d, entry %d = %v: chunked %v, stored %v", r, c.j, c.x, chunked, stored)
			}
		}
	}
}

// sameResults checks that two fits agree to the bit.
func sameResults(t *testing.T, name string, a, b *vi.Result) {
	t.Helper()
	if a.Iterations != b.Iterations || a.Status != b.Status || a.Backoffs != b.Backoffs || len(a.Trace) != len(b.Trace) {
		t.Fatalf("%s: %d iterations (%v, %d backoffs, %d windows) against %d (%v, %d, %d)", name,
			a.Iterations, a.Status, a.Backoffs, len(a.Trace), b.Iterations, b.Status, b.Backoffs, len(b.Trace))
	}
	same := func(what string, x, y []float64) {
		t.Helper()
		if len(x) != len(y) {
			t.Fatalf("%s: %s has %d and %d values", name, what, len(x), len(y))
		}
		for k := range x {
			if math.Float64bits(x[k]) != math.Float64bits(y[k]) {
				t.Fatalf("%s: %s[%d] = %v and %v", name, what, k, x[k], y[k])
			}
		}
	}
	same("Mu", a.Mu, b.Mu)
	same("Factor", a.Factor, b.Factor)
	same("bound", []float64{a.LowerBound, a.LowerBoundSE}, []float64{b.LowerBound, b.LowerBoundSE})
	same("LogWeights", a.LogWeights, b.LogWeights)
	same("ImportanceGlobal", a.ImportanceGlobal, b.ImportanceGlobal)
	for k := range a.Trace {
		same(fmt.Sprintf("Trace[%d]", k), []float64{a.Trace[k].LowerBound, a.Trace[k].StepNorm}, []float64{b.Trace[k].LowerBound, b.Trace[k].StepNorm})
	}
}
