// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"runtime"
	"testing"
)

// countedTarget is a gaussTarget that reports a number of observations.
type countedTarget struct {
	*gaussTarget
	obs int
}

func (t countedTarget) NumObs() int { return t.obs }

func TestDefaultWorkers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		target    Target
		maxWorker int
		want      int
	}{
		{"tiny", newGaussTarget(1, 10, 1, 2), 8, 1},
		{"subjects only", newGaussTarget(1, 3*WorkPerWorker, 1, 2), 8, 3},
		{"local size counts", newGaussTarget(1, WorkPerWorker, 2, 2), 8, 2},
		{"capped", newGaussTarget(1, 100*WorkPerWorker, 1, 2), 2, 2},
		{"observations count", countedTarget{newGaussTarget(1, 300, 1, 2), 2100}, 8, 1},
		{"many observations", countedTarget{newGaussTarget(1, 1000, 1, 2), 7000}, 8, 3},
		{"no locals", newGaussTarget(1, 0, 0, 3), 8, 1},
	} {
		if got := DefaultWorkers(tc.target, tc.maxWorker); got != tc.want {
			t.Errorf("%s: DefaultWorkers = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestFitSizesWorkers checks that a fit left to choose runs a small target
// on one worker, never on more chunks than there are, and gives the same
// result as with the workers set by hand.
func TestFitSizesWorkers(t *testing.T) {
	ctx := context.Background()
	small := newGaussTarget(3, 40, 2, 3)
	res, err := Fit(ctx, small, Settings{Seed: 1, MaxIter: 200})
	if err != nil {
		t.Fatal(err)
	}
	if res.Workers != 1 {
		t.Errorf("small target: %d workers, want 1", res.Workers)
	}
	two, err := Fit(ctx, small, Settings{Seed: 1, MaxIter: 200, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if two.Workers != 2 {
		t.Errorf("Workers: 2 ran on %d", two.Workers)
	}
	for k := range res.Mu {
		if res.Mu[k] != two.Mu[k] {
			t.Fatalf("mean %d: %v with one worker, %v with two", k, res.Mu[k], two.Mu[k])
		}
	}
	// 2*WorkPerWorker subjects in chunks of WorkPerWorker: at most two
	// chunks, so at most two workers however many cores there are.
	big := newGaussTarget(4, 2*WorkPerWorker, 2, 3)
	res, err = Fit(ctx, big, Settings{Seed: 1, MaxIter: 50, ChunkSize: WorkPerWorker})
	if err != nil {
		t.Fatal(err)
	}
	if want := min(2, runtime.GOMAXPROCS(0)); res.Workers != want {
		t.Errorf("two chunks: %d workers, want %d", res.Workers, want)
	}
	// WorkersFor says beforehand what Fit chose.
	for _, c := range []struct {
		target Target
		set    Settings
		want   int
	}{
		{small, Settings{}, 1},
		{small, Settings{Workers: 2}, 2},
		{big, Settings{ChunkSize: WorkPerWorker}, res.Workers},
	} {
		if got := c.set.WorkersFor(c.target); got != c.want {
			t.Errorf("WorkersFor with Workers %d, ChunkSize %d: %d, Fit ran on %d", c.set.Workers, c.set.ChunkSize, got, c.want)
		}
	}
}
