// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquet_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	pqgo "github.com/parquet-go/parquet-go"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/parquet"
)

// sameFrame fails unless got and want have the same columns, kinds,
// missing flags and values, numbers compared bit for bit.
func sameFrame(t *testing.T, got, want *datasets.Frame) {
	t.Helper()
	if g, w := got.Names(), want.Names(); strings.Join(g, "\x00") != strings.Join(w, "\x00") {
		t.Fatalf("columns %q, want %q", g, w)
	}
	if got.NumRows() != want.NumRows() {
		t.Fatalf("%d rows, want %d", got.NumRows(), want.NumRows())
	}
	for _, w := range want.Columns() {
		g, _ := got.Column(w.Name)
		sameColumn(t, g, w)
	}
}

func sameColumn(t *testing.T, g, w *datasets.Column) {
	t.Helper()
	if g.Kind != w.Kind {
		t.Fatalf("column %q is %v, want %v", w.Name, g.Kind, w.Kind)
	}
	if len(g.Missing) != len(w.Missing) {
		t.Fatalf("column %q: %d missing flags, want %d", w.Name, len(g.Missing), len(w.Missing))
	}
	for i := range w.Missing {
		if g.Missing[i] != w.Missing[i] {
			t.Fatalf("column %q, row %d: missing %v, want %v", w.Name, i+1, g.Missing[i], w.Missing[i])
		}
		if w.Kind == datasets.Numeric {
			if math.Float64bits(g.Num[i]) != math.Float64bits(w.Num[i]) {
				t.Fatalf("column %q, row %d: %v, want %v", w.Name, i+1, g.Num[i], w.Num[i])
			}
		} else if g.Str[i] != w.Str[i] {
			t.Fatalf("column %q, row %d: %q, want %q", w.Name, i+1, g.Str[i], w.Str[i])
		}
	}
}

func nan() float64 { return math.NaN() }

// parse is strconv.ParseFloat, the CSV reader's conversion.
func parse(s string) float64 {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		panic(err)
	}
	return v
}

// fixed returns the integer s as a size-byte big-endian two's complement
// fixed-length value.
func fixed(size int, s string) pqgo.Value {
	v, _ := new(big.Int).SetString(s, 10)
	if v.Sign() < 0 {
		v.Add(v, new(big.Int).Lsh(big.NewInt(1), uint(8*size)))
	}
	return pqgo.FixedLenByteArrayValue(v.FillBytes(make([]byte, size)))
}

