// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/parquet"
	"github.com/sparsevi/sparsevi/internal/simshare"
)

// runProcs runs glmmfit in this process as procs (alone if nil) and
// returns its exit code and standard error.
func runProcs(t *testing.T, procs processes, args ...string) (int, string) {
	t.Helper()
	code, _, msg := runProcsOut(t, procs, args...)
	return code, msg
}

// runProcsOut is runProcs that returns standard output too. It may run
// in a goroutine of the test (runGroup).
func runProcsOut(t *testing.T, procs processes, args ...string) (code int, stdout []byte, stderr string) {
	t.Helper()
	f, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Error(err)
		return -1, nil, ""
	}
	defer f.Close()
	var out bytes.Buffer
	code = runIn(procs, args, strings.NewReader(""), &out, f)
	msg, err := os.ReadFile(f.Name())
	if err != nil {
		t.Error(err)
	}
	return code, out.Bytes(), string(msg)
}

// TestOwnRowsErrors: a -shard fit that reads its own subjects' rows alone
// from a CSV file (compressed or not) finds the errors of the data that
// the fit alone finds, anywhere in the file, and names the same file,
// line and column: a missing value, a value outside log's domain, a
// column of numbers with a typo, a -ref level no row has, a
// rank-deficient design, a file that does not exist; and from the same
// data as a Parquet file, the errors the fit alone gives on it.
func TestOwnRowsErrors(t *testing.T) {
	dir := t.TempDir()
	csv := func(edit func(i int, x, f, z string) (string, string, string)) string {
		var b strings.Builder
		b.WriteString("id,y,x,f,z,x2\n")
		for i := range 900 {
			x, f, z := fmt.Sprintf("%.2f", float64(i%7)/3), fmt.Sprint(i%3), fmt.Sprint(1+i%4)
			x, f, z = edit(i, x, f, z)
			fmt.Fprintf(&b, "s%d,%d,%s,%s,%s,%d\n", i/3, i%2, x, f, z, 2*(i%5))
		}
		return b.String()
	}
	plain := func(i int, x, f, z string) (string, string, string) { return x, f, z }
	gz := func(name, text string) string {
		var b bytes.Buffer
		w := gzip.NewWriter(&b)
		w.Write([]byte(text))
		w.Close()
		return writeFile(t, dir, name, b.String())
	}
	for _, c := range []struct {
		name, data, formula string
		flags               []string
		want                string // in the message
	}{
		{"missing", writeFile(t, dir, "missing.csv", csv(func(i int, x, f, z string) (string, string, string) {
			if i == 700 {
				x = "NA"
			}
			return x, f, z
		})), "y ~ x + (1 | id)", nil, "line 702"},
		{"missing gzip", gz("missing.csv.gz", csv(func(i int, x, f, z string) (string, string, string) {
			if i == 800 {
				x = ""
			}
			return x, f, z
		})), "y ~ x + (1 | id)", nil, "line 802"},
		{"log", writeFile(t, dir, "log.csv", csv(func(i int, x, f, z string) (string, string, string) {
			if i == 650 {
				z = "-1"
			}
			return x, f, z
		})), "y ~ log(z) + (1 | id)", nil, "line 652"},
		{"typo", writeFile(t, dir, "typo.csv", csv(func(i int, x, f, z string) (string, string, string) {
			if i == 820 {
				z = "3;1"
			}
			return x, f, z
		})), "y ~ z + (1 | id)", nil, "line 822"},
		{"ref", writeFile(t, dir, "ref.csv", csv(plain)), "y ~ factor(f) + (1 | id)", []string{"-ref", "f=7"}, "no level"},
		{"rank", writeFile(t, dir, "rank.csv", csv(func(i int, x, f, z string) (string, string, string) {
			return fmt.Sprint(i % 5), f, z
		})), "y ~ x + x2 + (1 | id)", nil, "x2"},
		{"no file", filepath.Join(dir, "absent.csv"), "y ~ x + (1 | id)", nil, "absent.csv"},
	} {
		args := append([]string{"fit", "-data", c.data, "-formula", c.formula, "-family", "bernoulli", "-quiet"}, c.flags...)
		code, alone := runProcs(t, nil, args...)
		if code == 0 || !strings.Contains(alone, c.want) {
			t.Fatalf("%s alone: exit %d, %q; want an error with %q", c.name, code, alone, c.want)
		}
		for _, rank := range []int{0, 1} {
			code, shard := runProcs(t, fakeProcesses{rank, 2}, append(args, "-shard")...)
			if code != exitFail && code != exitUsage || shard != alone {
				t.Errorf("%s, -shard in process %d of 2: exit %d, %q; want the error alone, %q", c.name, rank, code, shard, alone)
			}
		}
		// The same data as Parquet, in row groups of 100 rows: the
		// error of the fit alone (which names rows, not lines).
		fr, err := datasets.ReadFile(c.data)
		if err != nil {
			continue // the file that does not exist
		}
		var b bytes.Buffer
		if err := parquet.Write(&b, fr, 100); err != nil {
			t.Fatal(err)
		}
		pq := writeFile(t, dir, c.name+".parquet", b.String())
		// And as a directory of two files, split between subjects.
		pqDir := filepath.Join(dir, c.name+"-parts")
		if err := os.Mkdir(pqDir, 0o755); err != nil {
			t.Fatal(err)
		}
		id, _ := fr.Column("id")
		cut := fr.NumRows() / 3
		for id.Str[cut] == id.Str[cut-1] {
			cut++
		}
		for k, rows := range [][2]int{{0, cut}, {cut, fr.NumRows()}} {
			idx := make([]int, 0, rows[1]-rows[0])
			for i := rows[0]; i < rows[1]; i++ {
				idx = append(idx, i)
			}
			var b bytes.Buffer
			if err := parquet.Write(&b, fr.Rows(idx), 100); err != nil {
				t.Fatal(err)
			}
			writeFile(t, pqDir, fmt.Sprintf("%d.parquet", k), b.String())
		}
		for _, data := range []string{pq, pqDir} {
			what := c.name + " as " + filepath.Base(data)
			args = append([]string{"fit", "-data", data, "-formula", c.formula, "-family", "bernoulli", "-quiet"}, c.flags...)
			code, alone = runProcs(t, nil, args...)
			if code == 0 || !strings.Contains(alone, filepath.Base(data)) {
				t.Fatalf("%s alone: exit %d, %q; want an error naming the data", what, code, alone)
			}
			// The files are dealt out among the processes: the one that
			// reads the row at fault gives the error alone, the others
			// it or the process.
			codes, msgs := runGroup(t, 2, append(args, "-shard")...)
			if !slices.Contains(msgs, alone) {
				t.Errorf("%s, -shard in 2 processes: %q, want one to be the error alone, %q", what, msgs, alone)
			}
			for k, msg := range msgs {
				if codes[k] != exitFail && codes[k] != exitUsage || msg != alone && !strings.Contains(msg, "of the MPI job failed reading its files") {
					t.Errorf("%s, -shard in process %d of 2: exit %d, %q; want the error alone, %q, or the process's", what, k, codes[k], msg, alone)
				}
			}
		}
	}
}

