// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package formula

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
)

// TestNewTrials: new rows' numbers of trials are counted as the training
// data's were (d.Config().Trials, for the training rows themselves), in
// both cbind() spellings; nil for a one-column response or without the
// columns; NaN for a missing value; an error naming the row and column
// for a value that is not a count and for no trial at all.
func TestNewTrials(t *testing.T) {
	train := "id,s,f,n,x\na,1,2,3,0.1\na,0,4,4,0.2\nb,2,1,3,0.3\nb,3,0,3,0.4\n"
	fr, err := datasets.ReadCSV(strings.NewReader(train))
	if err != nil {
		t.Fatal(err)
	}
	nan := math.NaN()
	for _, c := range []struct {
		formula string
		data    string // new rows; "" for the training data
		want    []float64
		row     int    // the error's row, 0 for none
		column  string // the error's column
	}{
		{formula: "cbind(s, f) ~ x + (1 | id)", want: []float64{3, 4, 3, 3}},
		{formula: "cbind(s, n - s) ~ x + (1 | id)", want: []float64{3, 4, 3, 3}},
		{formula: "s ~ x + (1 | id)"},
		{formula: "cbind(s, n - s) ~ x + (1 | id)", data: "id,x\nc,1\n"},
		{formula: "cbind(s, f) ~ x + (1 | id)", data: "id,x,f\nc,1,2\n"},
		{formula: "cbind(s, n - s) ~ x + (1 | id)", data: "id,x,n\nc,1,7\nd,2,\n", want: []float64{7, nan}},
		{formula: "cbind(s, f) ~ x + (1 | id)", data: "id,x,s,f\nc,1,,2\nd,2,5,6\n", want: []float64{nan, 11}},
		{formula: "cbind(s, n - s) ~ x + (1 | id)", data: "id,x,n\nc,1,7\nd,2,2.5\n", row: 2, column: "n"},
		{formula: "cbind(s, n - s) ~ x + (1 | id)", data: "id,x,n\nc,1,-1\n", row: 1, column: "n"},
		{formula: "cbind(s, n - s) ~ x + (1 | id)", data: "id,x,n\nc,1,0\n", row: 1, column: "n"},
		{formula: "cbind(s, f) ~ x + (1 | id)", data: "id,x,s,f\nc,1,0,0\n", row: 1, column: "f"},
		{formula: "cbind(s, f) ~ x + (1 | id)", data: "id,x,s,f\nc,1,-1,3\n", row: 1, column: "s"},
		{formula: "cbind(s, n - s) ~ x + (1 | id)", data: "id,x,n\nc,1,7\nd,2,many\n", row: 2, column: "n"},
	} {
		f, err := Parse(c.formula)
		if err != nil {
			t.Fatal(err)
		}
		fam := glmm.Binomial
		if !strings.HasPrefix(c.formula, "cbind") {
			fam = glmm.Poisson
		}
		d, err := Build(f, fr, Options{Family: fam})
		if err != nil {
			t.Fatalf("%s: %v", c.formula, err)
		}
		nf := fr
		if c.data != "" {
			if nf, err = datasets.ReadCSV(strings.NewReader(c.data)); err != nil {
				t.Fatal(err)
			}
		}
		got, err := d.NewTrials(nf)
		if c.row != 0 {
			var de *DataError
			if !errors.As(err, &de) || de.Row != c.row || de.Column != c.column {
				t.Errorf("%s on %q: error %v, want one at row %d of %q", c.formula, c.data, err, c.row, c.column)
			}
			continue
		}
		if err != nil || !slices.EqualFunc(got, c.want, func(a, b float64) bool { return a == b || math.IsNaN(a) && math.IsNaN(b) }) || (got == nil) != (c.want == nil) {
			t.Errorf("%s on %q: NewTrials = %v, %v; want %v", c.formula, c.data, got, err, c.want)
		}
		if c.data == "" && c.want != nil && !slices.Equal(got, d.Config().Trials) {
			t.Errorf("%s: NewTrials of the training data %v, the model's trials %v", c.formula, got, d.Config().Trials)
		}
	}
}
