// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// filterInputs are CSV inputs whose columns change kind late, hold typos,
// missing values, quoted fields and non-finite numbers.
var filterInputs = []string{
	"g,x,y\n1,0.5,a\n1,1.50,b\n2,3,a\n2,1e3,c\n3,7,b\n",
	"g,x,y\n1,1,2\n2,2,3\n3,3,x\n4,4,5\n",                    // y turns categorical at a row left out or kept
	"g,x\na,1\na,2\nb,3\nb,4\nc,5\nc,6\nd,7\nd,3,1\n",        // ragged: the error names line 9
	"g,x\na,1\nb,NaN\nc,2\n",                                 // NaN: an error wherever it is
	"g,x\na,1\nb,NaN\nc,q\n",                                 // NaN, then a label: categorical, no error
	"g,x\na,1\nb,2\nc,3\nd,3,1\ne,4\nf,5\ng,6\nh,7\n",        // ragged
	"g,x\na,1\nb,2\nc,3\nd,4\ne,5\nf,6\ng,7\nh,3,1\n",        // ragged late
	"g,x\na,1\nb,2\nc,3\nd,3.1\ne,4\nf,3;1\ng,6\nh,7\nh,8\n", // a typo: a warning
	"g,x\n\"a,b\",1\n\"a,b\",NA\nc,\nd,\"2\"\nNA,3\n,4\n",    // quoted, missing keys
	"g,x\na,1e999\nb,2\n",                                    // overflow
	"g,x,z\n1,1,\n1,2,\n2,3,\n2,4,\n",                        // an empty column
}

func TestReaderKeep(t *testing.T) {
	rnd := rand.New(rand.NewPCG(1, 2))
	inputs := append([]string(nil), filterInputs...)
	for range 40 {
		inputs = append(inputs, randomCSV(rnd))
	}
	for k, in := range inputs {
		whole := NewReader(strings.NewReader(in))
		want, wantErr := whole.Read()
		for _, keep := range []func(string, bool) bool{
			func(string, bool) bool { return true },
			func(string, bool) bool { return false },
			func(s string, miss bool) bool { return !miss && s < "b" },
			func(s string, miss bool) bool { return miss || len(s)%2 == 1 },
			func(s string, miss bool) bool { return strings.Contains("1357ac", s) && s != "" },
		} {
			r := NewReader(strings.NewReader(in))
			r.Keep, r.KeepColumn = keep, "g"
			got, err := r.Read()
			if wantErr != nil || err != nil {
				if fmt.Sprint(err) != fmt.Sprint(wantErr) {
					t.Errorf("input %d: error %v, want %v", k, err, wantErr)
				}
				continue
			}
			// The rows the filter keeps, from the whole read.
			g, _ := want.Column("g")
			var rows []int
			var lines []int
			for i := range want.NumRows() {
				if keep(label(g, i), g.Missing[i]) {
					rows = append(rows, i)
					lines = append(lines, whole.Lines.Line(i))
				}
			}
			checkKept(t, k, got, want, rows)
			var gotLines []int
			for i := range r.Lines.Len() {
				gotLines = append(gotLines, r.Lines.Line(i))
			}
			if !reflect.DeepEqual(gotLines, lines) {
				t.Errorf("input %d: lines %v, want %v", k, gotLines, lines)
			}
		}
	}
}

// checkKept fails t unless got holds the rows of want, with want's
// kinds and warnings.
func checkKept(t *testing.T, k int, got, want *Frame, rows []int) {
	t.Helper()
	sub := want.Rows(rows)
	if got.NumRows() != len(rows) {
		t.Fatalf("input %d: %d rows, want %d", k, got.NumRows(), len(rows))
	}
	for j, c := range sub.Columns() {
		gc := got.Columns()[j]
		wc, _ := want.Column(c.Name)
		if gc.Kind != c.Kind || gc.Warning != wc.Warning {
			t.Errorf("input %d column %s: kind %v warning %q, want %v %q", k, c.Name, gc.Kind, gc.Warning, c.Kind, wc.Warning)
			continue
		}
		for i := range rows {
			if gc.Missing[i] != c.Missing[i] || c.Kind == Numeric && math.Float64bits(gc.Num[i]) != math.Float64bits(c.Num[i]) ||
				c.Kind == Categorical && gc.Str[i] != c.Str[i] {
				t.Errorf("input %d column %s row %d differs", k, c.Name, i)
			}
		}
	}
}

// label is the text of the g column's field as the filter sees it.
func label(c *Column, i int) string {
	if c.Missing[i] {
		return ""
	}
	if c.Kind == Categorical {
		return c.Str[i]
	}
	return fmt.Sprint(c.Num[i])
}

