// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
)

// TestPredictHeldOutVisit simulates longitudinal data with known truth,
// fits all visits but the last, and predicts the last visit: the 95%
// intervals of the mean must cover the true mean exp(x'beta + z'b_i) of at
// least 90% of the held-out rows, and those of a new observation the
// held-out count itself. Rows of a subject absent from the training
// data are predicted marginally.
func TestPredictHeldOutVisit(t *testing.T) {
	spec := datasets.SimSpec{
		Family: "poisson", Subjects: 150, Obs: 6,
		Beta:  []float64{0.8, -0.6, 0.4},
		RECov: [][]float64{{0.3, 0.05}, {0.05, 0.2}},
		Seed:  11,
	}
	fr, truth, err := datasets.Simulate(spec)
	if err != nil {
		t.Fatal(err)
	}
	tcol, _ := fr.Column("t")
	var train, test []int
	for k, tv := range tcol.Num {
		if tv == 1 { // the last visit
			test = append(test, k)
		} else {
			train = append(train, k)
		}
	}
	dir := t.TempDir()
	write := func(name string, f *datasets.Frame) {
		var buf bytes.Buffer
		if err := datasets.WriteCSV(&buf, f); err != nil {
			t.Fatal(err)
		}
		writeFile(t, dir, name, buf.String())
	}
	write("train.csv", fr.Rows(train))
	testFrame := fr.Rows(test)
	var buf bytes.Buffer
	if err := datasets.WriteCSV(&buf, testFrame); err != nil {
		t.Fatal(err)
	}
	// Two rows of a subject the fit has not seen.
	testCSV := buf.String() + "snew,1,0.5,0\nsnew,0,-0.5,0\n"
	writeFile(t, dir, "test.csv", testCSV)

	// GVA, and RVB1 and RVB2 whose draws of b~_i predict maps back to
	// b_i, through the expansion at the start that predict recomputes from
	// the training data. (RVB1 at the paper's Jeffreys point converged to a
	// poor optimum on these data; see the report of issue 6.)
	for _, method := range []string{"gva", "rvb1", "rvb2"} {
		t.Run(method, func(t *testing.T) {
			checkHeldOut(t, dir, method, spec, truth, fr, testFrame, testCSV, len(test))
		})
	}
}

// checkHeldOut fits train.csv in dir by method, predicts test.csv and checks
// the predictions against the truth.
func checkHeldOut(t *testing.T, dir, method string, spec datasets.SimSpec, truth *datasets.Truth, fr, testFrame *datasets.Frame, testCSV string, nTest int) {
	fit := method + ".json"
	pred := method + ".csv"
	r := glmmfit(t, dir, "", nil, "fit", "-data", "train.csv", "-formula", "y ~ t + x1 + (1 + t | id)",
		"-family", "poisson", "-method", method, "-out", fit, "-quiet", "-correct", "never")
	mustSucceed(t, r, "fit train.csv")
	r = glmmfit(t, dir, "", nil, "predict", "-fit", fit, "-data", "test.csv", "-out", pred, "-seed", "3")
	mustSucceed(t, r, "predict")
	if r.stdout != "" {
		t.Errorf("predict -out wrote to stdout: %q", r.stdout)
	}
	rows := readCSV(t, filepath.Join(dir, pred))
	wantHeader := "row,id,type,eta,eta_sd,eta_lower,eta_upper,mean,mean_sd,mean_lower,mean_upper,response,response_sd,response_lower,response_upper"
	if strings.Join(rows[0], ",") != wantHeader {
		t.Fatalf("header %q, want %q", rows[0], wantHeader)
	}
	rows = rows[1:]
	if len(rows) != nTest+2 {
		t.Fatalf("%d predictions for %d rows", len(rows), nTest+2)
	}
	ids, _ := testFrame.Column("id")
	x1, _ := testFrame.Column("x1")
	levels := map[string]int{}
	all, _ := fr.Column("id")
	for i, l := range all.Levels() {
		levels[l] = i
	}
	yc, _ := testFrame.Column("y")
	covered, coveredY := 0, 0
	for k := range nTest {
		row := rows[k]
		if row[0] != strconv.Itoa(k+1) || row[1] != ids.Str[k] || row[2] != "conditional" {
			t.Fatalf("row %d: %q", k+1, row)
		}
		b := truth.B[levels[ids.Str[k]]]
		eta := spec.Beta[0] + spec.Beta[1] + spec.Beta[2]*x1.Num[k] + b[0] + b[1]
		mu := math.Exp(eta)
		v := floats(t, row[3:])
		etaHat, etaLo, etaHi, mean, meanLo, meanHi := v[0], v[2], v[3], v[4], v[6], v[7]
		if !(etaLo < etaHat && etaHat < etaHi && meanLo < mean && mean < meanHi && v[1] > 0 && v[5] > 0) {
			t.Fatalf("row %d: inconsistent prediction %q", k+1, row)
		}
		// Quantiles commute with exp up to the interpolation between
		// order statistics.
		if math.Abs(math.Log(meanLo)-etaLo) > 1e-2 || math.Abs(math.Log(meanHi)-etaHi) > 1e-2 {
			t.Errorf("row %d: the mean's interval is not exp of the linear predictor's: %q", k+1, row)
		}
		if meanLo <= mu && mu <= meanHi {
			covered++
		}
		if y, lo, hi := yc.Num[k], v[10], v[11]; lo <= y && y <= hi {
			coveredY++
		}
	}
	rate := float64(covered) / float64(nTest)
	t.Logf("95%% intervals of the mean cover the true mean in %d of %d held-out rows (%.1f%%)", covered, nTest, 100*rate)
	if rate < 0.9 {
		t.Errorf("coverage %.3f < 0.9", rate)
	}
	// A new observation's interval covers the held-out count itself.
	rateY := float64(coveredY) / float64(nTest)
	t.Logf("95%% intervals of a new observation cover the held-out count in %d of %d rows (%.1f%%)", coveredY, nTest, 100*rateY)
	if rateY < 0.9 {
		t.Errorf("coverage of the held-out counts %.3f < 0.9", rateY)
	}
	for _, row := range rows[nTest:] {
		if row[1] != "snew" || row[2] != "marginal" {
			t.Errorf("row of a new subject: %q", row)
		}
		v := floats(t, row[3:])
		// Marginal over b ~ N(0, Sigma): wider than a known subject's.
		if !(v[1] > 0.4) {
			t.Errorf("marginal prediction with eta_sd %v, want about sqrt(0.3 + ...) > 0.4", v[1])
		}
	}

	// Standard input and output, and the same seed, give the same file.
	r2 := glmmfit(t, dir, testCSV, nil, "predict", "-fit", fit, "-data", "-", "-seed", "3")
	mustSucceed(t, r2, "predict -data -")
	want, err := os.ReadFile(filepath.Join(dir, pred))
	if err != nil {
		t.Fatal(err)
	}
	if r2.stdout != string(want) {
		t.Error("predict from standard input to standard output differs from the -out file")
	}
}

