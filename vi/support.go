// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"fmt"

	"github.com/sparsevi/sparsevi/parallel"
)

// GlobalSupporter is implemented by Targets in which each subject's log
// density depends on only part of the global block, as a GLMM's subject
// depends only on the levels of a crossed factor its rows meet.
//
// GVA then keeps the rows of each T_gi outside the subject's support at
// zero. This loses nothing: at the optimum the precision T T' equals the
// expected negative Hessian of log p on the arrowhead pattern, whose
// block between subject i and a global variable it does not depend on is
// zero, and so, T_i being invertible, is that row of T_gi. Each such row
// would otherwise be estimated from noise alone, n*G numbers of it, which
// swamps the step once G is in the hundreds.
type GlobalSupporter interface {
	// GlobalSupport appends to dst the indices in [0, G), in increasing
	// order, of the global variables on which log p_i(theta_i | theta_g)
	// may depend, and returns the extended slice.
	GlobalSupport(i int, dst []int) []int
}

// crossSupport is, for each subject, the rows of T_gi that may be nonzero.
type crossSupport struct {
	start []int   // subject i's rows are rows[start[i]:start[i+1]]
	rows  []int32 // increasing within each subject
}

// newCrossSupport returns the number of global variables outside at least
// one of t's subjects' supports and, with rows, the supports themselves;
// nil and 0 when t is not a GlobalSupporter or every subject depends on
// the whole global block.
func newCrossSupport(t Target, rows bool) (*crossSupport, int, error) {
	gs, off, ok := supporterOf(t)
	if !ok {
		return nil, 0, nil
	}
	n, _, g := t.Dims()
	// A first pass checks and counts, so that a target whose subjects all
	// depend on everything costs no storage.
	reach := make([]int, g)
	var buf []int
	total := 0
	for i := range n {
		buf = gs.GlobalSupport(off+i, buf[:0])
		for k, j := range buf {
			if j < 0 || j >= g || (k > 0 && j <= buf[k-1]) {
				return nil, 0, fmt.Errorf("vi: GlobalSupport of subject %d gives index %d at position %d, want increasing indices in [0, %d)", i, j, k, g)
			}
			reach[j]++
		}
		total += len(buf)
	}
	partial := 0
	for _, c := range reach {
		if c < n {
			partial++
		}
	}
	if partial == 0 || !rows {
		return nil, partial, nil
	}
	s := &crossSupport{start: make([]int, n+1), rows: make([]int32, 0, total)}
	for i := range n {
		buf = gs.GlobalSupport(off+i, buf[:0])
		for _, j := range buf {
			s.rows = append(s.rows, int32(j))
		}
		s.start[i+1] = len(s.rows)
	}
	return s, partial, nil
}

// supporterOf returns t's GlobalSupporter and the number of its subjects
// before t's first: for a Share, its whole target's from subject Lo.
func supporterOf(t Target) (GlobalSupporter, int, bool) {
	if sh, ok := t.(*Share); ok {
		gs, ok := sh.Target.(GlobalSupporter)
		return gs, sh.Lo, ok
	}
	gs, ok := t.(GlobalSupporter)
	return gs, 0, ok
}

// stepBlocks is the package's stepBlocks with, in each subject's factor
// block, only T_i and the supported rows of T_gi: the step rules never
// touch the entries that stay zero. Adjacent spans are merged, and the
// global block of the factor is shared out over the blocks.
func (s *crossSupport) stepBlocks(c parallel.Chunking, r, g, stride, total int) [][]span {
	blocks := stepBlocks(c, r, g, stride, total)
	d := c.N*r + g
	tri := r * (r + 1) / 2
	for k := range c.Len() {
		lo, hi := c.Bounds(k)
		spans := []span{blocks[k][0]}
		add := func(a, b int) {
			if last := &spans[len(spans)-1]; last.hi == a {
				last.hi = b
				return
			}
			spans = append(spans, span{a, b})
		}
		for i := lo; i < hi; i++ {
			o := d + i*stride
			add(o, o+tri)
			for _, j := range s.rows[s.start[i]:s.start[i+1]] {
				add(o+tri+int(j)*r, o+tri+(int(j)+1)*r)
			}
		}
		blocks[k] = spans
	}
	// The global entries: the means as before, and the factor's block,
	// of order G^2/2 with G in the hundreds, shared out over the blocks
	// instead of left to the last one's worker.
	last := len(blocks) - 1
	blocks[last] = append(blocks[last], span{c.N * r, d})
	lo, m := d+c.N*stride, len(blocks)
	for k := range m {
		a, b := lo+(total-lo)*k/m, lo+(total-lo)*(k+1)/m
		if b > a {
			blocks[k] = append(blocks[k], span{a, b})
		}
	}
	return blocks
}
