// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/james-bowman/sparse"
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/simshare"
	"github.com/sparsevi/sparsevi/parallel"
)

// wholeCSV returns data whose subjects' rows are interleaved, with a
// factor whose last level only the last subjects have, a column that is
// numeric but for one typo, a covariate far from unit scale, a few
// missing values (with missing), numeric subject ids (with numericIDs) and
// twenty levels of g.
func wholeCSV(missing, numericIDs bool) string {
	var b strings.Builder
	b.WriteString("id,x,f,g,w,off,y,count,big,k,typo,yes,sp,sp0\n")
	rng := rand.New(rand.NewPCG(7, 8))
	for j := range 400 {
		i := (j * 7) % 23
		f := string(rune('a' + j%2))
		if i >= 20 {
			f = "c"
		}
		id := fmt.Sprintf("s%d", i)
		if numericIDs {
			id = fmt.Sprint(100 - 3*i)
			if j%5 == 0 {
				id += ".0" // the same number: Keep reads it as Build does
			}
		}
		x := fmt.Sprintf("%.3f", 3+2*rng.NormFloat64())
		if missing && j%37 == 5 {
			x = "NA"
		}
		typo := fmt.Sprint(j % 5)
		if j == 222 {
			typo = "3;1"
		}
		yes := "no"
		if rng.IntN(2) == 0 {
			yes = "yes"
		}
		sp := 0.0
		if j%3 == 0 {
			sp = 1 + rng.Float64()
		}
		fmt.Fprintf(&b, "%s,%s,%s,L%d,%.2f,%.2f,%.3f,%d,%.1f,%d,%s,%s,%.17g,%d\n", id, x, f, j%20,
			0.5+rng.Float64(), 0.1*rng.NormFloat64(), 100+10*rng.NormFloat64(), rng.IntN(6),
			5000*rng.NormFloat64(), 1+rng.IntN(4), typo, yes, sp, min(1, int(sp)))
	}
	return b.String()
}