// randomCSV returns a CSV input with a key column g of integers and
// columns that turn categorical or hold typos at random rows.
func randomCSV(rnd *rand.Rand) string {
	var b strings.Builder
	b.WriteString("g,a,b,c\n")
	n := 5 + rnd.IntN(200)
	turn := rnd.IntN(2 * n)
	for i := range n {
		fmt.Fprintf(&b, "%d,", rnd.IntN(9))
		switch {
		case rnd.IntN(20) == 0:
			b.WriteString("NA")
		case i == turn:
			b.WriteString("x")
		default:
			fmt.Fprintf(&b, "%.*f", rnd.IntN(3), rnd.NormFloat64())
		}
		b.WriteString(",")
		if i == turn/2 && rnd.IntN(3) == 0 {
			b.WriteString("3,1") // a comma: a field too many
		} else {
			fmt.Fprintf(&b, "%d", rnd.IntN(4))
		}
		fmt.Fprintf(&b, ",\"%c\"\n", 'p'+rune(rnd.IntN(3)))
	}
	return b.String()
}

func TestReaderKeepNoColumn(t *testing.T) {
	in := "a,b\n1,x\n2,3\n"
	r := NewReader(strings.NewReader(in))
	var calls []string
	r.Keep = func(s string, miss bool) bool {
		calls = append(calls, fmt.Sprintf("%q %v", s, miss))
		return false
	}
	f, err := r.Read()
	if err != nil || f.NumRows() != 0 || !reflect.DeepEqual(calls, []string{`"" true`, `"" true`}) {
		t.Fatalf("got %v rows, error %v, calls %q; want none, nil and two of (\"\", true)", f, err, calls)
	}
	if b, _ := f.Column("b"); b.Kind != Categorical {
		t.Errorf("column b is %v, want categorical", b.Kind)
	}
}

func TestReaderKeepColumnMissing(t *testing.T) {
	r := NewReader(strings.NewReader("a,b\n1,2\n"))
	r.Keep, r.KeepColumn = func(string, bool) bool { return true }, "c"
	_, err := r.Read()
	if !errors.Is(err, ErrNoKeepColumn) || !strings.Contains(err.Error(), `"c"`) {
		t.Errorf("error %v, want one naming column c", err)
	}
}

func TestReadPieces(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	for range 20 {
		in := randomCSV(rnd)
		want, err := ReadCSV(strings.NewReader(in))
		if err != nil {
			continue
		}
		var cat, num []string
		for _, c := range want.Columns() {
			if c.Kind == Categorical {
				cat = append(cat, c.Name)
			} else {
				num = append(num, c.Name)
			}
		}
		for _, size := range []int{1, 7, 1000} {
			r := NewReader(strings.NewReader(in))
			r.Categorical = cat
			if size == 7 {
				r.Numeric = num // the same pieces, read faster
			}
			next := 0
			err := r.ReadPieces(size, func(f *Frame, lines *Lines) error {
				if f.NumRows() > size || f.NumRows() != lines.Len() || f.NumRows() == 0 {
					t.Fatalf("piece of %d rows (%d lines), want 1 to %d", f.NumRows(), lines.Len(), size)
				}
				rows := make([]int, f.NumRows())
				for i := range rows {
					rows[i] = next + i
				}
				w := want.Rows(rows)
				for j, c := range w.Columns() {
					gc := f.Columns()[j]
					if c.Kind == Categorical {
						if gc.Kind != Categorical || !reflect.DeepEqual(gc.Str, c.Str) {
							t.Fatalf("piece at row %d, column %s: %v %q, want %q", next, c.Name, gc.Kind, gc.Str, c.Str)
						}
					} else if !reflect.DeepEqual(gc.Missing, c.Missing) || fmt.Sprint(gc.Num) != fmt.Sprint(c.Num) {
						t.Fatalf("piece at row %d, column %s: %v missing %v, want %v %v", next, c.Name, gc.Num, gc.Missing, c.Num, c.Missing)
					}
				}
				next += f.NumRows()
				return nil
			})
			if err != nil || next != want.NumRows() {
				t.Fatalf("pieces of %d: %d rows, error %v; want %d", size, next, err, want.NumRows())
			}
		}
	}
	stop := errors.New("stop")
	r := NewReader(strings.NewReader("a\n1\n2\n3\n"))
	if err := r.ReadPieces(1, func(*Frame, *Lines) error { return stop }); err != stop {
		t.Errorf("ReadPieces returned %v, want fn's error", err)
	}
}

