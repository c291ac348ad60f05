// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadCSVMalformed(t *testing.T) {
	long := "a\n" + strings.Repeat("x", DefaultMaxLineBytes+1) + "\n"
	wide := strings.Repeat("c,", DefaultMaxColumns) + "c\n"
	for _, test := range []struct {
		name  string
		in    string
		err   error
		line  int
		col   int
		cname string
	}{
		{"empty", "", ErrEmptyInput, 1, 0, ""},
		{"only blank lines", "\n\r\n\n", ErrEmptyInput, 4, 0, ""},
		{"header only", "a,b\n", ErrNoRows, 2, 0, ""},
		{"header only no newline", "a,b", ErrNoRows, 2, 0, ""},
		{"header then blank lines", "a,b\n\n\n", ErrNoRows, 4, 0, ""},
		{"empty header name", "a,,c\n1,2,3\n", ErrHeaderName, 1, 2, ""},
		{"blank quoted header name", "a,\"  \",c\n1,2,3\n", ErrHeaderName, 1, 2, ""},
		{"duplicate header", "a,b,a\n1,2,3\n", ErrDuplicateHeader, 1, 3, "a"},
		{"short row", "a,b,c\n1,2,3\n4,5\n", ErrFieldCount, 3, 3, "c"},
		{"long row", "a,b\n1,2\n3,4\n5,6,7\n", ErrFieldCount, 4, 3, ""},
		{"ragged after quoted newline", "a,b\n\"x\ny\",2\n3\n", ErrFieldCount, 4, 2, "b"},
		{"bare quote", "a,b\n1,x\"y\n", ErrBareQuote, 2, 2, "b"},
		{"text after closing quote", "a,b\n\"x\"y,2\n", ErrQuote, 2, 1, "a"},
		{"unterminated quote", "a,b\n1,2\n3,\"abc\n4,5\n", ErrQuote, 3, 2, "b"},
		{"NaN in numeric column", "a,b\n1,2\n3,NaN\n", ErrNonFinite, 3, 2, "b"},
		{"Inf in numeric column", "x,y\n-Inf,1\n2,3\n", ErrNonFinite, 2, 1, "x"},
		{"overflow in numeric column", "x,y\n1,2\n1e999,3\n", ErrNonFinite, 3, 1, "x"},
		{"nan after multi-line record", "a,b\n\"p\nq\",1\nr,nan\n", ErrNonFinite, 4, 2, "b"},
		{"record too long", long, ErrLineTooLong, 2, 1, "a"},
		{"too many columns", wide, ErrTooManyColumns, 1, DefaultMaxColumns + 1, ""},
		{"ragged CRLF", "a,b\r\n1,2\r\n3\r\n", ErrFieldCount, 3, 2, "b"},
	} {
		t.Run(test.name, func(t *testing.T) {
			f, err := ReadCSV(strings.NewReader(test.in))
			if err == nil {
				t.Fatalf("no error, got frame with %d rows", f.NumRows())
			}
			if !errors.Is(err, test.err) {
				t.Fatalf("error %v does not wrap %v", err, test.err)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError", err)
			}
			if pe.Line != test.line || pe.Column != test.col || pe.Name != test.cname {
				t.Errorf("error at line %d, column %d, name %q; want %d, %d, %q (%v)",
					pe.Line, pe.Column, pe.Name, test.line, test.col, test.cname, err)
			}
		})
	}
}

