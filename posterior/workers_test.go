// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior_test

import (
	"context"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// goroutinesCreated returns how many goroutines the program has created.
func goroutinesCreated(t *testing.T) uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Skip("runtime/metrics has no count of goroutines created")
	}
	return s[0].Value.Uint64()
}

// TestWorkersOneIsSerial: Settings{Workers: 1} runs every phase of a fit
// on the calling goroutine — the model's start, RVB's start built into the
// target (glmm.Model.Start, rvb.NewAtStart), the iterations, the final
// lower bound and (default method) RVB's summaries — for the default
// method and for GVA, while Workers: 2 on
// the same 600 subjects (three chunks) does start goroutines, so the count
// can tell.
func TestWorkersOneIsSerial(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs GOMAXPROCS of 2 or more")
	}
	m := simModel(t, 600, 5)
	fits := map[string]func(workers int) error{
		"default": func(workers int) error {
			// The fit and its summaries, as glmmfit runs them.
			res, tg, err := posterior.Fit(context.Background(), m, vi.Settings{Workers: workers, MaxIter: 60})
			if err != nil {
				return err
			}
			_, err = posterior.SummarizeFit(context.Background(), res, tg, m, 100, 1)
			return err
		},
		"gva": func(workers int) error {
			_, err := vi.Fit(context.Background(), m, vi.Settings{Method: vi.GVA, Workers: workers, MaxIter: 60})
			return err
		},
	}
	for _, name := range []string{"default", "gva"} {
		for _, workers := range []int{1, 2} {
			// A collection first, so that the collector's own workers
			// exist before the count.
			runtime.GC()
			before := goroutinesCreated(t)
			if err := fits[name](workers); err != nil {
				t.Fatalf("%s, %d workers: %v", name, workers, err)
			}
			created := goroutinesCreated(t) - before
			switch {
			case workers == 1 && created != 0:
				t.Errorf("%s with Workers: 1 created %d goroutines, want none", name, created)
			case workers == 2 && created == 0:
				t.Errorf("%s with Workers: 2 created no goroutines: the count cannot tell", name)
			}
		}
	}
}