// TestDataFiles: -data given several files (a pattern, or a list) reads
// their rows one file after the other, alone and in a -shard fit, and
// names the file and its own line of an error; a file that is missing,
// given twice, or whose header differs, a pattern that matches nothing
// and, with -shard, a subject whose rows are in two files are refused,
// naming them. With -shard in 2 and 3 processes, among which the files
// are dealt out, the process that reads the file at fault names it and
// the others name that process.
func TestDataFiles(t *testing.T) {
	dir := t.TempDir()
	part := func(name string, from, to int, edit func(i int) string) string {
		var b strings.Builder
		b.WriteString("id,y,x\n")
		for i := from; i < to; i++ {
			x := fmt.Sprintf("%.2f", float64(i%7)/3)
			if edit != nil {
				x = edit(i)
			}
			fmt.Fprintf(&b, "s%04d,%d,%s\n", i/3, i%2, x)
		}
		return writeFile(t, dir, name, b.String())
	}
	part("a-1.csv", 0, 300, nil)
	part("a-2.csv", 300, 600, nil)
	part("a-3.csv", 600, 900, func(i int) string {
		if i == 700 {
			return "NA"
		}
		return "1"
	})
	part("b-1.csv", 0, 451, nil)
	part("b-2.csv", 451, 900, nil) // subject s0150 in both
	writeFile(t, dir, "c-1.csv", "id,y,z\ns0001,1,2\n")
	part("t-1.csv", 0, 300, nil)
	part("t-2.csv", 300, 900, func(i int) string {
		if i == 500 {
			return "3;1" // a typo: x is read as categorical
		}
		return fmt.Sprint(i % 5)
	})
	base := []string{"-formula", "y ~ x + (1 | id)", "-family", "bernoulli", "-quiet"}
	for _, c := range []struct {
		data        string
		alone, want string // in the messages alone and with -shard
	}{
		{"a-*.csv", "a-3.csv: line 102", "a-3.csv: line 102"},
		{"a-1.csv,a-3.csv", "a-3.csv: line 102", "a-3.csv: line 102"},
		{"a-1.csv,a-9.csv", "a-9.csv: no such file", "a-9.csv: no such file"},
		{"a-1.csv,a-*.csv", "a-1.csv is given twice", "a-1.csv is given twice"},
		{"z-*.csv", "no file matches the pattern", "no file matches the pattern"},
		{"a-1.csv,c-1.csv", `c-1.csv: line 1: the header "id,y,z" is not that of a-1.csv`, `c-1.csv: line 1: the header "id,y,z" is not that of a-1.csv`},
		{"t-*.csv", `t-2.csv: line 202, column 3 ("x"): "3;1" is not a number, but 899 of the 900 values`, `t-2.csv: line 202, column 3 ("x"): "3;1" is not a number, but 899 of the 900 values`},
		{"b-*.csv", "", `subject "s0150" (column "id") has rows in b-1.csv and in b-2.csv (line 2)`},
	} {
		var items []string
		for _, item := range strings.Split(c.data, ",") {
			items = append(items, filepath.Join(dir, item))
		}
		args := append([]string{"fit", "-data", strings.Join(items, ",")}, base...)
		code, alone := runProcs(t, nil, args...)
		if c.alone == "" {
			if code != 0 && code != exitLimit {
				t.Errorf("%s alone: exit %d, %q", c.data, code, alone)
			}
		} else if code == 0 || !strings.Contains(alone, c.alone) {
			t.Errorf("%s alone: exit %d, %q; want an error with %q", c.data, code, alone, c.alone)
		}
		// The files are dealt out among the processes: the one that
		// reads the file at fault names it, the others that process.
		for _, size := range []int{2, 3} {
			if size == 3 && c.alone == "" {
				continue // 300 subjects are too few for three processes
			}
			codes, msgs := runGroup(t, size, append(args, "-shard")...)
			named := false
			for k, msg := range msgs {
				named = named || strings.Contains(msg, c.want)
				if codes[k] == 0 || !strings.Contains(msg, c.want) && !strings.Contains(msg, "of the MPI job failed reading its files of -data") {
					t.Errorf("%s, -shard in process %d of %d: exit %d, %q; want an error with %q or naming the process", c.data, k, size, codes[k], msg, c.want)
				}
			}
			if !named {
				t.Errorf("%s, -shard in %d processes: no process said %q: %q", c.data, size, c.want, msgs)
			}
			if strings.Contains(c.want, "a-3.csv: line 102") {
				// a-3.csv is the last process's alone: the others never
				// read it.
				for k, msg := range msgs[:size-1] {
					if want := fmt.Sprintf("process %d of the MPI job failed", size-1); !strings.Contains(msg, want) {
						t.Errorf("%s, -shard in process %d of %d: %q, want %q", c.data, k, size, msg, want)
					}
				}
			}
		}
	}
}

