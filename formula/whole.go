// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
)

// Pieces gives data too large to hold a piece of rows at a time: each
// call calls yield with every piece, in the order of the rows, and returns
// the first error of yield or its own. Every piece has the same columns
// with the same kinds, those of the whole data (datasets.Reader.ReadPieces
// with the categorical columns listed).
type Pieces func(yield func(fr *datasets.Frame) error) error

// Whole is what Build needs of the whole data to build one process's part
// of a design (Options.Part) from the rows of its own subjects alone
// (Options.Whole): the family, the levels of every factor and of the
// subjects, the centring and scaling of PriorAuto, the check of the
// fixed-effect design's rank, the choice of sparse storage and the
// warnings of the design's scale. Scan makes it.
type Whole struct {
	f      *Formula
	opts   Options
	uses   []use
	kinds  *datasets.Frame // no rows: the columns' kinds
	levels map[string][]string
	fam    glmm.Family
	rnd    *random
	fixed  *coder
	random *coder
	blocks []int

	group       string
	groupLevels []string
	gnumeric    bool
	groupRows   []int // the complete rows of each subject

	resp             struct{ center, scale, weight float64 }
	xSparse, zSparse bool
	warnings         []string
	rows, obs        int

	chain Chain // nil in one process
}

// errScanPieces is wrapped by the errors of pieces whose columns do not
// keep their kinds.
var errScanPieces = errors.New("formula: the pieces of the data differ in their columns")

// Scan reads the whole data of the formula f, a piece at a time, and
// returns what Build needs to build one process's part of its design from
// the rows of that process's subjects alone (Options.Whole). It reads the
// pieces up to five times (fewer under PriorPaper) and holds a few values
// per column of the design and the levels of the factors and subjects,
// never the rows. The options are those to give Build.
//
// Its errors are those Build gives on the whole data, but for the order
// in which some are found: a DataError's Row counts the rows of all the
// pieces. Models with crossed grouping factors have no parts
// (ErrCrossedPart). The subjects of an interaction a:b are the column
// Formula.WithGroups adds to each piece.
func Scan(f *Formula, pieces Pieces, opts Options) (*Whole, error) {
	return ScanShared(f, pieces, opts, nil)
}

// A Chain carries the running values of a scan through the processes
// that hold the pieces of the data (ScanShared), in the order of the
// pieces. parallel.Relay is one.
type Chain interface {
	// Try receives into acc the values that the processes before this
	// one passed on, lets local add this process's to them, and passes
	// them on; every process ends with the last one's values. When local
	// fails in a process, every process returns an error, that process
	// local's.
	Try(acc []float64, local func(acc []float64) error) error
	// Gather returns the strings that each process gave, in order.
	Gather(own []string) ([][]string, error)
}

