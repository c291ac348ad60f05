// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// rvbTarget returns the reparametrised target of a method name, "rvb1" or
// "rvb2", fitted with vi.RVB (the block-diagonal covariance factor).
func rvbTarget(m *glmm.Model, method string) (vi.Target, vi.Method, error) {
	var rm rvb.Method
	switch method {
	case "rvb1":
		rm = rvb.RVB1
	case "rvb2":
		rm = rvb.RVB2
	default:
		return nil, 0, fmt.Errorf("unknown method %q (want gva, vb, rvb1 or rvb2)", method)
	}
	t, err := rvb.New(m, rm)
	if err != nil {
		return nil, 0, err
	}
	return t, vi.RVB, nil
}
