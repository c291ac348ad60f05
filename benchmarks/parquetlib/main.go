// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command parquetlib compares the two pure-Go Parquet libraries served by
// the module proxy, github.com/parquet-go/parquet-go and Apache Arrow's
// github.com/apache/arrow-go/v18, at the job sparsevi needs done: reading a
// file column by column, row group by row group, into float64 and string
// columns with a missing flag per row (issue 16, "Columnar input").
//
// It is a module of its own, so that only the library chosen for the
// datasets/parquet package is in sparsevi's go.mod. Usage, from this
// directory:
//
//	go run . [-rows 1000000] [-reps 3] [-dir DIR]
//
// Each library writes the same table (subject: string, dictionary-encoded,
// 7 rows a subject; y: double 0/1; x1, x2: double; x3: optional double with
// 1% nulls; Snappy; row groups of 131072 rows), each library then reads
// both files, and the columns read are checked against the table. The
// table is also written as CSV and read with datasets.ReadFile for scale.
// Times are the fastest of -reps reads; alloc is the bytes allocated by
// one read (runtime.MemStats.TotalAlloc), which for a streaming reader is
// a little over the final columns' size.
//
// glmmfit's build cost with the library chosen is in the README (Parquet).
package main

import (
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
)

// table is the benchmark's data, held as the reader's result would be.
type table struct {
	subject []string
	y       []float64
	x1, x2  []float64
	x3      []float64 // NaN where null
}

const rowGroup = 131072

func makeTable(n int) *table {
	rng := rand.New(rand.NewPCG(1, 2))
	t := &table{
		subject: make([]string, n),
		y:       make([]float64, n),
		x1:      make([]float64, n),
		x2:      make([]float64, n),
		x3:      make([]float64, n),
	}
	id := ""
	for i := range n {
		if i%7 == 0 {
			id = fmt.Sprintf("s%07d", i/7)
		}
		t.subject[i] = id
		t.y[i] = float64(rng.IntN(2))
		t.x1[i] = rng.NormFloat64()
		t.x2[i] = float64(i%7) / 6
		t.x3[i] = rng.NormFloat64()
		if rng.IntN(100) == 0 {
			t.x3[i] = math.NaN()
		}
	}
	return t
}

// cols is what a reader returns: the five columns and the missing flags
// of x3 (the other columns have no nulls).
type cols struct {
	subject []string
	y       []float64
	x1, x2  []float64
	x3      []float64
	x3miss  []bool
}

func (c *cols) check(t *table) error {
	if !slices.Equal(c.subject, t.subject) {
		return fmt.Errorf("subject differs")
	}
	for _, p := range []struct {
		name string
		a, b []float64
	}{{"y", c.y, t.y}, {"x1", c.x1, t.x1}, {"x2", c.x2, t.x2}, {"x3", c.x3, t.x3}} {
		if len(p.a) != len(p.b) {
			return fmt.Errorf("%s: %d rows, want %d", p.name, len(p.a), len(p.b))
		}
		for i := range p.a {
			if p.a[i] != p.b[i] && !(math.IsNaN(p.a[i]) && math.IsNaN(p.b[i])) {
				return fmt.Errorf("%s: row %d: %v, want %v", p.name, i+1, p.a[i], p.b[i])
			}
		}
	}
	for i, m := range c.x3miss {
		if m != math.IsNaN(t.x3[i]) {
			return fmt.Errorf("x3: row %d: missing %v", i+1, m)
		}
	}
	return nil
}

type result struct {
	lib, file string
	best      time.Duration
	alloc     uint64
}

func measure(reps int, read func() (*cols, error), t *table) (time.Duration, uint64, error) {
	best := time.Duration(math.MaxInt64)
	var alloc uint64
	for range reps {
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		start := time.Now()
		c, err := read()
		d := time.Since(start)
		runtime.ReadMemStats(&m1)
		if err != nil {
			return 0, 0, err
		}
		if err := c.check(t); err != nil {
			return 0, 0, err
		}
		best = min(best, d)
		alloc = m1.TotalAlloc - m0.TotalAlloc
	}
	return best, alloc, nil
}

func main() {
	rows := flag.Int("rows", 1000000, "rows of the table")
	reps := flag.Int("reps", 3, "reads of each file; the fastest is reported")
	dir := flag.String("dir", "", "directory for the files (default: a temporary one, removed)")
	flag.Parse()
	log.SetFlags(0)
	if *dir == "" {
		d, err := os.MkdirTemp("", "parquetlib")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	t := makeTable(*rows)
	files := map[string]string{
		"parquet-go": filepath.Join(*dir, "parquetgo.parquet"),
		"arrow-go":   filepath.Join(*dir, "arrow.parquet"),
	}
	writers := map[string]func(string, *table) error{"parquet-go": writePQ, "arrow-go": writeArrow}
	readers := map[string]func(string) (*cols, error){"parquet-go": readPQ, "arrow-go": readArrow}
	libs := []string{"parquet-go", "arrow-go"}
	for _, lib := range libs {
		start := time.Now()
		if err := writers[lib](files[lib], t); err != nil {
			log.Fatalf("%s: write: %v", lib, err)
		}
		st, _ := os.Stat(files[lib])
		fmt.Printf("%-10s wrote %d rows in %v: %.1f MB\n", lib, *rows, time.Since(start).Round(time.Millisecond), float64(st.Size())/1e6)
	}
	colBytes := float64(*rows) * (4*8 + 1 + 16) // four float64 columns, x3's flags, the string headers
	fmt.Printf("final columns: %.1f MB (without the subjects' text)\n", colBytes/1e6)
	fmt.Printf("%-10s %-10s %10s %12s\n", "reader", "file by", "best", "alloc MB")
	for _, lib := range libs {
		for _, by := range libs {
			best, alloc, err := measure(*reps, func() (*cols, error) { return readers[lib](files[by]) }, t)
			if err != nil {
				log.Fatalf("%s reading %s's file: %v", lib, by, err)
			}
			fmt.Printf("%-10s %-10s %10v %12.1f\n", lib, by, best.Round(time.Millisecond), float64(alloc)/1e6)
		}
	}

	csvPath := filepath.Join(*dir, "table.csv")
	if err := writeCSV(csvPath, t); err != nil {
		log.Fatal(err)
	}
	best, alloc, err := measure(*reps, func() (*cols, error) { return readCSV(csvPath) }, t)
	if err != nil {
		log.Fatalf("datasets.ReadFile: %v", err)
	}
	st, _ := os.Stat(csvPath)
	fmt.Printf("%-10s %-10s %10v %12.1f   (%.1f MB of CSV)\n", "CSV", "WriteCSV", best.Round(time.Millisecond), float64(alloc)/1e6, float64(st.Size())/1e6)
}

func writeCSV(path string, t *table) error {
	f, err := datasets.NewFrame(
		datasets.NewCategorical("subject", t.subject),
		datasets.NewNumeric("y", t.y),
		datasets.NewNumeric("x1", t.x1),
		datasets.NewNumeric("x2", t.x2),
		datasets.NewNumeric("x3", t.x3),
	)
	if err != nil {
		return err
	}
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := datasets.WriteCSV(fh, f); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

func readCSV(path string) (*cols, error) {
	f, err := datasets.ReadFile(path)
	if err != nil {
		return nil, err
	}
	get := func(name string) *datasets.Column { c, _ := f.Column(name); return c }
	return &cols{
		subject: get("subject").Str,
		y:       get("y").Num,
		x1:      get("x1").Num,
		x2:      get("x2").Num,
		x3:      get("x3").Num,
		x3miss:  get("x3").Missing,
	}, nil
}
