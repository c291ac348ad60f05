// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"errors"
	"testing"
)

// TestUntilDone: untilDone returns the step's result, its error included,
// and returns the context's error when the context ends while the step,
// which does not look at it, is still running.
func TestUntilDone(t *testing.T) {
	v, err := untilDone(context.Background(), func() (int, error) { return 7, nil })
	if v != 7 || err != nil {
		t.Errorf("finished step: %v, %v", v, err)
	}
	bad := errors.New("bad row")
	if _, err := untilDone(context.Background(), func() (int, error) { return 0, bad }); err != bad {
		t.Errorf("failed step: error %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	go func() {
		<-started
		cancel()
	}()
	v, err = untilDone(ctx, func() (int, error) {
		close(started)
		<-release // until the test ends: the step never finishes first
		return 7, nil
	})
	if v != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("interrupted step: %v, %v; want 0, %v", v, err, context.Canceled)
	}
}
