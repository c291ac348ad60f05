// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package mpi

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// chunkData returns n chunk vectors of g values spread over many orders of
// magnitude and of both signs, so that the order of the additions shows in
// the last bits of the sum.
func chunkData(n, g int, seed uint64) []float64 {
	rnd := rand.New(rand.NewPCG(seed, 17))
	x := make([]float64, n*g)
	for i := range x {
		x[i] = rnd.NormFloat64() * math.Exp(8*rnd.NormFloat64())
	}
	return x
}

// strideSum is a second, independent implementation of the pairwise tree:
// in place over the chunks, doubling the stride at each level.
func strideSum(x []float64, n, g int) []float64 {
	v := slices.Clone(x)
	for s := 1; s < n; s *= 2 {
		for i := 0; i+s < n; i += 2 * s {
			for e := range g {
				v[i*g+e] += v[(i+s)*g+e]
			}
		}
	}
	return v[:g]
}

func sameBits(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
			return false
		}
	}
	return true
}

func TestCover(t *testing.T) {
	for n := 1; n <= 40; n++ {
		tr := NewTree(n)
		for lo := 0; lo <= n; lo++ {
			for hi := lo; hi <= n; hi++ {
				nodes := tr.Cover(nil, lo, hi)
				p := lo
				for _, nd := range nodes {
					if nd.Start != p {
						t.Fatalf("n=%d [%d,%d): node %v starts at %d, want %d", n, lo, hi, nd, nd.Start, p)
					}
					if nd.Start%(1<<nd.Level) != 0 {
						t.Fatalf("n=%d [%d,%d): node %v is not aligned", n, lo, hi, nd)
					}
					p = tr.end(nd.Level, nd.Start)
				}
				if p != hi {
					t.Fatalf("n=%d [%d,%d): nodes %v end at %d", n, lo, hi, nodes, p)
				}
				if max := 2 * (tr.top + 1); len(nodes) > max {
					t.Fatalf("n=%d [%d,%d): %d nodes, more than %d", n, lo, hi, len(nodes), max)
				}
			}
		}
		if got := tr.Cover(nil, 0, n); len(got) != 1 || got[0] != (Node{0, tr.top}) {
			t.Fatalf("n=%d: cover of all chunks is %v, want the root", n, got)
		}
	}
}

func TestTreeSumIsPairwise(t *testing.T) {
	const g = 3
	for n := 1; n <= 70; n++ {
		x := chunkData(n, g, uint64(n))
		want := strideSum(x, n, g)
		got := make([]float64, g)
		treeSum(got, x, n, g)
		if !sameBits(got, want) {
			t.Fatalf("n=%d: Tree.Sum = %v, in-place pairwise sum = %v", n, got, want)
		}
	}
}

func TestTreeSumAccuracy(t *testing.T) {
	const n, g = 1000, 4
	x := chunkData(n, g, 1)
	got := make([]float64, g)
	treeSum(got, x, n, g)
	for e := range g {
		exact := new(big.Float).SetPrec(2000)
		abs := 0.0
		for c := range n {
			exact.Add(exact, big.NewFloat(x[c*g+e]))
			abs += math.Abs(x[c*g+e])
		}
		ex, _ := exact.Float64()
		// Pairwise summation's bound: depth ulps of the sum of magnitudes.
		bound := 10 * 0x1p-53 * abs
		if d := math.Abs(got[e] - ex); d > bound {
			t.Errorf("element %d: sum %g, exact %g, error %g above %g", e, got[e], ex, d, bound)
		}
	}
}

// TestOrderSensitive checks that the test data would expose a change of
// summation order, so that the bit-identity tests below have teeth.
func TestOrderSensitive(t *testing.T) {
	const n, g = 1000, 5
	x := chunkData(n, g, 2)
	tree := make([]float64, g)
	treeSum(tree, x, n, g)
	seq := make([]float64, g)
	for c := range n {
		add(seq, x[c*g:(c+1)*g])
	}
	if sameBits(tree, seq) {
		t.Fatalf("the pairwise and the left-to-right sums agree to the bit; the data cannot tell orders apart")
	}
}

// fakeWorld runs Allgatherv between goroutines standing for processes.
type fakeWorld struct {
	size    int
	mu      sync.Mutex
	cond    *sync.Cond
	arrived int
	phase   int
	buf     []float64
}

func newFakeWorld(size int) *fakeWorld {
	w := &fakeWorld{size: size}
	w.cond = sync.NewCond(&w.mu)
	return w
}

func (w *fakeWorld) barrier() {
	w.mu.Lock()
	defer w.mu.Unlock()
	phase := w.phase
	w.arrived++
	if w.arrived == w.size {
		w.arrived = 0
		w.phase++
		w.cond.Broadcast()
		return
	}
	for phase == w.phase {
		w.cond.Wait()
	}
}

