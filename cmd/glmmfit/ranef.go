// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"encoding/csv"
	"fmt"

	"github.com/sparsevi/sparsevi/internal/atomicfile"
)

// writeRanef writes doc's random effects to path as CSV (-ranef), one row
// for each effect of each level: the subjects' (the grouping factor of the
// local blocks), then each crossed or nested factor's. The subjects'
// corrected effects, when -correct gave them, fill two more columns; the
// other factors', which it does not give, are NA there.
func writeRanef(path string, doc *document) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("-ranef: %v", pathError(err))
	}
	defer f.Abort()
	bw := bufio.NewWriter(f)
	w := csv.NewWriter(bw)
	var corr []subjectEffects
	if pc := doc.PSISCorrected; pc != nil {
		corr = pc.RandomEffects
	}
	row := []string{"group", "level", "effect", "estimate", "est_error"}
	if corr != nil {
		row = append(row, "estimate_corrected", "est_error_corrected")
	}
	w.Write(row)
	re := doc.RandomEffects
	for i, s := range re.Subjects {
		for a, name := range re.Names {
			row = append(row[:0], re.Group, s.Level, name, csvFloat(float64(s.Mean[a])), csvFloat(float64(s.SD[a])))
			if corr != nil {
				row = append(row, csvFloat(float64(corr[i].Mean[a])), csvFloat(float64(corr[i].SD[a])))
			}
			w.Write(row)
		}
	}
	for _, factors := range [][]crossedDoc{doc.Crossed, doc.Nested} {
		for _, c := range factors {
			for _, e := range c.Effects {
				row = append(row[:0], c.Group, e.Name, "(Intercept)", csvFloat(float64(e.Estimate)), csvFloat(float64(e.EstError)))
				if corr != nil {
					row = append(row, "NA", "NA")
				}
				w.Write(row)
			}
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("-ranef: %v", err)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("-ranef: %v", err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("-ranef: %v", err)
	}
	return nil
}