// pieces returns the pieces of the CSV text of rows rows each, with the
// columns categorical in the whole data categorical in each.
func pieces(t *testing.T, text string, rows int) formula.Pieces {
	whole, err := datasets.ReadCSV(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var cat, num []string
	for _, c := range whole.Columns() {
		if c.Kind == datasets.Categorical {
			cat = append(cat, c.Name)
		} else {
			num = append(num, c.Name)
		}
	}
	return func(yield func(*datasets.Frame) error) error {
		r := datasets.NewReader(strings.NewReader(text))
		r.Categorical, r.Numeric = cat, num
		return r.ReadPieces(rows, func(f *datasets.Frame, _ *datasets.Lines) error { return yield(f) })
	}
}

// TestScanPart asks that the part built from the rows of its own subjects
// (Options.Whole, from Scan of the data a piece at a time, and the frame
// datasets.Reader.Keep reads) be the part that Options.Part builds from
// the whole frame, bit for bit: its design, response, offsets, weights,
// subjects, warnings, maps to the data's scale and log densities.
func TestScanPart(t *testing.T) {
	for _, c := range []struct {
		formula         string
		opts            formula.Options
		missing, numIDs bool
	}{
		{"y ~ x + f + offset(off) + (1 + x | id)", formula.Options{Family: glmm.Gaussian, Prior: formula.PriorAuto, Weights: "w"}, false, false},
		{"y ~ x + f + (1 | id)", formula.Options{Family: glmm.Gaussian, Prior: formula.PriorAuto, Missing: formula.DropMissing}, true, true},
		{"count ~ x * f + big + (1 | id)", formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto}, false, true},
		{"count ~ x * f + big + (1 | id)", formula.Options{Family: glmm.Poisson}, false, false},
		{"count ~ g + (1 | id)", formula.Options{Family: glmm.Poisson}, false, false},
		// Plain covariates: with Release, X is the frame's own columns.
		{"count ~ x + big + (1 | id)", formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto}, false, true},
		// X is sparse, and sp has zeros: its scale counts them apart.
		{"count ~ g + sp + (1 | id)", formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto}, false, false},
		{"count ~ g + x + (1 | id)", formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto, Missing: formula.DropMissing}, true, false},
		{"cbind(k, count) ~ g + x + (1 + x || id)", formula.Options{Prior: formula.PriorAuto, DoubleBar: formula.IndependentDoubleBar}, false, false},
		{"yes ~ f + typo + (1 + f | id)", formula.Options{Prior: formula.PriorAuto, Reference: map[string]string{"f": "b", "yes": "yes"}}, false, true},
		{"count ~ factor(k) + log(w) + sqrt(w) + (0 + big | id)", formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto}, false, false},
		// Binomial with 0/1 outcomes is fitted as Bernoulli.
		{"sp0 ~ x + (1 | id)", formula.Options{Family: glmm.Binomial}, false, true},
		// Subjects that are an interaction, of a numeric column too.
		{"count ~ x + (1 | id:f)", formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto}, false, true},
		{"y ~ x + (1 + x | f:id)", formula.Options{Family: glmm.Gaussian, Missing: formula.DropMissing}, true, false},
	} {
		text := wholeCSV(c.missing, c.numIDs)
		fr, err := datasets.ReadCSV(strings.NewReader(text))
		if err != nil {
			t.Fatal(err)
		}
		f, err := formula.Parse(c.formula)
		if err != nil {
			t.Fatal(err)
		}
		whole, err := formula.Build(f, fr, c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.formula, err)
		}
		n, _, _ := whole.Model().Dims()
		for _, size := range []int{1, 37, 1000} {
			w, err := formula.Scan(f, pieces(t, text, size), c.opts)
			if err != nil {
				t.Fatalf("%s: Scan: %v", c.formula, err)
			}
			if !slices.Equal(w.Subjects(), whole.GroupLevels()) {
				t.Fatalf("%s: subjects %v, want %v", c.formula, w.Subjects(), whole.GroupLevels())
			}
			for _, bounds := range [][]int{{0, n}, {0, 7, n}, {0, 5, 13, n}} {
				for k := range len(bounds) - 1 {
					lo, hi := bounds[k], bounds[k+1]
					where := fmt.Sprintf("%s, pieces of %d, part [%d, %d)", c.formula, size, lo, hi)
					opts := c.opts
					opts.Part = func(int) (int, int, error) { return lo, hi, nil }
					want, err := formula.Build(f, fr, opts)
					if err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					if got, want := w.Rows(lo, hi), want.Model().NumObs(); got != want {
						t.Fatalf("%s: Rows %d, want the part's %d observations", where, got, want)
					}
					r := datasets.NewReader(strings.NewReader(text))
					r.KeepRow, r.KeepColumns = w.KeepRow(lo, hi), w.KeepColumns()
					r.ReserveRows = w.Rows(lo, hi)
					if size == 1000 {
						r.Numeric = numericColumns(fr)
					}
					own, err := r.Read()
					if err != nil {
						t.Fatalf("%s: reading: %v", where, err)
					}
					// The own rows' frame is the part's: Release lets
					// Build take its columns.
					opts.Whole, opts.Release = w, size != 37
					got, err := formula.Build(f, own, opts)
					if err != nil {
						t.Fatalf("%s: %v", where, err)
					}
					samePart(t, where, got, want)
					// Every part counts the whole data's rows left out.
					missing := fr.NumRows() - whole.Model().NumObs()
					if got.LeftOut() != missing || want.LeftOut() != missing || (missing > 0) != c.missing {
						t.Fatalf("%s: LeftOut() = %d from the pieces, %d from the frame, want %d", where, got.LeftOut(), want.LeftOut(), missing)
					}
				}
			}
		}
	}
}

// responseOf returns the response of cfg, given as Y or as Binary.
func responseOf(cfg glmm.Config) []float64 {
	if cfg.Binary == nil {
		return cfg.Y
	}
	y := make([]float64, len(cfg.Binary))
	for k, b := range cfg.Binary {
		y[k] = float64(b)
	}
	return y
}