func TestReadCSV(t *testing.T) {
	nan := math.NaN()
	type col struct {
		name string
		kind Kind
		num  []float64
		str  []string
		miss []bool
	}
	for _, test := range []struct {
		name string
		in   string
		want []col
	}{
		{
			name: "kinds and missing",
			in:   "id,x,g\n1,2.5,a\n2,NA,?\n3,,b\n",
			want: []col{
				{"id", Numeric, []float64{1, 2, 3}, nil, []bool{false, false, false}},
				{"x", Numeric, []float64{2.5, nan, nan}, nil, []bool{false, true, true}},
				{"g", Categorical, nil, []string{"a", "", "b"}, []bool{false, true, false}},
			},
		},
		{
			name: "CRLF, BOM, quotes",
			in:   "\xef\xbb\xbfname,v\r\n\"Smith, J\",1e3\r\n\"say \"\"hi\"\"\",-.5\r\n",
			want: []col{
				{"name", Categorical, nil, []string{"Smith, J", `say "hi"`}, []bool{false, false}},
				{"v", Numeric, []float64{1000, -0.5}, nil, []bool{false, false}},
			},
		},
		{
			name: "quoted newline, blank lines, no final newline",
			in:   "a,b\n\n\"l1\r\nl2\",+7\n\n\"x\",8",
			want: []col{
				{"a", Categorical, nil, []string{"l1\r\nl2", "x"}, []bool{false, false}},
				{"b", Numeric, []float64{7, 8}, nil, []bool{false, false}},
			},
		},
		{
			name: "NaN is a label in a categorical column; quoted NA is a label",
			in:   "g,h\nNaN,\"NA\"\nfoo,NA\n",
			want: []col{
				{"g", Categorical, nil, []string{"NaN", "foo"}, []bool{false, false}},
				{"h", Categorical, nil, []string{"NA", ""}, []bool{false, true}},
			},
		},
		{
			name: "all missing column is numeric; spaces trimmed; hex is a label",
			in:   " a , b ,c\n NA , 1 ,0x10\n,\"\", 2\n",
			want: []col{
				{"a", Numeric, []float64{nan, nan}, nil, []bool{true, true}},
				{"b", Numeric, []float64{1, nan}, nil, []bool{false, true}},
				{"c", Categorical, nil, []string{"0x10", "2"}, []bool{false, false}},
			},
		},
		{
			name: "record starting with a lone CR; CR before end of input",
			in:   "a,b\n\rx,1\ny,2\r",
			want: []col{
				{"a", Categorical, nil, []string{"\rx", "y"}, []bool{false, false}},
				{"b", Numeric, []float64{1, 2}, nil, []bool{false, false}},
			},
		},
		{
			name: "one column with quoted empty as missing",
			in:   "y\n1\n\"\"\n3\n",
			want: []col{
				{"y", Numeric, []float64{1, nan, 3}, nil, []bool{false, true, false}},
			},
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			f, err := ReadCSV(strings.NewReader(test.in))
			if err != nil {
				t.Fatal(err)
			}
			if f.NumCols() != len(test.want) {
				t.Fatalf("got columns %q, want %d", f.Names(), len(test.want))
			}
			for j, w := range test.want {
				c := f.Columns()[j]
				if c.Name != w.name || c.Kind != w.kind {
					t.Errorf("column %d: got %q %v, want %q %v", j, c.Name, c.Kind, w.name, w.kind)
					continue
				}
				if !slices.Equal(c.Missing, w.miss) {
					t.Errorf("column %q: missing %v, want %v", c.Name, c.Missing, w.miss)
				}
				if !slices.Equal(c.Str, w.str) {
					t.Errorf("column %q: labels %q, want %q", c.Name, c.Str, w.str)
				}
				if !slices.EqualFunc(c.Num, w.num, sameFloat) {
					t.Errorf("column %q: values %v, want %v", c.Name, c.Num, w.num)
				}
			}
		})
	}
}

func sameFloat(a, b float64) bool { return a == b || (math.IsNaN(a) && math.IsNaN(b)) }

func TestReaderOptions(t *testing.T) {
	in := "a,b\n-99,x\n2, y\n"
	r := NewReader(strings.NewReader(in))
	r.Missing = []string{"-99"}
	r.TrimSpace = false
	f, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := f.Column("a")
	b, _ := f.Column("b")
	if !a.Missing[0] || a.Missing[1] || a.Num[1] != 2 {
		t.Errorf("custom missing token: got %v %v", a.Num, a.Missing)
	}
	if b.Str[1] != " y" {
		t.Errorf("TrimSpace false: got %q, want %q", b.Str[1], " y")
	}

	r = NewReader(strings.NewReader("a,b,c\n1,2,3\n"))
	r.MaxColumns = 2
	r.File = "small.csv"
	_, err = r.Read()
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrTooManyColumns) || pe.Column != 3 || pe.File != "small.csv" {
		t.Errorf("MaxColumns 2: got %v", err)
	}
	if err != nil && !strings.HasPrefix(err.Error(), "small.csv: line 1, column 3") {
		t.Errorf("message %q does not start with file, line and column", err.Error())
	}

	r = NewReader(strings.NewReader("a\n12345\n"))
	r.MaxLineBytes = 4
	if _, err := r.Read(); !errors.Is(err, ErrLineTooLong) {
		t.Errorf("MaxLineBytes 4: got %v", err)
	}
}

