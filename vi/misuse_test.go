// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// TestMisuseIsAnError: a caller's mistake gets an error naming it, not a
// panic, and a Result records whether its target was reparametrised
// (posterior's tests check that summaries refuse the wrong pairing).
func TestMisuseIsAnError(t *testing.T) {
	m := simModel(t, "poisson", 12, [][]float64{{0.5}}, 4)
	res, err := vi.Fit(context.Background(), m, vi.Settings{Seed: 1, MaxIter: 200})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := rvb.New(m, rvb.RVB1)
	if err != nil {
		t.Fatal(err)
	}
	rres, err := vi.Fit(context.Background(), tg, vi.Settings{Method: vi.BlockDiag, Seed: 1, MaxIter: 200})
	if err != nil {
		t.Fatal(err)
	}
	if !rres.Reparametrised || res.Reparametrised {
		t.Fatalf("Reparametrised: %v for the RVB target, %v for the model", rres.Reparametrised, res.Reparametrised)
	}
	var nilCtx context.Context
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"Fit nil context", func() error { _, err := vi.Fit(nilCtx, m, vi.Settings{}); return err }, "nil context"},
		{"Fit nil target", func() error { _, err := vi.Fit(context.Background(), nil, vi.Settings{}); return err }, "nil target"},
	} {
		var err error
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s: panic %v", c.name, r)
				}
			}()
			err = c.call()
		}()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// hugeTarget claims dimensions no machine can hold.
type hugeTarget struct{ vi.Target }

func (hugeTarget) Dims() (int, int, int) { return 1 << 40, 3, 10 }

func TestFitRefusesUnallocatableTarget(t *testing.T) {
	m := simModel(t, "poisson", 12, [][]float64{{0.5}}, 4)
	_, err := vi.Fit(context.Background(), hugeTarget{m}, vi.Settings{})
	if err == nil || !strings.Contains(err.Error(), "allocated") {
		t.Errorf("error %v, want one saying the target cannot be allocated", err)
	}
}