// readCSV reads a CSV file, skipping lines that start with # (the
// comments of recorded fixtures).
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	rows, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func floats(t *testing.T, s []string) []float64 {
	t.Helper()
	v := make([]float64, len(s))
	for k, x := range s {
		var err error
		if v[k], err = strconv.ParseFloat(x, 64); err != nil {
			t.Fatalf("%q: %v", s, err)
		}
	}
	return v
}

// TestPredictIdenticalRows: identical rows (of a known subject, and of new
// subjects) get identical predictions, and a predictor far outside the
// data gets a warning naming its row. (posterior's TestPredictBatches
// checks that the rows held at once do not matter.)
func TestPredictIdenticalRows(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "poisson", "-subjects", "40", "-obs", "4",
		"-beta", "0.3,-0.2,0.4", "-re-sd", "0.5", "-seed", "5", "-out", "train.csv"))
	for _, method := range []string{"gva", "rvb1"} {
		fit := method + ".json"
		mustSucceed(t, glmmfit(t, dir, "", nil, "fit", "-data", "train.csv", "-formula", "y ~ t + x1 + (1 | id)",
			"-family", "poisson", "-method", method, "-out", fit, "-quiet", "-correct", "never"))
		newCSV := "id,t,x1,y\ns0001,0.5,0.2,0\nnew1,0.5,0.2,0\ns0001,0.5,0.2,0\nnew2,0.5,0.2,0\ns0002,1,-1,0\nnew3,0,1e300,0\n"
		writeFile(t, dir, "new.csv", newCSV)
		sf, err := readFitFile(context.Background(), filepath.Join(dir, fit))
		if err != nil {
			t.Fatal(err)
		}
		in, err := readInput(context.Background(), filepath.Join(dir, "new.csv"), nil, readOptions{categorical: sf.doc.Training.Categorical})
		if err != nil {
			t.Fatal(err)
		}
		o := &predictOptions{level: 0.95, draws: 300, seed: 3}
		whole, err := predict(context.Background(), sf, in, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, pair := range [][2]int{{0, 2}, {1, 3}} {
			a, b := pair[0], pair[1]
			if whole.Eta[a] != whole.Eta[b] || whole.Mean[a] != whole.Mean[b] || whole.MeanSD[a] != whole.MeanSD[b] {
				t.Errorf("%s: identical rows %d and %d predicted %v ± %v and %v ± %v", method, a+1, b+1,
					whole.Mean[a], whole.MeanSD[a], whole.Mean[b], whole.MeanSD[b])
			}
		}
		if w := strings.Join(whole.warnings, "\n"); !strings.Contains(w, "line 7") || !strings.Contains(w, "x1 = 1e+300") {
			t.Errorf("%s: warnings %q do not name line 7's x1 = 1e+300", method, whole.warnings)
		}
	}
}

