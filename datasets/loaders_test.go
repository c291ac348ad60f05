// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"encoding/csv"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// dataDir returns the benchmark data directory, skipping the test if it is
// absent.
func dataDir(t *testing.T) string {
	t.Helper()
	dir := DataDir("")
	if _, err := os.Stat(filepath.Join(dir, EpilepsyFile)); err != nil {
		t.Skipf("benchmark data not found in %q (set SPARSEVI_DATA): %v", dir, err)
	}
	return dir
}

// rawTable is a benchmark file read with encoding/csv, independently of
// this package's reader.
type rawTable struct {
	col  map[string]int
	rows [][]string
}

func readRaw(t *testing.T, dir, file string) *rawTable {
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
	tab := &rawTable{col: make(map[string]int), rows: recs[1:]}
	for j, name := range recs[0] {
		tab.col[name] = j
	}
	return tab
}

func (tab *rawTable) get(i int, name string) string { return tab.rows[i][tab.col[name]] }

func (tab *rawTable) float(t *testing.T, i int, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(tab.get(i, name), 64)
	if err != nil {
		t.Fatalf("row %d, %s: %v", i, name, err)
	}
	return v
}

func distinct(s []string) int {
	m := make(map[string]bool)
	for _, v := range s {
		m[v] = true
	}
	return len(m)
}

func mustCol(t *testing.T, f *Frame, name string, kind Kind) *Column {
	t.Helper()
	c, ok := f.Column(name)
	if !ok {
		t.Fatalf("no column %q in %q", name, f.Names())
	}
	if c.Kind != kind {
		t.Fatalf("column %q is %v, want %v", name, c.Kind, kind)
	}
	return c
}

func near(a, b, tol float64) bool { return math.Abs(a-b) <= tol*(1+math.Abs(b)) }

func TestEpilepsy(t *testing.T) {
	dir := dataDir(t)
	f, err := Epilepsy(dir)
	if err != nil {
		t.Fatal(err)
	}
	raw := readRaw(t, dir, EpilepsyFile)
	if f.NumRows() != 236 || len(raw.rows) != 236 {
		t.Fatalf("got %d rows (raw %d), want 236", f.NumRows(), len(raw.rows))
	}
	subj := mustCol(t, f, "subject", Categorical)
	if n := len(subj.Levels()); n != 59 {
		t.Errorf("got %d subjects, want 59", n)
	}
	base := mustCol(t, f, "Base", Numeric).Num
	trt := mustCol(t, f, "Trt", Numeric).Num
	bt := mustCol(t, f, "BaseTrt", Numeric).Num
	age := mustCol(t, f, "Age", Numeric).Num
	visit := mustCol(t, f, "Visit", Numeric).Num
	visitOf := map[string]float64{"1": -0.3, "2": -0.1, "3": 0.1, "4": 0.3}
	nProg := 0
	for i := range raw.rows {
		wantBase := math.Log(raw.float(t, i, "base") / 4)
		wantTrt := 0.0
		if raw.get(i, "trt") == "progabide" {
			wantTrt = 1
			nProg++
		}
		if !near(base[i], wantBase, 1e-14) || trt[i] != wantTrt || !near(bt[i], wantBase*wantTrt, 1e-14) {
			t.Fatalf("row %d: Base, Trt, BaseTrt = %v, %v, %v; want %v, %v, %v",
				i, base[i], trt[i], bt[i], wantBase, wantTrt, wantBase*wantTrt)
		}
		// The file's lage is log(age) centred by R; ours must agree.
		if !near(age[i], raw.float(t, i, "lage"), 1e-12) {
			t.Fatalf("row %d: Age = %v, file's lage = %v", i, age[i], raw.get(i, "lage"))
		}
		if visit[i] != visitOf[raw.get(i, "period")] {
			t.Fatalf("row %d: Visit = %v for period %s", i, visit[i], raw.get(i, "period"))
		}
		if subj.Str[i] != raw.get(i, "subject") {
			t.Fatalf("row %d: subject %q, want %q", i, subj.Str[i], raw.get(i, "subject"))
		}
	}
	// 31 of 59 patients took progabide, 4 rows each.
	if nProg != 31*4 {
		t.Errorf("got %d progabide rows, want %d", nProg, 31*4)
	}
}

