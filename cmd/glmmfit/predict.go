// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/internal/atomicfile"
	"github.com/sparsevi/sparsevi/posterior"
)

// predictOptions are the flags of 'glmmfit predict'.
type predictOptions struct {
	fit     string
	data    string
	level   float64
	draws   int
	seed    uint64
	out     string
	missing string
	random  string
}

// The choices of predict's -random: which random effects a row's
// prediction takes.
const (
	randomOwn  = "own"  // a known subject's own, a new subject's drawn
	randomNew  = "new"  // every row's drawn, as of a new subject
	randomZero = "zero" // none: the fixed effects alone
)

func parsePredictFlags(e *env, args []string) (*predictOptions, error) {
	o := &predictOptions{}
	fs := o.flagSet()
	if err := parseFlags(e, fs, predictUsage, args); err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error { return usageErrorf("predict", format, args...) }
	switch {
	case o.fit == "":
		return nil, bad("-fit is missing: give the file written by 'glmmfit fit -out FILE'")
	case o.data == "":
		return nil, bad("-data is missing: give the CSV file of the rows to predict (- for standard input)")
	case !(o.level > 0 && o.level < 1):
		return nil, bad("-level must be between 0 and 1, not %v", o.level)
	case o.draws < 100:
		return nil, bad("-draws must be at least 100, not %d", o.draws)
	case o.missing != missingReject && o.missing != missingDrop:
		return nil, bad("-missing %q: want reject or drop", o.missing)
	case o.random != randomOwn && o.random != randomNew && o.random != randomZero:
		return nil, bad("-random %q: want own, new or zero", o.random)
	}
	if err := checkFiles([]fileFlag{{"-fit", o.fit}, {"-data", o.data}}, []fileFlag{{"-out", o.out}}); err != nil {
		return nil, err
	}
	return o, nil
}

// flagSet returns the flags of 'glmmfit predict', bound to o.
func (o *predictOptions) flagSet() *flag.FlagSet {
	fs := newFlagSet("predict")
	fs.StringVar(&o.fit, "fit", "", "")
	fs.StringVar(&o.data, "data", "", "")
	fs.Float64Var(&o.level, "level", 0.95, "")
	fs.IntVar(&o.draws, "draws", 2000, "")
	fs.Uint64Var(&o.seed, "seed", 0, "")
	fs.StringVar(&o.out, "out", "", "")
	fs.StringVar(&o.missing, "missing", missingReject, "")
	fs.StringVar(&o.random, "random", randomOwn, "")
	return fs
}

func runPredict(e *env, args []string) error {
	o, err := parsePredictFlags(e, args)
	if err != nil {
		return err
	}
	prog := newProgress(e.stderr, false)
	defer prog.done()
	// SIGINT or SIGTERM stops reading or predicting; nothing is written
	// then, -out being written whole or not at all.
	sig := catchInterrupts(e.stderr)
	defer sig.stop()
	stopped := func(what string) error {
		return &exitError{code: sig.exitCode(), msg: "interrupted while " + what + "; nothing was written"}
	}
	prog.phase("reading the fit file")
	// Decoding the file and rebuilding the design do not look at the
	// signal; untilDone does.
	sf, err := untilDone(sig.ctx, func() (*savedFit, error) { return readFitFile(sig.ctx, o.fit) })
	if err != nil {
		if sig.ctx.Err() != nil {
			return stopped("reading the fit file")
		}
		return err
	}
	prog.phase("reading the data")
	// Read the training data's categorical columns as categorical here too,
	// so that labels such as subject "7" match; absent names are ignored.
	in, err := readInput(sig.ctx, o.data, e.stdin, readOptions{categorical: sf.doc.Training.Categorical})
	if err != nil {
		if sig.ctx.Err() != nil {
			return stopped("reading the data")
		}
		return err
	}
	if o.random != randomOwn {
		if err := unusedGroups(in, sf.design.Formula()); err != nil {
			return err
		}
	}
	var keep []int
	if o.missing == missingDrop {
		if keep, err = dropMissing(in, sf); err != nil {
			return err
		}
		if keep != nil {
			fmt.Fprintf(e.stderr, "glmmfit: left out %s in the columns the model uses (-missing drop)\n", rowsWithMissing(in.frame.NumRows()-len(keep)))
			in = in.subset(keep)
		}
	}
	from := "the approximate posterior"
	if sf.approx != nil && sf.approx.corr != nil {
		from = "the corrected posterior"
	}
	prog.phase(fmt.Sprintf("predicting: %d rows, %d draws of %s", in.frame.NumRows(), o.draws, from))
	p, err := predict(sig.ctx, sf, in, o)
	prog.done()
	if err != nil {
		if sig.ctx.Err() != nil {
			return stopped("predicting")
		}
		return err
	}
	for k := range p.rows {
		if keep != nil {
			p.rows[k] = keep[k] + 1
		}
	}
	for _, w := range p.warnings {
		fmt.Fprintln(e.stderr, "glmmfit: warning: "+oneLine(w))
	}
	var w io.Writer = e.stdout
	var f *atomicfile.File
	if o.out != "" {
		if f, err = atomicfile.Create(o.out); err != nil {
			return fmt.Errorf("-out: %v", pathError(err))
		}
		defer f.Abort()
		w = f
	}
	if err := p.write(w); err != nil {
		return fmt.Errorf("writing predictions: %v", err)
	}
	if f != nil {
		if err := f.Commit(); err != nil {
			return fmt.Errorf("-out: %v", err)
		}
	}
	return nil
}