// samePart compares two parts' designs bit for bit.
func samePart(t *testing.T, where string, got, want *formula.Design) {
	t.Helper()
	gc, wc := got.Config(), want.Config()
	same := func(what string, a, b []float64) {
		t.Helper()
		if len(a) != len(b) {
			t.Fatalf("%s: %s has %d values, want %d", where, what, len(a), len(b))
		}
		for i := range a {
			if math.Float64bits(a[i]) != math.Float64bits(b[i]) {
				t.Fatalf("%s: %s[%d] = %v, want %v", where, what, i, a[i], b[i])
			}
		}
	}
	dense := func(m mat.Matrix) []float64 {
		if m == nil {
			return nil
		}
		r, c := m.Dims()
		out := make([]float64, 0, r*c)
		for i := range r {
			for j := range c {
				out = append(out, m.At(i, j))
			}
		}
		return out
	}
	_, gs := gc.X.(*sparse.CSR)
	_, ws := wc.X.(*sparse.CSR)
	if gs != ws {
		t.Fatalf("%s: X sparse %v, want %v", where, gs, ws)
	}
	same("X", dense(gc.X), dense(wc.X))
	same("Z", dense(gc.Z), dense(wc.Z))
	same("Y", responseOf(gc), responseOf(wc))
	same("Trials", gc.Trials, wc.Trials)
	same("Offset", gc.Offset, wc.Offset)
	same("Weights", gc.Weights, wc.Weights)
	if !slices.Equal(gc.Group, wc.Group) || !slices.Equal(gc.GroupLevels, wc.GroupLevels) || gc.NumGroups != wc.NumGroups ||
		!slices.Equal(gc.FixedNames, wc.FixedNames) || !slices.Equal(gc.RandomNames, wc.RandomNames) ||
		!slices.Equal(gc.REBlocks, wc.REBlocks) || gc.Family != wc.Family || gc.Share != wc.Share {
		t.Fatalf("%s: config %v %v %v %v %v %v, want %v %v %v %v %v %v", where,
			gc.GroupLevels, gc.FixedNames, gc.RandomNames, gc.REBlocks, gc.Family, gc.Share,
			wc.GroupLevels, wc.FixedNames, wc.RandomNames, wc.REBlocks, wc.Family, wc.Share)
	}
	if !slices.Equal(got.Warnings(), want.Warnings()) {
		t.Fatalf("%s: warnings %q, want %q", where, got.Warnings(), want.Warnings())
	}
	gl, glo, ghi := got.PartOf()
	wl, wlo, whi := want.PartOf()
	if !slices.Equal(gl, wl) || glo != wlo || ghi != whi {
		t.Fatalf("%s: part of %d levels [%d, %d), want %d [%d, %d)", where, len(gl), glo, ghi, len(wl), wlo, whi)
	}
	gcen, gsc := got.ResponseScale()
	wcen, wsc := want.ResponseScale()
	same("response scale", []float64{gcen, gsc, got.ResponseLogJacobian()}, []float64{wcen, wsc, want.ResponseLogJacobian()})
	if !reflect.DeepEqual(got.FixedMap(), want.FixedMap()) || !reflect.DeepEqual(got.RandomScale(), want.RandomScale()) {
		t.Fatalf("%s: maps %+v %v, want %+v %v", where, got.FixedMap(), got.RandomScale(), want.FixedMap(), want.RandomScale())
	}
	for _, name := range []string{"f", "factor(k)", "typo", "g"} {
		gl, gok := got.Levels(name)
		wl, wok := want.Levels(name)
		if gok != wok || !slices.Equal(gl, wl) {
			t.Fatalf("%s: levels of %s %v, want %v", where, name, gl, wl)
		}
	}
	gm, wm := got.Model(), want.Model()
	same("data constant", []float64{gm.DataConstant()}, []float64{wm.DataConstant()})
}

