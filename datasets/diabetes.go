// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DiabetesOptions holds the open choices of the Diabetes coding. The zero
// value is the default coding described at Diabetes.
type DiabetesOptions struct {
	// TimeInHospital is the scaling of the Time column; the default, Raw,
	// keeps days (1 to 14) as Strack et al. do.
	TimeInHospital Scaling
	// RaceMissingAsOther merges a missing race into "Other" instead of
	// giving it its own level "Missing" as Strack et al. do.
	RaceMissingAsOther bool
	// A1COver7Level gives an HbA1c result of ">7" its own level "over7"
	// instead of counting it as "normal" (below the 8% threshold of Strack
	// et al.).
	A1COver7Level bool
	// KeepExcluded keeps the encounters that end in death or hospice
	// (discharge_disposition_id 11, 13, 14, 19, 20, 21).
	KeepExcluded bool
	// MinEncounters is the least number of kept encounters of a patient
	// for the patient to be kept; zero or less means 2, as in the paper.
	MinEncounters int
}

// excludedDischarge holds the discharge_disposition_id values of encounters
// that end in death (11, 19, 20, 21) or hospice (13, 14): a readmission is
// impossible or unlikely after them, so Strack et al. drop them.
var excludedDischarge = map[float64]bool{11: true, 13: true, 14: true, 19: true, 20: true, 21: true}