// TestPredictFromUnfinishedFitWarns: predictions from a fit that stopped
// before converging say so.
func TestPredictFromUnfinishedFitWarns(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "poisson", "-subjects", "40", "-obs", "4",
		"-beta", "0.3,-0.2,0.4", "-re-sd", "0.5", "-seed", "5", "-out", "train.csv"))
	r := glmmfit(t, dir, "", nil, "fit", "-data", "train.csv", "-formula", "y ~ t + x1 + (1 | id)",
		"-family", "poisson", "-method", "gva", "-max-iter", "60", "-out", "fit.json", "-quiet")
	if r.code != exitLimit {
		t.Fatalf("fit -max-iter 60: exit %d, want %d: %s", r.code, exitLimit, r.stderr)
	}
	r = glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "train.csv", "-out", "p.csv")
	if r.code != exitOK || !strings.Contains(r.stderr, "glmmfit: warning: the fit's status is") {
		t.Errorf("predict from an unfinished fit: exit %d, stderr %q", r.code, r.stderr)
	}
}

// TestEditedFitFile: a fit file edited after it was written is refused with
// a message naming the edited sections; one only reformatted loads.
func TestEditedFitFile(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "poisson", "-subjects", "30", "-obs", "4",
		"-beta", "0.3,-0.2", "-re-sd", "0.5", "-seed", "5", "-out", "d.csv"))
	mustSucceed(t, glmmfit(t, dir, "", nil, "fit", "-data", "d.csv", "-formula", "y ~ t + (1 | id)",
		"-family", "poisson", "-out", "fit.json", "-quiet"))
	raw, err := os.ReadFile(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, raw, "", "\t"); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "pretty.json", pretty.String())
	if r := glmmfit(t, dir, "", nil, "predict", "-fit", "pretty.json", "-data", "d.csv", "-out", "p.csv"); r.code != exitOK {
		t.Errorf("reformatted fit file: exit %d: %s", r.code, r.stderr)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["fixed"].([]any)[1].(map[string]any)["estimate"] = 0.123
	doc["state"].(map[string]any)["mu"].([]any)[0] = 5.0
	edited, _ := json.Marshal(doc)
	writeFile(t, dir, "edited.json", string(edited))
	r := glmmfit(t, dir, "", nil, "predict", "-fit", "edited.json", "-data", "d.csv", "-out", "p.csv")
	if r.code != exitFail || !strings.Contains(r.stderr, "edited") || !strings.Contains(r.stderr, "fixed, state") {
		t.Errorf("edited fit file: exit %d, message %q; want exit 1 naming the sections fixed and state", r.code, r.stderr)
	}
	// A file of the previous schema, whose state the library's loader
	// does not read, is refused as such.
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	doc["schema_version"] = 1
	old, _ := json.Marshal(doc)
	writeFile(t, dir, "old.json", string(old))
	r = glmmfit(t, dir, "", nil, "predict", "-fit", "old.json", "-data", "d.csv", "-out", "p.csv")
	if r.code != exitFail || !strings.Contains(r.stderr, "older glmmfit") {
		t.Errorf("schema 1 fit file: exit %d, message %q", r.code, r.stderr)
	}
}

// TestPredictMissing: predict refuses a missing predictor by default,
// naming its line and advising -missing drop, and with -missing drop leaves
// the row out, keeping the other rows' numbers.
func TestPredictMissing(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "poisson", "-subjects", "30", "-obs", "4",
		"-beta", "0.3,-0.2,0.4", "-re-sd", "0.5", "-seed", "5", "-out", "d.csv"))
	mustSucceed(t, glmmfit(t, dir, "", nil, "fit", "-data", "d.csv", "-formula", "y ~ t + x1 + (1 | id)",
		"-family", "poisson", "-out", "fit.json", "-quiet"))
	writeFile(t, dir, "new.csv", "id,t,x1\ns0001,0.5,0.2\ns0002,NA,0.1\ns0003,0.3,-0.4\n")
	r := glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv")
	if r.code != exitFail || !strings.Contains(r.stderr, "line 3") || !strings.Contains(r.stderr, "-missing drop") {
		t.Errorf("missing predictor: exit %d, message %q; want exit 1 naming line 3 and -missing drop", r.code, r.stderr)
	}
	r = glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv", "-missing", "drop", "-out", "p.csv")
	if r.code != exitOK || !strings.Contains(r.stderr, "left out 1 row with a missing value") {
		t.Fatalf("-missing drop: exit %d, stderr %q", r.code, r.stderr)
	}
	rows := readCSV(t, filepath.Join(dir, "p.csv"))
	if len(rows) != 3 || rows[1][0] != "1" || rows[2][0] != "3" {
		t.Errorf("-missing drop: rows %v, want rows 1 and 3", rows)
	}
}

