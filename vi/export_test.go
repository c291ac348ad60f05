// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"

	"github.com/sparsevi/sparsevi/parallel"
)

// SetMoveTol sets the tolerance of the test of the global means' moves
// between windows, which Fit sets for RVB's fits of many subjects
// (RVBMoveTol).
func SetMoveTol(s *Settings, tol float64) { s.moveTol = tol }

// SetChunkedGVA sets whether GVA under Snngm holds a draw chunk by chunk
// (gvaChunks) and returns the setting it replaces.
func SetChunkedGVA(on bool) bool {
	was := chunkedGVA
	chunkedGVA = on
	return was
}

// ChunkedFamily reports whether the GVA family of set (with its defaults)
// on t holds a draw chunk by chunk, and whether it stores a draw's theta,
// gradient and tmp whole.
func ChunkedFamily(t Target, set Settings) (chunked, stored bool) {
	pool := parallel.NewPool(context.Background(), 2)
	defer pool.Close()
	f := newGVA(t, set.withDefaults(), pool, nil, nil)
	return f.chunked != nil, f.theta != nil
}

// CheckFactorBoth sets entry j of the factor of GVA on t to x in a family
// that holds a draw chunk by chunk and in one that stores it whole, and
// returns the errors of their checks of the factor's diagonal.
func CheckFactorBoth(t Target, j int, x float64) (chunked, stored error) {
	pool := parallel.NewPool(context.Background(), 2)
	defer pool.Close()
	set := Settings{Method: GVA}.withDefaults()
	for _, on := range []bool{true, false} {
		was := SetChunkedGVA(on)
		f := newGVA(t, set, pool, nil, nil)
		SetChunkedGVA(was)
		f.t.SetIdentity(1)
		f.lam[f.d+j] = x
		if on {
			chunked = f.check()
		} else {
			stored = f.check()
		}
	}
	return chunked, stored
}
