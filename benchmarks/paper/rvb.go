// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"fmt"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// rvbTarget returns the reparametrised target of a method name, "rvb1" or
// "rvb2" (the paper's expansion) or "rvb1s" (RVB1 expanded at the start,
// glmmfit's default), fitted with vi.BlockDiag (the block-diagonal covariance
// factor).
func rvbTarget(m *glmm.Model, method string) (vi.Target, vi.Method, error) {
	var (
		t   *rvb.Target
		err error
	)
	switch method {
	case "rvb1":
		t, err = rvb.New(m, rvb.RVB1)
	case "rvb2":
		t, err = rvb.New(m, rvb.RVB2)
	case "rvb1s":
		pool := parallel.NewPool(context.Background(), 0)
		t, err = rvb.NewAtStart(pool, m, rvb.RVB1)
		pool.Close()
	default:
		return nil, 0, fmt.Errorf("unknown method %q (want gva, vb, rvb1, rvb2 or rvb1s)", method)
	}
	if err != nil {
		return nil, 0, err
	}
	return t, vi.BlockDiag, nil
}
