// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import "sync"

// chunkScratches holds the scratch space of each chunk of the start's
// passes, made at the chunk's first pass.
type chunkScratches struct {
	mu sync.Mutex
	s  []*startScratch
}

// chunkScratch returns the scratch space of chunk k's passes, with the
// starter's psi and crossed effects: made at the chunk's first pass and
// kept for the others. A pass's scratch space made anew for every chunk
// left about 80 bytes a subject of garbage over a start at 10^6 subjects
// (3907 chunks, some twenty passes), which no collection took before
// vi.Fit returned the start's workspaces: the start's peak was the fit's
// (benchmarks/memory). The passes write every value of their scratch
// space before they read it, so a kept one computes what a new one would.
func (st *starter) chunkScratch(k int) *startScratch {
	cs := &st.scratches
	cs.mu.Lock()
	if cs.s == nil {
		cs.s = make([]*startScratch, st.chunks.Len())
	}
	sc := cs.s[k]
	if sc == nil {
		sc = st.newScratch()
		cs.s[k] = sc
	}
	cs.mu.Unlock()
	sc.psi, sc.cross = st.psi, st.cross
	return sc
}
