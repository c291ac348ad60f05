// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/parquet"
)

// runProcs runs glmmfit in this process as procs (alone if nil) and
// returns its exit code and standard error.
func runProcs(t *testing.T, procs processes, args ...string) (int, string) {
	t.Helper()
	stderr, err := os.Create(filepath.Join(t.TempDir(), "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	var stdout bytes.Buffer
	code := runIn(procs, args, strings.NewReader(""), &stdout, stderr)
	msg, err := os.ReadFile(stderr.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, string(msg)
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
		args = append([]string{"fit", "-data", pq, "-formula", c.formula, "-family", "bernoulli", "-quiet"}, c.flags...)
		code, alone = runProcs(t, nil, args...)
		if code == 0 || !strings.Contains(alone, c.name+".parquet") {
			t.Fatalf("%s as Parquet alone: exit %d, %q; want an error naming the file", c.name, code, alone)
		}
		for _, rank := range []int{0, 1} {
			code, shard := runProcs(t, fakeProcesses{rank, 2}, append(args, "-shard")...)
			if code != exitFail && code != exitUsage || shard != alone {
				t.Errorf("%s as Parquet, -shard in process %d of 2: exit %d, %q; want the error alone, %q", c.name, rank, code, shard, alone)
			}
		}
	}
}

// TestDataFiles: -data given several files (a pattern, or a list) reads
// their rows one file after the other, alone and in a -shard fit, and
// names the file and its own line of an error; a file that is missing,
// given twice, or whose header differs, a pattern that matches nothing
// and, with -shard, a subject whose rows are in two files are refused,
// naming them.
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
		for _, rank := range []int{0, 1} {
			code, shard := runProcs(t, fakeProcesses{rank, 2}, append(args, "-shard")...)
			if code == 0 || !strings.Contains(shard, c.want) {
				t.Errorf("%s, -shard in process %d of 2: exit %d, %q; want an error with %q", c.data, rank, code, shard, c.want)
			}
		}
	}
}
