// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"context"
	"errors"
	"fmt"

	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// SummarizeRVB returns the posterior means and standard deviations of a
// fit of the reparametrised target t: theta_g's exact Gaussian marginals,
// and the random effects b_i mapped back from the b~_i (see
// rvb.Target.Summarize), from at most maxDraws draws seeded by seed, on
// the fit's workers (res.Workers).
func SummarizeRVB(ctx context.Context, res *vi.Result, t *rvb.Target, maxDraws int, seed uint64) (*rvb.Summary, error) {
	return summarizeRVB(ctx, nil, res, t, maxDraws, seed)
}

// summarizeRVB is SummarizeRVB in one process of a group that c links
// (nil alone), as rvb.Target.SummarizeGroup.
func summarizeRVB(ctx context.Context, c parallel.Carrier, res *vi.Result, t *rvb.Target, maxDraws int, seed uint64) (*rvb.Summary, error) {
	switch {
	case res == nil:
		return nil, errors.New("posterior: SummarizeRVB of a nil Result")
	case t == nil:
		return nil, errors.New("posterior: SummarizeRVB with a nil target")
	case res.Method != vi.BlockDiag:
		return nil, fmt.Errorf("posterior: a Result of method %v, want %v", res.Method, vi.BlockDiag)
	}
	n, r, g := t.Dims()
	if res.N != n || res.R != r || res.G != g {
		return nil, fmt.Errorf("posterior: Result of dimensions (%d, %d, %d) does not fit the target's (%d, %d, %d)", res.N, res.R, res.G, n, r, g)
	}
	return t.SummarizeGroup(ctx, c, res.Workers, res.Mu, res.Factor, maxDraws, seed)
}
