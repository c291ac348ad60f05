// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// stage is the step of the pipeline from CSV text to a fit.
type stage int

const (
	stRead   stage = iota // datasets.ReadCSV
	stFamily              // glmm.ParseFamily
	stParse               // formula.Parse
	stBuild               // formula.Build
	stFit                 // vi.Fit
	stDone                // everything succeeded
)

func (s stage) String() string {
	return [...]string{"read", "family", "parse", "build", "fit", "done"}[s]
}

// outcome is what the pipeline produced.
type outcome struct {
	stage  stage // the stage that failed, or stDone
	err    error
	frame  *datasets.Frame
	design *formula.Design
	res    *vi.Result
}

// pipeline runs CSV text through the library as glmmfit does: read, parse
// the family (if fam is not empty), parse the formula, build the design and
// fit with set (unless fit is false, in which case it stops after Build with
// stage stDone). A panic anywhere is turned into a test failure naming the
// stage, with the stack, rather than killing the test binary.
func pipeline(t *testing.T, csv, fml, fam string, opts func(*formula.Options), set vi.Settings, fit bool) (out outcome) {
	t.Helper()
	cur := stRead
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("PANIC in stage %v: %v\n%s", cur, p, debug.Stack())
			out = outcome{stage: cur, err: fmt.Errorf("panic: %v", p)}
		}
	}()
	fr, err := datasets.ReadCSV(strings.NewReader(csv))
	if err != nil {
		return outcome{stage: stRead, err: err}
	}
	out.frame = fr
	var o formula.Options
	if fam != "" {
		cur = stFamily
		f, err := glmm.ParseFamily(fam)
		if err != nil {
			out.stage, out.err = stFamily, err
			return out
		}
		o.Family = f
	}
	if opts != nil {
		opts(&o)
	}
	cur = stParse
	fm, err := formula.Parse(fml)
	if err != nil {
		out.stage, out.err = stParse, err
		return out
	}
	cur = stBuild
	d, err := formula.Build(fm, fr, o)
	if err != nil {
		out.stage, out.err = stBuild, err
		return out
	}
	out.design = d
	if !fit {
		out.stage = stDone
		return out
	}
	cur = stFit
	res, err := vi.Fit(context.Background(), d.Model(), set)
	out.res = res
	if err != nil {
		out.stage, out.err = stFit, err
		return out
	}
	out.stage = stDone
	return out
}

// table is CSV text as rows of fields, header first.
type table [][]string

// baseTable returns a small valid longitudinal data set: 6 subjects of 4
// observations with a time t, a covariate x, a count y, a 0/1 response b,
// and s successes out of n trials. Data row k (1-based) is on line k+1.
func baseTable() table {
	tb := table{{"id", "t", "x", "y", "b", "s", "n"}}
	for i := 1; i <= 6; i++ {
		for j := range 4 {
			x := math.Round(100*math.Sin(float64(4*i+j))) / 100
			tb = append(tb, []string{
				"s" + strconv.Itoa(i),
				strconv.Itoa(j),
				strconv.FormatFloat(x, 'f', -1, 64),
				strconv.Itoa((7*i + 3*j) % 5),
				strconv.Itoa((i + j + i*j) % 2),
				strconv.Itoa((3*i + j) % 6),
				"5",
			})
		}
	}
	return tb
}

// col returns the index of the named column of the header.
func (tb table) col(name string) int {
	for j, h := range tb[0] {
		if h == name {
			return j
		}
	}
	panic("no column " + name)
}

// set returns a copy of tb with data row k (1-based) of column name set to v.
func (tb table) set(k int, name, v string) table {
	c := tb.clone()
	c[k][c.col(name)] = v
	return c
}

// setAll returns a copy of tb with every data row of column name set by f.
func (tb table) setAll(name string, f func(k int, old string) string) table {
	c := tb.clone()
	j := c.col(name)
	for k := 1; k < len(c); k++ {
		c[k][j] = f(k, c[k][j])
	}
	return c
}

// addCol returns a copy of tb with a new column whose data row k holds f(k).
func (tb table) addCol(name string, f func(k int, row []string) string) table {
	c := tb.clone()
	c[0] = append(c[0], name)
	for k := 1; k < len(c); k++ {
		c[k] = append(c[k], f(k, c[k]))
	}
	return c
}

func (tb table) clone() table {
	c := make(table, len(tb))
	for k, r := range tb {
		c[k] = append([]string(nil), r...)
	}
	return c
}

// csv joins the table with commas and LF line ends, without quoting.
func (tb table) csv() string {
	var b strings.Builder
	for _, r := range tb {
		b.WriteString(strings.Join(r, ","))
		b.WriteByte('\n')
	}
	return b.String()
}

// firstNonFinite returns the index of the first non-finite entry of x, or
// -1.
func firstNonFinite(x []float64) int {
	for k, v := range x {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return k
		}
	}
	return -1
}

// checkResult fails the test unless res is not nil, its status is one of
// want, and its mean, factor and (for a status other than Cancelled, whose
// bound is not estimated) lower bound are finite.
func checkResult(t *testing.T, what string, res *vi.Result, err error, want ...vi.Status) {
	t.Helper()
	if res == nil {
		t.Fatalf("%s: no result (error %v)", what, err)
	}
	ok := false
	for _, s := range want {
		ok = ok || res.Status == s
	}
	if !ok {
		t.Errorf("%s: status %v (error %v), want one of %v", what, res.Status, err, want)
	}
	if k := firstNonFinite(res.Mu); k >= 0 {
		t.Errorf("%s: Mu[%d] = %v", what, k, res.Mu[k])
	}
	if k := firstNonFinite(res.Factor); k >= 0 {
		t.Errorf("%s: Factor[%d] = %v", what, k, res.Factor[k])
	}
	// The bound is unknown (NaN) only when the fit was cancelled or failed
	// while estimating it at the final state.
	var de *vi.DivergedError
	finalFailed := errors.As(err, &de) && de.Reason == "lower bound at the final state"
	if res.Status != vi.Cancelled && !finalFailed && (math.IsNaN(res.LowerBound) || math.IsInf(res.LowerBound, 0)) {
		t.Errorf("%s: lower bound %v", what, res.LowerBound)
	}
	if len(res.Mu) != res.N*res.R+res.G {
		t.Errorf("%s: len(Mu) = %d, want %d", what, len(res.Mu), res.N*res.R+res.G)
	}
}

// simulate returns a simulated frame, failing the test on error.
func simulate(t *testing.T, spec datasets.SimSpec) (*datasets.Frame, *datasets.Truth) {
	t.Helper()
	fr, tr, err := datasets.Simulate(spec)
	if err != nil {
		t.Fatalf("Simulate(%+v): %v", spec, err)
	}
	return fr, tr
}

// build parses fml and builds it on fr with the given family.
func build(t *testing.T, fml string, fr *datasets.Frame, fam glmm.Family) *formula.Design {
	t.Helper()
	fm, err := formula.Parse(fml)
	if err != nil {
		t.Fatalf("Parse(%q): %v", fml, err)
	}
	d, err := formula.Build(fm, fr, formula.Options{Family: fam})
	if err != nil {
		t.Fatalf("Build(%q): %v", fml, err)
	}
	return d
}

// rvbTarget returns the reparametrised target rvb.Default picks for the
// model's family.
func rvbTarget(t *testing.T, m *glmm.Model) *rvb.Target {
	t.Helper()
	tg, err := rvb.New(m, rvb.Default(m.Family()))
	if err != nil {
		t.Fatalf("rvb.New: %v", err)
	}
	return tg
}