// TestRecordTooLongPlace: the limit is hit where a runaway record has got
// to; the message must also name the line where the record started and
// where the quote still open was opened.
func TestRecordTooLongPlace(t *testing.T) {
	rows := strings.Repeat("1,2\n", 20)
	for _, test := range []struct {
		name string
		in   string
		line int      // where the limit is hit
		msg  []string // in the message
		not  []string // not in the message
	}{
		{"runaway quote", "a,b\n\"x,1\n" + rows, 5,
			[]string{"the record started on line 2", "the quoted field opened on line 2 is still open", "closing quote missing"}, nil},
		{"quote opened on the record's second line", "a,b\n\"p\nq\",\"y\n" + rows, 5,
			[]string{"the record started on line 2", "the quoted field opened on line 3 is still open"}, nil},
		{"long unquoted line", "a,b\n" + strings.Repeat("9", 30) + ",1\n", 2,
			nil, []string{"started on line", "quoted field"}},
		{"long quoted field on one line", "a,b\n\"" + strings.Repeat("9", 30) + "\",1\n", 2,
			[]string{"the quoted field opened on line 2 is still open"}, []string{"started on line"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(test.in))
			r.MaxLineBytes = 16
			_, err := r.Read()
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrLineTooLong) {
				t.Fatalf("error %v, want a *ParseError wrapping ErrLineTooLong", err)
			}
			if pe.Line != test.line {
				t.Errorf("line %d, want %d (%v)", pe.Line, test.line, err)
			}
			for _, m := range test.msg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("message %q does not contain %q", err, m)
				}
			}
			for _, m := range test.not {
				if strings.Contains(err.Error(), m) {
					t.Errorf("message %q contains %q", err, m)
				}
			}
		})
	}
}

// TestNotUTF8Warning: a categorical column with a label that is not UTF-8
// (Latin-1 here) gets a warning naming its first line, as a read that
// keeps some rows alone gives it too (even when the label is in a row
// left out); valid UTF-8 and numeric columns get none.
func TestNotUTF8Warning(t *testing.T) {
	nums := make([]string, 200)
	for i := range nums {
		nums[i] = fmt.Sprint(i)
	}
	// More distinct labels than the interning table holds.
	many := make([]string, 2*maxIntern)
	for i := range many {
		many[i] = fmt.Sprintf("s%d", i)
	}
	for _, test := range []struct {
		name string
		in   string
		want []string // in the warning; nil: no warning
	}{
		{"beyond the interning table", "id\n" + strings.Join(many, "\n") + "\nz\xff\n", []string{fmt.Sprintf(`line %d, column 1 ("id")`, 2*maxIntern+2)}},
		{"many valid labels", "id\n" + strings.Join(many, "\n") + "\n", nil},
		{"latin-1", "id\na\ncaf\xe9\ncaf\xe9\nb\xe8s\n", []string{`line 3, column 1 ("id")`, `"caf\xe9" is not UTF-8`, "iconv"}},
		{"after its repeats", "id\na\na\na\nz\xff\n", []string{`line 5, column 1 ("id")`, `"z\xff"`}},
		{"utf-8", "id\nâge\ncafé\n€\n", nil},
		{"numeric", "id\n1\n2\n", nil},
		{"a typo that is not UTF-8", "id\n" + strings.Join(nums, "\n") + "\n\xff\n", []string{`"\xff" is not a number`, `line 202, column 1 ("id"): "\xff" is not UTF-8`}},
	} {
		t.Run(test.name, func(t *testing.T) {
			for _, keep := range []bool{false, true} {
				r := NewReader(strings.NewReader(test.in))
				if keep {
					// Only the first row: the label is in a row left out.
					first := true
					r.Keep = func(string, bool) bool { k := first; first = false; return k }
				}
				f, err := r.Read()
				if err != nil {
					t.Fatal(err)
				}
				c, _ := f.Column("id")
				if test.want == nil {
					if c.Warning != "" {
						t.Errorf("keep %v: warning %q, want none", keep, c.Warning)
					}
					continue
				}
				for _, w := range test.want {
					if !strings.Contains(c.Warning, w) {
						t.Errorf("keep %v: warning %q does not contain %q", keep, c.Warning, w)
					}
				}
			}
		})
	}
}

