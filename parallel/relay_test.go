// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parallel_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/sparsevi/sparsevi/internal/simshare"
	"github.com/sparsevi/sparsevi/parallel"
)

// TestRelay runs a computation of four sums, of different widths, in
// goroutine processes, some of which fail or stop before one of the sums,
// and asks that every process returns (none waits for a sum that never
// comes), that the failed process reports its own error and the others
// the first failed process or the stop, and that the sums taken before
// the failure are right. A hang fails the test by go test's timeout.
func TestRelay(t *testing.T) {
	const sums = 4
	errOwn := errors.New("own failure")
	// fail[k] is the sum before which process k fails (-1: never, sums:
	// after the last); how[k] its error.
	for _, tc := range []struct {
		fail []int
		how  []error
		// want is the first failed process, -1 for none, -2 for a stop.
		want int
	}{
		{fail: []int{-1}, want: -1},
		{fail: []int{0}, how: []error{errOwn}, want: 0},
		{fail: []int{-1, -1, -1}, want: -1},
		{fail: []int{-1, 2, -1}, how: []error{nil, errOwn, nil}, want: 1},
		{fail: []int{0, -1, -1}, how: []error{errOwn, nil, nil}, want: 0},
		{fail: []int{-1, -1, sums}, how: []error{nil, nil, errOwn}, want: 2},
		{fail: []int{-1, 3, 1}, how: []error{nil, errOwn, errOwn}, want: 2},
		{fail: []int{-1, 1, 1}, how: []error{nil, errOwn, errOwn}, want: 1},
		{fail: []int{2, -1, -1}, how: []error{context.Canceled, nil, nil}, want: -2},
		{fail: []int{-1, 1, 1}, how: []error{nil, errOwn, context.DeadlineExceeded}, want: -2},
	} {
		name := fmt.Sprintf("fail %v, errors %v", tc.fail, tc.how)
		size := len(tc.fail)
		groups := simshare.NewGroups(size)
		errs := make([]error, size)
		got := make([][][]float64, size)
		var wg sync.WaitGroup
		for k, grp := range groups {
			wg.Go(func() {
				relay := parallel.NewRelay(grp)
				var err error
				for s := range sums {
					if s == tc.fail[k] {
						err = tc.how[k]
						break
					}
					acc := make([]float64, s+1)
					if err = relay.Carry(acc, func(acc []float64) {
						for j := range acc {
							acc[j] += float64((k + 1) * (j + 1))
						}
					}); err != nil {
						break
					}
					got[k] = append(got[k], acc)
				}
				if err == nil && tc.fail[k] == sums {
					err = tc.how[k]
				}
				errs[k] = relay.Close(err)
			})
		}
		wg.Wait()
		// The sums all processes took before the first failure.
		first := sums
		for _, f := range tc.fail {
			if f >= 0 {
				first = min(first, f)
			}
		}
		for k := range size {
			var pe *parallel.ProcessError
			switch {
			case tc.fail[k] >= 0 && tc.fail[k] <= first:
				if !errors.Is(errs[k], tc.how[k]) {
					t.Errorf("%s: process %d returned %v, not its own error", name, k, errs[k])
				}
			case tc.want == -1:
				if errs[k] != nil {
					t.Errorf("%s: process %d failed: %v", name, k, errs[k])
				}
			case tc.want == -2:
				if !errors.Is(errs[k], parallel.ErrProcessStopped) {
					t.Errorf("%s: process %d returned %v, not ErrProcessStopped", name, k, errs[k])
				}
			case !errors.As(errs[k], &pe) || pe.Process != tc.want:
				t.Errorf("%s: process %d returned %v, want the failure of process %d", name, k, errs[k], tc.want)
			}
			if len(got[k]) != first {
				t.Errorf("%s: process %d took %d sums, want %d", name, k, len(got[k]), first)
			}
			for s, acc := range got[k] {
				for j, v := range acc {
					if want := float64(size * (size + 1) / 2 * (j + 1)); v != want {
						t.Errorf("%s: process %d, sum %d, value %d: %v, want %v", name, k, s, j, v, want)
					}
				}
			}
		}
	}
}