func TestToenail(t *testing.T) {
	dir := dataDir(t)
	raw := readRaw(t, dir, ToenailFile)
	for _, test := range []struct {
		scaling Scaling
		mean    float64 // of the time transform's subtracted mean, computed below
		sd      bool
	}{
		{scaling: Raw},
		{scaling: Center},
		{scaling: Standardize, sd: true},
	} {
		t.Run(test.scaling.String(), func(t *testing.T) {
			f, err := Toenail(dir, ToenailOptions{Time: test.scaling})
			if err != nil {
				t.Fatal(err)
			}
			if f.NumRows() != 1908 {
				t.Fatalf("got %d rows, want 1908", f.NumRows())
			}
			id := mustCol(t, f, "patientID", Categorical)
			if n := len(id.Levels()); n != 294 {
				t.Errorf("got %d patients, want 294", n)
			}
			visits := make(map[string]int)
			terb := make(map[string]bool)
			for i, s := range id.Str {
				visits[s]++
				if raw.get(i, "treatment") == "terbinafine" {
					terb[s] = true
				}
			}
			seven := 0
			for _, v := range visits {
				if v == 7 {
					seven++
				}
			}
			if seven != 224 || len(terb) != 148 {
				t.Errorf("got %d patients with 7 visits and %d on terbinafine, want 224 and 148", seven, len(terb))
			}

			// Time transform recomputed here with a one-pass formula.
			var s, ss float64
			for i := range raw.rows {
				v := raw.float(t, i, "time")
				s += v
				ss += v * v
			}
			n := float64(len(raw.rows))
			mean := s / n
			sd := math.Sqrt((ss - n*mean*mean) / (n - 1))
			y := mustCol(t, f, "y", Numeric).Num
			trt := mustCol(t, f, "Trt", Numeric).Num
			tt := mustCol(t, f, "t", Numeric).Num
			trtT := mustCol(t, f, "TrtT", Numeric).Num
			ones := 0
			for i := range raw.rows {
				want := raw.float(t, i, "time")
				switch test.scaling {
				case Center:
					want -= mean
				case Standardize:
					want = (want - mean) / sd
				}
				wantY := 0.0
				if raw.get(i, "outcome") == "moderate or severe" {
					wantY = 1
					ones++
				}
				wantTrt := 0.0
				if raw.get(i, "treatment") == "terbinafine" {
					wantTrt = 1
				}
				if !near(tt[i], want, 1e-9) || y[i] != wantY || trt[i] != wantTrt || !near(trtT[i], want*wantTrt, 1e-9) {
					t.Fatalf("row %d: y, Trt, t, TrtT = %v, %v, %v, %v; want %v, %v, %v, %v",
						i, y[i], trt[i], tt[i], trtT[i], wantY, wantTrt, want, want*wantTrt)
				}
			}
			if ones != 408 || floatSum(y) != 408 {
				t.Errorf("got %v responses of 1, want 408", floatSum(y))
			}
		})
	}
}

func floatSum(x []float64) float64 {
	var s float64
	for _, v := range x {
		s += v
	}
	return s
}