// TestNumericTypoWarning: a column of numbers but for a few typos is read
// as categorical, as before, with a warning naming the first typo's line.
func TestNumericTypoWarning(t *testing.T) {
	nums := func(n int) []string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf("%d.5", i)
		}
		return s
	}
	with := func(s []string, at map[int]string) string {
		s = slices.Clone(s)
		for i, v := range at {
			s[i] = v
		}
		return "x\n" + strings.Join(s, "\n") + "\n"
	}
	for _, test := range []struct {
		name  string
		in    string
		categ bool     // read with Categorical: x
		want  []string // in the warning; nil: no warning
	}{
		{"one typo among few", "x\n1.5\n2.0\n\"3,1\"\n4.2\n", false,
			[]string{`line 4, column 1 ("x")`, `"3,1" is not a number`, "other 3 values are", "categorical"}},
		{"one typo among many", with(nums(300), map[int]string{120: "1O"}), false,
			[]string{"line 122", `"1O"`, "other 299 values"}},
		{"three typos among 300", with(nums(300), map[int]string{50: "a", 7: "b", 200: "c"}), false,
			[]string{"line 9", `"b"`, "nor are 2 other values", "other 297 values"}},
		{"missing values do not count", "x\n1\nNA\n\n2\n3\nx7\n", false,
			[]string{"line 7", `"x7"`, "other 3 values"}},
		{"two typos among 100 is too many", with(nums(100), map[int]string{3: "a", 4: "b"}), false, nil},
		{"six typos among 1000 is too many", with(nums(1000), map[int]string{1: "a", 2: "b", 3: "c", 4: "d", 5: "e", 6: "f"}), false, nil},
		{"too few numbers", "x\n1\n2\nlow\n", false, nil},
		{"a real factor", "x\na\nb\na\n", false, nil},
		{"numeric column", "x\n1\n2\n3\n", false, nil},
		{"forced categorical", "x\n1.5\n2.0\n\"3,1\"\n4.2\n", true, nil},
	} {
		t.Run(test.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(test.in))
			if test.categ {
				r.Categorical = []string{"x"}
			}
			f, err := r.Read()
			if err != nil {
				t.Fatal(err)
			}
			c, _ := f.Column("x")
			if test.want == nil {
				if c.Warning != "" {
					t.Errorf("warning %q, want none", c.Warning)
				}
				return
			}
			if c.Kind != Categorical {
				t.Errorf("column read as %v, want categorical", c.Kind)
			}
			for _, w := range test.want {
				if !strings.Contains(c.Warning, w) {
					t.Errorf("warning %q does not contain %q", c.Warning, w)
				}
			}
		})
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	const content = "id,y\na,1\nb,0\n"
	plain := filepath.Join(dir, "plain.csv")
	if err := os.WriteFile(plain, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(content))
	zw.Close()
	zipped := filepath.Join(dir, "zipped.csv.data") // detected by magic bytes, not by name
	if err := os.WriteFile(zipped, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{plain, zipped} {
		f, err := ReadFile(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		y, _ := f.Column("y")
		if f.NumRows() != 2 || y.Num[0] != 1 || y.Num[1] != 0 {
			t.Errorf("%s: got %d rows, y = %v", path, f.NumRows(), y.Num)
		}
	}

	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("a,b\n1\n"), 0o644)
	_, err := ReadFile(bad)
	var pe *ParseError
	if !errors.As(err, &pe) || pe.File != "bad.csv" || pe.Line != 2 {
		t.Errorf("bad file: got %v", err)
	}

	// A truncated gzip stream is an error, not a short frame.
	trunc := filepath.Join(dir, "trunc.csv.gz")
	os.WriteFile(trunc, gz.Bytes()[:gz.Len()-6], 0o644)
	if _, err := ReadFile(trunc); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("truncated gzip: got %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestWriteCSVRoundTrip(t *testing.T) {
	nan := math.NaN()
	for _, test := range []struct {
		name string
		cols []*Column
	}{
		{"mixed", []*Column{
			NewNumeric("x", []float64{1, 0.1, -3e-300, 1e21, nan}),
			NewCategorical("g", []string{"a,b", `q"uote`, "", " pad ", "NA"}),
			NewCategorical("h, weird \"name\"", []string{"line\nbreak", "?", "x", "y", "z"}),
		}},
		{"one column with missing", []*Column{
			NewNumeric("y", []float64{nan, 2, nan}),
		}},
	} {
		t.Run(test.name, func(t *testing.T) {
			f, err := NewFrame(test.cols...)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := WriteCSV(&buf, f); err != nil {
				t.Fatal(err)
			}
			g, err := ReadCSV(&buf)
			if err != nil {
				t.Fatalf("reading back %q: %v", buf.String(), err)
			}
			if err := framesEqual(f, g); err != "" {
				t.Error(err)
			}
		})
	}
}

// framesEqual returns a description of the first difference of f and g, or "".
func framesEqual(f, g *Frame) string {
	if !slices.Equal(f.Names(), g.Names()) || f.NumRows() != g.NumRows() {
		return "names or rows differ: " + strings.Join(f.Names(), ",") + " vs " + strings.Join(g.Names(), ",")
	}
	for j, c := range f.Columns() {
		d := g.Columns()[j]
		if c.Kind != d.Kind {
			return "kind of " + c.Name + " differs"
		}
		if !slices.Equal(c.Missing, d.Missing) || !slices.Equal(c.Str, d.Str) || !slices.EqualFunc(c.Num, d.Num, sameFloat) {
			return "values of " + c.Name + " differ"
		}
	}
	return ""
}

func TestWriteCSVText(t *testing.T) {
	f, err := NewFrame(
		NewNumeric("id", []float64{8222157, -3, 1e15, 0.1, math.NaN()}),
		NewCategorical("g", []string{"x", "a,b", "NA", "", "ok"}),
	)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, f); err != nil {
		t.Fatal(err)
	}
	want := "id,g\n8222157,x\n-3,\"a,b\"\n1e+15,\"NA\"\n0.1,\n,ok\n"
	if got := buf.String(); got != want {
		t.Errorf("WriteCSV wrote\n%q\nwant\n%q", got, want)
	}
}