// TestFitMissingDrop: a fit with -missing drop says how many rows it left
// out, in the summary's Data line and in the JSON document, and fits the
// rows without them.
func TestFitMissingDrop(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "d.csv", "y,x,g\n1,0.5,a\n0,NA,a\n3,0.1,b\n0,0.3,b\n2,,c\n1,0.4,c\n1,0.2,\n0,0.3,d\n2,0.1,d\n")
	writeFile(t, dir, "complete.csv", "y,x,g\n1,0.5,a\n3,0.1,b\n0,0.3,b\n1,0.4,c\n0,0.3,d\n2,0.1,d\n")
	args := func(data string, more ...string) []string {
		return append([]string{"fit", "-data", data, "-formula", "y ~ x + (1 | g)", "-family", "poisson", "-missing", "drop", "-quiet"}, more...)
	}
	r := glmmfit(t, dir, "", nil, args("d.csv")...)
	mustSucceed(t, r)
	if !strings.Contains(r.stdout, "(Number of observations: 6; 3 rows with missing values left out)") {
		t.Errorf("the summary does not say that 3 rows were left out:\n%s", r.stdout)
	}
	var got, want document
	for _, c := range []struct {
		data string
		doc  *document
	}{{"d.csv", &got}, {"complete.csv", &want}} {
		r := glmmfit(t, dir, "", nil, args(c.data, "-format", "json")...)
		mustSucceed(t, r)
		if err := json.Unmarshal([]byte(r.stdout), c.doc); err != nil {
			t.Fatal(err)
		}
	}
	if got.Data.RowsLeftOut != 3 || want.Data.RowsLeftOut != 0 || got.Data.Observations != 6 {
		t.Errorf("rows_left_out %d and %d, observations %d; want 3, 0 and 6", got.Data.RowsLeftOut, want.Data.RowsLeftOut, got.Data.Observations)
	}
	if got.LowerBound.Value != want.LowerBound.Value {
		t.Errorf("lower bound %v, want the complete rows' %v", got.LowerBound.Value, want.LowerBound.Value)
	}
}

