// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquet_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/big"
	"os"
	"path/filepath"
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
	if g, w := got.Names(), want.Names(); !equal(g, w) {
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

func equal(a, b []string) bool {
	return strings.Join(a, "\x00") == strings.Join(b, "\x00")
}

func nan() float64 { return math.NaN() }

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
// checks the kind, values and missing flags read.
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
		{"int64 with nulls", opt(leaf(pqgo.Int64Type)), []any{int64(7), nil, int64(-9007199254740993)},
			[]float64{7, nan(), -9007199254740992}, nil, []bool{false, true, false}},
		{"int8", opt(pqgo.Int(8)), []any{int32(-128), int32(127), nil},
			[]float64{-128, 127, nan()}, nil, []bool{false, false, true}},
		{"uint32", pqgo.Uint(32), []any{uint32(0), uint32(math.MaxUint32), uint32(5)},
			[]float64{0, math.MaxUint32, 5}, nil, []bool{false, false, false}},
		{"uint64", pqgo.Uint(64), []any{uint64(0), uint64(math.MaxUint64), uint64(5)},
			[]float64{0, math.MaxUint64, 5}, nil, []bool{false, false, false}},
		{"float", opt(leaf(pqgo.FloatType)), []any{float32(0.25), nil, float32(0.1)},
			[]float64{0.25, nan(), float64(float32(0.1))}, nil, []bool{false, true, false}},
		{"double", opt(leaf(pqgo.DoubleType)), []any{1.5, nil, -0.1, 1e300},
			[]float64{1.5, nan(), -0.1, 1e300}, nil, []bool{false, true, false, false}},
		{"decimal int32", opt(pqgo.Decimal(2, 9, pqgo.Int32Type)), []any{int32(123), int32(-5), nil},
			[]float64{1.23, -0.05, nan()}, nil, []bool{false, false, true}},
		{"decimal int64", pqgo.Decimal(3, 18, pqgo.Int64Type), []any{int64(1001), int64(-7)},
			[]float64{1.001, -0.007}, nil, []bool{false, false}},
		{"decimal int64 past 2^53", pqgo.Decimal(3, 18, pqgo.Int64Type), []any{int64(9007199254740993)},
			[]float64{parse("9007199254740.993")}, nil, []bool{false}},
		{"decimal fixed", opt(pqgo.Decimal(1, 21, pqgo.FixedLenByteArrayType(9))),
			[]any{fixed(9, "-15"), nil, fixed(9, "123456789012345678901")},
			[]float64{-1.5, nan(), parse("12345678901234567890.1")}, nil, []bool{false, true, false}},
		{"decimal bytes", pqgo.Decimal(2, 10, pqgo.ByteArrayType), []any{[]byte{0x04, 0xd2}, []byte{0xff}, []byte{0x00, 0x80}},
			[]float64{12.34, -0.01, 1.28}, nil, []bool{false, false, false}},
		{"all null double", opt(leaf(pqgo.DoubleType)), []any{nil, nil},
			[]float64{nan(), nan()}, nil, []bool{true, true}},
		{"all null string", opt(pqgo.String()), []any{nil, nil},
			[]float64{nan(), nan()}, nil, []bool{true, true}},
		{"string", opt(pqgo.String()), []any{"a", nil, "", "NA", "b, \"c\"\n"},
			nil, []string{"a", "", "", "NA", "b, \"c\"\n"}, []bool{false, true, true, false, false}},
		{"dictionary string", opt(pqgo.Encoded(pqgo.String(), &pqgo.RLEDictionary)), []any{"x", "y", nil, "x", ""},
			nil, []string{"x", "y", "", "x", ""}, []bool{false, false, true, false, true}},
		{"numbers as strings", pqgo.String(), []any{"1", "2", "3"},
			nil, []string{"1", "2", "3"}, []bool{false, false, false}},
		{"enum", pqgo.Enum(), []any{"lo", "hi"}, nil, []string{"lo", "hi"}, []bool{false, false}},
		{"bytes", opt(leaf(pqgo.ByteArrayType)), []any{[]byte("raw"), nil}, nil, []string{"raw", ""}, []bool{false, true}},
		{"boolean", opt(leaf(pqgo.BooleanType)), []any{true, false, nil, true},
			nil, []string{"true", "false", "", "true"}, []bool{false, false, true, false}},
		{"date", opt(pqgo.Date()), []any{day("2024-02-29"), nil, day("1969-12-31")},
			nil, []string{"2024-02-29", "", "1969-12-31"}, []bool{false, true, false}},
		{"timestamp millis utc", pqgo.Timestamp(pqgo.Millisecond), []any{int64(1709214300250), int64(0)},
			nil, []string{"2024-02-29 13:45:00.25Z", "1970-01-01 00:00:00Z"}, []bool{false, false}},
		{"timestamp micros local", pqgo.TimestampAdjusted(pqgo.Microsecond, false), []any{int64(1709214300000001)},
			nil, []string{"2024-02-29 13:45:00.000001"}, []bool{false}},
		{"uuid", opt(pqgo.UUID()), []any{uuid, nil}, nil, []string{"123e4567-e89b-12d3-a456-426614174000", ""}, []bool{false, true}},
		{"fixed", leaf(pqgo.FixedLenByteArrayType(3)), []any{[]byte("abc"), []byte("xyz")},
			nil, []string{"abc", "xyz"}, []bool{false, false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "kinds.parquet")
			vals := make([]any, len(tc.vals))
			for i, v := range tc.vals {
				if b, ok := v.([]byte); ok && tc.name == "fixed" {
					v = pqgo.FixedLenByteArrayValue(b)
				}
				vals[i] = v
			}
			writeParquet(t, path, []pcol{{name: "v", node: tc.node, vals: vals}}, 0)
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

// simFrame returns a simulated longitudinal frame: a numeric subject id,
// a 0/1 outcome, covariates, and a categorical column, with some missing
// values of both kinds.
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
	visit := make([]float64, n)
	lab := make([]string, n)
	for i := range lab {
		visit[i] = float64(i%7 + 1)
		if i%17 != 3 {
			lab[i] = fmt.Sprintf("site %c", 'A'+i%5)
		}
	}
	if err := fr.Add(datasets.NewNumeric("visit", visit)); err != nil {
		t.Fatal(err)
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
func readCSV(t *testing.T, fr *datasets.Frame, categorical ...string) *datasets.Frame {
	t.Helper()
	var buf bytes.Buffer
	if err := datasets.WriteCSV(&buf, fr); err != nil {
		t.Fatal(err)
	}
	r := datasets.NewReader(&buf)
	r.Categorical = categorical
	back, err := r.Read()
	if err != nil {
		t.Fatal(err)
	}
	return back
}

// TestLikeCSV writes a frame as Parquet in several layouts and checks that
// each reads back to the frame that the same data give as CSV, bit for
// bit.
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
		{"snappy", 1000, true, []pqgo.WriterOption{pqgo.Compression(&pqgo.Snappy)}},
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

// TestDuckDB reads files written by DuckDB (testdata/duckdb) and checks them
// against the CSV files DuckDB wrote from the same tables.
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
			sameFrame(t, got, want)
		})
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

// TestBooleanPages reads a boolean column with nulls over many small
// pages and row groups: its values are bits, a page's starting within a
// byte of another's.
func TestBooleanPages(t *testing.T) {
	const n = 5001
	vals, want, miss := make([]any, n), make([]string, n), make([]bool, n)
	for i := range n {
		switch {
		case i%7 == 0:
			miss[i] = true
		case i%3 == 0:
			vals[i], want[i] = true, "true"
		default:
			vals[i], want[i] = false, "false"
		}
	}
	path := filepath.Join(t.TempDir(), "bool.parquet")
	writeParquet(t, path, []pcol{{"b", pqgo.Optional(pqgo.Leaf(pqgo.BooleanType)), vals}}, 1234, pqgo.PageBufferSize(64))
	fr, err := parquet.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := fr.Column("b")
	sameColumn(t, got, &datasets.Column{Name: "b", Kind: datasets.Categorical, Str: want, Missing: miss})
}

// TestCategorical checks Options.Categorical against the CSV reader's
// Categorical: numbers become the labels WriteCSV writes.
func TestCategorical(t *testing.T) {
	fr := simFrame(t, 20)
	path := filepath.Join(t.TempDir(), "sim.parquet")
	cols := frameCols(fr, false)
	// The visit as INT64, dictionary-encoded, so that the dictionary's
	// numbers are turned into labels too.
	for j := range cols {
		if cols[j].name == "visit" {
			cols[j].node = pqgo.Encoded(pqgo.Leaf(pqgo.Int64Type), &pqgo.RLEDictionary)
			for i, v := range cols[j].vals {
				cols[j].vals[i] = int64(v.(float64))
			}
		}
	}
	writeParquet(t, path, cols, 50)
	forced := []string{"visit", "x1", "site", "no such column"}
	got, err := parquet.ReadFileContext(context.Background(), path, parquet.Options{Categorical: forced})
	if err != nil {
		t.Fatal(err)
	}
	sameFrame(t, got, readCSV(t, fr, forced...))
	if c, _ := got.Column("visit"); c.Kind != datasets.Categorical || c.Str[0] != "1" {
		t.Errorf("visit: %v %q", c.Kind, c.Str[:3])
	}
}

// TestDirectory reads a directory of files, which skips other files, and
// checks the errors of directories whose files do not match.
func TestDirectory(t *testing.T) {
	fr := simFrame(t, 100) // 700 rows
	want := readCSV(t, fr)
	dir := t.TempDir()
	// Files in name order, of unequal sizes, one dictionary-encoded.
	bounds := []int{0, 250, 260, 700}
	names := []string{"part-0.parquet", "part-1.parquet", "part-2.parquet"}
	for k, name := range names {
		idx := make([]int, 0, bounds[k+1]-bounds[k])
		for i := bounds[k]; i < bounds[k+1]; i++ {
			idx = append(idx, i)
		}
		writeFrame(t, filepath.Join(dir, name), fr.Rows(idx), 100, k == 1)
	}
	for _, other := range []string{"_SUCCESS", ".part-0.parquet.crc", "notes.txt", "_metadata.parquet", ".hidden.parquet"} {
		if err := os.WriteFile(filepath.Join(dir, other), []byte("not parquet"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.parquet"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := parquet.ReadFile(dir)
	if err != nil {
		t.Fatal(err)
	}
	sameFrame(t, got, want)

	// Schema mismatches: each names the file that differs and the column.
	dbl := pqgo.Optional(pqgo.Leaf(pqgo.DoubleType))
	str := pqgo.Optional(pqgo.String())
	first := []pcol{{"x", dbl, []any{1.0}}, {"g", str, []any{"a"}}}
	for _, tc := range []struct {
		name   string
		second []pcol
		want   string
	}{
		{"kind", []pcol{{"x", str, []any{"1"}}, {"g", str, []any{"a"}}}, `b.parquet: column 1 ("x"): schema does not match the first file's: STRING (categorical) here, DOUBLE (numeric) in a.parquet`},
		{"name", []pcol{{"x", dbl, []any{1.0}}, {"h", str, []any{"a"}}}, `b.parquet: column 2 ("h"): schema does not match the first file's: column 2 is "g" in a.parquet`},
		{"count", []pcol{{"x", dbl, []any{1.0}}}, `b.parquet: schema does not match the first file's: 1 columns, a.parquet has 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeParquet(t, filepath.Join(dir, "a.parquet"), first, 0)
			writeParquet(t, filepath.Join(dir, "b.parquet"), tc.second, 0)
			_, err := parquet.ReadFile(dir)
			var pe *parquet.ParseError
			if !errors.As(err, &pe) || !errors.Is(err, parquet.ErrSchema) || pe.File != "b.parquet" {
				t.Fatalf("error %v, want a ParseError for b.parquet wrapping ErrSchema", err)
			}
			if err.Error() != tc.want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
		})
	}
	// Optional and required columns of the same kind mix; so do integers
	// and doubles.
	mix := t.TempDir()
	writeParquet(t, filepath.Join(mix, "a.parquet"), first, 0)
	writeParquet(t, filepath.Join(mix, "b.parquet"), []pcol{{"x", pqgo.Leaf(pqgo.Int32Type), []any{int32(2)}}, {"g", pqgo.String(), []any{"b"}}}, 0)
	got, err = parquet.ReadFile(mix)
	if err != nil {
		t.Fatal(err)
	}
	if x, _ := got.Column("x"); len(x.Num) != 2 || x.Num[0] != 1 || x.Num[1] != 2 {
		t.Errorf("x = %v, want [1 2]", x.Num)
	}
}

// TestErrors checks that problems are reported with the file, row and
// column, wrapping the sentinel errors.
func TestErrors(t *testing.T) {
	dir := t.TempDir()
	path := func(name string) string { return filepath.Join(dir, name) }

	// A NaN in row 1234, in the third row group of 500.
	x := make([]any, 1500)
	for i := range x {
		x[i] = float64(i)
	}
	x[1233] = math.NaN()
	ids := make([]any, 1500)
	for i := range ids {
		ids[i] = int32(i)
	}
	writeParquet(t, path("nan.parquet"), []pcol{{"id", pqgo.Leaf(pqgo.Int32Type), ids}, {"x", pqgo.Leaf(pqgo.DoubleType), x}}, 500)
	inf := slicesClone(x)
	inf[1233] = math.Inf(-1)
	writeParquet(t, path("inf.parquet"), []pcol{{"id", pqgo.Leaf(pqgo.Int32Type), ids}, {"x", pqgo.Optional(pqgo.Leaf(pqgo.DoubleType)), inf}}, 500)

	// A list column.
	writeParquet(t, path("list.parquet"), []pcol{{"id", pqgo.Leaf(pqgo.Int32Type), []any{int32(1)}}, {"xs", pqgo.Repeated(pqgo.Leaf(pqgo.DoubleType)), []any{nil}}}, 0)
	// A column type not read.
	writeParquet(t, path("int96.parquet"), []pcol{{"t", pqgo.Leaf(pqgo.Int96Type), []any{nil}}}, 0)
	// No rows.
	writeParquet(t, path("empty.parquet"), []pcol{{"x", pqgo.Leaf(pqgo.DoubleType), nil}}, 0)

	// Corrupt files: not Parquet, empty, cut short, pages overwritten.
	good := path("good.parquet")
	writeFrame(t, good, simFrame(t, 50), 100, true, pqgo.Compression(&pqgo.Snappy))
	raw, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) {
		if err := os.WriteFile(path(name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("text.parquet", []byte("id,y\n1,0\n"))
	write("zero.parquet", nil)
	write("short.parquet", raw[:len(raw)-20])
	trashed := bytes.Clone(raw)
	for i := 4; i < len(raw)/2; i++ {
		trashed[i] = 0xff
	}
	write("trashed.parquet", trashed)
	if err := os.Mkdir(path("emptydir"), 0o755); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		file string
		is   error
		want string // the message, or its start if it ends in "..."
	}{
		{"nan.parquet", datasets.ErrNonFinite, `nan.parquet: row 1234, column 2 ("x"): non-finite or out-of-range number: NaN`},
		{"inf.parquet", datasets.ErrNonFinite, `inf.parquet: row 1234, column 2 ("x"): non-finite or out-of-range number: -Inf`},
		{"list.parquet", parquet.ErrUnsupported, `list.parquet: column 2 ("xs"): unsupported column type: nested or repeated column (only flat columns are read)`},
		{"int96.parquet", parquet.ErrUnsupported, `int96.parquet: column 1 ("t"): unsupported column type INT96`},
		{"empty.parquet", datasets.ErrNoRows, `empty.parquet: no rows`},
		{"text.parquet", parquet.ErrCorrupt, `text.parquet: malformed Parquet file: ...`},
		{"zero.parquet", parquet.ErrCorrupt, `zero.parquet: malformed Parquet file: ...`},
		{"short.parquet", parquet.ErrCorrupt, `short.parquet: malformed Parquet file: ...`},
		{"trashed.parquet", parquet.ErrCorrupt, `trashed.parquet: ...`},
		{"emptydir", parquet.ErrNoFiles, `emptydir: no .parquet files in the directory`},
		{"missing.parquet", fs.ErrNotExist, `stat ` + path("missing.parquet") + `: no such file or directory`},
	} {
		t.Run(tc.file, func(t *testing.T) {
			fr, err := parquet.ReadFile(path(tc.file))
			if err == nil {
				t.Fatalf("no error; %d rows", fr.NumRows())
			}
			t.Log(err)
			if !errors.Is(err, tc.is) {
				t.Errorf("error %v does not wrap %v", err, tc.is)
			}
			if prefix, ok := strings.CutSuffix(tc.want, "..."); ok {
				if !strings.HasPrefix(err.Error(), prefix) {
					t.Errorf("error\n%s\nwant it to start\n%s", err, prefix)
				}
			} else if err.Error() != tc.want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.want)
			}
			var pe *parquet.ParseError
			if tc.is != fs.ErrNotExist && !errors.As(err, &pe) {
				t.Errorf("error %T is not a *ParseError", err)
			}
		})
	}
}

func slicesClone(a []any) []any { return append([]any(nil), a...) }

// TestContext checks that a done context stops the reading.
func TestContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sim.parquet")
	writeFrame(t, path, simFrame(t, 50), 100, false)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := parquet.ReadFileContext(ctx, path, parquet.Options{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
}