// predictions holds the summaries of each row's draws.
type predictions struct {
	group  string
	rows   []int
	labels []string
	known  []bool
	*posterior.Predictions
	// warnings say how the predictions may mislead.
	warnings []string
	// random is -random.
	random string
}

// predict codes the rows of in as the fitted model's design and predicts
// them (posterior.Predict): known subjects conditionally on their random
// effects, new ones over the random-effect distribution. For a nested
// model (posterior.PredictNested) the subjects are the levels of a:b, and
// a row of a new a:b level within a known level of a keeps a's effect.
func predict(ctx context.Context, sf *savedFit, in *input, o *predictOptions) (*predictions, error) {
	d := sf.design
	X, Z, group, known, err := d.NewData(in.frame)
	if err != nil {
		return nil, dataError(err, in)
	}
	off, err := d.NewOffset(in.frame)
	if err != nil {
		return nil, dataError(err, in)
	}
	crossed, err := d.NewCrossed(in.frame)
	if err != nil {
		return nil, dataError(err, in)
	}
	trials, err := d.NewTrials(in.frame)
	if err != nil {
		return nil, dataError(err, in)
	}
	if o.random == randomNew {
		// Every row as of a new subject, with new levels of every
		// grouping factor.
		clear(known)
		for k := range group {
			group[k] = -1
		}
		for _, c := range crossed {
			for k := range c {
				c[k] = -1
			}
		}
	}
	pr := &predictions{group: d.GroupName(), known: known, labels: groupLabels(d.WithGroups(in.frame), d.GroupName()), random: o.random}
	if st := sf.doc.Status; st != "converged" {
		pr.warnings = append(pr.warnings, fmt.Sprintf("the fit's status is %s: the predictions are from its last good state, which may be far from the optimum", st))
	}
	if trials == nil {
		for _, c := range d.TrialColumns() {
			if _, ok := in.frame.Column(c); !ok {
				pr.warnings = append(pr.warnings, fmt.Sprintf("the data have no column %q: the response columns are NA, since a new observation of %s needs the number of trials", c, d.Formula().Response()))
				break
			}
		}
	}
	if w := extrapolation(d, X, in); w != "" {
		pr.warnings = append(pr.warnings, w)
	}
	rc, rs := d.ResponseScale()
	set := posterior.PredictSettings{Draws: o.draws, Seed: o.seed, Level: o.level, FixedOnly: o.random == randomZero}
	if m := d.Nested(); m != nil {
		// The design's one crossed factor is a, its subjects a:b.
		nd := posterior.NestedData{X: X, Outer: crossed[0], Inner: group, Offset: off, ResponseCenter: rc, ResponseScale: rs, Trials: trials}
		pr.Predictions, err = posterior.PredictNested(ctx, sf.nested, sf.nestedTarget, m, nd, set)
	} else {
		a := sf.approx
		if a.corr == nil {
			// A fit file of an earlier version, without the correction's
			// draws.
			if w := correctionGap(sf.doc); w != "" {
				pr.warnings = append(pr.warnings, w)
			}
		}
		set.Correction = a.corr
		nd := posterior.NewData{X: X, Z: Z, Group: group, Known: known, Offset: off, Crossed: crossed, ResponseCenter: rc, ResponseScale: rs, Trials: trials}
		pr.Predictions, err = posterior.Predict(ctx, a.res, a.target, a.model, nd, set)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, err
		}
		return nil, fmt.Errorf("predicting: %s", withoutPackage(err))
	}
	for k := range known {
		pr.rows = append(pr.rows, k+1)
	}
	return pr, nil
}