// TestKinds writes one column of each Parquet type the reader handles and
// checks the kind, values and missing flags against what the CSV reader
// gives for the same data's text: numbers numeric (decimals as
// strconv.ParseFloat reads their text), dates and timestamps labels,
// nulls missing, a column of nulls numeric.
func TestKinds(t *testing.T) {
	opt := pqgo.Optional
	leaf := pqgo.Leaf
	day := func(s string) any {
		d, _ := time.Parse("2006-01-02", s)
		return int32(d.Unix() / 86400)
	}
	uuid := [16]byte{0x12, 0x3e, 0x45, 0x67, 0xe8, 0x9b, 0x12, 0xd3, 0xa4, 0x56, 0x42, 0x66, 0x14, 0x17, 0x40, 0x00}
	for _, tc := range []struct {
		name string
		node pqgo.Node
		vals []any
		num  []float64 // want, for a numeric column
		str  []string  // want, for a categorical column
		miss []bool
	}{
		{"int32 required", leaf(pqgo.Int32Type), []any{int32(1), int32(-2), int32(1 << 30)},
			[]float64{1, -2, 1 << 30}, nil, []bool{false, false, false}},
		{"int64 with nulls", opt(leaf(pqgo.Int64Type)), []any{int64(7), nil, int64(-9007199254740992)},
			[]float64{7, nan(), -9007199254740992}, nil, []bool{false, true, false}},
		{"int8", opt(pqgo.Int(8)), []any{int32(-128), int32(127), nil},
			[]float64{-128, 127, nan()}, nil, []bool{false, false, true}},
		{"uint8", pqgo.Uint(8), []any{uint32(0), uint32(255)},
			[]float64{0, 255}, nil, []bool{false, false}},
		{"uint32", pqgo.Uint(32), []any{uint32(0), uint32(math.MaxUint32), uint32(5)},
			[]float64{0, math.MaxUint32, 5}, nil, []bool{false, false, false}},
		{"uint64", opt(pqgo.Uint(64)), []any{uint64(0), nil, uint64(1 << 53), uint64(5)},
			[]float64{0, nan(), 1 << 53, 5}, nil, []bool{false, true, false, false}},
		{"float", opt(leaf(pqgo.FloatType)), []any{float32(0.25), nil, float32(0.1)},
			[]float64{0.25, nan(), float64(float32(0.1))}, nil, []bool{false, true, false}},
		{"double", opt(leaf(pqgo.DoubleType)), []any{1.5, nil, -0.1, 1e300},
			[]float64{1.5, nan(), -0.1, 1e300}, nil, []bool{false, true, false, false}},
		{"decimal int32", opt(pqgo.Decimal(2, 9, pqgo.Int32Type)), []any{int32(123), int32(-5), nil},
			[]float64{parse("1.23"), parse("-0.05"), nan()}, nil, []bool{false, false, true}},
		{"decimal int64", pqgo.Decimal(3, 18, pqgo.Int64Type), []any{int64(1001), int64(-7)},
			[]float64{parse("1.001"), parse("-0.007")}, nil, []bool{false, false}},
		{"decimal int64 past 2^53", pqgo.Decimal(3, 18, pqgo.Int64Type), []any{int64(9007199254740993)},
			[]float64{parse("9007199254740.993")}, nil, []bool{false}},
		{"decimal fixed", opt(pqgo.Decimal(1, 21, pqgo.FixedLenByteArrayType(9))),
			[]any{fixed(9, "-15"), nil, fixed(9, "123456789012345678901")},
			[]float64{-1.5, nan(), parse("12345678901234567890.1")}, nil, []bool{false, true, false}},
		{"decimal bytes", pqgo.Decimal(2, 10, pqgo.ByteArrayType), []any{[]byte{0x04, 0xd2}, []byte{0xff}, []byte{0x00, 0x80}},
			[]float64{parse("12.34"), parse("-0.01"), parse("1.28")}, nil, []bool{false, false, false}},
		{"all null double", opt(leaf(pqgo.DoubleType)), []any{nil, nil},
			[]float64{nan(), nan()}, nil, []bool{true, true}},
		{"all null string", opt(pqgo.String()), []any{nil, nil},
			[]float64{nan(), nan()}, nil, []bool{true, true}},
		{"all null or empty string", opt(pqgo.String()), []any{nil, ""},
			[]float64{nan(), nan()}, nil, []bool{true, true}},
		{"all null date", opt(pqgo.Date()), []any{nil, nil, nil},
			[]float64{nan(), nan(), nan()}, nil, []bool{true, true, true}},
		{"string", opt(pqgo.String()), []any{"a", nil, "", "NA", "b, \"c\"\n"},
			nil, []string{"a", "", "", "NA", "b, \"c\"\n"}, []bool{false, true, true, false, false}},
		{"dictionary string", opt(pqgo.Encoded(pqgo.String(), &pqgo.RLEDictionary)), []any{"x", "y", nil, "x", ""},
			nil, []string{"x", "y", "", "x", ""}, []bool{false, false, true, false, true}},
		{"enum", pqgo.Enum(), []any{"lo", "hi"}, nil, []string{"lo", "hi"}, []bool{false, false}},
		{"bytes", opt(leaf(pqgo.ByteArrayType)), []any{[]byte("raw"), nil}, nil, []string{"raw", ""}, []bool{false, true}},
		{"boolean", opt(leaf(pqgo.BooleanType)), []any{true, false, nil, true},
			nil, []string{"TRUE", "FALSE", "", "TRUE"}, []bool{false, false, true, false}},
		{"date", opt(pqgo.Date()), []any{day("2024-02-29"), nil, day("1969-12-31")},
			nil, []string{"2024-02-29", "", "1969-12-31"}, []bool{false, true, false}},
		{"timestamp millis utc", pqgo.Timestamp(pqgo.Millisecond), []any{int64(1709214300250), int64(0)},
			nil, []string{"2024-02-29 13:45:00.25Z", "1970-01-01 00:00:00Z"}, []bool{false, false}},
		{"timestamp micros local", opt(pqgo.TimestampAdjusted(pqgo.Microsecond, false)), []any{int64(1709214300000001), nil},
			nil, []string{"2024-02-29 13:45:00.000001", ""}, []bool{false, true}},
		{"timestamp nanos", pqgo.TimestampAdjusted(pqgo.Nanosecond, false), []any{int64(1)},
			nil, []string{"1970-01-01 00:00:00.000000001"}, []bool{false}},
		{"uuid", opt(pqgo.UUID()), []any{uuid, nil}, nil, []string{"123e4567-e89b-12d3-a456-426614174000", ""}, []bool{false, true}},
		{"fixed", leaf(pqgo.FixedLenByteArrayType(3)), []any{pqgo.FixedLenByteArrayValue([]byte("abc")), pqgo.FixedLenByteArrayValue([]byte("xyz"))},
			nil, []string{"abc", "xyz"}, []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kinds.parquet")
			writeParquet(t, path, []pcol{{name: "v", node: tc.node, vals: tc.vals}}, 0)
			fr, err := parquet.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := fr.Column("v")
			want := &datasets.Column{Name: "v", Kind: datasets.Numeric, Num: tc.num, Missing: tc.miss}
			if tc.str != nil {
				want = &datasets.Column{Name: "v", Kind: datasets.Categorical, Str: tc.str, Missing: tc.miss}
			}
			sameColumn(t, got, want)
		})
	}
}