// TestRelayGather gathers strings of every length around the six bytes a
// value holds, with empty strings, bytes above 0x7f and processes that
// give none, in one to three processes, and asks that every process gets
// each process's strings in order.
func TestRelayGather(t *testing.T) {
	lists := [][]string{
		{"", "a", "abcdef", "abcdefg", "héllo wörld", "\xff\x00\x80", "twelve bytes", "1.5e+06"},
		nil,
		{"level 7", ""},
	}
	for size := 1; size <= len(lists); size++ {
		groups := simshare.NewGroups(size)
		got := make([][][]string, size)
		errs := make([]error, size)
		var wg sync.WaitGroup
		for k, grp := range groups {
			wg.Go(func() {
				relay := parallel.NewRelay(grp)
				got[k], errs[k] = relay.Gather(lists[k])
				errs[k] = relay.Close(errs[k])
			})
		}
		wg.Wait()
		for k := range size {
			if errs[k] != nil {
				t.Fatalf("%d processes: process %d: %v", size, k, errs[k])
			}
			if len(got[k]) != size {
				t.Fatalf("%d processes: process %d got %d lists", size, k, len(got[k]))
			}
			for q := range size {
				if fmt.Sprintf("%q", got[k][q]) != fmt.Sprintf("%q", lists[q]) && len(got[k][q])+len(lists[q]) > 0 {
					t.Errorf("%d processes: process %d got %q from process %d, want %q", size, k, got[k][q], q, lists[q])
				}
			}
		}
	}
}

// TestRelayTry sums over three goroutine processes with Try, the first
// starting from the values given, and asks for the sum in order; then
// lets one process's local computation fail, or stop with its context,
// and asks that it report its own error, the others that process or the
// stop, all at that sum, and that Close return at once.
func TestRelayTry(t *testing.T) {
	errOwn := errors.New("own failure")
	for _, how := range []error{errOwn, context.Canceled} {
		for fail := -1; fail < 3; fail++ {
			groups := simshare.NewGroups(3)
			errs, closed := make([]error, 3), make([]error, 3)
			got := make([][]float64, 3)
			var wg sync.WaitGroup
			for k, grp := range groups {
				wg.Go(func() {
					relay := parallel.NewRelay(grp)
					acc := []float64{100, 0}
					errs[k] = relay.Try(acc, func(acc []float64) error {
						acc[0] = acc[0]*2 + float64(k)
						acc[1]++
						if k == fail {
							return how
						}
						return nil
					})
					got[k] = acc
					closed[k] = relay.Close(errs[k])
				})
			}
			wg.Wait()
			for k := range 3 {
				var pe *parallel.ProcessError
				switch {
				case fail < 0:
					if errs[k] != nil || closed[k] != nil || got[k][0] != ((100*2+0)*2+1)*2+2 || got[k][1] != 3 {
						t.Errorf("process %d: %v, %v, sums %v", k, errs[k], closed[k], got[k])
					}
				case k == fail:
					if errs[k] != how || closed[k] != how {
						t.Errorf("failing process %d: %v, then %v", k, errs[k], closed[k])
					}
				case how == context.Canceled:
					if errs[k] != parallel.ErrProcessStopped || closed[k] != errs[k] || got[k][0] != 100 {
						t.Errorf("process %d with process %d stopping: %v, then %v, acc %v", k, fail, errs[k], closed[k], got[k])
					}
				case !errors.As(errs[k], &pe) || pe.Process != fail || closed[k] != errs[k] || got[k][0] != 100:
					t.Errorf("process %d with process %d failing: %v, then %v, acc %v", k, fail, errs[k], closed[k], got[k])
				}
			}
		}
	}
}