// farSDs is how many standard deviations of the training data a
// predictor may be from their mean before predict warns of extrapolation.
const farSDs = 10

// extrapolation returns a warning naming the first new row whose predictor
// is more than farSDs standard deviations from the mean of the data the
// model was fitted to, or "".
func extrapolation(d *formula.Design, X mat.Matrix, in *input) string {
	var train mat.Matrix
	var names []string
	if m := d.Model(); m != nil {
		train, names = m.FixedDesign(), m.FixedNames() // its rows in the model's order
	} else {
		// A nested model's design, not compacted (readFitFile).
		train, names = d.X(), d.Nested().FixedNames()
	}
	if X == nil || train == nil {
		return ""
	}
	tn, p := train.Dims()
	rows, _ := X.Dims()
	fm := d.FixedMap()
	far, first, firstCol := 0, -1, -1
	var firstVal, firstSDs float64
	for j := range p {
		var sum, ss float64
		binary := true
		for i := range tn {
			v := train.At(i, j)
			sum += v
			binary = binary && (v == 0 || v == 1)
		}
		mean := sum / float64(tn)
		for i := range tn {
			dv := train.At(i, j) - mean
			ss += dv * dv
		}
		sd := math.Sqrt(ss / float64(tn))
		if binary || !(sd > 0) {
			continue
		}
		for k := range rows {
			v := X.At(k, j)
			if dist := math.Abs(v-mean) / sd; dist > farSDs || math.IsNaN(dist) {
				far++
				if first < 0 || k < first {
					first, firstCol, firstSDs = k, j, dist
					firstVal = v
					if fm != nil && fm.Scale[j] != 0 {
						firstVal = v*fm.Scale[j] + fm.Center[j]
					}
				}
			}
		}
	}
	if first < 0 {
		return ""
	}
	return fmt.Sprintf("%s: %s = %.4g is %.3g standard deviations from the mean of the data the model was fitted to (%d such values in all): its prediction extrapolates far beyond the data",
		in.where(first, ""), names[firstCol], firstVal, firstSDs, far)
}

// groupLabels returns the grouping factor's value in each row as text,
// as the fit names its subjects.
func groupLabels(fr *datasets.Frame, name string) []string {
	col, ok := fr.Column(name)
	labels := make([]string, fr.NumRows())
	if !ok {
		return labels
	}
	for k := range labels {
		// An interaction a:b of no labels (unusedGroups) has none.
		if l := formula.Label(col, k); !col.Missing[k] && strings.Trim(l, ":") != "" {
			labels[k] = l
		}
	}
	return labels
}