// TestSharedFilesFit: a -shard fit of a pattern's files, or of a Parquet
// directory's, in 2 and 3 goroutine processes, among which the files are
// dealt out (one process of three has none), writes the JSON of the fit
// alone on the same data, timings and the
// data's name aside: files of runs of subjects, and files among which the
// subjects are interleaved, so that each process reads the rows of its
// own subjects from every file; a Bernoulli random intercept by the
// default method, a Gaussian model with a factor whose reference level
// is in the last files alone under the auto prior by GVA, and subjects
// that are an interaction (1 | id:g), read by their two columns.
func TestSharedFilesFit(t *testing.T) {
	dir := t.TempDir()
	const subjects, files = 700, 2
	text := make([]strings.Builder, 2*files)
	for k := range text {
		text[k].WriteString("id,y,x,g,v\n")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := range subjects {
		b := 0.8 * rng.NormFloat64()
		for j := range 4 {
			x := rng.NormFloat64()
			y := 0
			if rng.Float64() < 1/(1+math.Exp(-(b+0.5*x-0.3))) {
				y = 1
			}
			g := fmt.Sprintf("L%d", (i*4+j)%7)
			if i > subjects/2 && j == 0 {
				g = "late" // in the last files alone
			}
			row := fmt.Sprintf("s%04d,%d,%.4f,%s,%.4f\n", i, y, x, g, 10+3*b+x+rng.NormFloat64())
			text[i*files/subjects].WriteString(row)
			text[files+i%files].WriteString(row)
		}
	}
	for k := range text {
		name := "runs"
		if k >= files {
			name = "mixed"
		}
		file := writeFile(t, dir, fmt.Sprintf("%s-%d.csv", name, k%files), text[k].String())
		// The same files as a Parquet directory.
		fr, err := datasets.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := parquet.Write(&b, fr, 500); err != nil {
			t.Fatal(err)
		}
		pqDir := filepath.Join(dir, name+"-parquet")
		os.MkdirAll(pqDir, 0o755)
		writeFile(t, pqDir, fmt.Sprintf("%d.parquet", k%files), b.String())
	}
	bern := []string{"-formula", "y ~ x + (1 | id)", "-family", "bernoulli"}
	gauss := []string{"-formula", "v ~ x + g + (1 | id)", "-family", "gaussian", "-method", "gva", "-ref", "g=late"}
	inter := []string{"-formula", "y ~ x + (1 | id:g)", "-family", "bernoulli", "-method", "gva"}
	for _, c := range []struct {
		m    []string
		data string
		size int // of three processes, one has no files
	}{
		{bern, "runs-*.csv", 2},
		{bern, "mixed-*.csv", 3},
		{bern, "mixed-parquet", 3},
		{gauss, "runs-parquet", 2},
		{inter, "mixed-*.csv", 2},
		{inter, "runs-1.csv", 2},
	} {
		m, data := c.m, c.data
		{
			args := append([]string{"fit", "-data", filepath.Join(dir, data), "-format", "json", "-quiet"}, m...)
			code, out, msg := runProcsOut(t, nil, args...)
			if code != 0 && code != exitLimit {
				t.Fatalf("%s %v alone: exit %d, %s", data, m, code, msg)
			}
			want := withoutData(withoutTimings(t, out))
			for _, size := range []int{c.size} {
				outs := make([][]byte, size)
				codes, msgs := make([]int, size), make([]string, size)
				// One slice for all: append(args, ...) in each goroutine
				// would write the same spare element of args' array.
				shardArgs := append(slices.Clip(args), "-shard")
				var wg sync.WaitGroup
				for k, g := range simshare.NewGroups(size) {
					wg.Go(func() { codes[k], outs[k], msgs[k] = runProcsOut(t, chainProcesses{g}, shardArgs...) })
				}
				wg.Wait()
				for k := range size {
					if k == 0 && codes[k] != code || codes[k] != 0 && codes[k] != code {
						t.Fatalf("%s %v, %d processes: process %d exit %d, %s; alone %d, %s", data, m, size, k, codes[k], msgs[k], code, msg)
					}
				}
				if got := withoutData(withoutTimings(t, outs[0])); !reflect.DeepEqual(got, want) {
					t.Errorf("%s %v, %d processes: the JSON differs from the fit alone", data, m, size)
				}
			}
		}
	}
}