// TestKindErrors: integers past 2^53, NaN and infinite numbers and the
// types not read are errors naming the column and, for values, the row,
// with or without a dictionary and nulls before the value.
func TestKindErrors(t *testing.T) {
	opt := pqgo.Optional
	dictInt := pqgo.Encoded(pqgo.Leaf(pqgo.Int64Type), &pqgo.RLEDictionary)
	for _, tc := range []struct {
		name string
		node pqgo.Node
		vals []any
		is   error
		want string
	}{
		{"int64", pqgo.Leaf(pqgo.Int64Type), []any{int64(1), int64(1<<53 + 1)}, parquet.ErrInexact, `row 2, column "v": integer beyond 2^53: 9007199254740993`},
		{"int64 negative, nulls", opt(pqgo.Leaf(pqgo.Int64Type)), []any{nil, int64(2), nil, int64(-1<<53 - 3)}, parquet.ErrInexact, `row 4, column "v": integer beyond 2^53: -9007199254740995`},
		{"int64 dictionary", opt(dictInt), []any{int64(5), nil, int64(5), int64(1 << 60), int64(5)}, parquet.ErrInexact, `row 4, column "v": integer beyond 2^53: 1152921504606846976`},
		{"uint64", pqgo.Uint(64), []any{uint64(3), uint64(math.MaxUint64)}, parquet.ErrInexact, `row 2, column "v": integer beyond 2^53: 18446744073709551615`},
		{"double NaN, nulls", opt(pqgo.Leaf(pqgo.DoubleType)), []any{nil, 1.0, math.NaN()}, datasets.ErrNonFinite, `row 3, column "v": non-finite`},
		{"float Inf", pqgo.Leaf(pqgo.FloatType), []any{float32(1), float32(math.Inf(1))}, datasets.ErrNonFinite, `row 2, column "v": non-finite`},
		{"int96", pqgo.Leaf(pqgo.Int96Type), []any{nil}, parquet.ErrUnsupported, `column "v": unsupported column: type INT96`},
		{"time", pqgo.Time(pqgo.Millisecond), []any{int32(1)}, parquet.ErrUnsupported, `column "v": unsupported column: type`},
		{"list", pqgo.Repeated(pqgo.Leaf(pqgo.DoubleType)), []any{nil}, parquet.ErrUnsupported, `column "v": unsupported column: nested or repeated column`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.parquet")
			writeParquet(t, path, []pcol{{name: "v", node: tc.node, vals: tc.vals}}, 0)
			_, err := parquet.ReadFile(path)
			var e *parquet.Error
			if !errors.Is(err, tc.is) || !errors.As(err, &e) || e.File != path {
				t.Fatalf("error %v, want a *parquet.Error for %s wrapping %v", err, path, tc.is)
			}
			if !strings.HasPrefix(err.Error(), path+": "+tc.want) {
				t.Errorf("error\n%s\nwant it to start\n%s: %s", err, path, tc.want)
			}
		})
	}
}

