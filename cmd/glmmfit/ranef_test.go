// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"path/filepath"
	"strconv"
	"testing"
)

// TestRanef: -ranef's CSV holds a row for every effect of every level,
// whose figures read back as the JSON document's of the same fit, bit for
// bit: the example's random intercepts and slopes; penicillin's plates
// and, crossed with them, samples; toenail's patients with their
// corrected effects (-correct's default ran there).
func TestRanef(t *testing.T) {
	dir := dataDir(t, "penicillin.csv")
	for _, c := range []struct {
		name string
		args []string
	}{
		{"example", []string{"-example"}},
		{"penicillin", []string{"-data", filepath.Join(dir, "penicillin.csv"), "-family", "gaussian", "-formula", "diameter ~ 1 + (1 | plate) + (1 | sample)"}},
		{"toenail", []string{"-data", filepath.Join(dir, "toenail.csv"), "-ref", "outcome=none or mild", "-formula", "outcome ~ treatment*time + (1 | patientID)"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			work := t.TempDir()
			r := glmmfit(t, work, "", nil, append([]string{"fit", "-quiet", "-format", "json", "-ranef", "re.csv"}, c.args...)...)
			mustSucceed(t, r, c.name)
			doc := readDoc(t, []byte(r.stdout))
			rows := readCSV(t, filepath.Join(work, "re.csv"))
			type key struct{ group, level, effect string }
			want := map[key][]float64{}
			re := doc.RandomEffects
			var corr []subjectEffects
			if doc.PSISCorrected != nil {
				corr = doc.PSISCorrected.RandomEffects
			}
			for i, s := range re.Subjects {
				for a, name := range re.Names {
					v := []float64{float64(s.Mean[a]), float64(s.SD[a])}
					if corr != nil {
						v = append(v, float64(corr[i].Mean[a]), float64(corr[i].SD[a]))
					}
					want[key{re.Group, s.Level, name}] = v
				}
			}
			for _, cr := range doc.Crossed {
				for _, e := range cr.Effects {
					want[key{cr.Group, e.Name, "(Intercept)"}] = []float64{float64(e.Estimate), float64(e.EstError)}
				}
			}
			header := []string{"group", "level", "effect", "estimate", "est_error"}
			if corr != nil {
				header = append(header, "estimate_corrected", "est_error_corrected")
			}
			if fmt.Sprint(rows[0]) != fmt.Sprint(header) {
				t.Fatalf("header %v, want %v", rows[0], header)
			}
			if len(rows)-1 != len(want) {
				t.Errorf("%d rows, want %d", len(rows)-1, len(want))
			}
			for _, row := range rows[1:] {
				k := key{row[0], row[1], row[2]}
				w, ok := want[k]
				if !ok {
					t.Errorf("row %v: no such effect in the document", row)
					continue
				}
				for j, x := range w {
					if got, err := strconv.ParseFloat(row[3+j], 64); err != nil || got != x {
						t.Errorf("%v column %s: %s, want %v", k, header[3+j], row[3+j], x)
					}
				}
				if k.group != re.Group && len(row) > 5 && (row[5] != "NA" || row[6] != "NA") {
					t.Errorf("%v: corrected %v, want NA for a crossed factor", k, row[5:])
				}
				delete(want, k)
			}
			if c.name == "toenail" && corr == nil {
				t.Errorf("toenail: no corrected random effects")
			}
		})
	}
}