// TestPredictGaussianScale: predictions of a gaussian model fitted with
// its response standardised (-prior auto) are on the data's scale: with a
// residual sd of 0.05 against random effects and predictors of order 1
// and a response shifted to about 500, each training row's predicted mean
// is within 4 sigma of its response, a new observation's sd adds sigma
// on the data's scale, and, for a new subject, its interval holds the
// population mean.
func TestPredictGaussianScale(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "gaussian", "-subjects", "40", "-obs", "8",
		"-beta", "500,-2,1", "-re-sd", "1.5", "-sigma", "0.05", "-seed", "5", "-out", "train.csv"))
	mustSucceed(t, glmmfit(t, dir, "", nil, "fit", "-data", "train.csv", "-formula", "y ~ t + x1 + (1 | id)",
		"-family", "gaussian", "-out", "fit.json", "-quiet"))
	mustSucceed(t, glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "train.csv", "-out", "pred.csv"))
	train, pred := readCSV(t, filepath.Join(dir, "train.csv")), readCSV(t, filepath.Join(dir, "pred.csv"))
	yc, mc := colIndex(t, train[0], "y"), colIndex(t, pred[0], "mean")
	if len(pred) != len(train) {
		t.Fatalf("%d predictions for %d rows", len(pred)-1, len(train)-1)
	}
	for k := 1; k < len(train); k++ {
		y, _ := strconv.ParseFloat(train[k][yc], 64)
		mu, _ := strconv.ParseFloat(pred[k][mc], 64)
		if math.Abs(y-mu) > 4*0.05 {
			t.Errorf("row %d: predicted mean %v, response %v", k, mu, y)
		}
	}
	// A new observation adds the residual sd on the data's scale, by the
	// law of total variance: response_sd^2 = mean_sd^2 + E[sigma^2], with
	// E[sigma^2] from the fit's sigma (estimate^2 + est_error^2), on
	// average over the rows within 5% (the response is fitted
	// standardised, at an sd near 1.6: left on that scale, sigma would be
	// 40% too small).
	raw, err := os.ReadFile(filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sig struct {
		Dispersion struct {
			Estimate float64 `json:"estimate"`
			EstError float64 `json:"est_error"`
		} `json:"dispersion"`
	}
	if err := json.Unmarshal(raw, &sig); err != nil {
		t.Fatal(err)
	}
	sigma2 := sig.Dispersion.Estimate*sig.Dispersion.Estimate + sig.Dispersion.EstError*sig.Dispersion.EstError
	msd, rsd := colIndex(t, pred[0], "mean_sd"), colIndex(t, pred[0], "response_sd")
	ratio := 0.0
	for k := 1; k < len(pred); k++ {
		m, _ := strconv.ParseFloat(pred[k][msd], 64)
		r, _ := strconv.ParseFloat(pred[k][rsd], 64)
		ratio += r * r / (m*m + sigma2) / float64(len(pred)-1)
	}
	if math.Abs(ratio-1) > 0.05 || !(sig.Dispersion.Estimate > 0.04 && sig.Dispersion.Estimate < 0.06) {
		t.Errorf("response variance over mean_sd^2 + E[sigma^2] (sigma %v ± %v): %v on average, want 1", sig.Dispersion.Estimate, sig.Dispersion.EstError, ratio)
	}
	// A new subject at t = 0, x1 = 0: the population mean 500 with the
	// random intercept's sd of 1.5 around it.
	writeCSV(t, filepath.Join(dir, "new.csv"), [][]string{{"id", "t", "x1"}, {"new", "0", "0"}})
	mustSucceed(t, glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv", "-out", "new_pred.csv"))
	np := readCSV(t, filepath.Join(dir, "new_pred.csv"))
	lo, _ := strconv.ParseFloat(np[1][colIndex(t, np[0], "mean_lower")], 64)
	hi, _ := strconv.ParseFloat(np[1][colIndex(t, np[0], "mean_upper")], 64)
	if !(lo < 500 && 500 < hi) || hi-lo > 12 || hi-lo < 2 {
		t.Errorf("new subject: interval [%v, %v], want about 500 ± 3", lo, hi)
	}
}

// TestPredictCrossed: predictions of a model with a crossed factor use a
// known level's effect and draw a new level's from the factor's sd: with
// items of effects -1.5 and +1.5 and a tiny residual, a known subject's
// prediction at a known item is within 0.2 of its response, and at a new
// item its interval is as wide as the items' spread.
func TestPredictCrossed(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id,item,y\n")
	rng := rand.New(rand.NewPCG(3, 3))
	items := []float64{-1.5, -0.5, 0.5, 1.5, -1, 1, 0, 0.25}
	for i := range 40 {
		bi := 0.5 * rng.NormFloat64()
		for l, u := range items {
			fmt.Fprintf(&b, "s%d,i%d,%v\n", i, l, 10+bi+u+0.05*rng.NormFloat64())
		}
	}
	writeFile(t, dir, "train.csv", b.String())
	mustSucceed(t, glmmfit(t, dir, "", nil, "fit", "-data", "train.csv", "-formula", "y ~ 1 + (1 | id) + (1 | item)",
		"-family", "gaussian", "-out", "fit.json", "-quiet"))
	train := readCSV(t, filepath.Join(dir, "train.csv"))
	writeFile(t, dir, "new.csv", "id,item\ns0,i0\ns0,i3\ns0,new\n")
	mustSucceed(t, glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv", "-out", "pred.csv"))
	pred := readCSV(t, filepath.Join(dir, "pred.csv"))
	mean, lo, hi := colIndex(t, pred[0], "mean"), colIndex(t, pred[0], "mean_lower"), colIndex(t, pred[0], "mean_upper")
	at := func(r, c int) float64 { v, _ := strconv.ParseFloat(pred[r][c], 64); return v }
	for r, want := range map[int]string{1: train[1][2], 2: train[4][2]} {
		w, _ := strconv.ParseFloat(want, 64)
		if d := math.Abs(at(r, mean) - w); d > 0.2 {
			t.Errorf("known item, row %d: predicted %v, response %v", r, at(r, mean), w)
		}
	}
	if width := at(3, hi) - at(3, lo); width < 2 || width > 8 {
		t.Errorf("new item: interval [%v, %v], want the width of the items' spread (sd about 1)", at(3, lo), at(3, hi))
	}
}

// TestCorrectionGap: predict warns when the fit's corrected summaries are
// far from q's, which its draws come from, naming the parameter and both
// figures, and not when the correction did not run or agrees with q.
func TestCorrectionGap(t *testing.T) {
	sd := func(est, err float64) marginal {
		return marginal{Name: "sd((Intercept))", Estimate: jfloat(est), EstError: jfloat(err)}
	}
	beta := func(est, err float64) marginal {
		return marginal{Name: "time", Estimate: jfloat(est), EstError: jfloat(err)}
	}
	doc := func(ran bool, q, c []marginal) *document {
		d := &document{Fixed: q[:1], RESD: q[1:], Correction: &correctionDoc{Ran: ran}}
		if c != nil {
			d.PSISCorrected = &corrected{Fixed: c[:1], RESD: c[1:]}
		}
		return d
	}
	for _, c := range []struct {
		name string
		doc  *document
		want []string // in the warning; nil for none
	}{
		{"no correction", doc(false, []marginal{beta(-1.6, 0.17), sd(3.49, 0.25)}, nil), nil},
		{"toenail", doc(true, []marginal{beta(-1.62, 0.17), sd(3.49, 0.25)}, []marginal{beta(-1.71, 0.19), sd(4.15, 0.40)}),
			[]string{"mean of sd((Intercept)) is 3.49,", "the corrected 4.15", "1.7 corrected posterior sds"}},
		{"an sd too narrow", doc(true, []marginal{beta(-1.6, 0.10), sd(3.5, 0.4)}, []marginal{beta(-1.6, 0.2), sd(3.5, 0.4)}),
			[]string{"posterior sd of time is 0.1,", "the corrected 0.2"}},
		{"agrees", doc(true, []marginal{beta(-1.6, 0.19), sd(4.1, 0.40)}, []marginal{beta(-1.62, 0.19), sd(4.15, 0.40)}), nil},
	} {
		got := correctionGap(c.doc)
		if c.want == nil {
			if got != "" {
				t.Errorf("%s: warning %q, want none", c.name, got)
			}
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: warning %q does not contain %q", c.name, got, w)
			}
		}
	}
}

// TestPredictBinomialTrials: a binomial model's new observation counts
// successes out of the row's trials, read from its cbind() columns in
// both spellings: whole numbers within [0, trials], with a mean of trials
// times the mean probability, whose 95% intervals cover at least 90% of
// the counts of a held-out visit. A row without its trials, or data
// without their column, get NA, the latter with a warning.
func TestPredictBinomialTrials(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "binomial", "-subjects", "200", "-obs", "6",
		"-trials", "12", "-beta", "-0.5,1", "-re-sd", "0.8", "-seed", "7", "-out", "all.csv"))
	all := readCSV(t, filepath.Join(dir, "all.csv"))
	tc := colIndex(t, all[0], "t")
	train, test := [][]string{all[0]}, [][]string{all[0]}
	for _, row := range all[1:] {
		if row[tc] == "1" {
			test = append(test, row)
		} else {
			train = append(train, row)
		}
	}
	writeCSV(t, filepath.Join(dir, "train.csv"), train)
	writeCSV(t, filepath.Join(dir, "test.csv"), test)
	for _, form := range []string{"cbind(y, failures) ~ t + (1 | id)", "cbind(y, trials - y) ~ t + (1 | id)"} {
		mustSucceed(t, glmmfit(t, dir, "", nil, "fit", "-data", "train.csv", "-formula", form,
			"-family", "binomial", "-out", "fit.json", "-quiet"))
		mustSucceed(t, glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "test.csv", "-out", "pred.csv"))
		pred := readCSV(t, filepath.Join(dir, "pred.csv"))
		at := func(r int, c string) float64 {
			v, err := strconv.ParseFloat(pred[r][colIndex(t, pred[0], c)], 64)
			if err != nil {
				t.Fatalf("%s: row %d, %s: %v", form, r, c, err)
			}
			return v
		}
		covered := 0
		for k := 1; k < len(test); k++ {
			y, _ := strconv.ParseFloat(test[k][colIndex(t, test[0], "y")], 64)
			y0, y1 := at(k, "response_lower"), at(k, "response_upper")
			if y0 != math.Trunc(y0) || y1 != math.Trunc(y1) || y0 < 0 || y1 > 12 {
				t.Errorf("%s: row %d: interval [%v, %v] not of counts of 12 trials", form, k, y0, y1)
			}
			// 2000 draws: the mean of the counts is within 5 Monte
			// Carlo sds of 12 times the mean probability.
			if d := math.Abs(at(k, "response") - 12*at(k, "mean")); d > 5*at(k, "response_sd")/math.Sqrt(2000) {
				t.Errorf("%s: row %d: response %v, 12 x mean %v", form, k, at(k, "response"), 12*at(k, "mean"))
			}
			if y0 <= y && y <= y1 {
				covered++
			}
		}
		if n := len(test) - 1; covered < n*9/10 {
			t.Errorf("%s: the intervals of a new observation cover %d of %d held-out counts", form, covered, n)
		}
	}
	// Without the trials: NA for the row that lacks them; with no column
	// of them, for every row, and a warning.
	writeFile(t, dir, "new.csv", "id,t,trials\ns0001,1,12\ns0001,1,\n")
	mustSucceed(t, glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv", "-out", "pred.csv"))
	pred := readCSV(t, filepath.Join(dir, "pred.csv"))
	if r := colIndex(t, pred[0], "response"); pred[1][r] == "NA" || pred[2][r] != "NA" {
		t.Errorf("a row with and one without trials: responses %q and %q, want a count and NA", pred[1][r], pred[2][r])
	}
	writeFile(t, dir, "new.csv", "id,t\ns0001,1\n")
	res := glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv")
	if res.code != 0 || !strings.Contains(res.stderr, `no column "trials"`) || !strings.Contains(res.stdout, ",NA,NA,NA,NA") {
		t.Errorf("no trials column: exit %d, stderr %q, stdout %q; want NA and a warning naming \"trials\"", res.code, res.stderr, res.stdout)
	}
	// Trials that are not a count: an error naming the line and column.
	writeFile(t, dir, "new.csv", "id,t,trials\ns0001,1,12\ns0001,1,2.5\n")
	res = glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv")
	if want := `new.csv: line 3, column 3 ("trials"): 2.5 is not a count`; res.code != 1 || !strings.Contains(res.stderr, want) || res.stdout != "" {
		t.Errorf("trials 2.5: exit %d, stderr %q, stdout %q; want exit 1 and %q", res.code, res.stderr, res.stdout, want)
	}
}