// ScanShared is Scan of data whose pieces are divided among processes,
// each holding the pieces that follow those of the process before it:
// each process calls it with its own pieces and gets the Whole that Scan
// gives of all the pieces one after the other, bit for bit, for the sums
// of its passes are carried from process to process through c in the
// order of the rows. Each process's pieces give at least one frame, of
// no rows if it holds none, with the columns and kinds of the whole data.
// A nil c is Scan.
//
// When a process fails it returns its own error, a DataError's Row
// counting the rows of its own pieces, and the others an error of c; the
// caller ends c (parallel.Relay.Close).
func ScanShared(f *Formula, pieces Pieces, opts Options, c Chain) (*Whole, error) {
	if f == nil || pieces == nil {
		return nil, errors.New("formula: Scan needs a formula and the pieces of the data")
	}
	if err := noScale(f); err != nil {
		return nil, err
	}
	if err := checkRandom(f, opts); err != nil {
		return nil, err
	}
	facs := factorsOf(f.randoms)
	if _, err := chooseLocal(facs[:1], nil, nil, opts); err != nil && len(facs) == 1 {
		return nil, err
	}
	if len(facs) > 1 {
		crossed := facs[1].group
		if opts.LocalFactor == crossed {
			crossed = facs[0].group
		}
		return nil, fmt.Errorf("%w: %s", ErrCrossedPart, crossed)
	}
	rnd := mergeRandoms(facs[0].terms)
	rnd.groupCols = facs[0].terms[0].groupCols
	if rnd.groupCols != nil {
		// The subjects of an interaction a:b are a column of their own.
		all := pieces
		pieces = func(yield func(*datasets.Frame) error) error {
			return all(func(fr *datasets.Frame) error { return yield(f.WithGroups(fr)) })
		}
	}
	w := &Whole{f: f, opts: opts, rnd: rnd, group: rnd.group, levels: make(map[string][]string), chain: c}
	w.uses = append(f.uses(rnd), optionUses(opts)...)

	if err := w.scanLevels(pieces); err != nil {
		return nil, err
	}
	var err error
	if w.fixed, err = codeVars(&f.fixed, w.kinds, opts.Reference, w.columnLevels); err != nil {
		return nil, err
	}
	if w.random, err = codeVars(&rnd.lhs, w.kinds, opts.Reference, w.columnLevels); err != nil {
		return nil, err
	}
	if opts.DoubleBar == IndependentDoubleBar {
		if w.blocks, err = w.random.blocks(facs[0]); err != nil {
			return nil, err
		}
	}
	if len(w.groupLevels) < 2 {
		return nil, &DataError{Token: rnd.group, Pos: rnd.groupPos, Column: rnd.group,
			Msg: fmt.Sprintf("the grouping factor has a single level %s: a random effect needs at least 2 groups", quoteList(w.groupLevels, 1))}
	}
	if opts.Prior == PriorAuto {
		if err := w.scanScales(pieces); err != nil {
			return nil, err
		}
	}
	if err := w.scanDesigns(pieces); err != nil {
		return nil, err
	}
	return w, nil
}

// scanLevels reads the columns' kinds, the complete rows, the levels of
// the columns used as categorical and the family.
func (w *Whole) scanLevels(pieces Pieces) error {
	sets := make(map[string]map[string]bool)
	rowsOf := make(map[string]int) // the complete rows of each subject
	oneTrialAll := true
	ycol := w.f.resp.y.col
	obs := 0
	// The rows, the complete rows and the processes whose response is
	// not one trial throughout.
	acc := make([]float64, 3)
	err := w.carry(acc, func(acc []float64) error {
		w.rows = 0
		err := pieces(func(fr *datasets.Frame) error {
			if w.kinds == nil {
				if err := resolve(w.uses, fr); err != nil {
					return err
				}
				w.kinds = fr.Rows(nil)
				for _, m := range []*model{&w.f.fixed, &w.rnd.lhs} {
					for _, v := range m.vars {
						if col, _ := fr.Column(v.col); col.Kind == datasets.Categorical || v.isFactor() {
							sets[v.col] = make(map[string]bool)
						}
					}
				}
				if col, _ := fr.Column(ycol); col.Kind == datasets.Categorical {
					sets[ycol] = make(map[string]bool)
				}
				sets[w.group] = make(map[string]bool)
			} else if err := w.sameKinds(fr); err != nil {
				return err
			}
			rows, err := completeRowsAfter(w.uses, fr, w.opts.Missing, w.rows)
			if err != nil {
				return err
			}
			for name, set := range sets {
				col, _ := fr.Column(name)
				lev, code, _ := codesOf(col, rows)
				for _, s := range lev {
					set[s] = true
				}
				if name == w.group {
					for _, k := range code {
						rowsOf[lev[k]]++
					}
				}
			}
			oneTrialAll = oneTrialAll && oneTrial(fr, ycol)
			w.rows += fr.NumRows()
			obs += len(rows)
			return nil
		})
		if err == nil && w.kinds == nil {
			err = errors.New("formula: ScanShared: the pieces of a process gave no frame")
		}
		acc[0] += float64(w.rows)
		acc[1] += float64(obs)
		if !oneTrialAll {
			acc[2]++
		}
		return err
	})
	if err != nil {
		return err
	}
	w.rows, w.obs = int(acc[0]), int(acc[1])
	oneTrialAll = acc[2] == 0
	if w.rows == 0 {
		return &DataError{Msg: "the data frame has no rows"}
	}
	if w.obs == 0 {
		return &DataError{Msg: "no row is complete in the columns the model uses"}
	}
	if err := w.gatherLevels(sets); err != nil {
		return err
	}
	for name, set := range sets {
		lev := make([]string, 0, len(set))
		for s := range set {
			lev = append(lev, s)
		}
		ord, numeric := levelOrder(lev)
		sorted := make([]string, len(ord))
		for j, o := range ord {
			sorted[j] = lev[o]
		}
		w.levels[name] = sorted
		if name == w.group {
			w.groupLevels, w.gnumeric = sorted, numeric
		}
	}
	if err := w.countSubjectRows(rowsOf); err != nil {
		return err
	}
	w.fam, err = familyOf(w.f, w.opts, func() bool { return oneTrialAll }, func() bool {
		col, _ := w.kinds.Column(ycol)
		return col.Kind == datasets.Categorical
	})
	return err
}