// TestScanErrors asks that Scan find the errors Build finds on the whole
// data, with the same message: a missing value, a rank-deficient design,
// a value outside a transformation's domain, a single subject.
func TestScanErrors(t *testing.T) {
	text := "id,x,x2,y,z\na,1,2,0,1\na,2,4,1,-1\nb,3,6,0,1\nb,NA,8,1,2\nc,5,10,1,3\n"
	one := "id,x,y\na,1,0\na,2,1\n"
	for _, c := range []struct {
		formula, text string
		opts          formula.Options
	}{
		{"y ~ x + (1 | id)", text, formula.Options{Family: glmm.Bernoulli}},
		{"y ~ x + x2 + (1 | id)", strings.Replace(text, "NA", "4", 1), formula.Options{Family: glmm.Bernoulli}},
		{"y ~ x2 + x + (1 | id)", strings.Replace(text, "NA", "4", 1), formula.Options{Family: glmm.Bernoulli, Prior: formula.PriorAuto}},
		{"y ~ log(z) + (1 | id)", text, formula.Options{Family: glmm.Bernoulli, Missing: formula.DropMissing}},
		{"y ~ x + (1 | id)", one, formula.Options{Family: glmm.Bernoulli}},
		{"y ~ x + (1 | id) + (1 | z)", text, formula.Options{Family: glmm.Bernoulli, Missing: formula.DropMissing}},
	} {
		fr, err := datasets.ReadCSV(strings.NewReader(c.text))
		if err != nil {
			t.Fatal(err)
		}
		f, err := formula.Parse(c.formula)
		if err != nil {
			t.Fatal(err)
		}
		opts := c.opts
		opts.Part = func(n int) (int, int, error) { return 0, n, nil }
		_, want := formula.Build(f, fr, opts)
		if want == nil {
			t.Fatalf("%s: Build gave no error", c.formula)
		}
		for _, size := range []int{1, 2, 100} {
			_, err := formula.Scan(f, pieces(t, c.text, size), c.opts)
			if fmt.Sprint(err) != fmt.Sprint(want) {
				t.Errorf("%s, pieces of %d: Scan's error %v, want %v", c.formula, size, err, want)
			}
		}
	}
}

// numericColumns returns the names of the numeric columns of fr.
func numericColumns(fr *datasets.Frame) []string {
	var num []string
	for _, c := range fr.Columns() {
		if c.Kind == datasets.Numeric {
			num = append(num, c.Name)
		}
	}
	return num
}

// framePieces reads the CSV text in pieces of rows rows, with the whole
// data's kinds.
func framePieces(t *testing.T, text string, rows int) []*datasets.Frame {
	var out []*datasets.Frame
	err := pieces(t, text, rows)(func(fr *datasets.Frame) error {
		out = append(out, fr)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// scanShared runs ScanShared in size goroutine processes, process k
// holding the k-th of size runs of the pieces (after a frame of no rows
// with the kinds), and returns each process's Whole and error.
func scanShared(f *formula.Formula, all []*datasets.Frame, opts formula.Options, size int) ([]*formula.Whole, []error) {
	groups := simshare.NewGroups(size)
	ws, errs := make([]*formula.Whole, size), make([]error, size)
	var wg sync.WaitGroup
	for k, grp := range groups {
		own := all[k*len(all)/size : (k+1)*len(all)/size]
		wg.Go(func() {
			relay := parallel.NewRelay(grp)
			ws[k], errs[k] = formula.ScanShared(f, func(yield func(*datasets.Frame) error) error {
				if err := yield(all[0].Rows(nil)); err != nil {
					return err
				}
				for _, fr := range own {
					if err := yield(fr); err != nil {
						return err
					}
				}
				return nil
			}, opts, relay)
			errs[k] = relay.Close(errs[k])
		})
	}
	wg.Wait()
	return ws, errs
}

// TestScanShared asks that ScanShared in two or three processes, each
// holding a run of the pieces, give every process the Whole that Scan
// gives of all the pieces: the parts built from it are those built from
// Scan's bit for bit (designs, scales, levels, warnings). Some of the
// factors' levels are in one process's pieces alone.
func TestScanShared(t *testing.T) {
	for _, c := range []struct {
		formula string
		opts    formula.Options
		missing bool
	}{
		{"y ~ x + f + offset(off) + (1 + x | id)", formula.Options{Family: glmm.Gaussian, Prior: formula.PriorAuto, Weights: "w"}, false},
		{"y ~ x + f + (1 | id)", formula.Options{Family: glmm.Gaussian, Prior: formula.PriorAuto, Missing: formula.DropMissing}, true},
		{"count ~ x * f + big + (1 | id)", formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto}, false},
		{"count ~ g + sp + (1 | id)", formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto}, false},
		{"yes ~ f + typo + (1 + f | id)", formula.Options{Prior: formula.PriorAuto, Reference: map[string]string{"f": "b", "yes": "yes"}}, false},
		{"count ~ x + (1 | id:f)", formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto}, false},
	} {
		text := wholeCSV(c.missing, false)
		f, err := formula.Parse(c.formula)
		if err != nil {
			t.Fatal(err)
		}
		want, err := formula.Scan(f, pieces(t, text, 37), c.opts)
		if err != nil {
			t.Fatalf("%s: Scan: %v", c.formula, err)
		}
		n := len(want.Subjects())
		lo, hi := 5, n-3
		own, err := func() (*datasets.Frame, error) {
			r := datasets.NewReader(strings.NewReader(text))
			r.KeepRow, r.KeepColumns = want.KeepRow(lo, hi), want.KeepColumns()
			return r.Read()
		}()
		if err != nil {
			t.Fatal(err)
		}
		all := framePieces(t, text, 37)
		for size := 2; size <= 3; size++ {
			ws, errs := scanShared(f, all, c.opts, size)
			for k := range size {
				where := fmt.Sprintf("%s, process %d of %d", c.formula, k, size)
				if errs[k] != nil {
					t.Fatalf("%s: %v", where, errs[k])
				}
				if !slices.Equal(ws[k].Subjects(), want.Subjects()) || ws[k].Rows(0, n) != want.Rows(0, n) || ws[k].Rows(lo, hi) != want.Rows(lo, hi) {
					t.Fatalf("%s: subjects %v (%d rows), want %v (%d)", where, ws[k].Subjects(), ws[k].Rows(0, n), want.Subjects(), want.Rows(0, n))
				}
				optsGot, optsWant := c.opts, c.opts
				optsGot.Part = func(int) (int, int, error) { return lo, hi, nil }
				optsWant.Part = optsGot.Part
				optsGot.Whole, optsWant.Whole = ws[k], want
				got, err := formula.Build(f, own, optsGot)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				ref, err := formula.Build(f, own, optsWant)
				if err != nil {
					t.Fatalf("%s: %v", where, err)
				}
				samePart(t, where, got, ref)
			}
		}
	}
}

