// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/simshare"
	"github.com/sparsevi/sparsevi/vi"
)

// keepCheckpoints returns settings whose Checkpoint keeps the latest checkpoint,
// through WriteTo and ReadCheckpoint, in *last, and cancels the fit after
// the given number of checkpoints.
func keepCheckpoints(t *testing.T, set vi.Settings, cancel context.CancelFunc, checkpoints int, last **vi.Checkpoint) vi.Settings {
	count := 0
	set.CheckpointEvery = 100
	set.Checkpoint = func(ck *vi.Checkpoint) error {
		var buf bytes.Buffer
		if _, err := ck.WriteTo(&buf); err != nil {
			return err
		}
		back, err := vi.ReadCheckpoint(&buf)
		if err != nil {
			t.Error(err)
			return err
		}
		*last = back
		if count++; count == checkpoints {
			cancel()
		}
		return nil
	}
	return set
}

// TestCheckpointResume stops fits after a checkpoint and resumes them, and
// asks for the bits of the fit that was not stopped: GVA and the
// block-diagonal family, three rules, one process and a group of two.
func TestCheckpointResume(t *testing.T) {
	for _, c := range []struct {
		family glmm.Family
		method vi.Method
		rule   vi.Rule
		procs  int
		// The test of the global means' moves that RVB's fits of 10^6
		// subjects or more take (vi.RVBMoveTol), here with a tolerance
		// that 150 subjects' jitter stays under (their means move
		// 0.06-0.14 sd a window), so that a resumed window vetoed for
		// want of the last window's average would show.
		moveTol float64
	}{
		{glmm.Bernoulli, vi.GVA, vi.Snngm{}, 1, 0},
		{glmm.Poisson, vi.BlockDiag, vi.Adam{}, 1, 0},
		{glmm.Poisson, vi.GVA, vi.Nagm{}, 1, 0},
		{glmm.Bernoulli, vi.BlockDiag, vi.Snngm{}, 2, 0},
		{glmm.Bernoulli, vi.BlockDiag, vi.Snngm{}, 1, 0.5},
	} {
		if testing.Short() && c.rule.String() != "snngm" {
			continue // the race detector's run (CI)
		}
		t.Run(fmt.Sprintf("%v/%v/%s/%d/%g", c.family, c.method, c.rule, c.procs, c.moveTol), func(t *testing.T) {
			d := simshare.New(c.family, 150, 4)
			set := vi.Settings{Method: c.method, Rule: c.rule, Init: vi.InitPaper, Seed: 6, ChunkSize: 32, Workers: 1, MaxIter: 3000}
			vi.SetMoveTol(&set, c.moveTol)
			bounds := []int{0, d.N}
			if c.procs == 2 {
				bounds = []int{0, 64, d.N}
			}
			fit := func(ctx context.Context, setFor func(k int) vi.Settings) ([]*vi.Result, []error) {
				return fitShares(t, ctx, d, bounds, setFor)
			}
			one, err := vi.Fit(context.Background(), model(t, d, 0, d.N), set)
			if err != nil {
				t.Fatal(err)
			}
			if one.Iterations < 400 {
				t.Fatalf("the fit ended after %d iterations, too few to stop it half way", one.Iterations)
			}
			// Checkpoints do not change the fit.
			last := make([]*vi.Checkpoint, c.procs)
			kept, _ := fit(context.Background(), func(k int) vi.Settings {
				return keepCheckpoints(t, set, func() {}, -1, &last[k])
			})
			sameShares(t, "with checkpoints", one, kept, bounds)
			// Stopped after the second checkpoint, then resumed; with the
			// test of the means' moves, after every checkpoint, so that
			// some resume where the windows are flat and a veto would
			// hold the fit back.
			stops := []int{2}
			if c.moveTol > 0 {
				stops = stops[:0]
				for k := 1; 100*k < one.Iterations; k++ {
					stops = append(stops, k)
				}
			}
			for _, stopAfter := range stops {
				ctx, cancel := context.WithCancel(context.Background())
				stoppedRes, errs := fit(ctx, func(k int) vi.Settings {
					return keepCheckpoints(t, set, cancel, stopAfter, &last[k])
				})
				cancel()
				for k := range c.procs {
					if stoppedRes[k].Status != vi.Cancelled || errs[k] == nil || last[k] == nil {
						t.Fatalf("process %d: status %v, error %v, want a cancelled fit with a checkpoint", k, stoppedRes[k].Status, errs[k])
					}
				}
				if last[0].Iter >= one.Iterations {
					t.Fatalf("checkpoint at iteration %d, the fit ends at %d", last[0].Iter, one.Iterations)
				}
				resumed, errs := fit(context.Background(), func(k int) vi.Settings {
					s := set
					s.Resume = last[k]
					return s
				})
				for k := range c.procs {
					if errs[k] != nil {
						t.Fatal(errs[k])
					}
				}
				sameShares(t, fmt.Sprintf("resumed after iteration %d", last[0].Iter), one, resumed, bounds)
			}
		})
	}
}

// TestCheckpointRefusals checks that a checkpoint resumes only the fit it
// came from, and that VOGN is not checkpointed.
func TestCheckpointRefusals(t *testing.T) {
	d := simshare.New(glmm.Bernoulli, 100, 4)
	m := model(t, d, 0, d.N)
	set := vi.Settings{Init: vi.InitPaper, Seed: 6, Workers: 1, MaxIter: 200}
	var last *vi.Checkpoint
	s := keepCheckpoints(t, set, func() {}, -1, &last)
	if _, err := vi.Fit(context.Background(), m, s); err != nil || last == nil {
		t.Fatalf("%v, checkpoint %v", err, last)
	}
	other := model(t, d, 0, 64)
	for _, c := range []struct {
		name   string
		target vi.Target
		change func(*vi.Settings)
		want   string
	}{
		{"target", other, func(*vi.Settings) {}, "n=100"},
		{"seed", m, func(s *vi.Settings) { s.Seed = 7 }, "seed 6"},
		{"method", m, func(s *vi.Settings) { s.Method = vi.BlockDiag }, "gva fit"},
		{"rule", m, func(s *vi.Settings) { s.Rule = vi.Adam{} }, "by snngm"},
	} {
		s := set
		s.Resume = last
		c.change(&s)
		if _, err := vi.Fit(context.Background(), c.target, s); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
	s = set
	s.Rule = vi.VOGN{}
	s.Checkpoint = func(*vi.Checkpoint) error { return nil }
	if _, err := vi.Fit(context.Background(), m, s); err == nil || !strings.Contains(err.Error(), "VOGN") {
		t.Errorf("VOGN checkpointed: error %v", err)
	}
	s = set
	boom := errors.New("disk full")
	s.Checkpoint = func(*vi.Checkpoint) error { return boom }
	if _, err := vi.Fit(context.Background(), m, s); !errors.Is(err, boom) {
		t.Errorf("a failed checkpoint gave %v, want it to stop the fit with its error", err)
	}
}
