// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"fmt"
	"math"
	"strconv"

	"github.com/sparsevi/sparsevi/internal/atomicfile"
)

// writeTrace writes the lower-bound trace as CSV with the columns iter,
// lower_bound, gain, step_norm and elapsed_seconds; an undefined value
// (the gain of the first window) is written as NA.
func writeTrace(path string, tr []tracePoint) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("-trace: %v", pathError(err))
	}
	defer f.Abort()
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "iter,lower_bound,gain,step_norm,elapsed_seconds")
	for _, t := range tr {
		fmt.Fprintf(w, "%d,%s,%s,%s,%s\n", t.Iter, csvFloat(float64(t.LowerBound)), csvFloat(float64(t.Gain)),
			csvFloat(float64(t.StepNorm)), csvFloat(t.ElapsedSeconds))
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("-trace: %v", err)
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("-trace: %v", err)
	}
	return nil
}

// csvFloat formats v in the shortest form that reads back exactly, NA for
// NaN and infinities.
func csvFloat(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "NA"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
