// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/simshare"
)

// TestBuildPart builds the parts of a design (Options.Part) and asks that
// each part's model be the whole model's subjects bit for bit: the log
// density of every subject and its gradients at random points, with the
// same levels, rows, warnings and maps to the data's scale. The data
// interleave the subjects' rows, give a factor a level that only the last
// subjects have (so that the other parts' own rows are rank-deficient),
// and use weights, an offset, the auto prior's scaling and, for the
// gaussian family, the response's standardisation.
func TestBuildPart(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,x,f,g,w,off,y,count\n")
	rng := rand.New(rand.NewPCG(1, 2))
	for j := range 90 {
		i := (j * 7) % 10 // subject s0..s9, rows interleaved
		f := string(rune('a' + j%2))
		if i >= 8 {
			f = "c"
		}
		fmt.Fprintf(&b, "s%d,%.3f,%s,L%d,%.2f,%.2f,%.3f,%d\n", i, 3+2*rng.NormFloat64(), f, j%20,
			0.5+rng.Float64(), 0.1*rng.NormFloat64(), 100+10*rng.NormFloat64(), rng.IntN(6))
	}
	fr, err := datasets.ReadCSV(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		formula string
		opts    formula.Options
	}{
		{"y ~ x + f + offset(off) + (1 + x | id)", formula.Options{Family: glmm.Gaussian, Prior: formula.PriorAuto, Weights: "w"}},
		{"count ~ x * f + (1 | id)", formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto}},
		// Twenty levels: X is stored sparse.
		{"count ~ g + (1 | id)", formula.Options{Family: glmm.Poisson}},
	} {
		f, err := formula.Parse(c.formula)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := formula.Build(f, fr, c.opts)
		if err != nil {
			t.Fatal(err)
		}
		wm := whole.Model()
		n, r, g := wm.Dims()
		for _, bounds := range [][]int{{0, n}, {0, 4, n}, {0, 3, 7, n}} {
			// The data constant, carried through the parts in order.
			var dataConst float64
			for k := range len(bounds) - 1 {
				lo, hi := bounds[k], bounds[k+1]
				where := fmt.Sprintf("%s, part [%d, %d)", c.formula, lo, hi)
				opts := c.opts
				var asked int
				opts.Part = func(all int) (int, int, error) { asked = all; return lo, hi, nil }
				part, err := formula.Build(f, fr, opts)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				if asked != n {
					t.Fatalf("%s: Part was asked for %d subjects, want %d", where, asked, n)
				}
				pm := part.Model()
				dataConst = pm.DataConstantFrom(dataConst)
				if levels, plo, phi := part.PartOf(); !slices.Equal(levels, whole.GroupLevels()) || plo != lo || phi != hi {
					t.Fatalf("%s: part of %v [%d, %d), want %v [%d, %d)", where, levels, plo, phi, whole.GroupLevels(), lo, hi)
				}
				if pn, pr, pg := pm.Dims(); pn != hi-lo || pr != r || pg != g {
					t.Fatalf("%s: dims (%d, %d, %d), want (%d, %d, %d)", where, pn, pr, pg, hi-lo, r, g)
				}
				if !slices.Equal(part.GroupLevels(), whole.GroupLevels()[lo:hi]) || !slices.Equal(part.Warnings(), whole.Warnings()) {
					t.Fatalf("%s: levels %v, warnings %q; want %v, %q", where, part.GroupLevels(), part.Warnings(), whole.GroupLevels()[lo:hi], whole.Warnings())
				}
				var wantRows []int
				ids, _ := fr.Column("id")
				for _, row := range whole.Rows() {
					if i := slices.Index(whole.GroupLevels(), ids.Str[row]); lo <= i && i < hi {
						wantRows = append(wantRows, row)
					}
				}
				if !slices.Equal(part.Rows(), wantRows) {
					t.Fatalf("%s: rows %v, want %v", where, part.Rows(), wantRows)
				}
				pc, ps := part.ResponseScale()
				wc, wsc := whole.ResponseScale()
				if pc != wc || ps != wsc || part.ResponseLogJacobian() != whole.ResponseLogJacobian() {
					t.Fatalf("%s: response scale (%v, %v), want (%v, %v)", where, pc, ps, wc, wsc)
				}
				if pf, wf := part.FixedMap(), whole.FixedMap(); (pf == nil) != (wf == nil) || pf != nil && (!slices.Equal(pf.Center, wf.Center) || !slices.Equal(pf.Scale, wf.Scale)) {
					t.Fatalf("%s: fixed map %+v, want %+v", where, pf, wf)
				}
				pws, wws := pm.NewWorkspace(), wm.NewWorkspace()
				for range 3 {
					thetaG, bi := make([]float64, g), make([]float64, r)
					for a := range thetaG {
						thetaG[a] = 0.3 * rng.NormFloat64()
					}
					for i := range hi - lo {
						for a := range bi {
							bi[a] = rng.NormFloat64()
						}
						pgl, pgg := make([]float64, r), make([]float64, g)
						wgl, wgg := make([]float64, r), make([]float64, g)
						pv, perr := pm.Local(pws, i, i+1, thetaG, bi, pgl, pgg)
						wv, werr := wm.Local(wws, lo+i, lo+i+1, thetaG, bi, wgl, wgg)
						if perr != nil || werr != nil {
							t.Fatalf("%s: subject %d: %v, %v", where, i, perr, werr)
						}
						if _, ok := simshare.SameBits(append([]float64{pv}, append(pgl, pgg...)...), append([]float64{wv}, append(wgl, wgg...)...)); !ok {
							t.Fatalf("%s: subject %d: log density %v and gradients %v %v, want %v, %v %v", where, i, pv, pgl, pgg, wv, wgl, wgg)
						}
					}
				}
			}
			if _, ok := simshare.SameBits([]float64{dataConst}, []float64{wm.DataConstant()}); !ok {
				t.Errorf("%s, parts %v: data constant %v carried through the parts, want %v", c.formula, bounds, dataConst, wm.DataConstant())
			}
		}
		if levels, _, _ := whole.PartOf(); levels != nil {
			t.Errorf("%s: the whole design is a part of %v", c.formula, levels)
		}
	}
}