func TestHERS(t *testing.T) {
	dir := dataDir(t)
	f, err := HERS(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 9172 {
		t.Fatalf("got %d rows, want 9172", f.NumRows())
	}
	id := mustCol(t, f, "pptid", Categorical)
	lev := id.Levels()
	if len(lev) != 2031 {
		t.Errorf("got %d women, want 2031", len(lev))
	}
	if slices.Contains(lev, "1030") {
		t.Error("woman 1030, whose only visit lacks bmi, was kept")
	}

	// Complete cases and codings recomputed from the raw file.
	raw := readRaw(t, dir, HERSFile)
	var keep []int
	for i := range raw.rows {
		ok := true
		for _, name := range []string{"sbp", "bmi", "htnmeds", "age", "visit"} {
			ok = ok && raw.get(i, name) != ""
		}
		if ok {
			keep = append(keep, i)
		}
	}
	if len(keep) != 9172 {
		t.Fatalf("raw complete cases: %d", len(keep))
	}
	stdz := func(name string) []float64 {
		x := make([]float64, len(keep))
		var s float64
		for k, i := range keep {
			x[k] = raw.float(t, i, name)
			s += x[k]
		}
		m := s / float64(len(x))
		var ss float64
		for _, v := range x {
			ss += (v - m) * (v - m)
		}
		sd := math.Sqrt(ss / float64(len(x)-1))
		for k := range x {
			x[k] = (x[k] - m) / sd
		}
		return x
	}
	wantAge, wantBMI := stdz("age"), stdz("bmi")
	y := mustCol(t, f, "y", Numeric).Num
	age := mustCol(t, f, "Age", Numeric).Num
	bmi := mustCol(t, f, "BMI", Numeric).Num
	htn := mustCol(t, f, "HTN", Numeric).Num
	visit := mustCol(t, f, "Visit", Numeric).Num
	visitOf := map[string]float64{"0": -1, "1": -0.6, "2": -0.2, "3": 0.2, "4": 0.6, "5": 1}
	perVisit := make(map[string]int)
	for k, i := range keep {
		wantY := 0.0
		if raw.float(t, i, "sbp") > 140 {
			wantY = 1
		}
		wantHTN, _ := strconv.ParseFloat(raw.get(i, "htnmeds"), 64)
		if y[k] != wantY || htn[k] != wantHTN || !near(visit[k], visitOf[raw.get(i, "visit")], 1e-12) ||
			!near(age[k], wantAge[k], 1e-9) || !near(bmi[k], wantBMI[k], 1e-9) || id.Str[k] != raw.get(i, "pptid") {
			t.Fatalf("row %d (raw %d): y, HTN, Visit, Age, BMI = %v, %v, %v, %v, %v; want %v, %v, %v, %v, %v",
				k, i, y[k], htn[k], visit[k], age[k], bmi[k], wantY, wantHTN, visitOf[raw.get(i, "visit")], wantAge[k], wantBMI[k])
		}
		perVisit[raw.get(i, "visit")]++
	}
	wantVisits := map[string]int{"0": 2030, "1": 1930, "2": 1846, "3": 1742, "4": 1355, "5": 269}
	for v, n := range wantVisits {
		if perVisit[v] != n {
			t.Errorf("visit %s: %d rows, want %d", v, perVisit[v], n)
		}
	}
	// 33.4% of the rows have sbp > 140.
	if share := floatSum(y) / 9172; math.Abs(share-0.334) > 0.0005 {
		t.Errorf("share of y = 1 is %.4f, want 0.334", share)
	}
}

func TestCBPP(t *testing.T) {
	dir := dataDir(t)
	f, err := CBPP(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 56 {
		t.Fatalf("got %d rows, want 56", f.NumRows())
	}
	herd := mustCol(t, f, "herd", Categorical)
	period := mustCol(t, f, "period", Categorical)
	if n := len(herd.Levels()); n != 15 {
		t.Errorf("got %d herds, want 15", n)
	}
	if got := period.Levels(); !slices.Equal(got, []string{"1", "2", "3", "4"}) {
		t.Errorf("period levels %q", got)
	}
	raw := readRaw(t, dir, CBPPFile)
	notinc := mustCol(t, f, "notinc", Numeric).Num
	for i := range raw.rows {
		if want := raw.float(t, i, "size") - raw.float(t, i, "incidence"); notinc[i] != want {
			t.Errorf("row %d: notinc = %v, want %v", i, notinc[i], want)
		}
	}
}

func TestGrouseticks(t *testing.T) {
	dir := dataDir(t)
	f, err := Grouseticks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 403 {
		t.Fatalf("got %d rows, want 403", f.NumRows())
	}
	for _, test := range []struct {
		name   string
		levels int
	}{
		{"INDEX", 403}, {"BROOD", 118}, {"LOCATION", 63}, {"YEAR", 3},
	} {
		if n := len(mustCol(t, f, test.name, Categorical).Levels()); n != test.levels {
			t.Errorf("%s: %d levels, want %d", test.name, n, test.levels)
		}
	}
	ticks := mustCol(t, f, "TICKS", Numeric)
	if ticks.NumMissing() != 0 {
		t.Errorf("TICKS has %d missing values", ticks.NumMissing())
	}
}

func TestDiabetes(t *testing.T) {
	dir := dataDir(t)
	f, err := Diabetes(dir, DiabetesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRows() != 45694 {
		t.Fatalf("got %d rows, want 45694", f.NumRows())
	}
	patient := mustCol(t, f, "patient_nbr", Categorical)
	if n := distinct(patient.Str); n != 16341 {
		t.Errorf("got %d patients, want 16341", n)
	}
	readm := mustCol(t, f, "readmitted", Categorical)
	counts := make(map[string]int)
	for _, s := range readm.Str {
		counts[s]++
	}
	if counts["<30"] != 9027 || counts[">30"] != 25350 || counts["NO"] != 11317 {
		t.Errorf("readmitted counts %v, want <30: 9027, >30: 25350, NO: 11317", counts)
	}
	if got := floatSum(mustCol(t, f, "y", Numeric).Num); got != 9027 {
		t.Errorf("sum of y = %v, want 9027", got)
	}

	// Selection and codings recomputed from the raw file.
	raw := readRaw(t, dir, DiabetesFile)
	if len(raw.rows) != 101766 {
		t.Fatalf("raw file has %d rows", len(raw.rows))
	}
	dead := map[string]bool{"11": true, "13": true, "14": true, "19": true, "20": true, "21": true}
	n := make(map[string]int)
	for i := range raw.rows {
		if !dead[raw.get(i, "discharge_disposition_id")] {
			n[raw.get(i, "patient_nbr")]++
		}
	}
	var keep []int
	for i := range raw.rows {
		if !dead[raw.get(i, "discharge_disposition_id")] && n[raw.get(i, "patient_nbr")] >= 2 {
			keep = append(keep, i)
		}
	}
	if len(keep) != f.NumRows() {
		t.Fatalf("raw selection has %d rows", len(keep))
	}
	cols := make(map[string]*Column)
	for _, name := range []string{"Admission", "Discharge", "Race", "Diagnosis", "HbA1c", "encounter_id"} {
		cols[name] = mustCol(t, f, name, Categorical)
	}
	tm := mustCol(t, f, "Time", Numeric).Num
	for k, i := range keep {
		want := map[string]string{
			"encounter_id": raw.get(i, "encounter_id"),
			"Admission":    "other",
			"Discharge":    "other",
			"Race":         "Other",
			"Diagnosis":    testICD9(t, raw.get(i, "diag_1")),
		}
		switch raw.get(i, "admission_source_id") {
		case "7":
			want["Admission"] = "emergency"
		case "1", "2", "3":
			want["Admission"] = "referral"
		}
		if raw.get(i, "discharge_disposition_id") == "1" {
			want["Discharge"] = "home"
		}
		switch r := raw.get(i, "race"); r {
		case "?":
			want["Race"] = "Missing"
		case "Caucasian", "AfricanAmerican":
			want["Race"] = r
		}
		switch a := raw.get(i, "A1Cresult"); {
		case a == "None":
			want["HbA1c"] = "none"
		case a == "Norm" || a == ">7":
			want["HbA1c"] = "normal"
		case raw.get(i, "change") == "Ch":
			want["HbA1c"] = "over8_changed"
		default:
			want["HbA1c"] = "over8_unchanged"
		}
		for name, w := range want {
			if got := cols[name].Str[k]; got != w {
				t.Fatalf("row %d (raw %d): %s = %q, want %q", k, i, name, got, w)
			}
		}
		if tm[k] != raw.float(t, i, "time_in_hospital") {
			t.Fatalf("row %d: Time = %v, want %s", k, tm[k], raw.get(i, "time_in_hospital"))
		}
	}
	// Reference levels are the intended baselines.
	for name, first := range map[string]string{
		"Admission": "emergency", "Discharge": "home", "Race": "AfricanAmerican",
		"Diagnosis": "circulatory", "HbA1c": "none",
	} {
		if lev := cols[name].Levels(); lev[0] != first {
			t.Errorf("%s: levels %q, want %q first", name, lev, first)
		}
	}
	desc := mustCol(t, f, "admission_source", Categorical)
	for k := range keep {
		if cols["Admission"].Str[k] == "emergency" && desc.Str[k] != "Emergency Room" {
			t.Fatalf("row %d: emergency admission described as %q", k, desc.Str[k])
		}
	}
}

// testICD9 groups a code by Strack et al.'s Table 2, written out here
// separately from ICD9Group.
func testICD9(t *testing.T, code string) string {
	if code == "?" || code == "" || code[0] == 'V' || code[0] == 'E' {
		return "other"
	}
	whole, _, _ := strings.Cut(code, ".")
	k, err := strconv.Atoi(whole)
	if err != nil {
		t.Fatalf("diag_1 %q", code)
	}
	in := func(lo, hi int) bool { return lo <= k && k <= hi }
	switch {
	case k == 250:
		return "diabetes"
	case in(390, 459) || k == 785:
		return "circulatory"
	case in(460, 519) || k == 786:
		return "respiratory"
	case in(520, 579) || k == 787:
		return "digestive"
	case in(800, 999):
		return "injury"
	case in(710, 739):
		return "musculoskeletal"
	case in(580, 629) || k == 788:
		return "genitourinary"
	case in(140, 239):
		return "neoplasms"
	}
	return "other"
}

// TestDiabetesOptions loads the data once with every option changed, to
// keep the test short: the file is large.
func TestDiabetesOptions(t *testing.T) {
	dir := dataDir(t)
	f, err := Diabetes(dir, DiabetesOptions{
		KeepExcluded:       true,
		RaceMissingAsOther: true,
		A1COver7Level:      true,
		TimeInHospital:     Standardize,
	})
	if err != nil {
		t.Fatal(err)
	}
	// The README's count before the death/hospice exclusion.
	p := mustCol(t, f, "patient_nbr", Categorical)
	if f.NumRows() != 47021 || distinct(p.Str) != 16773 {
		t.Errorf("got %d rows, %d patients; want 47021, 16773", f.NumRows(), distinct(p.Str))
	}
	want := []string{"AfricanAmerican", "Caucasian", "Other"}
	if got := mustCol(t, f, "Race", Categorical).Levels(); !slices.Equal(got, want) {
		t.Errorf("Race levels %q, want %q", got, want)
	}
	a1c := mustCol(t, f, "A1Cresult", Categorical)
	h := mustCol(t, f, "HbA1c", Categorical)
	for i := range a1c.Str {
		if (a1c.Str[i] == ">7") != (h.Str[i] == "over7") {
			t.Fatalf("row %d: A1Cresult %q coded %q", i, a1c.Str[i], h.Str[i])
		}
	}
	tm := mustCol(t, f, "Time", Numeric).Num
	m, sd := meanSD(tm)
	if math.Abs(m) > 1e-12 || math.Abs(sd-1) > 1e-12 {
		t.Errorf("standardized Time has mean %v, sd %v", m, sd)
	}
	// Standardizing is affine: Time must be an increasing function of the
	// days, with equal days giving equal values.
	days := mustCol(t, f, "time_in_hospital", Numeric).Num
	for i := 1; i < len(tm); i++ {
		if (days[i] < days[0]) != (tm[i] < tm[0]) || (days[i] == days[0]) != (tm[i] == tm[0]) {
			t.Fatalf("row %d: %v days -> %v, row 0: %v days -> %v", i, days[i], tm[i], days[0], tm[0])
		}
	}
}

func TestReadIDMapping(t *testing.T) {
	dir := dataDir(t)
	ids, err := ReadIDMapping(filepath.Join(dir, DiabetesMappingFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, test := range []struct {
		table string
		size  int
		id    int
		want  string
	}{
		{"admission_type_id", 8, 1, "Emergency"},
		{"discharge_disposition_id", 30, 1, "Discharged to home"},
		{"discharge_disposition_id", 30, 11, "Expired"},
		{"discharge_disposition_id", 30, 13, "Hospice / home"},
		{"discharge_disposition_id", 30, 14, "Hospice / medical facility"},
		{"discharge_disposition_id", 30, 19, "Expired at home. Medicaid only, hospice."},
		{"admission_source_id", 25, 1, "Physician Referral"},
		{"admission_source_id", 25, 2, "Clinic Referral"},
		{"admission_source_id", 25, 3, "HMO Referral"},
		{"admission_source_id", 25, 7, "Emergency Room"},
	} {
		tab := ids[test.table]
		if len(tab) != test.size || tab[test.id] != test.want {
			t.Errorf("%s: %d entries, id %d = %q; want %d, %q", test.table, len(tab), test.id, tab[test.id], test.size, test.want)
		}
	}
	// Every excluded discharge id is a death or hospice.
	for id := range excludedDischarge {
		d := ids["discharge_disposition_id"][int(id)]
		if !strings.Contains(d, "Expired") && !strings.Contains(d, "Hospice") {
			t.Errorf("excluded discharge id %v is %q", id, d)
		}
	}
}

func TestReadIDMappingMalformed(t *testing.T) {
	for _, test := range []struct {
		name string
		in   string
		err  error
		line int
	}{
		{"empty", "", ErrEmptyInput, 1},
		{"row before table", "1,x\n", ErrUnexpectedValue, 1},
		{"bad id", "a_id,description\n1,x\nzz,y\n", ErrUnexpectedValue, 3},
		{"duplicate id", "a_id,description\n1,x\n1,y\n", ErrUnexpectedValue, 3},
		{"three fields", "a_id,description\n1,x,z\n", ErrTooManyColumns, 2},
		{"one field", "a_id,description\n1\n", ErrFieldCount, 2},
		{"duplicate table", "a_id,description\n1,x\n,\na_id,description\n", ErrDuplicateHeader, 4},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := readIDMapping(strings.NewReader(test.in), "ids.csv")
			var pe *ParseError
			if !errors.Is(err, test.err) || !errors.As(err, &pe) || pe.Line != test.line || pe.File != "ids.csv" {
				t.Errorf("got %v, want %v on line %d", err, test.err, test.line)
			}
		})
	}
}

func TestICD9Group(t *testing.T) {
	for _, test := range []struct{ code, want string }{
		{"250", "diabetes"}, {"250.83", "diabetes"}, {"250.01", "diabetes"},
		{"390", "circulatory"}, {"459.9", "circulatory"}, {"785", "circulatory"}, {"428", "circulatory"},
		{"460", "respiratory"}, {"519", "respiratory"}, {"786", "respiratory"},
		{"520", "digestive"}, {"579", "digestive"}, {"787", "digestive"},
		{"800", "injury"}, {"999", "injury"},
		{"710", "musculoskeletal"}, {"739", "musculoskeletal"},
		{"580", "genitourinary"}, {"629", "genitourinary"}, {"788", "genitourinary"},
		{"140", "neoplasms"}, {"239", "neoplasms"},
		{"139", "other"}, {"240", "other"}, {"249", "other"}, {"251", "other"}, {"389", "other"},
		{"630", "other"}, {"709", "other"}, {"740", "other"}, {"784", "other"}, {"789", "other"},
		{"8", "other"}, {"V45", "other"}, {"E909", "other"}, {"", "other"}, {"?", "other"}, {"NaN", "other"},
	} {
		if got := ICD9Group(test.code); got != test.want {
			t.Errorf("ICD9Group(%q) = %q, want %q", test.code, got, test.want)
		}
	}
}

// TestLoaderErrors checks that a benchmark file with a value outside its
// coding, or a missing file or column, is an error naming the place.
func TestLoaderErrors(t *testing.T) {
	for _, test := range []struct {
		name    string
		file    string
		content string
		load    func(dir string) error
		err     error
		line    int
		column  int
	}{
		{
			name: "missing file", load: func(dir string) error { _, err := CBPP(dir); return err },
			err: fs.ErrNotExist,
		},
		{
			name: "unknown treatment", file: ToenailFile,
			content: "patientID,outcome,treatment,time,visit\n1,none or mild,terbinafine,0,1\n1,none or mild,placebo,1,2\n",
			load:    func(dir string) error { _, err := Toenail(dir, ToenailOptions{}); return err },
			err:     ErrUnexpectedValue, line: 3, column: 3,
		},
		{
			name: "missing time", file: ToenailFile,
			content: "patientID,outcome,treatment,time,visit\n1,none or mild,terbinafine,NA,1\n",
			load:    func(dir string) error { _, err := Toenail(dir, ToenailOptions{}); return err },
			err:     ErrUnexpectedValue, line: 2, column: 4,
		},
		{
			name: "bad period", file: EpilepsyFile,
			content: "y,trt,base,age,V4,subject,period,lbase,lage\n5,placebo,11,31,0,1,5,0,0\n",
			load:    func(dir string) error { _, err := Epilepsy(dir); return err },
			err:     ErrUnexpectedValue, line: 2, column: 7,
		},
		{
			name: "missing column", file: CBPPFile,
			content: "herd,incidence,period\n1,2,1\n",
			load:    func(dir string) error { _, err := CBPP(dir); return err },
			err:     ErrNoColumn, line: 1,
		},
		{
			name: "missing subject column", file: EpilepsyFile,
			content: "y,trt,base,age,V4,period,lbase,lage\n5,placebo,11,31,0,1,0,0\n",
			load:    func(dir string) error { _, err := Epilepsy(dir); return err },
			err:     ErrNoColumn, line: 1,
		},
		{
			name: "incidence above size", file: CBPPFile,
			content: "herd,incidence,size,period\n1,2,14,1\n1,15,14,2\n",
			load:    func(dir string) error { _, err := CBPP(dir); return err },
			err:     ErrUnexpectedValue, line: 3, column: 2,
		},
		{
			name: "htnmeds not binary", file: HERSFile,
			content: "pptid,sbp,bmi,htnmeds,age,visit\n1,150,22,2,70,0\n1,150,22,1,70,1\n",
			load:    func(dir string) error { _, err := HERS(dir); return err },
			err:     ErrUnexpectedValue, line: 2, column: 4,
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			dir := t.TempDir()
			if test.file != "" {
				if err := os.WriteFile(filepath.Join(dir, test.file), []byte(test.content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			err := test.load(dir)
			if !errors.Is(err, test.err) {
				t.Fatalf("got %v, want %v", err, test.err)
			}
			if test.line == 0 {
				return
			}
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Line != test.line || pe.Column != test.column || pe.File != test.file {
				t.Errorf("got %v, want %s line %d column %d", err, test.file, test.line, test.column)
			}
		})
	}
}