// Diabetes reads diabetes_130.csv (UCI "Diabetes 130-US hospitals for years
// 1999-2008", Strack et al. 2014) and the id descriptions of
// diabetes_130_IDs_mapping.csv from dir, selects the encounters of Tan's
// analysis and adds the covariates of Strack et al.
//
// Selection: encounters with a discharge_disposition_id of death or
// hospice (11, 13, 14, 19, 20, 21) are dropped first, then the patients
// (patient_nbr) with fewer than 2 remaining encounters. This leaves 45,694
// encounters of exactly 16,341 patients, the n of the paper. Rows keep the
// file's order.
//
// All 50 raw columns are kept, with "?" read as missing; encounter_id and
// patient_nbr are categorical, patient_nbr being the subject. The
// descriptions of the three coded ids are added as categorical columns
// admission_type, discharge_disposition and admission_source (trimmed
// text of the mapping file; missing for an id it does not list). The model
// columns, following Strack et al.'s groupings, are:
//
//	y          1 if readmitted is "<30", else 0 (">30" or "NO")
//	Admission  admission_source_id: "emergency" (7, emergency room),
//	           "referral" (1, 2, 3: physician, clinic and HMO referral),
//	           "other" (all other ids, and missing)
//	Discharge  discharge_disposition_id: "home" (1, discharged to home),
//	           "other" (all other ids, and missing)
//	Race       "AfricanAmerican", "Caucasian", "Missing" (race "?"),
//	           "Other" (Asian, Hispanic, Other); see RaceMissingAsOther
//	Diagnosis  diag_1 grouped by ICD-9 code: "circulatory" (390-459, 785),
//	           "respiratory" (460-519, 786), "digestive" (520-579, 787),
//	           "diabetes" (250.xx), "injury" (800-999),
//	           "musculoskeletal" (710-739), "genitourinary" (580-629, 788),
//	           "neoplasms" (140-239), "other" (all other codes, V and E
//	           codes, and missing)
//	HbA1c      A1Cresult and change: "none" (no test), "normal" ("Norm",
//	           and ">7"; see A1COver7Level), "over8_changed" (">8" and
//	           diabetes medication changed, change "Ch"),
//	           "over8_unchanged" (">8" and change "No")
//	Time       time_in_hospital in days, scaled as opts.TimeInHospital says
//
// The labels are chosen so that the first level in sorted order, the
// reference level of a treatment contrast, is a natural baseline:
// emergency admission, discharge home, African American, circulatory
// diagnosis, no HbA1c test. The paper's model has the main effect of
// Admission and the interactions Discharge:Time, Discharge:Race,
// Time:Diagnosis and HbA1c:Diagnosis, with a random intercept per patient.
func Diabetes(dir string, opts DiabetesOptions) (*Frame, error) {
	ids, err := ReadIDMapping(filepath.Join(dir, DiabetesMappingFile))
	if err != nil {
		return nil, err
	}
	l, err := load(dir, DiabetesFile, "encounter_id", "patient_nbr")
	if err != nil {
		return nil, err
	}
	patient, err := l.str("patient_nbr")
	if err != nil {
		return nil, err
	}
	disch, err := l.num("discharge_disposition_id", false)
	if err != nil {
		return nil, err
	}

	// Select the encounters.
	minEnc := opts.MinEncounters
	if minEnc <= 0 {
		minEnc = 2
	}
	n := l.f.NumRows()
	kept := make([]bool, n)
	count := make(map[string]int)
	for i := range n {
		if patient.Missing[i] {
			return nil, l.valueError(i, "patient_nbr", "missing patient")
		}
		if opts.KeepExcluded || !excludedDischarge[disch[i]] {
			kept[i] = true
			count[patient.Str[i]]++
		}
	}
	var rows []int
	for i := range n {
		if kept[i] && count[patient.Str[i]] >= minEnc {
			rows = append(rows, i)
		}
	}
	l.f = l.f.Rows(rows)
	n = len(rows)

	// Descriptions of the coded ids.
	for _, tab := range []struct{ id, name string }{
		{"admission_type_id", "admission_type"},
		{"discharge_disposition_id", "discharge_disposition"},
		{"admission_source_id", "admission_source"},
	} {
		v, err := l.num(tab.id, false)
		if err != nil {
			return nil, err
		}
		desc := make([]string, n)
		for i, x := range v {
			if !math.IsNaN(x) && x == math.Trunc(x) {
				desc[i] = ids[tab.id][int(x)]
			}
		}
		if err := l.add(NewCategorical(tab.name, desc)); err != nil {
			return nil, err
		}
	}

	readm, err := l.str("readmitted")
	if err != nil {
		return nil, err
	}
	y := make([]float64, n)
	for i, s := range readm.Str {
		switch {
		case readm.Missing[i]:
			return nil, l.valueError(i, "readmitted", "missing value")
		case s == "<30":
			y[i] = 1
		case s != ">30" && s != "NO":
			return nil, l.valueError(i, "readmitted", "%q is not <30, >30 or NO", s)
		}
	}

	src, err := l.num("admission_source_id", false)
	if err != nil {
		return nil, err
	}
	disch, _ = l.num("discharge_disposition_id", false)
	admission, discharge := make([]string, n), make([]string, n)
	for i := range n {
		switch src[i] {
		case 7:
			admission[i] = "emergency"
		case 1, 2, 3:
			admission[i] = "referral"
		default:
			admission[i] = "other"
		}
		discharge[i] = "other"
		if disch[i] == 1 {
			discharge[i] = "home"
		}
	}

	raceCol, err := l.str("race")
	if err != nil {
		return nil, err
	}
	race := make([]string, n)
	for i, s := range raceCol.Str {
		switch {
		case raceCol.Missing[i] && !opts.RaceMissingAsOther:
			race[i] = "Missing"
		case s == "AfricanAmerican", s == "Caucasian":
			race[i] = s
		default:
			race[i] = "Other"
		}
	}

	diagCol, err := l.str("diag_1")
	if err != nil {
		return nil, err
	}
	diag := make([]string, n)
	for i, s := range diagCol.Str {
		diag[i] = ICD9Group(s)
	}

	a1c, err := l.str("A1Cresult")
	if err != nil {
		return nil, err
	}
	change, err := l.str("change")
	if err != nil {
		return nil, err
	}
	hba1c := make([]string, n)
	for i, s := range a1c.Str {
		switch s {
		case "None":
			hba1c[i] = "none"
		case "Norm":
			hba1c[i] = "normal"
		case ">7":
			hba1c[i] = "normal"
			if opts.A1COver7Level {
				hba1c[i] = "over7"
			}
		case ">8":
			switch change.Str[i] {
			case "Ch":
				hba1c[i] = "over8_changed"
			case "No":
				hba1c[i] = "over8_unchanged"
			default:
				return nil, l.valueError(i, "change", "%q is not Ch or No", change.Str[i])
			}
		default:
			return nil, l.valueError(i, "A1Cresult", "%q is not None, Norm, >7 or >8", s)
		}
	}

	tih, err := l.num("time_in_hospital", true)
	if err != nil {
		return nil, err
	}
	tm, err := opts.TimeInHospital.apply(tih)
	if err != nil {
		return nil, err
	}

	err = l.add(
		numeric("y", y),
		NewCategorical("Admission", admission),
		NewCategorical("Discharge", discharge),
		NewCategorical("Race", race),
		NewCategorical("Diagnosis", diag),
		NewCategorical("HbA1c", hba1c),
		numeric("Time", tm),
	)
	return l.f, err
}

