// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// goroutinesCreated returns how many goroutines the program has created.
func goroutinesCreated(t *testing.T) uint64 {
	t.Helper()
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Skip("the runtime does not count the goroutines it creates")
	}
	return s[0].Value.Uint64()
}

// TestWorkersOne: with Settings.Workers 1, every phase of a fit runs on
// the calling goroutine, none created: the start (glmm's, and RVB's
// expansion at it on a pool of one worker), the iterations, the final
// bound and the importance ratios, for GVA and the block-diagonal family,
// on a machine of several cores; by default the same fit creates some.
func TestWorkersOne(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	m := simModel(t, "bernoulli", 300, [][]float64{{1}}, 5)
	cases := []struct {
		name   string
		target func() vi.Target
		method vi.Method
	}{
		{"gva", func() vi.Target { return m }, vi.GVA},
		{"block-diagonal", func() vi.Target { return m }, vi.BlockDiag},
		{"rvb1 at the start", func() vi.Target {
			pool := parallel.NewPool(context.Background(), 1)
			defer pool.Close()
			rt, err := rvb.NewAtStart(pool, m, rvb.RVB1)
			if err != nil {
				t.Fatal(err)
			}
			return rt
		}, vi.BlockDiag},
	}
	for _, c := range cases {
		for _, workers := range []int{1, 0} {
			before := goroutinesCreated(t)
			res, err := vi.Fit(context.Background(), c.target(), vi.Settings{Method: c.method, Init: vi.InitMode, Seed: 3, Workers: workers})
			created := goroutinesCreated(t) - before
			if err != nil {
				t.Fatal(err)
			}
			if len(res.LogWeights) == 0 {
				t.Fatalf("%s: no importance ratios: the test misses a phase", c.name)
			}
			switch {
			case workers == 1 && created != 0:
				t.Errorf("%s with one worker: %d goroutines created", c.name, created)
			case workers == 0 && created == 0:
				t.Errorf("%s by default: no goroutine created; the count cannot tell", c.name)
			}
		}
	}
}