// TestPredictRandom: -random new predicts a known subject's row as a new
// subject's (the same figures as under a new label), -random zero from
// the fixed effects alone (the same for every subject, and narrower than
// a new subject's, with or without the grouping factor's column or
// label), and a bad value is a usage error.
func TestPredictRandom(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "poisson", "-subjects", "40", "-obs", "5",
		"-beta", "0.5,-0.4", "-re-sd", "0.8", "-seed", "3", "-out", "train.csv"))
	mustSucceed(t, glmmfit(t, dir, "", nil, "fit", "-data", "train.csv", "-formula", "y ~ t + (1 | id)",
		"-family", "poisson", "-out", "fit.json", "-quiet"))
	writeFile(t, dir, "new.csv", "id,t\ns0001,0.5\nnewbie,0.5\n")
	rows := make(map[string][][]string)
	for _, random := range []string{"own", "new", "zero"} {
		mustSucceed(t, glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv", "-random", random, "-out", "pred_"+random+".csv"))
		rows[random] = readCSV(t, filepath.Join(dir, "pred_"+random+".csv"))
	}
	typ, eta, sd := colIndex(t, rows["own"][0], "type"), colIndex(t, rows["own"][0], "eta"), colIndex(t, rows["own"][0], "eta_sd")
	own, nw, zero := rows["own"], rows["new"], rows["zero"]
	if own[1][typ] != "conditional" || own[2][typ] != "marginal" || nw[1][typ] != "marginal" || zero[1][typ] != "fixed" || zero[2][typ] != "fixed" {
		t.Errorf("types: own %q, %q; new %q; zero %q, %q", own[1][typ], own[2][typ], nw[1][typ], zero[1][typ], zero[2][typ])
	}
	// eta and mean (the response's draws have a stream for each row).
	const lo, hi = 3, 11
	if !slices.Equal(nw[1][2:hi], own[2][2:hi]) || slices.Equal(own[1][lo:hi], own[2][lo:hi]) {
		t.Errorf("-random new: the known subject's row %v, want a new subject's %v", nw[1], own[2])
	}
	zsd, _ := strconv.ParseFloat(zero[1][sd], 64)
	nsd, _ := strconv.ParseFloat(own[2][sd], 64)
	if !slices.Equal(zero[1][lo:hi], zero[2][lo:hi]) || zero[1][eta] == own[1][eta] || !(zsd < nsd/2) {
		t.Errorf("-random zero: rows %v and %v, want the same, narrower than a new subject's sd %v", zero[1], zero[2], nsd)
	}
	// Without the grouping factor's column, as in lme4's predict with
	// re.form = NA: the same figures.
	for name, text := range map[string]string{"no column": "t\n0.5\n", "a missing label": "id,t\n,0.5\n"} {
		writeFile(t, dir, "nogroup.csv", text)
		mustSucceed(t, glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "nogroup.csv", "-random", "zero", "-out", "pred_nogroup.csv"))
		if ng := readCSV(t, filepath.Join(dir, "pred_nogroup.csv")); ng[1][1] != "" || !slices.Equal(ng[1][2:hi], zero[1][2:hi]) {
			t.Errorf("-random zero with %s for id: %v, want %v", name, ng[1], zero[1])
		}
	}
	res := glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv", "-random", "none")
	if res.code != 2 || !strings.Contains(res.stderr, `-random "none": want own, new or zero`) {
		t.Errorf("-random none: exit %d, stderr %q", res.code, res.stderr)
	}
}