// ICD9Group returns the group of Strack et al. (2014, Table 2) of the ICD-9
// diagnosis code: "circulatory", "respiratory", "digestive", "diabetes",
// "injury", "musculoskeletal", "genitourinary", "neoplasms" or "other". V
// and E codes, codes that do not parse and the empty code are "other".
func ICD9Group(code string) string {
	x, err := strconv.ParseFloat(code, 64)
	if err != nil || !isDecimal(code) {
		return "other"
	}
	k := math.Floor(x)
	switch {
	case k == 250:
		return "diabetes"
	case 390 <= k && k <= 459, k == 785:
		return "circulatory"
	case 460 <= k && k <= 519, k == 786:
		return "respiratory"
	case 520 <= k && k <= 579, k == 787:
		return "digestive"
	case 800 <= k && k <= 999:
		return "injury"
	case 710 <= k && k <= 739:
		return "musculoskeletal"
	case 580 <= k && k <= 629, k == 788:
		return "genitourinary"
	case 140 <= k && k <= 239:
		return "neoplasms"
	}
	return "other"
}

// ReadIDMapping reads the id descriptions of diabetes_130_IDs_mapping.csv:
// stacked two-column tables, each with a header "<name>,description" and
// separated by lines with empty fields. It returns, for each table name
// (such as "admission_source_id"), the description of each id with
// surrounding spaces removed.
func ReadIDMapping(path string) (map[string]map[int]string, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	return readIDMapping(fh, filepath.Base(path))
}

func readIDMapping(r io.Reader, file string) (map[string]map[int]string, error) {
	p := &parser{br: bufio.NewReader(r), trim: true, maxLine: DefaultMaxLineBytes, maxCols: 2, line: 1}
	if err := p.skipBOM(); err != nil {
		return nil, &ParseError{File: file, Line: 1, Err: err}
	}
	tables := make(map[string]map[int]string)
	var cur map[int]string
	for {
		err := p.readRecord()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, &ParseError{File: file, Line: p.errLine, Column: p.errCol, Err: err}
		}
		if len(p.fields) != 2 {
			return nil, &ParseError{File: file, Line: p.recLine, Column: min(len(p.fields), 2) + 1,
				Err: fmt.Errorf("%w: got %d, want 2", ErrFieldCount, len(p.fields))}
		}
		key, desc := string(p.fields[0].b), string(p.fields[1].b)
		switch {
		case key == "" && desc == "":
			cur = nil
		case desc == "description" && cur == nil:
			if _, dup := tables[key]; dup {
				return nil, &ParseError{File: file, Line: p.recLine, Column: 1, Err: fmt.Errorf("%w: table %q", ErrDuplicateHeader, key)}
			}
			cur = make(map[int]string)
			tables[key] = cur
		case cur == nil:
			return nil, &ParseError{File: file, Line: p.recLine, Column: 1, Err: fmt.Errorf("%w: row outside a table", ErrUnexpectedValue)}
		default:
			id, err := strconv.Atoi(key)
			if err != nil {
				return nil, &ParseError{File: file, Line: p.recLine, Column: 1, Err: fmt.Errorf("%w: id %q", ErrUnexpectedValue, key)}
			}
			if _, dup := cur[id]; dup {
				return nil, &ParseError{File: file, Line: p.recLine, Column: 1, Err: fmt.Errorf("%w: id %d twice", ErrUnexpectedValue, id)}
			}
			cur[id] = strings.TrimSpace(desc)
		}
	}
	if len(tables) == 0 {
		return nil, &ParseError{File: file, Line: p.line, Err: ErrEmptyInput}
	}
	return tables, nil
}
