// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"encoding/csv"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/james-bowman/sparse"
	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
)

// rawCSV reads a benchmark file with encoding/csv, independently of package
// datasets, as a map from column name to the fields of each row.
func rawCSV(t *testing.T, file string) (map[string][]string, int) {
	t.Helper()
	dir := datasets.DataDir("")
	fh, err := os.Open(filepath.Join(dir, file))
	if err != nil {
		if os.IsNotExist(err) {
			t.Skipf("benchmark data not found in %s: %v", dir, err)
		}
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	cols := make(map[string][]string)
	for _, rec := range recs[1:] {
		for k, name := range recs[0] {
			cols[name] = append(cols[name], rec[k])
		}
	}
	return cols, len(recs) - 1
}

func atof(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// checkMatrix compares a design matrix with the expected rows.
func checkMatrix(t *testing.T, what string, got mat.Matrix, want [][]float64) {
	t.Helper()
	if got == nil {
		t.Fatalf("%s is nil", what)
	}
	r, c := got.Dims()
	if r != len(want) || len(want) > 0 && c != len(want[0]) {
		t.Fatalf("%s is %d×%d, want %d×%d", what, r, c, len(want), len(want[0]))
	}
	for i := range want {
		for j := range want[i] {
			if g := got.At(i, j); g != want[i][j] {
				t.Fatalf("%s[%d,%d] = %v, want %v", what, i, j, g, want[i][j])
			}
		}
	}
}

func checkVec(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func TestBuildEpilepsy(t *testing.T) {
	raw, n := rawCSV(t, "epilepsy.csv")
	// The expected design, from the raw fields.
	var wantX, wantZ [][]float64
	var wantY []float64
	subjects := map[int]bool{}
	for i := range n {
		lbase, lage := atof(t, raw["lbase"][i]), atof(t, raw["lage"][i])
		trt := b2f(raw["trt"][i] == "progabide")
		wantX = append(wantX, []float64{1, lbase, trt, lage, atof(t, raw["V4"][i]), lbase * trt})
		wantZ = append(wantZ, []float64{1})
		wantY = append(wantY, atof(t, raw["y"][i]))
		subjects[int(atof(t, raw["subject"][i]))] = true
	}
	ids := make([]int, 0, len(subjects))
	for s := range subjects {
		ids = append(ids, s)
	}
	slices.Sort(ids)
	wantNames := []string{"(Intercept)", "lbase", "trtprogabide", "lage", "V4", "lbase:trtprogabide"}

	f, err := Parse("y ~ lbase*trt + lage + V4 + (1 | subject)")
	if err != nil {
		t.Fatal(err)
	}
	dir := datasets.DataDir("")
	plain, err := datasets.ReadFile(filepath.Join(dir, "epilepsy.csv"))
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := datasets.Epilepsy(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, fr := range []*datasets.Frame{plain, loaded} {
		d, err := Build(f, fr, Options{Family: glmm.Poisson})
		if err != nil {
			t.Fatal(err)
		}
		if got := d.FixedNames(); !slices.Equal(got, wantNames) {
			t.Errorf("fixed names %q, want %q", got, wantNames)
		}
		if got := d.RandomNames(); !slices.Equal(got, []string{"(Intercept)"}) {
			t.Errorf("random names %q", got)
		}
		checkMatrix(t, "X", d.X(), wantX)
		checkMatrix(t, "Z", d.Z(), wantZ)
		checkVec(t, "Y", d.Config().Y, wantY)
		if d.Config().Trials != nil || d.Config().Offset != nil || d.Config().Weights != nil {
			t.Errorf("trials, offset or weights set for a plain Poisson model")
		}
		lev := d.GroupLevels()
		if len(lev) != 59 || d.GroupName() != "subject" {
			t.Fatalf("%d levels of %q, want 59 of subject", len(lev), d.GroupName())
		}
		for k, s := range ids {
			if lev[k] != strconv.Itoa(s) {
				t.Fatalf("level %d is %q, want %d", k, lev[k], s)
			}
		}
		for i, g := range d.Group() {
			if lev[g] != raw["subject"][i] {
				t.Fatalf("row %d in group %q, want %q", i, lev[g], raw["subject"][i])
			}
		}
		m := d.Model()
		if m.NumObs() != 236 || m.NumSubjects() != 59 || m.P() != 6 || m.R() != 1 || m.Family() != glmm.Poisson {
			t.Errorf("model has %d obs, %d subjects, p=%d, r=%d, %v", m.NumObs(), m.NumSubjects(), m.P(), m.R(), m.Family())
		}
		if got := d.Rows(); len(got) != n || got[0] != 0 || got[n-1] != n-1 {
			t.Errorf("rows %v...", got[:3])
		}
		if lv, ok := d.Levels("trt"); !ok || !slices.Equal(lv, []string{"placebo", "progabide"}) {
			t.Errorf("Levels(trt) = %q, %v", lv, ok)
		}
	}
}

func TestBuildCBPP(t *testing.T) {
	raw, n := rawCSV(t, "cbpp.csv")
	var wantX [][]float64
	var wantY, wantM []float64
	for i := range n {
		p := raw["period"][i]
		wantX = append(wantX, []float64{1, b2f(p == "2"), b2f(p == "3"), b2f(p == "4")})
		wantY = append(wantY, atof(t, raw["incidence"][i]))
		wantM = append(wantM, atof(t, raw["size"][i]))
	}
	dir := datasets.DataDir("")
	loaded, err := datasets.CBPP(dir)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := datasets.ReadFile(filepath.Join(dir, "cbpp.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, test := range []struct {
		formula string
		fr      *datasets.Frame
		names   []string
	}{
		{"cbind(incidence, size - incidence) ~ period + (1 | herd)", loaded, []string{"(Intercept)", "period2", "period3", "period4"}},
		{"cbind(incidence, notinc) ~ period + (1 | herd)", loaded, []string{"(Intercept)", "period2", "period3", "period4"}},
		{"cbind(incidence, size - incidence) ~ factor(period) + (1 | herd)", plain, []string{"(Intercept)", "factor(period)2", "factor(period)3", "factor(period)4"}},
	} {
		f, err := Parse(test.formula)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Build(f, test.fr, Options{})
		if err != nil {
			t.Fatalf("%s: %v", test.formula, err)
		}
		if d.Family() != glmm.Binomial {
			t.Errorf("%s: family %v, want binomial", test.formula, d.Family())
		}
		if got := d.FixedNames(); !slices.Equal(got, test.names) {
			t.Errorf("%s: names %q, want %q", test.formula, got, test.names)
		}
		checkMatrix(t, "X", d.X(), wantX)
		checkVec(t, "Y", d.Config().Y, wantY)
		checkVec(t, "Trials", d.Config().Trials, wantM)
		if d.Model().NumSubjects() != 15 || d.Model().NumObs() != 56 {
			t.Errorf("%s: %d subjects, %d obs", test.formula, d.Model().NumSubjects(), d.Model().NumObs())
		}
		for i, g := range d.Group() {
			if d.GroupLevels()[g] != raw["herd"][i] {
				t.Fatalf("row %d in herd %q, want %q", i, d.GroupLevels()[g], raw["herd"][i])
			}
		}
	}
}

// smallFrame returns a frame of 12 rows of 4 subjects with a count
// response y, numeric x1, x and t, categorical f (a, b, c) and h (u, v), a
// numeric code k (1, 2, 10), a 0/1 response b, a logical response l, a
// three-level response r3, and id.
func smallFrame() *datasets.Frame {
	n := 12
	y, x1, x, tt, k, b := make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n), make([]float64, n)
	f, h, id, l, r3 := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	for i := range n {
		y[i] = float64((i * 7) % 5)
		x1[i] = 0.5*float64(i) - 2
		x[i] = 1 + float64((i*5)%7)/3
		tt[i] = float64(i % 3)
		k[i] = []float64{1, 2, 10}[(i/2)%3]
		b[i] = float64(i % 2)
		f[i] = []string{"a", "b", "c"}[i%3]
		h[i] = []string{"u", "v"}[(i/3)%2]
		id[i] = []string{"id1", "id2", "id3", "id4"}[i/3]
		l[i] = []string{"TRUE", "FALSE"}[(i*3)%5%2]
		r3[i] = []string{"lo", "mid", "hi"}[i%3]
	}
	fr, err := datasets.NewFrame(
		datasets.NewNumeric("y", y), datasets.NewNumeric("x1", x1), datasets.NewNumeric("x", x),
		datasets.NewNumeric("t", tt), datasets.NewNumeric("k", k), datasets.NewNumeric("b", b),
		datasets.NewCategorical("f", f), datasets.NewCategorical("h", h), datasets.NewCategorical("id", id),
		datasets.NewCategorical("l", l), datasets.NewCategorical("r3", r3),
	)
	if err != nil {
		panic(err)
	}
	return fr
}

func TestBuildSmall(t *testing.T) {
	fr := smallFrame()
	fc, _ := fr.Column("f")
	x1c, _ := fr.Column("x1")
	tc, _ := fr.Column("t")
	yc, _ := fr.Column("y")
	var wantX, wantZ [][]float64
	for i := range fr.NumRows() {
		wantX = append(wantX, []float64{1, x1c.Num[i], b2f(fc.Str[i] == "b"), b2f(fc.Str[i] == "c")})
		wantZ = append(wantZ, []float64{1, tc.Num[i]})
	}
	f, err := Parse("y ~ x1 + f + (1 + t | id)")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(f, fr, Options{Family: glmm.Poisson, PriorSD: 3})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.FixedNames(), []string{"(Intercept)", "x1", "fb", "fc"}; !slices.Equal(got, want) {
		t.Errorf("fixed names %q, want %q", got, want)
	}
	if got, want := d.RandomNames(), []string{"(Intercept)", "t"}; !slices.Equal(got, want) {
		t.Errorf("random names %q, want %q", got, want)
	}
	checkMatrix(t, "X", d.X(), wantX)
	checkMatrix(t, "Z", d.Z(), wantZ)
	checkVec(t, "Y", d.Config().Y, yc.Num)
	if got, want := d.Group(), []int{0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3}; !slices.Equal(got, want) {
		t.Errorf("groups %v, want %v", got, want)
	}
	if d.Model().PriorSD() != 3 || d.Model().R() != 2 || d.Model().P() != 4 {
		t.Errorf("prior sd %v, r %d, p %d", d.Model().PriorSD(), d.Model().R(), d.Model().P())
	}
	if d.Formula() != f {
		t.Errorf("Formula() is not the formula built")
	}
}

// evalColumn computes the value of a design column at row i from its R
// name alone: each ":"-separated part is a numeric variable, a transformed
// one, or a categorical variable label followed by a level.
func evalColumn(t *testing.T, fr *datasets.Frame, name string, i int) float64 {
	if name == "(Intercept)" {
		return 1
	}
	v := 1.0
	for _, part := range strings.Split(name, ":") {
		switch {
		case strings.HasPrefix(part, "log("):
			c, _ := fr.Column(strings.TrimSuffix(strings.TrimPrefix(part, "log("), ")"))
			v *= math.Log(c.Num[i])
		case strings.HasPrefix(part, "sqrt("):
			c, _ := fr.Column(strings.TrimSuffix(strings.TrimPrefix(part, "sqrt("), ")"))
			v *= math.Sqrt(c.Num[i])
		case strings.HasPrefix(part, "factor("):
			end := strings.Index(part, ")")
			c, _ := fr.Column(part[len("factor("):end])
			v *= b2f(strconv.FormatFloat(c.Num[i], 'g', -1, 64) == part[end+1:])
		default:
			if c, ok := fr.Column(part); ok && c.Kind == datasets.Numeric {
				v *= c.Num[i]
				continue
			}
			// A categorical variable is a one-letter name here.
			c, ok := fr.Column(part[:1])
			if !ok || c.Kind != datasets.Categorical {
				t.Fatalf("cannot evaluate column %q", name)
			}
			v *= b2f(c.Str[i] == part[1:])
		}
	}
	return v
}

// TestCoding checks the columns of R's model.matrix for the contrast rules:
// the names are those R gives, the values are computed from the names.
func TestCoding(t *testing.T) {
	fr := smallFrame()
	for _, test := range []struct {
		formula string
		ref     map[string]string
		names   []string
	}{
		{"y ~ x:f", nil, []string{"(Intercept)", "x:fa", "x:fb", "x:fc"}},
		{"y ~ f:x", nil, []string{"(Intercept)", "fa:x", "fb:x", "fc:x"}},
		{"y ~ x + x:f", nil, []string{"(Intercept)", "x", "x:fb", "x:fc"}},
		{"y ~ x*f - f", nil, []string{"(Intercept)", "x", "x:fb", "x:fc"}},
		{"y ~ 0 + f", nil, []string{"fa", "fb", "fc"}},
		{"y ~ f - 1", nil, []string{"fa", "fb", "fc"}},
		{"y ~ 0 + x + f", nil, []string{"x", "fa", "fb", "fc"}},
		{"y ~ f*h", nil, []string{"(Intercept)", "fb", "fc", "hv", "fb:hv", "fc:hv"}},
		{"y ~ f:h", nil, []string{"(Intercept)", "fa:hu", "fb:hu", "fc:hu", "fa:hv", "fb:hv", "fc:hv"}},
		{"y ~ f + f:h", nil, []string{"(Intercept)", "fb", "fc", "fa:hv", "fb:hv", "fc:hv"}},
		{"y ~ h + f:h", nil, []string{"(Intercept)", "hv", "hu:fb", "hv:fb", "hu:fc", "hv:fc"}},
		{"y ~ 0 + f:h", nil, []string{"fa:hu", "fb:hu", "fc:hu", "fa:hv", "fb:hv", "fc:hv"}},
		{"y ~ 0 + x:f + h", nil, []string{"hu", "hv", "x:fa", "x:fb", "x:fc"}},
		{"y ~ 0 + (f + h)^2", nil, []string{"fa", "fb", "fc", "hv", "fb:hv", "fc:hv"}},
		{"y ~ x/f", nil, []string{"(Intercept)", "x", "x:fb", "x:fc"}},
		{"y ~ factor(k)", nil, []string{"(Intercept)", "factor(k)2", "factor(k)10"}},
		{"y ~ f", map[string]string{"f": "c"}, []string{"(Intercept)", "fa", "fb"}},
		{"y ~ f*h", map[string]string{"f": "b", "h": "v"}, []string{"(Intercept)", "fa", "fc", "hu", "fa:hu", "fc:hu"}},
		{"y ~ log(x) + sqrt(x) + x1", nil, []string{"(Intercept)", "log(x)", "sqrt(x)", "x1"}},
	} {
		f, err := Parse(test.formula + " + (1 | id)")
		if err != nil {
			t.Fatal(err)
		}
		rows := make([]int, fr.NumRows())
		for i := range rows {
			rows[i] = i
		}
		c, err := newCoder(&f.fixed, fr, rows, test.ref)
		if err != nil {
			t.Fatalf("%s: %v", test.formula, err)
		}
		if !slices.Equal(c.names, test.names) {
			t.Errorf("%s: columns %q, want %q", test.formula, c.names, test.names)
			continue
		}
		x, err := designMatrix(c.bind(fr), rows)
		if err != nil {
			t.Fatal(err)
		}
		var want [][]float64
		for i := range rows {
			var row []float64
			for _, name := range test.names {
				row = append(row, evalColumn(t, fr, name, i))
			}
			want = append(want, row)
		}
		checkMatrix(t, test.formula, x, want)
	}
}

// TestResponses checks categorical and binomial responses.
func TestResponses(t *testing.T) {
	fr := smallFrame()
	col := func(name string) *datasets.Column { c, _ := fr.Column(name); return c }
	n := fr.NumRows()
	lWant, hWant, sWant := make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range n {
		lWant[i] = b2f(col("l").Str[i] == "TRUE")
		hWant[i] = b2f(col("h").Str[i] == "v")
		sWant[i] = col("y").Num[i] + col("x").Num[i]
	}
	for _, test := range []struct {
		formula string
		opts    Options
		family  glmm.Family
		y, m    []float64
	}{
		{"l ~ x + (1 | id)", Options{}, glmm.Bernoulli, lWant, nil},
		{"h ~ x + (1 | id)", Options{}, glmm.Bernoulli, hWant, nil},
		// One outcome per row: binomial is the Bernoulli model, fitted as one.
		{"h ~ x + (1 | id)", Options{Family: glmm.Binomial}, glmm.Bernoulli, hWant, nil},
		{"b ~ x + (1 | id)", Options{Family: glmm.Binomial}, glmm.Bernoulli, col("b").Num, nil},
		{"h ~ x + (1 | id)", Options{Reference: map[string]string{"h": "v"}}, glmm.Bernoulli, flip(hWant), nil},
		{"b ~ x + (1 | id)", Options{Family: glmm.Bernoulli}, glmm.Bernoulli, col("b").Num, nil},
		{"cbind(y, x) ~ 1 + (1 | id)", Options{}, glmm.Binomial, col("y").Num, sWant},
	} {
		// x is not integral, so cbind(y, x) is checked without glmm.
		f, err := Parse(test.formula)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Build(f, fr, test.opts)
		if test.m != nil {
			var de *DataError
			if !errors.As(err, &de) || !errors.Is(err, glmm.ErrResponse) {
				t.Errorf("%s: error %v, want an impossible response", test.formula, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", test.formula, err)
			continue
		}
		if d.Family() != test.family {
			t.Errorf("%s: family %v, want %v", test.formula, d.Family(), test.family)
		}
		checkVec(t, test.formula+" Y", d.Config().Y, test.y)
	}
}

func flip(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = 1 - x
	}
	return out
}

func TestBuildOffsetWeightsMissing(t *testing.T) {
	fr := smallFrame()
	xc, _ := fr.Column("x")
	x1c, _ := fr.Column("x1")
	n := fr.NumRows()
	f, _ := Parse("y ~ x1 + offset(log(x)) + offset(t) + (1 | id)")
	d, err := Build(f, fr, Options{Family: glmm.Poisson, Offset: "x1", Weights: "x"})
	if err != nil {
		t.Fatal(err)
	}
	tc, _ := fr.Column("t")
	want := make([]float64, n)
	for i := range n {
		want[i] = math.Log(xc.Num[i]) + tc.Num[i] + x1c.Num[i]
	}
	checkVec(t, "Offset", d.Config().Offset, want)
	checkVec(t, "Weights", d.Config().Weights, xc.Num)
	if got, err := d.NewOffset(fr); err != nil || !slices.Equal(got, want) {
		t.Errorf("NewOffset = %v, %v; want %v", got, err, want)
	}

	// A missing value: rejected by default, naming the row; dropped on
	// request.
	miss := fr.Rows(seqInts(n))
	mc, _ := miss.Column("x1")
	mc.Num[4], mc.Missing[4] = math.NaN(), true
	g, _ := Parse("y ~ x1 + (1 | id)")
	_, err = Build(g, miss, Options{Family: glmm.Poisson})
	var de *DataError
	if !errors.As(err, &de) || de.Row != 5 || de.Column != "x1" || de.Token != "x1" || de.Pos != 5 {
		t.Errorf("missing value: error %#v, want row 5 of x1", err)
	} else if !strings.Contains(err.Error(), "row 5") {
		t.Errorf("message %q does not give the 1-based row 5", err)
	}
	d, err = Build(g, miss, Options{Family: glmm.Poisson, Missing: DropMissing})
	if err != nil {
		t.Fatal(err)
	}
	wantRows := slices.Delete(seqInts(n), 4, 5)
	if got := d.Rows(); !slices.Equal(got, wantRows) {
		t.Errorf("rows %v, want %v", got, wantRows)
	}
	if got := d.LeftOut(); got != 1 {
		t.Errorf("LeftOut() = %d, want the 1 row with a missing value", got)
	}
	// A missing value in a column the model does not use leaves no row
	// out.
	h, _ := Parse("y ~ t + (1 | id)")
	if d, err := Build(h, miss, Options{Family: glmm.Poisson, Missing: DropMissing}); err != nil {
		t.Error(err)
	} else if d.LeftOut() != 0 {
		t.Errorf("x1 unused: LeftOut() = %d, want 0", d.LeftOut())
	}
	var wantX [][]float64
	for _, i := range wantRows {
		wantX = append(wantX, []float64{1, x1c.Num[i]})
	}
	checkMatrix(t, "X without the missing row", d.X(), wantX)
	if got := d.Config().Rows; got[4] != 6 {
		t.Errorf("glmm rows %v: the fifth used row is data row 6", got)
	}
}

func seqInts(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

func TestBuildErrors(t *testing.T) {
	fr := smallFrame()
	one := fr.Rows([]int{0, 1, 2}) // a single subject
	neg := fr.Rows(seqInts(fr.NumRows()))
	nc, _ := neg.Column("y")
	nc.Num[7] = -1
	bad := fr.Rows(seqInts(fr.NumRows()))
	bc, _ := bad.Column("x")
	bc.Num[2] = -3
	pois := Options{Family: glmm.Poisson}
	for _, test := range []struct {
		formula string
		fr      *datasets.Frame
		opts    Options
		token   string
		pos     int
		column  string
		row     int
		msg     string
		unsup   bool
	}{
		{"y ~ nope + (1 | id)", fr, pois, "nope", 5, "nope", 0, "no such column", false},
		{"y ~ x + (1 | nope)", fr, pois, "nope", 14, "nope", 0, "no such column", false},
		{"nope ~ x + (1 | id)", fr, Options{}, "nope", 1, "nope", 0, "no such column", false},
		{"y ~ x + offset(nope) + (1 | id)", fr, pois, "nope", 16, "nope", 0, "no such column", false},
		{"y ~ x + (1 | id)", one, pois, "id", 14, "id", 0, "single level", false},
		{"y ~ x + (1 | id)", fr, Options{}, "y", 1, "", 0, "needs a family", false},
		{"y ~ x + (1 | id)", fr, Options{Family: 9}, "Options.Family", 0, "", 0, "unknown family", false},
		{"cbind(y, f) ~ x + (1 | id)", fr, Options{}, "f", 10, "f", 1, "categorical (\"a\" is not a number)", false},
		{"cbind(y, x) ~ x1 + (1 | id)", fr, pois, "cbind", 1, "", 0, "binomial family", false},
		{"y ~ log(f) + (1 | id)", fr, pois, "log(f)", 5, "f", 1, "categorical", false},
		{"y ~ offset(f) + (1 | id)", fr, pois, "f", 12, "f", 1, "categorical", false},
		{"y ~ x + (1 | id)", fr, Options{Family: glmm.Poisson, Weights: "f"}, "Options.Weights", 0, "f", 1, "categorical", false},
		{"y ~ x + (1 | id)", fr, Options{Family: glmm.Poisson, Offset: "zz"}, "Options.Offset", 0, "zz", 0, "no such column", false},
		{"y ~ log(x) + (1 | id)", bad, pois, "log(x)", 5, "x", 3, "must be positive", false},
		{"y ~ x + (1 | id)", fr, Options{Family: glmm.Poisson, Weights: "x1"}, "Options.Weights", 0, "x1", 1, "negative weight", false},
		{"y ~ x + (1 | id)", neg, pois, "y", 1, "y", 8, "impossible response", false},
		{"r3 ~ x + (1 | id)", fr, Options{}, "r3", 1, "r3", 0, "two levels", false},
		{"f ~ x + (1 | id)", fr, pois, "f", 1, "f", 0, "bernoulli family", false},
		{"h ~ x + (1 | id)", fr, Options{Reference: map[string]string{"h": "w"}}, "h", 1, "h", 0, "reference level", false},
		{"y ~ f + (1 | id)", fr, Options{Family: glmm.Poisson, Reference: map[string]string{"f": "z"}}, "f", 5, "f", 0, "reference level", false},
		{"y ~ f + (1 | id)", fr.Rows([]int{0, 3, 6, 9}), pois, "f", 5, "f", 0, "at least 2", false},
		{"y ~ x", fr, pois, "~", 3, "", 0, "no random-effects term", false},
		{"y ~ x + (1 + t | id) + (1 + t | f)", fr, pois, "f", 33, "", 0, "random slopes for f", true},
		{"y ~ x + (1 + t || id)", fr, pois, "||", 16, "", 0, "uncorrelated", true},
		{"y ~ x + (1 | id) + (0 + t | id)", fr, pois, "(", 20, "", 0, "several random-effects terms", true},
		{"y ~ h + id + (1 | id)", fr, pois, "idid4", 0, "", 0, "rank-deficient", false},
		{"y ~ f:h + (1 | id)", fr, pois, "fc:hv", 0, "", 0, "rank-deficient", false},
	} {
		f, err := Parse(test.formula)
		if err != nil {
			t.Fatalf("Parse(%q): %v", test.formula, err)
		}
		d, err := Build(f, test.fr, test.opts)
		if err == nil {
			t.Errorf("Build(%q) = %v, want an error", test.formula, d)
			continue
		}
		var de *DataError
		if !errors.As(err, &de) {
			t.Errorf("Build(%q): %v is a %T, want *DataError", test.formula, err, err)
			continue
		}
		if de.Token != test.token || de.Pos != test.pos || de.Column != test.column || de.Row != test.row {
			t.Errorf("Build(%q): token %q at %d, column %q, row %d; want %q at %d, %q, %d (%v)",
				test.formula, de.Token, de.Pos, de.Column, de.Row, test.token, test.pos, test.column, test.row, err)
		}
		if !strings.Contains(err.Error(), test.msg) {
			t.Errorf("Build(%q): %q does not contain %q", test.formula, err, test.msg)
		}
		if errors.Is(err, ErrUnsupported) != test.unsup {
			t.Errorf("Build(%q): errors.Is(ErrUnsupported) = %v", test.formula, !test.unsup)
		}
	}
	if _, err := Build(nil, fr, Options{}); err == nil {
		t.Error("Build(nil, ...) succeeded")
	}
	empty, _ := datasets.NewFrame()
	f, _ := Parse("y ~ x + (1 | id)")
	if _, err := Build(f, empty, pois); err == nil {
		t.Error("Build on an empty frame succeeded")
	}
}

func TestDoubleBarCorrelated(t *testing.T) {
	fr := smallFrame()
	tc, _ := fr.Column("t")
	x1c, _ := fr.Column("x1")
	var wantZ [][]float64
	for i := range fr.NumRows() {
		wantZ = append(wantZ, []float64{1, tc.Num[i], x1c.Num[i]})
	}
	for _, s := range []string{
		"y ~ x + (1 + t + x1 || id)",
		"y ~ x + (1 | id) + (0 + t | id) + (0 + x1 | id)",
		"y ~ x + (t || id) + (x1 - 1 | id)",
	} {
		f, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		d, err := Build(f, fr, Options{Family: glmm.Poisson, DoubleBar: CorrelatedDoubleBar})
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if got, want := d.RandomNames(), []string{"(Intercept)", "t", "x1"}; !slices.Equal(got, want) {
			t.Errorf("%s: random names %q, want %q", s, got, want)
		}
		checkMatrix(t, s+" Z", d.Z(), wantZ)
	}
}

func TestNewData(t *testing.T) {
	fr := smallFrame()
	f, _ := Parse("y ~ x1*f + log(x) + (1 + t | id)")
	d, err := Build(f, fr, Options{Family: glmm.Poisson})
	if err != nil {
		t.Fatal(err)
	}
	// New data: training rows 1, 5 and 10, and a row of a new subject
	// "id9" with a known level, in a frame with the columns reordered and
	// f given as numbers-free labels.
	idx := []int{1, 5, 10, 2}
	newFr := fr.Rows(idx)
	idc, _ := newFr.Column("id")
	idc.Str[3] = "id9"
	X, Z, group, known, err := d.NewData(newFr)
	if err != nil {
		t.Fatal(err)
	}
	var wantX, wantZ [][]float64
	for _, i := range idx {
		wantX = append(wantX, mat.Row(nil, i, d.X()))
		wantZ = append(wantZ, mat.Row(nil, i, d.Z()))
	}
	checkMatrix(t, "new X", X, wantX)
	checkMatrix(t, "new Z", Z, wantZ)
	if want := []int{d.Group()[1], d.Group()[5], d.Group()[10], -1}; !slices.Equal(group, want) {
		t.Errorf("groups %v, want %v", group, want)
	}
	if want := []bool{true, true, true, false}; !slices.Equal(known, want) {
		t.Errorf("known %v, want %v", known, want)
	}

	// A level unseen in training, a missing value, a missing column.
	unseen := fr.Rows(idx)
	fc, _ := unseen.Column("f")
	fc.Str[2] = "zz"
	var de *DataError
	if _, _, _, _, err := d.NewData(unseen); !errors.As(err, &de) || de.Row != 3 || de.Column != "f" || !strings.Contains(err.Error(), `"zz"`) {
		t.Errorf("unseen level: %v", err)
	}
	missing := fr.Rows(idx)
	xc, _ := missing.Column("x")
	xc.Num[1], xc.Missing[1] = math.NaN(), true
	if _, _, _, _, err := d.NewData(missing); !errors.As(err, &de) || de.Row != 2 || de.Column != "x" {
		t.Errorf("missing value: %v", err)
	}
	noT, _ := datasets.NewFrame(func() []*datasets.Column {
		var cols []*datasets.Column
		for _, c := range fr.Columns() {
			if c.Name != "t" {
				cols = append(cols, c)
			}
		}
		return cols
	}()...)
	if _, _, _, _, err := d.NewData(noT); !errors.As(err, &de) || de.Column != "t" {
		t.Errorf("missing column: %v", err)
	}
}

// TestSparseDesign checks that a wide design of indicators is stored as
// CSR with the same values as the dense one.
func TestSparseDesign(t *testing.T) {
	n := 60
	g, ids, y := make([]string, n), make([]string, n), make([]float64, n)
	for i := range n {
		g[i] = "L" + strconv.Itoa(i%20)
		ids[i] = strconv.Itoa(i % 6)
		y[i] = float64(i % 4)
	}
	fr, _ := datasets.NewFrame(datasets.NewCategorical("g", g), datasets.NewCategorical("id", ids), datasets.NewNumeric("y", y))
	f, _ := Parse("y ~ g + (1 | id)")
	d, err := Build(f, fr, Options{Family: glmm.Poisson})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := d.X().(*sparse.CSR); !ok {
		t.Fatalf("X is a %T, want *sparse.CSR", d.X())
	}
	names := d.FixedNames()
	if len(names) != 20 {
		t.Fatalf("%d columns, want 20", len(names))
	}
	var want [][]float64
	for i := range n {
		row := []float64{1}
		for _, name := range names[1:] {
			row = append(row, b2f("g"+g[i] == name))
		}
		want = append(want, row)
	}
	checkMatrix(t, "X", d.X(), want)
}

// TestBinomialResponseCulprit: an impossible binomial row is blamed on the
// column that makes it so, successes, trials or failures, with its row;
// a response of one column that is not 0/1 is told how to write its
// trials.
func TestBinomialResponseCulprit(t *testing.T) {
	frame := func(edit func(s, f, n []float64)) *datasets.Frame {
		const rows = 12
		s, f, n, x := make([]float64, rows), make([]float64, rows), make([]float64, rows), make([]float64, rows)
		id := make([]string, rows)
		for i := range rows {
			s[i], n[i] = float64(i%4), 5
			f[i] = n[i] - s[i]
			x[i] = float64(i%5) / 2
			id[i] = "g" + strconv.Itoa(i/3)
		}
		edit(s, f, n)
		fr, err := datasets.NewFrame(datasets.NewNumeric("s", s), datasets.NewNumeric("f", f), datasets.NewNumeric("n", n),
			datasets.NewNumeric("x", x), datasets.NewCategorical("id", id))
		if err != nil {
			t.Fatal(err)
		}
		return fr
	}
	const trials, failures, single = "cbind(s, n - s) ~ x + (1 | id)", "cbind(s, f) ~ x + (1 | id)", "s ~ x + (1 | id)"
	for _, test := range []struct {
		name    string
		formula string
		edit    func(s, f, n []float64)
		column  string
		pos     int
		row     int
		msg     []string
	}{
		{"zero trials", trials, func(s, f, n []float64) { s[3], n[3] = 0, 0 }, "n", 10, 4, []string{"row 4", "the trials n", "number of trials 0"}},
		{"fractional trials", trials, func(s, f, n []float64) { n[2] = 4.5 }, "n", 10, 3, []string{"row 3", "number of trials 4.5"}},
		{"successes above trials", trials, func(s, f, n []float64) { s[5] = 7 }, "s", 7, 6, []string{"row 6", "7 successes exceed 5 trials"}},
		{"negative successes", trials, func(s, f, n []float64) { s[1] = -1 }, "s", 7, 2, []string{"row 2", "successes -1"}},
		{"negative failures", failures, func(s, f, n []float64) { f[4] = -1 }, "f", 10, 5, []string{"row 5", "the failures f (trials are s + f)"}},
		{"fractional failures", failures, func(s, f, n []float64) { f[7] = 0.5 }, "f", 10, 8, []string{"row 8", "the failures f"}},
		{"no successes and no failures", failures, func(s, f, n []float64) { s[8], f[8] = 0, 0 }, "f", 10, 9, []string{"row 9", "number of trials 0"}},
		{"fractional successes", failures, func(s, f, n []float64) { s[2] = 1.5 }, "s", 7, 3, []string{"row 3"}},
		{"negative successes, failures fine", failures, func(s, f, n []float64) { s[6], f[6] = -2, 3 }, "s", 7, 7, []string{"row 7", "successes -2"}},
		// One column, with the data released as glmmfit builds: a
		// proportion, and a count.
		{"proportions, one column", single, func(s, f, n []float64) {
			for i := range s {
				s[i] /= n[i]
			}
		}, "s", 1, 2, []string{"row 2", "for proportions of n trials give n as Options.Weights (glmer's weights = n)"}},
		{"counts, one column", single, func(s, f, n []float64) {}, "s", 1, 3, []string{"row 3", "a response of one column has one trial a row: for counts of successes fit cbind(successes, failures)"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			f, err := Parse(test.formula)
			if err != nil {
				t.Fatal(err)
			}
			var opts Options
			if test.formula == single {
				opts = Options{Family: glmm.Binomial, Release: true}
			}
			_, err = Build(f, frame(test.edit), opts)
			var de *DataError
			if !errors.As(err, &de) || !errors.Is(err, glmm.ErrResponse) {
				t.Fatalf("error %v, want a *DataError wrapping glmm.ErrResponse", err)
			}
			if de.Column != test.column || de.Pos != test.pos || de.Row != test.row || de.Token != f.Response() {
				t.Errorf("token %q at %d, column %q, row %d; want %q at %d, %q, %d (%v)",
					de.Token, de.Pos, de.Column, de.Row, f.Response(), test.pos, test.column, test.row, err)
			}
			for _, m := range test.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message %q does not contain %q", err, m)
				}
			}
		})
	}
}

// TestWarnings: Build accepts designs with columns far from unit scale or
// a column read as categorical because of a typo, and says so.
func TestWarnings(t *testing.T) {
	var b strings.Builder
	b.WriteString("id,gid,y,x,big,tiny,year,f\n")
	for i := range 24 {
		x := float64((i*7)%11)/4 - 1
		gid := strconv.Itoa(i % 6)
		if i == 9 {
			gid = "3O"
		}
		fmt.Fprintf(&b, "s%d,%s,%d,%g,%g,%g,%d,%c\n", i%6, gid, (i*5)%4, x, 3e6*x+float64(i), 2e-5*x, 2000+i%7, 'a'+rune(i%3))
	}
	fr, err := datasets.ReadCSV(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	for _, test := range []struct {
		formula string
		want    [][]string // substrings of each warning, in order
	}{
		{"y ~ x + f + (1 + x | id)", nil},
		{"y ~ big + (1 | id)", [][]string{{`fixed-effect column "big"`, "standard deviation 2.41e+06", "consider rescaling"}}},
		{"y ~ tiny + (1 | id)", [][]string{{`fixed-effect column "tiny"`, "e-05"}}},
		{"y ~ year + (1 | id)", [][]string{{`"year"`, "largest |value| 2.01e+03"}}},
		{"y ~ x + (1 + big | id)", [][]string{{`random-effect column "big"`}}},
		{"y ~ big + (1 + big | id)", [][]string{{`fixed-effect column "big"`}}},
		{"y ~ x:big + tiny + (1 | id)", [][]string{{`"tiny"`}, {`"x:big"`}}},
		{"y ~ x + (1 | gid)", [][]string{{`line 11, column 2 ("gid")`, `"3O" is not a number`}}},
		{"y ~ year + (1 | gid)", [][]string{{`"3O"`}, {`"year"`}}},
	} {
		t.Run(test.formula, func(t *testing.T) {
			f, err := Parse(test.formula)
			if err != nil {
				t.Fatal(err)
			}
			d, err := Build(f, fr, Options{Family: glmm.Poisson})
			if err != nil {
				t.Fatal(err)
			}
			got := d.Warnings()
			if len(got) != len(test.want) {
				t.Fatalf("warnings %q, want %d", got, len(test.want))
			}
			for k, want := range test.want {
				for _, s := range want {
					if !strings.Contains(got[k], s) {
						t.Errorf("warning %q does not contain %q", got[k], s)
					}
				}
			}
		})
	}
}

// TestColumnStats: the scale of a CSR design, whose zeros are not stored,
// is that of the dense one.
func TestColumnStats(t *testing.T) {
	dense := mat.NewDense(5, 3, []float64{
		1, 0, 2e6,
		0, 0, 0,
		1, 0.5, -1e6,
		0, 0, 4e6,
		1, 0, 0,
	})
	var ptr, ind []int
	var val []float64
	ptr = append(ptr, 0)
	for i := range 5 {
		for j := range 3 {
			if v := dense.At(i, j); v != 0 {
				ind, val = append(ind, j), append(val, v)
			}
		}
		ptr = append(ptr, len(ind))
	}
	want := []colStat{{sd: math.Sqrt(0.24), maxAbs: 1, binary: true}, {sd: 0.2, maxAbs: 0.5}, {sd: math.Sqrt(3.2e12), maxAbs: 4e6}}
	for _, x := range []mat.Matrix{dense, sparse.NewCSR(5, 3, ptr, ind, val)} {
		got := columnStats(x)
		for j, w := range want {
			if math.Abs(got[j].sd-w.sd) > 1e-12*w.sd || got[j].maxAbs != w.maxAbs || got[j].binary != w.binary {
				t.Errorf("%T column %d: %+v, want %+v", x, j, got[j], w)
			}
		}
	}
}

// TestDesignStats: the statistics of a design computed row by row, without
// the matrix, are those of the matrix designMatrix makes, to the bit,
// for a narrow dense design and for wide ones that designMatrix stores
// sparse and dense.
func TestDesignStats(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 3000
	x, w := make([]float64, n), make([]float64, n)
	g, h := make([]string, n), make([]string, n)
	for i := range n {
		x[i] = 1e3 + rng.NormFloat64()
		w[i] = rng.ExpFloat64()
		g[i] = fmt.Sprintf("g%02d", rng.IntN(30))
		h[i] = fmt.Sprintf("h%d", rng.IntN(3))
	}
	fr, err := datasets.NewFrame(datasets.NewNumeric("x", x), datasets.NewNumeric("w", w),
		datasets.NewCategorical("g", g), datasets.NewCategorical("h", h))
	if err != nil {
		t.Fatal(err)
	}
	rows := make([]int, 0, n)
	for i := range n {
		if i%7 != 3 {
			rows = append(rows, i)
		}
	}
	for _, form := range []string{"y ~ x + log(w)", "y ~ g + x", "y ~ h*x*w + h:log(w) + sqrt(w) + exp(w)"} {
		f, err := Parse(form + " + (1 | id)")
		if err != nil {
			t.Fatal(err)
		}
		c, err := newCoder(&f.fixed, fr, rows, nil)
		if err != nil {
			t.Fatalf("%s: %v", form, err)
		}
		m, err := designMatrix(c.bind(fr), rows)
		if err != nil {
			t.Fatal(err)
		}
		want := columnStats(m)
		got, err := designStats(c.bind(fr), rows)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %T with %d columns", form, m, len(want))
		if !slices.Equal(got, want) {
			t.Errorf("%s (%T): stats row by row %+v, of the matrix %+v", form, m, got, want)
		}
	}
}

// TestRelease: with Options.Release the model is the same to the bit, the
// columns the model uses are emptied (but a cbind response's) and the
// others are not; a design of the intercept and plain numeric columns is
// made of the data's columns (glmm.Columns); a 0/1 response is given to
// glmm as bytes (Config.Binary).
func TestRelease(t *testing.T) {
	for _, c := range []struct {
		form            string
		opts            Options
		emptied, intact []string
		columns, binary bool
	}{
		{"y ~ x1 + f + (1 + t | id)", Options{Family: glmm.Poisson}, []string{"y", "x1", "f", "t", "id"}, []string{"x", "k"}, false, false},
		{"y ~ x1 + log(x) + offset(t) + (1 | id) + (1 | h)", Options{Family: glmm.Poisson, Prior: PriorAuto, Weights: "k", LocalFactor: "id"},
			[]string{"y", "x1", "x", "t", "k", "id", "h"}, []string{"b", "f"}, false, false},
		{"cbind(y, k) ~ x1 + (1 | id:h)", Options{}, []string{"x1", "id", "h"}, []string{"y", "k"}, true, false},
		{"y ~ x1 + x + b + (1 | id)", Options{Family: glmm.Poisson, Prior: PriorAuto}, []string{"y", "x1", "x", "b", "id"}, []string{"t"}, true, false},
		{"y ~ x1 + t + (1 + t | id)", Options{Family: glmm.Poisson, Prior: PriorAuto}, []string{"y", "x1", "id", "t"}, []string{"x"}, false, false},
		{"b ~ x1 + (1 | id)", Options{Family: glmm.Bernoulli}, []string{"b", "x1", "id"}, []string{"y"}, true, true},
		{"b ~ x1 + (1 | id)", Options{Family: glmm.Binomial}, []string{"b", "x1", "id"}, []string{"y"}, true, true},
		{"l ~ x1 + (1 + t | id)", Options{}, []string{"l", "x1", "id", "t"}, []string{"y"}, true, true},
		{"h ~ x1 + (1 | id)", Options{Reference: map[string]string{"h": "v"}}, []string{"h", "x1", "id"}, []string{"y"}, true, true},
		{"b ~ x1 + (1 | id)", Options{Family: glmm.Bernoulli, Weights: "k"}, []string{"b", "x1", "id", "k"}, []string{"y"}, true, true},
	} {
		f, err := Parse(c.form)
		if err != nil {
			t.Fatal(err)
		}
		want, err := Build(f, smallFrame(), c.opts)
		if err != nil {
			t.Fatalf("%s: %v", c.form, err)
		}
		fr := smallFrame()
		opts := c.opts
		opts.Release = true
		got, err := Build(f, fr, opts)
		if err != nil {
			t.Fatalf("%s, Release: %v", c.form, err)
		}
		if got.Model().Fingerprint() != want.Model().Fingerprint() {
			t.Errorf("%s: the model differs with Release", c.form)
		}
		if cfg := got.Config(); (cfg.Binary != nil) != c.binary || (cfg.Y != nil) == c.binary {
			t.Errorf("%s: Binary given %v, Y given %v", c.form, cfg.Binary != nil, cfg.Y != nil)
		}
		if _, ok := got.X().(*glmm.Columns); ok != c.columns {
			t.Errorf("%s: X is a %T", c.form, got.X())
		}
		for _, name := range c.emptied {
			if col, _ := fr.Column(name); col.Num != nil || col.Str != nil || col.Missing != nil {
				t.Errorf("%s: column %s not emptied", c.form, name)
			}
		}
		for _, name := range c.intact {
			if col, _ := fr.Column(name); col.Len() != fr.NumRows() || len(col.Missing) != fr.NumRows() {
				t.Errorf("%s: column %s emptied", c.form, name)
			}
		}
	}
}

// TestUnknownColumnHint: a formula's unknown column gets the data's
// column that differs from it only in case, or by one edit from three
// characters on, as a hint before the list of columns; none otherwise.
func TestUnknownColumnHint(t *testing.T) {
	fr := smallFrame()
	for _, c := range []struct {
		formula, hint string // hint "": none
	}{
		{"y ~ X + (1 | id)", `did you mean "x"?`},
		{"y ~ x11 + (1 | id)", `did you mean "x1"?`},
		{"y ~ x + (1 | ID)", `did you mean "id"?`},
		{"y ~ x + (1 | idd)", `did you mean "id"?`},
		{"y ~ z + (1 | id)", ""},   // one character: every one-letter column is as near
		{"y ~ xyz + (1 | id)", ""}, // two edits from any
	} {
		f, err := Parse(c.formula)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Build(f, fr, Options{Family: glmm.Poisson})
		var de *DataError
		if !errors.As(err, &de) || !strings.Contains(de.Msg, "no such column") || !strings.Contains(de.Msg, "columns: ") {
			t.Errorf("%s: error %v, want no such column with the list of columns", c.formula, err)
			continue
		}
		if c.hint == "" && strings.Contains(de.Msg, "did you mean") || c.hint != "" && !strings.Contains(de.Msg, c.hint) {
			t.Errorf("%s: message %q, want hint %q", c.formula, de.Msg, c.hint)
		}
	}
}

// TestBuildArithmetic: arithmetic of a column takes each row's value of
// the expression, in the design and in new data, named as R names it; a
// row outside the expression's domain is an error naming the row, the
// value and the operation.
func TestBuildArithmetic(t *testing.T) {
	fr := smallFrame()
	tc, _ := fr.Column("t")
	xc, _ := fr.Column("x")
	f, err := Parse("y ~ t + I(t^2) + log(x + 1) + I((x - 1)/2) + (1 + I(t^2) | id)")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(f, fr, Options{Family: glmm.Poisson})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.FixedNames(), []string{"(Intercept)", "t", "I(t^2)", "log(x + 1)", "I((x - 1)/2)"}; !slices.Equal(got, want) {
		t.Errorf("fixed names %q, want %q", got, want)
	}
	if got, want := d.RandomNames(), []string{"(Intercept)", "I(t^2)"}; !slices.Equal(got, want) {
		t.Errorf("random names %q, want %q", got, want)
	}
	var want, wantZ [][]float64
	for i := range fr.NumRows() {
		tt, x := tc.Num[i], xc.Num[i]
		want = append(want, []float64{1, tt, tt * tt, math.Log(x + 1), (x - 1) / 2})
		wantZ = append(wantZ, []float64{1, tt * tt})
	}
	checkMatrix(t, "X", d.X(), want)
	checkMatrix(t, "Z", d.Z(), wantZ)
	nf, err := datasets.ReadCSV(strings.NewReader("t,x,id\n3,0,id1\n-1,7,new\n"))
	if err != nil {
		t.Fatal(err)
	}
	X, Z, _, _, err := d.NewData(nf)
	if err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, "new X", X, [][]float64{{1, 3, 9, 0, -0.5}, {1, -1, 1, math.Log(8), 3}})
	checkMatrix(t, "new Z", Z, [][]float64{{1, 9}, {1, 1}})
	// x = -1 makes log(x + 1) log of 0.
	bad, err := datasets.ReadCSV(strings.NewReader("t,x,id\n1,2,id1\n1,-1,id1\n"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, _, _, err = d.NewData(bad)
	var de *DataError
	if !errors.As(err, &de) || de.Row != 2 || de.Column != "x" || de.Token != "log(x + 1)" || !strings.Contains(err.Error(), "log(x + 1) of 0") {
		t.Errorf("log of 0: error %v, want row 2 of x naming log(x + 1) of 0", err)
	}
}

// TestBuildScale: scale(x) is x less its mean over the rows used, over
// their standard deviation (n - 1), as R's scale, in fixed and random
// terms; new rows are scaled by the training rows' mean and sd; a column
// that does not vary is an error, and so is scale() for a design built
// from pieces of the data.
func TestBuildScale(t *testing.T) {
	fr := smallFrame()
	f, err := Parse("y ~ scale(x1) + t + (1 + scale(t) | id)")
	if err != nil {
		t.Fatal(err)
	}
	d, err := Build(f, fr, Options{Family: glmm.Poisson})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := d.FixedNames(), []string{"(Intercept)", "scale(x1)", "t"}; !slices.Equal(got, want) {
		t.Errorf("fixed names %q, want %q", got, want)
	}
	x1c, _ := fr.Column("x1")
	tc, _ := fr.Column("t")
	meanSD := func(v []float64) (float64, float64) {
		var m, ss float64
		for _, x := range v {
			m += x / float64(len(v))
		}
		for _, x := range v {
			ss += (x - m) * (x - m)
		}
		return m, math.Sqrt(ss / float64(len(v)-1))
	}
	m1, s1 := meanSD(x1c.Num)
	mt, st := meanSD(tc.Num)
	var want, wantZ [][]float64
	for i := range fr.NumRows() {
		want = append(want, []float64{1, (x1c.Num[i] - m1) / s1, tc.Num[i]})
		wantZ = append(wantZ, []float64{1, (tc.Num[i] - mt) / st})
	}
	checkMatrix(t, "X", d.X(), want)
	checkMatrix(t, "Z", d.Z(), wantZ)
	nf, err := datasets.ReadCSV(strings.NewReader("x1,t,id\n10,2,id1\n"))
	if err != nil {
		t.Fatal(err)
	}
	X, Z, _, _, err := d.NewData(nf)
	if err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, "new X", X, [][]float64{{1, (10 - m1) / s1, 2}})
	checkMatrix(t, "new Z", Z, [][]float64{{1, (2 - mt) / st}})

	flat, err := datasets.ReadCSV(strings.NewReader("y,c,id\n1,3,a\n0,3,a\n2,3,b\n1,3,b\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := Parse("y ~ scale(c) + (1 | id)")
	_, err = Build(g, flat, Options{Family: glmm.Poisson})
	var de *DataError
	if !errors.As(err, &de) || de.Column != "c" || de.Token != "scale(c)" || !strings.Contains(err.Error(), "needs a column that varies") {
		t.Errorf("constant column: error %v, want one naming scale(c)", err)
	}
	_, err = Scan(f, func(func(*datasets.Frame) error) error { return nil }, Options{})
	if !errors.As(err, &de) || de.Token != "scale(x1)" || !strings.Contains(err.Error(), "glmmfit -shard") {
		t.Errorf("Scan: error %v, want scale() refused", err)
	}
}

// TestBuildProportions: a binomial response of proportions with weights
// is glmer's binomial with weights = trials: the same model as cbind() of
// the successes, no observation weights; proportions outside [0, 1],
// proportions that do not make whole successes, and weights that are not
// numbers of trials are errors naming the row and column.
func TestBuildProportions(t *testing.T) {
	const text = "s,n,p,x,id\n1,4,0.25,0.1,a\n0,2,0,0.4,a\n3,3,1,0.2,b\n2,5,0.4,0.9,b\n"
	fr, err := datasets.ReadCSV(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	build := func(src string, opts Options) (*Design, error) {
		f, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		opts.Family = glmm.Binomial
		return Build(f, fr, opts)
	}
	want, err := build("cbind(s, n - s) ~ x + (1 | id)", Options{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := build("p ~ x + (1 | id)", Options{Weights: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := got.Config(), want.Config(); !slices.Equal(g.Y, w.Y) || !slices.Equal(g.Trials, w.Trials) || g.Weights != nil || got.Family() != glmm.Binomial {
		t.Errorf("proportions with weights: Y %v, trials %v, weights %v, family %v; want %v, %v, none, binomial", g.Y, g.Trials, g.Weights, got.Family(), w.Y, w.Trials)
	}
	// New rows' trials are their weights.
	nf, err := datasets.ReadCSV(strings.NewReader("n,x,id\n7,0.5,a\n,0.5,z\n"))
	if err != nil {
		t.Fatal(err)
	}
	trials, err := got.NewTrials(nf)
	if err != nil || len(trials) != 2 || trials[0] != 7 || !math.IsNaN(trials[1]) || !slices.Equal(got.TrialColumns(), []string{"n"}) {
		t.Errorf("NewTrials %v, %v, columns %q; want [7 NaN] from column n", trials, err, got.TrialColumns())
	}
	for _, c := range []struct {
		name, text string
		row        int
		column     string
		msg        string
	}{
		{"proportion above 1", "p,n,x,id\n0.5,4,0.1,a\n1.5,4,0.2,a\n0.25,4,0.3,b\n", 2, "p", "between 0 and 1, not 1.5"},
		{"fractional successes", "p,n,x,id\n0.5,4,0.1,a\n0.3,4,0.2,a\n0.25,4,0.3,b\n", 2, "p", "is 1.2 successes, not a whole number"},
		{"fractional trials", "p,n,x,id\n0.5,4,0.1,a\n0.5,2.5,0.2,a\n0.25,4,0.3,b\n", 2, "n", "whole numbers of at least 1, not 2.5"},
		{"no trials", "p,n,x,id\n0.5,4,0.1,a\n0,0,0.2,a\n0.25,4,0.3,b\n", 2, "n", "not 0"},
	} {
		bad, err := datasets.ReadCSV(strings.NewReader(c.text))
		if err != nil {
			t.Fatal(err)
		}
		f, _ := Parse("p ~ x + (1 | id)")
		_, err = Build(f, bad, Options{Family: glmm.Binomial, Weights: "n"})
		var de *DataError
		if !errors.As(err, &de) || de.Row != c.row || de.Column != c.column || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want row %d of %q: %q", c.name, err, c.row, c.column, c.msg)
		}
	}
}