// TestWriteCSVAllocs: WriteCSV allocates nothing per row (a fresh buffer
// for each number had cost a third of its time on 10^6 subjects).
func TestWriteCSVAllocs(t *testing.T) {
	for _, n := range []int{10, 10000} {
		x, id := make([]float64, n), make([]string, n)
		for i := range x {
			x[i] = float64(i) / 7
			id[i] = fmt.Sprintf("s%d", i)
		}
		f, err := NewFrame(NewNumeric("x", x), NewCategorical("id", id))
		if err != nil {
			t.Fatal(err)
		}
		if a := testing.AllocsPerRun(5, func() { WriteCSV(io.Discard, f) }); a > 5 {
			t.Errorf("%d rows: %v allocations, want at most 5", n, a)
		}
	}
}

func TestWriteCSVNonFinite(t *testing.T) {
	c := &Column{Name: "x", Kind: Numeric, Num: []float64{math.Inf(1)}, Missing: []bool{false}}
	f, err := NewFrame(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteCSV(io.Discard, f); err == nil {
		t.Error("no error writing +Inf")
	}
}

func TestIsDecimal(t *testing.T) {
	for _, test := range []struct {
		s    string
		want bool
	}{
		{"0", true}, {"-1", true}, {"+2.", true}, {".5", true}, {"1e5", true}, {"1E-5", true},
		{"250.83", true}, {"007", true},
		{"", false}, {".", false}, {"-", false}, {"e5", false}, {"1e", false}, {"1e+", false},
		{"0x10", false}, {"1_000", false}, {"NaN", false}, {"Inf", false}, {"1.2.3", false},
		{"V45", false}, {" 1", false},
	} {
		if got := isDecimal(test.s); got != test.want {
			t.Errorf("isDecimal(%q) = %v, want %v", test.s, got, test.want)
		}
	}
}

func FuzzReadCSV(f *testing.F) {
	for _, s := range []string{
		"a,b\n1,2\n",
		"id,g\r\n1,\"x,y\"\r\n2,NA\r\n",
		"\xef\xbb\xbfa\n?\n3\n",
		"a,b\n\"p\nq\",1\n",
		"a,a\n1,2\n",
		"x\nNaN\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		r := NewReader(bytes.NewReader(in))
		r.MaxLineBytes = 1 << 12
		r.MaxColumns = 64
		fr, err := r.Read()
		// A byte at a time, the parser never takes the buffered runs of
		// an unquoted field: the same frame or the same error.
		r1 := NewReader(iotest.OneByteReader(bytes.NewReader(in)))
		r1.MaxLineBytes = 1 << 12
		r1.MaxColumns = 64
		fr1, err1 := r1.Read()
		switch {
		case (err == nil) != (err1 == nil):
			t.Fatalf("read whole: %v; a byte at a time: %v", err, err1)
		case err != nil && err.Error() != err1.Error():
			t.Fatalf("read whole: %v; a byte at a time: %v", err, err1)
		case err == nil:
			if msg := framesEqual(fr, fr1); msg != "" {
				t.Fatalf("read whole and a byte at a time: %s", msg)
			}
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %T is not a *ParseError: %v", err, err)
			}
			if pe.Line < 1 || pe.Column < 0 || pe.Column > 65 {
				t.Fatalf("implausible place in %v", err)
			}
			return
		}
		if fr.NumRows() < 1 || fr.NumCols() < 1 || fr.NumCols() > 64 {
			t.Fatalf("implausible shape %d x %d", fr.NumRows(), fr.NumCols())
		}
		// Labels are the fields' text however late a column turned
		// categorical: the same as when every column is named categorical.
		rc := NewReader(bytes.NewReader(in))
		rc.MaxLineBytes = 1 << 12
		rc.MaxColumns = 64
		rc.Categorical = fr.Names()
		text, err := rc.Read()
		if err != nil {
			t.Fatalf("read as categorical: %v", err)
		}
		for j, c := range fr.Columns() {
			if d := text.Columns()[j]; c.Kind == Categorical && (!slices.Equal(c.Str, d.Str) || !slices.Equal(c.Missing, d.Missing)) {
				t.Fatalf("column %q: labels %q, read as categorical %q", c.Name, c.Str, d.Str)
			}
		}
		// Whatever was read must survive a round trip, up to categorical
		// columns of numbers becoming numeric.
		var buf bytes.Buffer
		if err := WriteCSV(&buf, fr); err != nil {
			t.Fatal(err)
		}
		written := buf.String()
		g, err := ReadCSV(&buf)
		if err != nil {
			t.Fatalf("reading back: %v", err)
		}
		for _, c := range fr.Columns() {
			d, _ := g.Column(c.Name)
			if c.Kind == Categorical && d.Kind == Numeric {
				if err := g.SetCategorical(c.Name); err != nil {
					t.Fatal(err)
				}
			}
		}
		if msg := framesEqual(fr, g); msg != "" {
			// Labels such as "1.0" come back as "1" after the numeric detour.
			for _, c := range fr.Columns() {
				d, _ := g.Column(c.Name)
				if c.Kind == Categorical && !slices.Equal(c.Str, d.Str) && allDecimal(c) {
					return
				}
			}
			t.Fatalf("%s\nwritten:\n%q", msg, written)
		}
	})
}

func allDecimal(c *Column) bool {
	for i, s := range c.Str {
		if !c.Missing[i] && !isDecimal(s) {
			return false
		}
	}
	return true
}

// BenchmarkReadCSV reads a synthetic file shaped like the diabetes data:
// identifiers, numbers and repeated labels.
func BenchmarkReadCSV(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("id,patient,x,y,race,code,flag\r\n")
	races := []string{"Caucasian", "AfricanAmerican", "?", "Other"}
	for i := range 20000 {
		fmt.Fprintf(&sb, "%d,%d,%g,%d,%s,%d.%d,%s\r\n", 1000000+i, 5000+i/3, float64(i)/7, i%14, races[i%4], 100+i%800, i%10, "No")
	}
	in := sb.String()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := ReadCSV(strings.NewReader(in)); err != nil {
			b.Fatal(err)
		}
	}
}