// write writes the predictions as CSV.
func (pr *predictions) write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	cw := csv.NewWriter(bw)
	cw.Write([]string{"row", pr.group, "type", "eta", "eta_sd", "eta_lower", "eta_upper", "mean", "mean_sd", "mean_lower", "mean_upper",
		"response", "response_sd", "response_lower", "response_upper"})
	for k, row := range pr.rows {
		typ := "marginal"
		switch {
		case pr.random == randomZero:
			typ = "fixed"
		case pr.known[k]:
			typ = "conditional"
		}
		cw.Write([]string{strconv.Itoa(row), pr.labels[k], typ,
			csvFloat(pr.Eta[k]), csvFloat(pr.EtaSD[k]), csvFloat(pr.EtaLo[k]), csvFloat(pr.EtaHi[k]),
			csvFloat(pr.Mean[k]), csvFloat(pr.MeanSD[k]), csvFloat(pr.MeanLo[k]), csvFloat(pr.MeanHi[k]),
			csvFloat(pr.Y[k]), csvFloat(pr.YSD[k]), csvFloat(pr.YLo[k]), csvFloat(pr.YHi[k])})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

// unusedGroups readies in for predictions that take no subject's own
// random effects (-random new or zero), whose grouping factors' labels
// go unused: an absent grouping column is added, and a missing label
// becomes the empty one, both of no level of the fit.
func unusedGroups(in *input, f *formula.Formula) error {
	n := in.frame.NumRows()
	for _, name := range f.GroupColumns() {
		col, ok := in.frame.Column(name)
		if !ok {
			if err := in.frame.Add(&datasets.Column{Name: name, Kind: datasets.Categorical, Str: make([]string, n), Missing: make([]bool, n)}); err != nil {
				return err
			}
			continue
		}
		if !slices.Contains(col.Missing, true) {
			continue
		}
		labels := make([]string, n)
		for i := range labels {
			if !col.Missing[i] {
				labels[i] = formula.Label(col, i)
			}
		}
		col.Kind, col.Str, col.Num, col.Missing = datasets.Categorical, labels, nil, make([]bool, n)
	}
	return nil
}

// dropMissing returns the rows of in with no missing value in the columns
// the model's predictors use (the response need not be there), or nil when
// every row is complete.
func dropMissing(in *input, sf *savedFit) ([]int, error) {
	f, err := parseFormula(sf.doc.Options.Formula)
	if err != nil {
		return nil, err
	}
	cols := f.Columns()
	nResp := 1
	if strings.HasPrefix(f.Response(), "cbind(") {
		nResp = 2
	}
	cols = cols[min(nResp, len(cols)):]
	if off := sf.doc.Options.Offset; off != "" {
		cols = append(cols, off)
	}
	var keep []int
	complete := true
	for k := range in.frame.NumRows() {
		ok := true
		for _, c := range cols {
			if col, found := in.frame.Column(c); found && col.Missing[k] {
				ok = false
				break
			}
		}
		if ok {
			keep = append(keep, k)
		} else {
			complete = false
		}
	}
	if complete {
		return nil, nil
	}
	return keep, nil
}

// correctionGapSD is how many of the corrected posterior's sds a
// parameter of q may be from its corrected mean or sd before predict warns
// that its draws, which are q's, differ from the fit's corrected summary.
const correctionGapSD = 0.25

// correctionGap returns a warning when the fit's summaries were corrected
// (-correct) and q's mean or sd of a fixed effect, random-effect sd or
// dispersion differs from the corrected one by more than correctionGapSD
// corrected sds: predictions draw from q, so their intervals inherit q's
// error (on toenail, q's sd((Intercept)) is 3.49 and the corrected 4.15).
// It names the parameter that differs most.
func correctionGap(doc *document) string {
	c := doc.PSISCorrected
	if c == nil || doc.Correction == nil || !doc.Correction.Ran {
		return ""
	}
	qs := make(map[string]marginal)
	for _, m := range slices.Concat(doc.Fixed, doc.RESD) {
		qs[m.Name] = m
	}
	if doc.Dispersion != nil {
		qs[doc.Dispersion.Name] = *doc.Dispersion
	}
	cs := slices.Concat(c.Fixed, c.RESD)
	if c.Dispersion != nil {
		cs = append(cs, *c.Dispersion)
	}
	var (
		worst      float64
		what       string
		qv, cv, sd float64
	)
	for _, cm := range cs {
		qm, ok := qs[cm.Name]
		if !ok || !(cm.EstError > 0) {
			continue
		}
		for k, v := range [2][2]float64{{float64(qm.Estimate), float64(cm.Estimate)}, {float64(qm.EstError), float64(cm.EstError)}} {
			if gap := math.Abs(v[0]-v[1]) / float64(cm.EstError); gap > worst {
				worst, qv, cv, sd = gap, v[0], v[1], float64(cm.EstError)
				what = [2]string{"mean", "posterior sd"}[k] + " of " + cm.Name
			}
		}
	}
	if worst <= correctionGapSD {
		return ""
	}
	return fmt.Sprintf("the predictions are drawn from the variational approximation, not from the fit's corrected posterior (-correct): the approximation's %s is %.4g, the corrected %.4g (%.2g corrected posterior sds of %.3g apart), so the predictions' intervals may be too narrow or shifted, those of new subjects most", what, qv, cv, worst, sd)
}