// TestScanSharedErrors asks that the process holding a bad row report
// Scan's error, the row counted in its own pieces, and the others
// that a process failed; and that an error of the whole data (a single
// subject, a rank-deficient design) be every process's.
func TestScanSharedErrors(t *testing.T) {
	text := "id,x,x2,y,z\na,1,2,0,1\na,2,4,1,-1\nb,3,6,0,1\nb,NA,8,1,2\nc,5,10,1,3\nc,4,8,0,2\n"
	one := "id,x,y\na,1,0\na,2,1\na,3,1\n"
	for _, c := range []struct {
		formula, text string
		opts          formula.Options
		bad           int // the process of the bad row in three, -1 for all
	}{
		{"y ~ x + (1 | id)", text, formula.Options{Family: glmm.Bernoulli}, 1},
		{"y ~ log(z) + (1 | id)", text, formula.Options{Family: glmm.Bernoulli, Missing: formula.DropMissing}, 0},
		{"y ~ x + x2 + (1 | id)", strings.Replace(text, "NA", "4", 1), formula.Options{Family: glmm.Bernoulli}, -1},
		{"y ~ x + (1 | id)", one, formula.Options{Family: glmm.Bernoulli}, -1},
	} {
		f, err := formula.Parse(c.formula)
		if err != nil {
			t.Fatal(err)
		}
		_, want := formula.Scan(f, pieces(t, c.text, 2), c.opts)
		if want == nil {
			t.Fatalf("%s: Scan gave no error", c.formula)
		}
		all := framePieces(t, c.text, 1)
		_, errs := scanShared(f, all, c.opts, 3)
		for k, err := range errs {
			var pe *parallel.ProcessError
			switch {
			case c.bad >= 0 && k == c.bad:
				// The row is counted in the process's own pieces, of a row
				// each.
				var de *formula.DataError
				if !errors.As(want, &de) {
					t.Fatalf("%s: Scan's error %v names no row", c.formula, want)
				}
				local := *de
				local.Row -= k * len(all) / 3
				if fmt.Sprint(err) != fmt.Sprint(&local) {
					t.Errorf("%s: process %d: %v, want %v", c.formula, k, err, &local)
				}
			case c.bad < 0:
				if fmt.Sprint(err) != fmt.Sprint(want) {
					t.Errorf("%s: process %d: %v, want %v", c.formula, k, err, want)
				}
			case !errors.As(err, &pe) || pe.Process != c.bad:
				t.Errorf("%s: process %d: %v, want process %d's failure", c.formula, k, err, c.bad)
			}
		}
	}
}