// carry runs one pass of this process over its pieces: run adds to acc.
// In a chain, acc holds the values of the processes before this one when
// run starts, and those of all of them afterwards.
func (w *Whole) carry(acc []float64, run func(acc []float64) error) error {
	if w.chain == nil {
		return run(acc)
	}
	return w.chain.Try(acc, run)
}

// gatherLevels adds to each set of levels those the other processes of a
// chain found.
func (w *Whole) gatherLevels(sets map[string]map[string]bool) error {
	if w.chain == nil {
		return nil
	}
	names := make([]string, 0, len(sets))
	for name := range sets {
		names = append(names, name)
	}
	slices.Sort(names)
	// Each set's size, then its levels, set after set.
	var own []string
	for _, name := range names {
		own = append(own, strconv.Itoa(len(sets[name])))
		for s := range sets[name] {
			own = append(own, s)
		}
	}
	all, err := w.chain.Gather(own)
	if err != nil {
		return err
	}
	for _, list := range all {
		for _, name := range names {
			k, err := strconv.Atoi(list[0])
			if err != nil || k < 0 || k > len(list)-1 {
				return errors.New("formula: ScanShared: the processes read columns of different kinds")
			}
			for _, s := range list[1 : 1+k] {
				sets[name][s] = true
			}
			list = list[1+k:]
		}
	}
	return nil
}