// TestQuadraticTime: a quadratic trend written I(t^2) is fitted and named
// as lme4 names it, its coefficients recover the truth, and predict
// squares the new rows' t as the fit did: a new subject's mean at t = 3
// covers the true 1 + 0.5*3 + 0.3*9. A linear fit in scale(t) predicts
// what one in t does.
func TestQuadraticTime(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("id,t,y\n")
	rng := rand.New(rand.NewPCG(5, 5))
	for i := range 60 {
		bi := 0.8 * rng.NormFloat64()
		for k := range 6 {
			tt := float64(k) / 2
			fmt.Fprintf(&b, "s%d,%v,%v\n", i, tt, 1+0.5*tt+0.3*tt*tt+bi+0.2*rng.NormFloat64())
		}
	}
	writeFile(t, dir, "train.csv", b.String())
	res := glmmfit(t, dir, "", nil, "fit", "-data", "train.csv", "-formula", "y ~ t + I(t^2) + (1 | id)",
		"-family", "gaussian", "-out", "fit.json", "-format", "json")
	mustSucceed(t, res)
	doc := readDoc(t, []byte(res.stdout))
	truth := map[string]float64{"(Intercept)": 1, "t": 0.5, "I(t^2)": 0.3}
	for _, m := range doc.Fixed {
		want, ok := truth[m.Name]
		if !ok {
			t.Errorf("coefficient %q, want one of (Intercept), t, I(t^2)", m.Name)
			continue
		}
		delete(truth, m.Name)
		if d := math.Abs(float64(m.Estimate) - want); !(d < 4*float64(m.EstError)) {
			t.Errorf("%s = %v ± %v, truth %v", m.Name, m.Estimate, m.EstError, want)
		}
	}
	if len(truth) > 0 {
		t.Errorf("no coefficients %v", truth)
	}
	writeFile(t, dir, "new.csv", "id,t\nnewbie,3\n")
	mustSucceed(t, glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv", "-out", "pred.csv"))
	pred := readCSV(t, filepath.Join(dir, "pred.csv"))
	lo, _ := strconv.ParseFloat(pred[1][colIndex(t, pred[0], "mean_lower")], 64)
	hi, _ := strconv.ParseFloat(pred[1][colIndex(t, pred[0], "mean_upper")], 64)
	if want := 1 + 0.5*3 + 0.3*9.0; !(lo < want && want < hi) || hi-lo > 6 {
		t.Errorf("new subject at t = 3: interval [%v, %v], want about %v ± 1.6", lo, hi, want)
	}
	// scale(t) is t recoded, which -prior auto does not see: the same
	// prediction (4.4778 both, to 1e-15), new rows scaled by the training
	// rows' mean and sd.
	mean := colIndex(t, pred[0], "mean")
	for _, form := range []string{"y ~ t + (1 | id)", "y ~ scale(t) + (1 | id)"} {
		mustSucceed(t, glmmfit(t, dir, "", nil, "fit", "-data", "train.csv", "-formula", form,
			"-family", "gaussian", "-out", "fit.json", "-quiet"))
		mustSucceed(t, glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv", "-out", "pred.csv"))
		pred = append(pred, readCSV(t, filepath.Join(dir, "pred.csv"))[1])
	}
	a, _ := strconv.ParseFloat(pred[2][mean], 64)
	b2, _ := strconv.ParseFloat(pred[3][mean], 64)
	if math.Abs(a-b2) > 1e-6 {
		t.Errorf("new subject at t = 3: mean %v with t, %v with scale(t)", a, b2)
	}
}

// TestBinomialProportions: glmer's binomial proportions with weights =
// trials, -formula 'p ~ ...' -weights n, is the fit of cbind(s, n - s) to
// the same data, bit for bit, and its predictions count successes out of
// the new rows' weights.
func TestBinomialProportions(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "binomial", "-subjects", "60", "-obs", "4",
		"-trials", "8", "-beta", "-0.5,1", "-re-sd", "0.8", "-seed", "11", "-out", "sim.csv"))
	sim := readCSV(t, filepath.Join(dir, "sim.csv"))
	yc, nc := colIndex(t, sim[0], "y"), colIndex(t, sim[0], "trials")
	sim[0] = append(sim[0], "p")
	for k := 1; k < len(sim); k++ {
		y, _ := strconv.ParseFloat(sim[k][yc], 64)
		n, _ := strconv.ParseFloat(sim[k][nc], 64)
		sim[k] = append(sim[k], strconv.FormatFloat(y/n, 'g', -1, 64))
	}
	writeCSV(t, filepath.Join(dir, "prop.csv"), sim)
	var docs []*document
	for _, args := range [][]string{
		{"-formula", "cbind(y, trials - y) ~ t + (1 | id)"},
		{"-formula", "p ~ t + (1 | id)", "-weights", "trials"},
	} {
		res := glmmfit(t, dir, "", nil, append([]string{"fit", "-data", "prop.csv", "-family", "binomial", "-format", "json", "-out", "fit.json"}, args...)...)
		mustSucceed(t, res)
		docs = append(docs, readDoc(t, []byte(res.stdout)))
	}
	a, b := docs[0], docs[1]
	if a.LowerBound.Value != b.LowerBound.Value || a.LowerBound.MCSE != b.LowerBound.MCSE || len(a.Fixed) != len(b.Fixed) {
		t.Fatalf("bounds %v ± %v and %v ± %v", a.LowerBound.Value, a.LowerBound.MCSE, b.LowerBound.Value, b.LowerBound.MCSE)
	}
	for k := range a.Fixed {
		if a.Fixed[k].Estimate != b.Fixed[k].Estimate || a.Fixed[k].EstError != b.Fixed[k].EstError {
			t.Errorf("%s: %v ± %v with cbind, %v ± %v with proportions", a.Fixed[k].Name, a.Fixed[k].Estimate, a.Fixed[k].EstError, b.Fixed[k].Estimate, b.Fixed[k].EstError)
		}
	}
	writeFile(t, dir, "new.csv", "id,t,trials\ns0001,1,30\n")
	mustSucceed(t, glmmfit(t, dir, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv", "-out", "pred.csv"))
	pred := readCSV(t, filepath.Join(dir, "pred.csv"))
	hi, _ := strconv.ParseFloat(pred[1][colIndex(t, pred[0], "response_upper")], 64)
	y, _ := strconv.ParseFloat(pred[1][colIndex(t, pred[0], "response")], 64)
	mu, _ := strconv.ParseFloat(pred[1][colIndex(t, pred[0], "mean")], 64)
	if hi > 30 || hi != math.Trunc(hi) || math.Abs(y-30*mu) > 0.5 {
		t.Errorf("30 new trials: %v successes (30 x mean %v), upper end %v", y, 30*mu, hi)
	}
}
