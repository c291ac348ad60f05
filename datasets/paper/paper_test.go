// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package paper

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
)

// dataDir returns the benchmark data directory, skipping the test if it is
// absent.
func dataDir(t *testing.T) string {
	t.Helper()
	dir := datasets.DataDir("")
	if _, err := os.Stat(filepath.Join(dir, datasets.EpilepsyFile)); err != nil {
		t.Skipf("benchmark data not found in %q (set SPARSEVI_DATA): %v", dir, err)
	}
	return dir
}

// raw is a benchmark file read with encoding/csv, independently of package
// datasets.
type raw struct {
	col  map[string]int
	rows [][]string
}

func readRaw(t *testing.T, dir, file string) *raw {
	t.Helper()
	fh, err := os.Open(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := csv.NewReader(fh).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	r := &raw{col: make(map[string]int), rows: recs[1:]}
	for j, name := range recs[0] {
		r.col[name] = j
	}
	return r
}

func (r *raw) str(i int, name string) string { return r.rows[i][r.col[name]] }

func (r *raw) num(t *testing.T, i int, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(r.str(i, name), 64)
	if err != nil {
		t.Fatalf("row %d, %s: %v", i, name, err)
	}
	return v
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// meanSD returns the mean and the standard deviation with divisor n-1.
func meanSD(x []float64) (float64, float64) {
	var m float64
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	var ss float64
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return m, math.Sqrt(ss / float64(len(x)-1))
}

// checkDesign compares the design matrix m with want to a relative
// tolerance (derived covariates are recomputed with another summation
// order).
func checkDesign(t *testing.T, what string, m mat.Matrix, want [][]float64) {
	t.Helper()
	r, c := m.Dims()
	if r != len(want) || c != len(want[0]) {
		t.Fatalf("%s is %d×%d, want %d×%d", what, r, c, len(want), len(want[0]))
	}
	for i := range want {
		for j, w := range want[i] {
			if g := m.At(i, j); math.Abs(g-w) > 1e-12*(1+math.Abs(w)) {
				t.Fatalf("%s[%d,%d] = %v, want %v", what, i, j, g, w)
			}
		}
	}
}

func TestCounts(t *testing.T) {
	dir := dataDir(t)
	for _, test := range []struct {
		name           string
		rows, subjects int
		p, r           int
		family         glmm.Family
	}{
		{"epilepsy", 236, 59, 6, 2, glmm.Poisson},
		{"toenail", 1908, 294, 4, 1, glmm.Bernoulli},
		{"hers", 9172, 2031, 5, 1, glmm.Bernoulli},
		{"diabetes", 45694, 16341, 46, 1, glmm.Bernoulli},
		{"cbpp", 56, 15, 4, 1, glmm.Binomial},
		{"grouseticks", 403, 118, 4, 1, glmm.Poisson},
	} {
		d, err := Load(test.name, dir)
		if err != nil {
			t.Errorf("Load(%q): %v", test.name, err)
			continue
		}
		m := d.Model()
		if m.NumObs() != test.rows || m.NumSubjects() != test.subjects || m.P() != test.p || m.R() != test.r || m.Family() != test.family {
			t.Errorf("%s: %d rows, %d subjects, p=%d, r=%d, %v; want %d, %d, %d, %d, %v", test.name,
				m.NumObs(), m.NumSubjects(), m.P(), m.R(), m.Family(), test.rows, test.subjects, test.p, test.r, test.family)
		}
		src, err := Formula(test.name)
		if err != nil || d.Formula().Source() != src {
			t.Errorf("Formula(%q) = %q, %v; the design was built from %q", test.name, src, err, d.Formula().Source())
		}
	}
}

func TestRegistry(t *testing.T) {
	want := []string{"epilepsy", "toenail", "hers", "diabetes", "cbpp", "grouseticks"}
	if got := Names(); !slices.Equal(got, want) {
		t.Errorf("Names() = %q, want %q", got, want)
	}
	for _, name := range Names() {
		src, err := Formula(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := formula.Parse(src); err != nil {
			t.Errorf("formula of %s: %v", name, err)
		}
	}
	if _, err := Formula("nope"); err == nil {
		t.Error("Formula(nope) succeeded")
	}
	if _, err := Load("nope", "."); err == nil {
		t.Error("Load(nope) succeeded")
	}
	if _, err := Load("epilepsy", filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("Load from a missing directory succeeded")
	}
}

func TestEpilepsyDesign(t *testing.T) {
	dir := dataDir(t)
	d, err := Epilepsy(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := readRaw(t, dir, datasets.EpilepsyFile)
	n := len(r.rows)
	lage := make([]float64, n)
	for i := range n {
		lage[i] = math.Log(r.num(t, i, "age"))
	}
	mean, _ := meanSD(lage)
	var x, z [][]float64
	var y []float64
	for i := range n {
		base := math.Log(r.num(t, i, "base") / 4)
		trt := b2f(r.str(i, "trt") == "progabide")
		visit := []float64{-0.3, -0.1, 0.1, 0.3}[int(r.num(t, i, "period"))-1]
		x = append(x, []float64{1, base, trt, lage[i] - mean, visit, base * trt})
		z = append(z, []float64{1, visit})
		y = append(y, r.num(t, i, "y"))
	}
	if got, want := d.FixedNames(), []string{"(Intercept)", "Base", "Trt", "Age", "Visit", "Base:Trt"}; !slices.Equal(got, want) {
		t.Errorf("fixed names %q, want %q", got, want)
	}
	if got, want := d.RandomNames(), []string{"(Intercept)", "Visit"}; !slices.Equal(got, want) {
		t.Errorf("random names %q, want %q", got, want)
	}
	checkDesign(t, "X", d.X(), x)
	checkDesign(t, "Z", d.Z(), z)
	if !slices.Equal(d.Config().Y, y) {
		t.Error("response differs from y")
	}
	for k, g := range d.Group() {
		if d.GroupLevels()[g] != r.str(k, "subject") {
			t.Fatalf("row %d in subject %q, want %q", k, d.GroupLevels()[g], r.str(k, "subject"))
		}
	}
}

func TestToenailDesign(t *testing.T) {
	dir := dataDir(t)
	r := readRaw(t, dir, datasets.ToenailFile)
	n := len(r.rows)
	time := make([]float64, n)
	for i := range n {
		time[i] = r.num(t, i, "time")
	}
	mean, sd := meanSD(time)
	for _, test := range []struct {
		opts  datasets.ToenailOptions
		scale func(float64) float64
	}{
		{datasets.ToenailOptions{}, func(v float64) float64 { return v }},
		{datasets.ToenailOptions{Time: datasets.Standardize}, func(v float64) float64 { return (v - mean) / sd }},
	} {
		d, err := Toenail(dir, test.opts)
		if err != nil {
			t.Fatal(err)
		}
		var x [][]float64
		var y []float64
		for i := range n {
			trt := b2f(r.str(i, "treatment") == "terbinafine")
			tm := test.scale(time[i])
			x = append(x, []float64{1, trt, tm, trt * tm})
			y = append(y, b2f(r.str(i, "outcome") == "moderate or severe"))
		}
		if got, want := d.FixedNames(), []string{"(Intercept)", "Trt", "t", "Trt:t"}; !slices.Equal(got, want) {
			t.Errorf("fixed names %q, want %q", got, want)
		}
		checkDesign(t, "X", d.X(), x)
		if !slices.Equal(d.Config().Y, y) {
			t.Error("response differs from outcome")
		}
		var ones float64
		for _, v := range y {
			ones += v
		}
		if ones != 408 {
			t.Errorf("%v responses are 1, want 408", ones)
		}
	}
}

func TestHERSDesign(t *testing.T) {
	dir := dataDir(t)
	d, err := HERS(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := readRaw(t, dir, datasets.HERSFile)
	var keep []int
	for i := range r.rows {
		ok := true
		for _, c := range []string{"sbp", "bmi", "htnmeds", "age", "visit"} {
			ok = ok && r.str(i, c) != ""
		}
		if ok {
			keep = append(keep, i)
		}
	}
	if len(keep) != 9172 {
		t.Fatalf("%d complete rows, want 9172", len(keep))
	}
	age, bmi := make([]float64, len(keep)), make([]float64, len(keep))
	for k, i := range keep {
		age[k], bmi[k] = r.num(t, i, "age"), r.num(t, i, "bmi")
	}
	am, as := meanSD(age)
	bm, bs := meanSD(bmi)
	var x [][]float64
	var y []float64
	for k, i := range keep {
		x = append(x, []float64{1, (age[k] - am) / as, (bmi[k] - bm) / bs, r.num(t, i, "htnmeds"), r.num(t, i, "visit")*0.4 - 1})
		y = append(y, b2f(r.num(t, i, "sbp") > 140))
	}
	if got, want := d.FixedNames(), []string{"(Intercept)", "Age", "BMI", "HTN", "Visit"}; !slices.Equal(got, want) {
		t.Errorf("fixed names %q, want %q", got, want)
	}
	checkDesign(t, "X", d.X(), x)
	if !slices.Equal(d.Config().Y, y) {
		t.Error("response differs from sbp > 140")
	}
	var high float64
	for _, v := range y {
		high += v
	}
	if frac := high / float64(len(y)); math.Abs(frac-0.334) > 0.0005 {
		t.Errorf("%.4f of the rows have sbp > 140, want 0.334", frac)
	}
	for k, g := range d.Group() {
		if d.GroupLevels()[g] != r.str(keep[k], "pptid") {
			t.Fatalf("row %d in group %q, want %q", k, d.GroupLevels()[g], r.str(keep[k], "pptid"))
		}
	}
}

func TestDiabetesMainEffects(t *testing.T) {
	dir := dataDir(t)
	d, err := Diabetes(dir, DiabetesOptions{MainEffects: true})
	if err != nil {
		t.Fatal(err)
	}
	m := d.Model()
	if m.NumSubjects() != 16341 || m.NumObs() != 45694 || m.P() != 55 || m.R() != 1 {
		t.Errorf("%d subjects, %d rows, p=%d, r=%d; want 16341, 45694, 55, 1", m.NumSubjects(), m.NumObs(), m.P(), m.R())
	}
	var readmitted float64
	for _, v := range d.Config().Y {
		readmitted += v
	}
	if readmitted != 9027 {
		t.Errorf("%v encounters readmitted within 30 days, want 9027", readmitted)
	}
	if d.Formula().Source() != DiabetesMainFormula {
		t.Errorf("built from %q", d.Formula().Source())
	}
	// The main effects come first, as R orders terms.
	want := []string{"(Intercept)", "Admissionother", "Admissionreferral", "Dischargeother", "Time",
		"RaceCaucasian", "RaceMissing", "RaceOther"}
	if got := d.FixedNames()[:len(want)]; !slices.Equal(got, want) {
		t.Errorf("first columns %q, want %q", got, want)
	}
}