// countSubjectRows sets the complete rows of each subject from their
// counts by label, which in a chain each process has of its own pieces.
func (w *Whole) countSubjectRows(rowsOf map[string]int) error {
	if w.chain == nil {
		w.groupRows = make([]int, len(w.groupLevels))
		for k, s := range w.groupLevels {
			w.groupRows[k] = rowsOf[s]
		}
		return nil
	}
	acc := make([]float64, len(w.groupLevels))
	err := w.carry(acc, func(acc []float64) error {
		for s, n := range rowsOf {
			k, _ := levelIndex(w.groupLevels, w.gnumeric, s)
			acc[k] += float64(n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	w.groupRows = make([]int, len(acc))
	for k, v := range acc {
		w.groupRows[k] = int(v)
	}
	return nil
}

// sameKinds checks that a piece's used columns have the kinds of the first.
func (w *Whole) sameKinds(fr *datasets.Frame) error {
	for _, u := range w.uses {
		want, _ := w.kinds.Column(u.col)
		got, ok := fr.Column(u.col)
		if !ok || got.Kind != want.Kind {
			return fmt.Errorf("%w: column %q is not %v in the rows after row %d", errScanPieces, u.col, want.Kind, w.rows)
		}
	}
	return nil
}

// columnLevels returns the levels of a column used as categorical.
func (w *Whole) columnLevels(col *datasets.Column) []string { return w.levels[col.Name] }

// rowsOf calls fn with each piece, its complete rows and the rows before
// it, in order, and returns the rows read.
func (w *Whole) rowsOf(pieces Pieces, fn func(fr *datasets.Frame, rows []int, before int) error) (int, error) {
	before := 0
	err := pieces(func(fr *datasets.Frame) error {
		if err := w.sameKinds(fr); err != nil {
			return err
		}
		rows, err := completeRowsAfter(w.uses, fr, w.opts.Missing, before)
		if err != nil {
			return err
		}
		if err := fn(fr, rows, before); err != nil {
			return err
		}
		before += fr.NumRows()
		return nil
	})
	return before, err
}

// rowsPass is a pass of rowsOf over this process's pieces in which fn
// adds to the values of sums, which a chain carries.
func (w *Whole) rowsPass(pieces Pieces, sums []*float64, fn func(fr *datasets.Frame, rows []int, before int) error) error {
	acc := make([]float64, 1+len(sums))
	for k, v := range sums {
		acc[1+k] = *v
	}
	err := w.carry(acc, func(acc []float64) error {
		for k, v := range sums {
			*v = acc[1+k]
		}
		rows, err := w.rowsOf(pieces, fn)
		acc[0] += float64(rows)
		for k, v := range sums {
			acc[1+k] = *v
		}
		return err
	})
	for k, v := range sums {
		*v = acc[1+k]
	}
	return err
}

// shifted returns err with the Row of a DataError counted from the first
// piece, before rows before its own.
func shifted(err error, before int) error {
	var de *DataError
	if errors.As(err, &de) && de.Row > 0 {
		c := *de
		c.Row += before
		return &c
	}
	return err
}

// designPass reads the values of the designs' rows at every complete row
// of this process's pieces, calling visit with the rows of the fixed and
// the random design as the coders make them. It adds to the statistics of
// ax and az (their first or second pass), which visit updates, and to the
// values of ext, which visit adds to: a chain carries all of them.
func (w *Whole) designPass(pieces Pieces, second bool, ax, az *statsAcc, ext [][]float64, visit func(x, z []float64)) error {
	rvx, rvz := w.fixed.newRowValues(), w.random.newRowValues()
	x, z := make([]float64, len(w.fixed.cols)), make([]float64, len(w.random.cols))
	na, nz := ax.width(second), az.width(second)
	acc := make([]float64, 1+na+nz, 1+na+nz+len(ext)*4)
	for _, e := range ext {
		acc = append(acc, e...)
	}
	move := func(acc []float64, in bool) {
		ax.move(acc[1:], second, in)
		az.move(acc[1+na:], second, in)
		at := 1 + na + nz
		for _, e := range ext {
			if in {
				copy(e, acc[at:])
			} else {
				copy(acc[at:], e)
			}
			at += len(e)
		}
	}
	move(acc, false)
	err := w.carry(acc, func(acc []float64) error {
		move(acc, true)
		rows, err := w.rowsOf(pieces, func(fr *datasets.Frame, rows []int, before int) error {
			bx, bz := w.fixed.bind(fr), w.random.bind(fr)
			for _, i := range rows {
				if err := bx.values(i, rvx); err != nil {
					return shifted(err, before)
				}
				w.fixed.row(rvx, x)
				if err := bz.values(i, rvz); err != nil {
					return shifted(err, before)
				}
				w.random.row(rvz, z)
				visit(x, z)
			}
			return nil
		})
		acc[0] += float64(rows)
		move(acc, false)
		return err
	})
	move(acc, true)
	return err
}

// width returns the number of values of a's first or second pass.
func (a *statsAcc) width(second bool) int {
	if second {
		return 2 * len(a.sum)
	}
	return 3 * len(a.sum)
}

// move copies the values of a's first or second pass from acc (in) or
// into it.
func (a *statsAcc) move(acc []float64, second, in bool) {
	p := len(a.sum)
	if second {
		if in {
			copy(a.ss, acc[:p])
			for j := range a.nz {
				a.nz[j] = int(acc[p+j])
			}
			return
		}
		copy(acc, a.ss)
		for j, v := range a.nz {
			acc[p+j] = float64(v)
		}
		return
	}
	if in {
		copy(a.sum, acc[:p])
		for j := range a.st {
			a.st[j].maxAbs, a.st[j].binary = acc[p+j], acc[2*p+j] != 0
		}
		return
	}
	copy(acc, a.sum)
	for j, st := range a.st {
		acc[p+j] = st.maxAbs
		acc[2*p+j] = 0
		if st.binary {
			acc[2*p+j] = 1
		}
	}
}

// scanScales sets the centring and scaling of PriorAuto (coder.standardize
// of the fixed design, coder.scaleOnly of the random one, and
// Design.standardizeResponse for a gaussian response) in two passes.
func (w *Whole) scanScales(pieces Pieces) error {
	px, pz := len(w.fixed.cols), len(w.random.cols)
	ax, az := newStatsAcc(px), newStatsAcc(pz)
	ax.n, az.n = w.obs, w.obs
	nnz := make([]float64, 2) // of the fixed and the random design
	gauss := w.fam == glmm.Gaussian
	var ysum, ss, wsum float64
	err := w.designPass(pieces, false, ax, az, [][]float64{nnz}, func(x, z []float64) {
		for j, v := range x {
			ax.first(j, v)
			if v != 0 {
				nnz[0]++
			}
		}
		for j, v := range z {
			az.first(j, v)
			if v != 0 {
				nnz[1]++
			}
		}
	})
	if err != nil {
		return err
	}
	sparseX := px > sparseMinCols && nnz[0] < sparseMaxDensity*float64(w.obs)*float64(px)
	sparseZ := pz > sparseMinCols && nnz[1] < sparseMaxDensity*float64(w.obs)*float64(pz)
	err = w.designPass(pieces, true, ax, az, nil, func(x, z []float64) {
		for j, v := range x {
			if !sparseX || v != 0 {
				ax.second(j, v)
			}
		}
		for j, v := range z {
			if !sparseZ || v != 0 {
				az.second(j, v)
			}
		}
	})
	if err != nil {
		return err
	}
	if px > 0 {
		w.fixed.setScale(ax.stats())
	}
	w.random.setScale(az.stats())
	clear(w.random.center)
	if !gauss {
		return nil
	}
	// The response, y of every complete row, as standardizeResponse.
	ycol, wcol := w.f.resp.y.col, w.opts.Weights
	err = w.rowsPass(pieces, []*float64{&ysum, &wsum}, func(fr *datasets.Frame, rows []int, _ int) error {
		yc, _ := fr.Column(ycol)
		if yc.Kind != datasets.Numeric {
			return nil // response() says why
		}
		for _, i := range rows {
			ysum += yc.Num[i]
		}
		if wcol != "" {
			wc, _ := fr.Column(wcol)
			for _, i := range rows {
				wsum += wc.Num[i]
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	mean := ysum / float64(w.obs)
	err = w.rowsPass(pieces, []*float64{&ss}, func(fr *datasets.Frame, rows []int, _ int) error {
		yc, _ := fr.Column(ycol)
		if yc.Kind != datasets.Numeric {
			return nil
		}
		for _, i := range rows {
			v := yc.Num[i]
			ss += (v - mean) * (v - mean)
		}
		return nil
	})
	if err != nil {
		return err
	}
	sd := math.Sqrt(ss / float64(w.obs))
	if !(sd > 0) || math.IsInf(sd, 0) {
		return nil
	}
	if !w.fixed.intercept {
		mean = 0
	}
	w.resp.center, w.resp.scale = mean, sd
	w.resp.weight = float64(w.obs)
	if wcol != "" {
		w.resp.weight = wsum
	}
	return nil
}

// scanDesigns reads the final designs twice: the check of the fixed
// design's rank, their storage (sparse or dense, as designMatrix decides)
// and the statistics of scaleWarnings.
func (w *Whole) scanDesigns(pieces Pieces) error {
	px, pz := len(w.fixed.cols), len(w.random.cols)
	standardized := w.fixed.scale != nil
	ax, az := newStatsAcc(px), newStatsAcc(pz)
	ax.n, az.n = w.obs, w.obs
	nnz := make([]float64, 2)
	var passErr error
	passes := 0
	each := func(rank []float64, visit func(x []float64)) {
		if passErr != nil {
			return
		}
		passes++
		second := passes == 2
		ext := [][]float64{nnz}
		if rank != nil {
			ext = append(ext, rank)
		}
		passErr = w.designPass(pieces, second, ax, az, ext, func(x, z []float64) {
			if visit != nil {
				visit(x)
			}
			for j, v := range x {
				switch {
				case !second:
					ax.first(j, v)
					if v != 0 {
						nnz[0]++
					}
				case !w.xSparse || v != 0:
					ax.second(j, v)
				}
			}
			for j, v := range z {
				switch {
				case !second:
					az.first(j, v)
					if v != 0 {
						nnz[1]++
					}
				case !w.zSparse || v != 0:
					az.second(j, v)
				}
			}
		})
		if !second {
			w.xSparse = px > sparseMinCols && nnz[0] < sparseMaxDensity*float64(w.obs)*float64(px)
			w.zSparse = !w.random.interceptOnly() && pz > sparseMinCols && nnz[1] < sparseMaxDensity*float64(w.obs)*float64(pz)
		}
	}
	var rankErr error
	if px > 0 {
		rankErr = glmm.CheckRankRows(px, func(acc []float64, visit func([]float64)) { each(acc, visit) }, w.fixed.names)
	}
	for passes < 2 && passErr == nil && rankErr == nil {
		each(nil, nil) // the passes CheckRankRows did not make
	}
	if passErr != nil {
		return passErr
	}
	if rankErr != nil {
		d := &Design{f: w.f, opts: w.opts, cfg: glmm.Config{Family: w.fam, FixedNames: w.fixed.names, RandomNames: w.random.names}}
		return d.modelError(rankErr, nil)
	}
	var xs []colStat
	if px > 0 && !standardized {
		xs = ax.stats()
	}
	w.warnings = scaleWarningsOf(xs, w.fixed.names, az.stats(), w.random.names)
	return nil
}

// Subjects returns the levels of the grouping factor, in the order of the
// model's subjects; Options.Part is given their number.
func (w *Whole) Subjects() []string { return w.groupLevels }

// SubjectIndex returns the index in Subjects of the subject labelled s
// (as Label gives a field of the grouping column), and whether there is
// one.
func (w *Whole) SubjectIndex(s string) (int, bool) {
	return levelIndex(w.groupLevels, w.gnumeric, s)
}

// Rows returns the number of complete rows of the subjects [lo, hi): the
// rows that Keep keeps, but for incomplete ones that Options.Missing drops
// (datasets.Reader.ReserveRows).
func (w *Whole) Rows(lo, hi int) int {
	n := 0
	for _, k := range w.groupRows[lo:hi] {
		n += k
	}
	return n
}

// KeepColumns returns the data columns of the subjects, which KeepRow
// reads: the grouping factor's, or the columns of an interaction a:b.
func (w *Whole) KeepColumns() []string {
	if w.rnd.groupCols != nil {
		return w.rnd.groupCols
	}
	return []string{w.group}
}

// KeepRow returns a filter of the rows of the subjects [lo, hi) for
// datasets.Reader.KeepRow on KeepColumns: it reads each field as Build
// reads its column, a number for a numeric column, and labels an
// interaction's subject as Build does ("la:lb").
func (w *Whole) KeepRow(lo, hi int) func(fields []string, missing []bool) bool {
	cols := w.KeepColumns()
	numeric := make([]bool, len(cols))
	for k, name := range cols {
		col, _ := w.kinds.Column(name)
		numeric[k] = col.Kind == datasets.Numeric
	}
	var b strings.Builder
	return func(fields []string, missing []bool) bool {
		b.Reset()
		for k, field := range fields {
			if missing[k] {
				return false
			}
			if k > 0 {
				b.WriteByte(':')
			}
			if !numeric[k] {
				b.WriteString(field)
				continue
			}
			v, err := strconv.ParseFloat(field, 64)
			if err != nil {
				return false
			}
			b.WriteString(numberLabel(v))
		}
		k, ok := levelIndex(w.groupLevels, w.gnumeric, b.String())
		return ok && lo <= k && k < hi
	}
}

// buildPart is Build with Options.Whole.
func buildPart(f *Formula, fr *datasets.Frame, opts Options) (*Design, error) {
	w := opts.Whole
	if opts.Part == nil {
		return nil, errors.New("formula: Options.Whole needs Options.Part")
	}
	if w.f != f {
		return nil, errors.New("formula: Options.Whole was scanned for another formula")
	}
	fr = withInteractions(f, fr)
	if err := resolve(w.uses, fr); err != nil {
		return nil, err
	}
	if err := w.sameKinds(fr); err != nil {
		return nil, err
	}
	rows, err := completeRows(w.uses, fr, opts.Missing)
	if err != nil {
		return nil, err
	}
	n := len(w.groupLevels)
	lo, hi, err := opts.Part(n)
	if err != nil {
		return nil, err // the caller's own
	}
	if lo < 0 || lo >= hi || hi > n {
		return nil, fmt.Errorf("formula: part [%d, %d) of %d subjects (Options.Part)", lo, hi, n)
	}
	gcol, _ := fr.Column(w.group)
	keep := rows[:0] // rows, filtered in place
	group := make([]int, 0, len(rows))
	for _, i := range rows {
		s := Label(gcol, i)
		k, ok := levelIndex(w.groupLevels, w.gnumeric, s)
		if !ok {
			return nil, &DataError{Token: w.group, Pos: w.rnd.groupPos, Column: w.group, Row: i + 1,
				Msg: fmt.Sprintf("subject %q is not in the data that Scan read (Options.Whole)", s)}
		}
		if lo <= k && k < hi {
			keep = append(keep, i)
			group = append(group, k-lo)
		}
	}
	allRows := len(keep) == fr.NumRows()
	if len(keep) == 0 {
		return nil, fmt.Errorf("formula: the data hold no row of the subjects [%d, %d) (Options.Part, Options.Whole)", lo, hi)
	}
	d := &Design{f: f, rows: keep, leftOut: w.rows - w.obs, offsets: f.offsets, opts: opts, fixed: w.fixed, random: w.random, whole: w}
	d.cfg = glmm.Config{
		Family:     w.fam,
		Link:       opts.Link,
		FixedNames: w.fixed.names,
		PriorSD:    opts.PriorSD,
	}
	// Rows name the frame's rows in glmm's errors; nil says every row is
	// used, in order.
	if !allRows {
		d.cfg.Rows = make([]int, len(keep))
		for k, i := range keep {
			d.cfg.Rows[k] = i + 1
		}
	}
	if err := d.response(fr, opts); err != nil {
		return nil, err
	}
	if len(w.fixed.cols) > 0 {
		var cols *glmm.Columns
		if opts.Release && allRows && !w.xSparse {
			// The frame's own columns, centred and scaled in place, as
			// Build's.
			facs := factorsOf(f.randoms)
			if cols, err = w.fixed.frameColumns(fr, keep, w.uses, keptColumns(f, facs)); err != nil {
				return nil, err
			}
		}
		if cols != nil {
			d.cfg.X = cols
		} else if d.cfg.X, err = designMatrixAs(w.fixed.bind(fr), keep, &w.xSparse); err != nil {
			return nil, err
		}
	}
	if d.cfg.Offset, err = d.offset(fr, keep); err != nil {
		return nil, err
	}
	if opts.Weights != "" && !d.weightsAreTrials() {
		col, _ := fr.Column(opts.Weights)
		d.cfg.Weights = make([]float64, len(keep))
		for k, i := range keep {
			d.cfg.Weights[k] = col.Num[i]
		}
	}
	if w.resp.scale != 0 {
		d.resp = w.resp
		d.applyResponseScale()
	}
	if opts.Release {
		releaseFixed(f, factorsOf(f.randoms), fr, w.uses)
	}
	if w.random.interceptOnly() {
		d.cfg.Z = onesColumn(len(keep))
	} else if d.cfg.Z, err = designMatrixAs(w.random.bind(fr), keep, &w.zSparse); err != nil {
		return nil, err
	}
	d.cfg.RandomNames = w.random.names
	d.cfg.REBlocks = w.blocks
	d.group, d.gnumeric = w.group, w.gnumeric
	d.cfg.Group = group
	d.cfg.NumGroups = hi - lo
	d.cfg.GroupName = w.group
	d.cfg.GroupLevels = w.groupLevels[lo:hi:hi]
	d.cfg.Share = true
	d.part = &partOf{levels: w.groupLevels, lo: lo, hi: hi}
	model, err := glmm.New(d.cfg)
	if err != nil {
		return nil, d.modelError(err, fr)
	}
	d.model = model
	d.warnings = append(columnWarnings(w.uses, fr), w.warnings...)
	return d, nil
}

// levelsOf returns the levels of column c of the design's data at rows:
// the whole data's, for a design built with Options.Whole.
func (d *Design) levelsOf(c *datasets.Column, rows []int) []string {
	if d.whole != nil {
		return d.whole.levels[c.Name]
	}
	return levelsOf(c, rows)
}