// TestDuckDB reads files written by DuckDB (testdata/duckdb/gen.mjs) and
// compares them with the CSV files DuckDB wrote from the same tables, read
// by the CSV reader, bit for bit. The one difference is the labels of a
// boolean: DuckDB's CSV says true and false, this reader TRUE and FALSE.
func TestDuckDB(t *testing.T) {
	for _, tc := range []struct{ parquet, csv string }{
		{"sim100.parquet", "sim100.csv"},
		{"types.parquet", "types.csv"},
	} {
		t.Run(tc.parquet, func(t *testing.T) {
			got, err := parquet.ReadFile(filepath.Join("testdata", tc.parquet))
			if err != nil {
				t.Fatal(err)
			}
			want, err := datasets.ReadFile(filepath.Join("testdata", tc.csv))
			if err != nil {
				t.Fatal(err)
			}
			if flag, ok := want.Column("flag"); ok {
				for i, s := range flag.Str {
					flag.Str[i] = strings.ToUpper(s)
				}
			}
			sameFrame(t, got, want)
		})
	}
	// The kinds that types.parquet's columns are to have, so that the
	// comparison above cannot pass by both readers going wrong alike.
	fr, err := parquet.ReadFile(filepath.Join("testdata", "types.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	for name, kind := range map[string]datasets.Kind{"id": datasets.Numeric, "subject": datasets.Categorical,
		"small": datasets.Numeric, "count": datasets.Numeric, "price": datasets.Numeric, "amount": datasets.Numeric,
		"flag": datasets.Categorical, "day": datasets.Categorical, "at": datasets.Categorical, "uid": datasets.Categorical,
		"label": datasets.Categorical, "late": datasets.Numeric} {
		if c, _ := fr.Column(name); c.Kind != kind {
			t.Errorf("types.parquet: column %s is %v, want %v", name, c.Kind, kind)
		}
	}
}

// TestDuckDBRowGroups reads a file of three row groups written by DuckDB
// (testdata/duckdb) against the values it was written from.
func TestDuckDBRowGroups(t *testing.T) {
	got, err := parquet.ReadFile(filepath.Join("testdata", "groups.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	const n = 5000
	ids, x, g := make([]float64, n), make([]float64, n), make([]string, n)
	for i := range n {
		ids[i], x[i], g[i] = float64(i), float64(i)*0.5, fmt.Sprintf("g%d", i%7)
		if i%10 == 0 {
			x[i] = math.NaN()
		}
	}
	want, err := datasets.NewFrame(datasets.NewNumeric("i", ids), datasets.NewCategorical("g", g), datasets.NewNumeric("x", x))
	if err != nil {
		t.Fatal(err)
	}
	sameFrame(t, got, want)
}

// simFrame returns a simulated frame with missing values of both kinds.
func simFrame(t *testing.T, subjects int) *datasets.Frame {
	t.Helper()
	fr, _, err := datasets.Simulate(datasets.SimSpec{
		Family: "bernoulli", Subjects: subjects, Obs: 7,
		Beta: []float64{-1, 0.5, -0.5, 1}, RECov: [][]float64{{1}}, Seed: 3,
	})
	if err != nil {
		t.Fatal(err)
	}
	n := fr.NumRows()
	lab := make([]string, n)
	for i := range lab {
		if i%17 != 3 {
			lab[i] = fmt.Sprintf("site %c", 'A'+i%5)
		}
	}
	if err := fr.Add(datasets.NewCategorical("site", lab)); err != nil {
		t.Fatal(err)
	}
	x, _ := fr.Column("x1")
	for i := 5; i < n; i += 23 {
		x.Num[i], x.Missing[i] = math.NaN(), true
	}
	return fr
}

// readCSV reads fr back from the CSV datasets.WriteCSV writes.
func readCSV(t *testing.T, fr *datasets.Frame) *datasets.Frame {
	t.Helper()
	var buf bytes.Buffer
	if err := datasets.WriteCSV(&buf, fr); err != nil {
		t.Fatal(err)
	}
	back, err := datasets.ReadCSV(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// TestLikeCSV writes a frame as Parquet in several layouts and checks that
// each reads back to the frame that the same data give as CSV.
func TestLikeCSV(t *testing.T) {
	fr := simFrame(t, 300) // 2100 rows
	want := readCSV(t, fr)
	for _, tc := range []struct {
		name     string
		rowGroup int
		dict     bool
		opts     []pqgo.WriterOption
	}{
		{"one row group", 0, false, nil},
		{"row groups of 500", 500, false, nil},
		{"dictionary, row groups of 999", 999, true, nil},
		{"small pages", 700, true, []pqgo.WriterOption{pqgo.PageBufferSize(512)}},
		{"zstd, data page v2", 0, false, []pqgo.WriterOption{pqgo.Compression(&pqgo.Zstd), pqgo.DataPageVersion(2)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "sim.parquet")
			writeFrame(t, path, fr, tc.rowGroup, tc.dict, tc.opts...)
			got, err := parquet.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			sameFrame(t, got, want)
		})
	}
}

// TestRowWithinFile: in a directory, an error names the file and the row
// within that file, wherever the file and the row group.
func TestRowWithinFile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sizes   []int // rows of each file
		file    int   // the file with the bad value, 0-based
		row     int   // its 1-based row there
		group   int   // rows per row group
		missing bool  // nulls in the column
	}{
		{"first file", []int{30, 40, 50}, 0, 7, 0, false},
		{"second file", []int{30, 40, 50}, 1, 7, 0, false},
		{"third file, third row group", []int{30, 40, 50}, 2, 45, 20, false},
		{"second file, nulls", []int{30, 40, 50}, 1, 40, 16, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			var bad string
			for k, n := range tc.sizes {
				x := make([]any, n)
				for i := range x {
					if !tc.missing || i%3 != 0 {
						x[i] = float64(i)
					}
				}
				if k == tc.file {
					x[tc.row-1] = math.Inf(1)
				}
				name := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", k))
				if k == tc.file {
					bad = name
				}
				writeParquet(t, name, []pcol{{name: "x", node: pqgo.Optional(pqgo.Leaf(pqgo.DoubleType)), vals: x}}, tc.group)
			}
			_, err := parquet.ReadFile(dir)
			var e *parquet.Error
			if !errors.As(err, &e) || !errors.Is(err, datasets.ErrNonFinite) {
				t.Fatalf("error %v, want a *parquet.Error wrapping ErrNonFinite", err)
			}
			if e.File != bad || e.Row != tc.row || e.Column != "x" {
				t.Errorf("error %v names %s, row %d, column %q; want %s, row %d, column x", err, e.File, e.Row, e.Column, bad, tc.row)
			}
		})
	}
}

// TestDirectoryKinds: files of a directory may differ in type within a
// kind (INT32 and DOUBLE, optional and required), names starting with "."
// or "_" are skipped, and a kind that differs names the file and column.
func TestDirectoryKinds(t *testing.T) {
	dbl := pqgo.Optional(pqgo.Leaf(pqgo.DoubleType))
	str := pqgo.Optional(pqgo.String())
	first := []pcol{{"x", dbl, []any{1.5, nil}}, {"g", str, []any{"a", nil}}}
	for _, tc := range []struct {
		name   string
		second []pcol
		x      []float64 // want, nil for an error
		msg    string
	}{
		{"int32 and required", []pcol{{"x", pqgo.Leaf(pqgo.Int32Type), []any{int32(2)}}, {"g", pqgo.String(), []any{"b"}}}, []float64{1.5, nan(), 2}, ""},
		{"decimal and uint", []pcol{{"x", pqgo.Decimal(1, 9, pqgo.Int32Type), []any{int32(25)}}, {"g", pqgo.Enum(), []any{"b"}}}, []float64{1.5, nan(), 2.5}, ""},
		{"kind", []pcol{{"x", str, []any{"1"}}, {"g", str, []any{"a"}}}, nil, `column 1 is "x" of strings`},
		{"date for string", []pcol{{"x", dbl, []any{1.0}}, {"g", pqgo.Date(), []any{int32(1)}}}, nil, `column 2 is "g" of dates`},
		{"name", []pcol{{"x", dbl, []any{1.0}}, {"h", str, []any{"a"}}}, nil, `column 2 is "h"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeParquet(t, filepath.Join(dir, "a.parquet"), first, 0)
			second := filepath.Join(dir, "b.parquet")
			writeParquet(t, second, tc.second, 0)
			for _, other := range []string{"_SUCCESS", "_metadata.parquet", ".a.parquet.crc", ".hidden.parquet"} {
				if err := os.WriteFile(filepath.Join(dir, other), []byte("not parquet"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fr, err := parquet.ReadFile(dir)
			if tc.x == nil {
				var e *parquet.Error
				if !errors.As(err, &e) || !errors.Is(err, parquet.ErrSchema) || e.File != second || !strings.Contains(err.Error(), tc.msg) {
					t.Fatalf("error %v, want one for %s wrapping ErrSchema saying %s", err, second, tc.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			x, _ := fr.Column("x")
			sameColumn(t, x, datasets.NewNumeric("x", tc.x))
		})
	}
}

// TestCorrupt: a file the decoder cannot read, including one on which it
// panics, is an error wrapping ErrCorrupt that names the file, through
// ReadFile and Read.
func TestCorrupt(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.parquet")
	writeFrame(t, good, simFrame(t, 50), 100, true, pqgo.Compression(&pqgo.Snappy))
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	// The footer's length, the 4 bytes before the closing "PAR1", made
	// to point before the file's start.
	longFooter := bytes.Clone(raw)
	longFooter[len(raw)-8], longFooter[len(raw)-7], longFooter[len(raw)-6], longFooter[len(raw)-5] = 0xff, 0xff, 0xff, 0x7f
	trashed := bytes.Clone(raw)
	for i := 4; i < len(raw)/2; i++ {
		trashed[i] = 0xff
	}
	pages := bytes.Clone(raw) // page bytes scrambled, headers and footer kept
	for i := 40; i < len(raw)/2; i += 7 {
		pages[i] ^= 0x5a
	}
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"text", []byte("id,y\n1,0\n")},
		{"zero", nil},
		{"cut short", raw[:len(raw)-20]},
		{"long footer", longFooter},
		{"trashed", trashed},
		{"scrambled pages", pages},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "_")+".parquet")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := parquet.ReadFile(path)
			var e *parquet.Error
			if !errors.Is(err, parquet.ErrCorrupt) || !errors.As(err, &e) || e.File != path {
				t.Errorf("ReadFile: error %v, want a *parquet.Error for %s wrapping ErrCorrupt", err, path)
			}
			_, err = parquet.Read(t.Context(), bytes.NewReader(tc.data), int64(len(tc.data)), "mem")
			if !errors.Is(err, parquet.ErrCorrupt) || !errors.As(err, &e) || e.File != "mem" {
				t.Errorf("Read: error %v, want a *parquet.Error for mem wrapping ErrCorrupt", err)
			}
		})
	}
}

// TestAllocatesOnce: reading a directory of files allocates about the
// final columns once, not growing them file by file: the bytes allocated
// while reading are within 1.35 times (the rest is the decoder's pages) the columns'.
func TestAllocatesOnce(t *testing.T) {
	fr := simFrame(t, 20000) // 140,000 rows
	dir := t.TempDir()
	n := fr.NumRows()
	for k := range 3 {
		idx := make([]int, 0, n/3)
		for i := k * n / 3; i < (k+1)*n/3; i++ {
			idx = append(idx, i)
		}
		writeFrame(t, filepath.Join(dir, fmt.Sprintf("part-%d.parquet", k)), fr.Rows(idx), 20000, true)
	}
	// The labels are shared among rows; count their headers.
	columns := 0
	for _, c := range fr.Columns() {
		columns += len(c.Missing) + 8*len(c.Num) + 16*len(c.Str)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	got, err := parquet.ReadFile(dir)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if got.NumRows() != n {
		t.Fatalf("%d rows, want %d", got.NumRows(), n)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("allocated %d bytes for %d bytes of columns (%.2fx)", alloc, columns, float64(alloc)/float64(columns))
	if float64(alloc) > 1.35*float64(columns) {
		t.Errorf("allocated %d bytes for %d bytes of columns (%.2fx)", alloc, columns, float64(alloc)/float64(columns))
	}
}