func (w *fakeWorld) allgatherv(rank int) func(dst, src []float64, counts []int) error {
	return func(dst, src []float64, counts []int) error {
		off := 0
		for r := range rank {
			off += counts[r]
		}
		w.mu.Lock()
		if len(w.buf) != len(dst) {
			w.buf = make([]float64, len(dst))
		}
		copy(w.buf[off:], src)
		w.mu.Unlock()
		w.barrier()
		w.mu.Lock()
		copy(dst, w.buf)
		w.mu.Unlock()
		w.barrier()
		return nil
	}
}

// runRanks computes the ordered sum of the chunks x with the given bounds,
// one goroutine per process, and returns each process's result.
func runRanks(t *testing.T, x []float64, g int, bounds []int) [][]float64 {
	size := len(bounds) - 1
	w := newFakeWorld(size)
	out := make([][]float64, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for r := range size {
		wg.Go(func() {
			s, err := newOrderedSum(g, bounds, r, size, w.allgatherv(r))
			if err != nil {
				errs[r] = err
				return
			}
			lo, hi := s.Chunks()
			part := slices.Clone(x[lo*g : hi*g])
			out[r] = make([]float64, g)
			errs[r] = s.Sum(out[r], part)
			if !sameBits(part, x[lo*g:hi*g]) {
				errs[r] = fmt.Errorf("rank %d: Sum modified its partials", r)
			}
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("bounds %v, rank %d: %v", bounds, r, err)
		}
	}
	return out
}

func TestOrderedSumAnyRanks(t *testing.T) {
	const g = 5
	for _, n := range []int{1, 2, 7, 64, 100, 1000} {
		x := chunkData(n, g, uint64(n)+100)
		want := make([]float64, g)
		treeSum(want, x, n, g)
		splits := [][]int{EvenBounds(n, 1), EvenBounds(n, 2), EvenBounds(n, 3), EvenBounds(n, 5),
			{0, 0, n}, {0, n / 3, n / 3, n}, {0, 1, n}}
		for _, b := range splits {
			if b[len(b)-2] > b[len(b)-1] || b[1] > b[len(b)-1] {
				continue
			}
			for r, got := range runRanks(t, x, g, b) {
				if !sameBits(got, want) {
					t.Errorf("n=%d, bounds %v, rank %d: sum %v, one process %v", n, b, r, got, want)
				}
			}
		}
	}
}

func TestOrderedSumSent(t *testing.T) {
	// Each process sends its whole subtrees, not its chunks: at most
	// 2·(log2 n + 1) vectors.
	const n, g = 3907, 10
	b := EvenBounds(n, 2)
	for r := range 2 {
		s, err := newOrderedSum(g, b, r, 2, nil)
		if err != nil {
			t.Fatal(err)
		}
		if max := 2 * (NewTree(n).top + 1) * g; s.Sent() > max || s.Sent() == 0 {
			t.Errorf("rank %d sends %d values, want 1..%d", r, s.Sent(), max)
		}
	}
}

func TestOrderedSumErrors(t *testing.T) {
	for _, c := range []struct {
		g      int
		bounds []int
		size   int
		want   string
	}{
		{0, []int{0, 4}, 1, "vectors of 0 values"},
		{2, []int{0, 4}, 2, "2 chunk bounds for 2 processes, want 3"},
		{2, []int{1, 4}, 1, "start at 1"},
		{2, []int{0, 5, 4}, 2, "decrease at rank 2"},
		{2, []int{0, 0}, 1, "no chunks"},
	} {
		_, err := newOrderedSum(c.g, c.bounds, 0, c.size, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("g=%d bounds %v size %d: error %v, want it to say %q", c.g, c.bounds, c.size, err, c.want)
		}
	}
}

func TestOrderedSumAllocs(t *testing.T) {
	const n, g = 500, 8
	x := chunkData(n, g, 3)
	s, err := newOrderedSum(g, EvenBounds(n, 1), 0, 1, func(dst, src []float64, _ []int) error {
		copy(dst, src)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	dst := make([]float64, g)
	if a := testing.AllocsPerRun(10, func() { s.Sum(dst, x) }); a != 0 {
		t.Errorf("Sum allocates %v times per call", a)
	}
}

// treeSum is Tree.Sum with its workspace, checking that x is not modified.
func treeSum(dst, x []float64, n, g int) {
	tr := NewTree(n)
	x0 := slices.Clone(x)
	tr.Sum(dst, x, g, make([]float64, tr.Depth()*g))
	if !sameBits(x, x0) {
		panic("Tree.Sum modified its partials")
	}
}

func TestSubjectBounds(t *testing.T) {
	for _, c := range []struct {
		n, chunk, size int
		want           []int
	}{
		{100, 16, 1, []int{0, 100}},
		{100, 16, 2, []int{0, 48, 100}},
		{100, 16, 3, []int{0, 32, 64, 100}},
		{100, 16, 7, []int{0, 16, 32, 48, 64, 80, 96, 100}},
	} {
		got, err := SubjectBounds(c.n, c.chunk, c.size)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("SubjectBounds(%d, %d, %d) = %v, %v, want %v", c.n, c.chunk, c.size, got, err, c.want)
		}
	}
	if _, err := SubjectBounds(100, 16, 8); err == nil {
		t.Error("SubjectBounds shared 7 chunks among 8 processes")
	}
}