func TestReaderPlace(t *testing.T) {
	r := NewReader(strings.NewReader("a,b\n1,2\n3,4\n5,x\n6,7\n7,8\n8,9\n9,10\n"))
	r.Place = func(line int) (string, int) { return "second.csv", line - 2 }
	f, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := f.Column("b")
	if !strings.HasPrefix(b.Warning, "second.csv: line 2, column 2") {
		t.Errorf("warning %q, want one naming second.csv line 2", b.Warning)
	}
	r = NewReader(strings.NewReader("a,b\n1,2\n3\n"))
	r.File = "all"
	r.Place = func(line int) (string, int) { return "second.csv", line - 2 }
	if _, err := r.Read(); err == nil || !strings.HasPrefix(err.Error(), "second.csv: line 1,") {
		t.Errorf("error %v, want one naming second.csv line 1", err)
	}
}

func TestReaderColumns(t *testing.T) {
	rnd := rand.New(rand.NewPCG(9, 10))
	for range 20 {
		in := randomCSV(rnd)
		want, err := ReadCSV(strings.NewReader(in))
		if err != nil {
			continue
		}
		r := NewReader(strings.NewReader(in))
		r.Columns = []string{"c", "a", "zz"}
		r.ReserveRows = 50 // about the rows kept: the same frame
		r.Keep, r.KeepColumn = func(s string, miss bool) bool { return s != "3" }, "g"
		got, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		if names := got.Names(); !reflect.DeepEqual(names, []string{"a", "c"}) {
			t.Fatalf("columns %v, want a and c", names)
		}
		g, _ := want.Column("g")
		var rows []int
		for i := range want.NumRows() {
			if label(g, i) != "3" {
				rows = append(rows, i)
			}
		}
		sub := want.Rows(rows)
		for _, name := range []string{"a", "c"} {
			gc, _ := got.Column(name)
			wc, _ := sub.Column(name)
			if gc.Kind != wc.Kind || !reflect.DeepEqual(gc.Str, wc.Str) || !reflect.DeepEqual(gc.Missing, wc.Missing) ||
				fmt.Sprint(gc.Num) != fmt.Sprint(wc.Num) {
				t.Fatalf("column %s differs from the whole read's", name)
			}
		}
	}
}

func TestReaderNumeric(t *testing.T) {
	r := NewReader(strings.NewReader("a,b\n1,2\n3,x\n"))
	r.Numeric = []string{"b"}
	_, err := r.Read()
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrNotNumber) || pe.Line != 3 || pe.Name != "b" {
		t.Errorf("error %v, want one wrapping ErrNotNumber at line 3, column b", err)
	}
	r = NewReader(strings.NewReader("a,b\n1,2\n3,NA\n4,1e3\n"))
	r.Numeric = []string{"b"}
	f, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := f.Column("b"); b.Kind != Numeric || b.Num[0] != 2 || !b.Missing[1] || b.Num[2] != 1000 {
		t.Errorf("column b: %+v", b)
	}
}

// TestReaderKeepRow filters rows by the fields of two columns and asks for
// the rows of the whole read that the filter keeps, with the whole read's
// kinds and errors; a column not in the header is an error naming it.
func TestReaderKeepRow(t *testing.T) {
	rnd := rand.New(rand.NewPCG(3, 4))
	keep := func(fields []string, missing []bool) bool {
		return !missing[0] && !missing[1] && (len(fields[0])+len(fields[1])+int(fields[0][0])+int(fields[1][0]))%3 != 0
	}
	for k := range 40 {
		in := randomCSV(rnd)
		whole := NewReader(strings.NewReader(in))
		want, wantErr := whole.Read()
		r := NewReader(strings.NewReader(in))
		r.KeepRow, r.KeepColumns = keep, []string{"g", "b"}
		got, err := r.Read()
		if wantErr != nil || err != nil {
			if fmt.Sprint(err) != fmt.Sprint(wantErr) {
				t.Errorf("input %d: error %v, want %v", k, err, wantErr)
			}
			continue
		}
		g, _ := want.Column("g")
		b, _ := want.Column("b")
		var rows []int
		for i := range want.NumRows() {
			if keep([]string{label(g, i), label(b, i)}, []bool{g.Missing[i], b.Missing[i]}) {
				rows = append(rows, i)
			}
		}
		checkKept(t, k, got, want, rows)
	}
	r := NewReader(strings.NewReader("a,b\n1,2\n"))
	r.KeepRow, r.KeepColumns = keep, []string{"a", "c"}
	if _, err := r.Read(); !errors.Is(err, ErrNoKeepColumn) || !strings.Contains(err.Error(), `"c"`) {
		t.Errorf("error %v, want one naming column c", err)
	}
}
