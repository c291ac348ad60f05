// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command parquet measures how fast package datasets/parquet reads a data
// set, against datasets.ReadFile reading the same data as CSV, and the
// memory each takes while reading (issue 16, "Columnar input").
//
// The data are those of the shared sim_logit files, for -subjects subjects
// of 7 rows (10^6 by default: 7×10^6 rows): id (integer), y (0/1), x1, x2,
// x3 (standard normal, 6 decimals). The CSV file is plain text as
// datasets.WriteCSV writes it; the Parquet file is written with
// parquet-go, id and y INT32, x1..x3 DOUBLE, Snappy, row groups of 131072
// rows. Each file is read -reps times, each time in a child process, so
// that its peak resident memory (VmHWM) is that of one read; the time is
// the fastest read, the memory the largest peak less the process's
// resident memory before the read, against the size of the columns read
// (8 bytes a value and 1 a missing flag).
//
// -fit also fits both frames by GVA and says whether the fits are
// bit-identical.
//
// -libs also runs the comparison of the two pure-Go Parquet libraries that
// chose parquet-go (libs.go; it needs github.com/apache/arrow-go/v18, so
// this program is a module of its own and sparsevi's go.mod holds only the
// library chosen). buildcost.sh beside this file measures what each
// library adds to glmmfit's clean build time and binary size.
//
// Usage, from this directory:
//
//	go run . [-subjects 1000000] [-reps 3] [-dir DIR] [-fit] [-libs] [-quick]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
	"unsafe"

	pqgo "github.com/parquet-go/parquet-go"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/parquet"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

func main() {
	subjects := flag.Int("subjects", 1000000, "subjects of 7 rows each")
	reps := flag.Int("reps", 3, "reads of each file; the fastest time is reported")
	dir := flag.String("dir", "", "directory for the files (default: a temporary one, removed)")
	libs := flag.Bool("libs", false, "also compare parquet-go and arrow-go")
	quick := flag.Bool("quick", false, "a CI-sized run: 10^4 subjects, one read")
	fit := flag.Bool("fit", false, "also fit both frames by GVA and say whether the fits are bit-identical")
	child := flag.String("child", "", "internal: read this file once and report")
	flag.Parse()
	log.SetFlags(0)
	if *child != "" {
		readOnce(*child)
		return
	}
	if *quick {
		*subjects, *reps = 10000, 1
	}
	if *dir == "" {
		d, err := os.MkdirTemp("", "parquetbench")
		if err != nil {
			log.Fatal(err)
		}
		defer os.RemoveAll(d)
		*dir = d
	}
	n := *subjects * 7
	csvPath := filepath.Join(*dir, "sim.csv")
	pqPath := filepath.Join(*dir, "sim.parquet")
	start := time.Now()
	cols := simulate(*subjects)
	if err := writeSimCSV(csvPath, cols); err != nil {
		log.Fatal(err)
	}
	if err := writeSimParquet(pqPath, cols); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%d subjects, %d rows, written in %v\n", *subjects, n, time.Since(start).Round(time.Millisecond))

	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	var results []report
	for _, path := range []string{csvPath, pqPath} {
		var best report
		for k := range *reps {
			out, err := exec.Command(exe, "-child", path).Output()
			if err != nil {
				log.Fatalf("reading %s: %v", path, err)
			}
			var r report
			if err := json.Unmarshal(out, &r); err != nil {
				log.Fatalf("reading %s: %v: %s", path, err, out)
			}
			if k == 0 || r.Seconds < best.Seconds {
				best.Seconds = r.Seconds
			}
			best.PeakMB = max(best.PeakMB, r.PeakMB)
			best.AllocMB, best.StoreMB, best.FileMB, best.Rows = r.AllocMB, r.StoreMB, r.FileMB, r.Rows
		}
		if best.Rows != n {
			log.Fatalf("%s: %d rows read, want %d", path, best.Rows, n)
		}
		results = append(results, best)
	}
	fmt.Printf("%-8s %9s %9s %12s %12s %10s %10s\n", "format", "file MB", "read s", "rows/s", "peak MB", "peak/store", "alloc MB")
	for k, name := range []string{"CSV", "Parquet"} {
		r := results[k]
		fmt.Printf("%-8s %9.1f %9.3f %12.3g %12.1f %10.2f %10.1f\n", name, r.FileMB, r.Seconds, float64(r.Rows)/r.Seconds, r.PeakMB, r.PeakMB/r.StoreMB, r.AllocMB)
	}
	fmt.Printf("column store %.1f MB; Parquet reads %.1fx as fast as CSV\n", results[1].StoreMB, results[0].Seconds/results[1].Seconds)

	if *fit {
		fitBoth(csvPath, pqPath)
	}
	if *libs {
		fmt.Println()
		compareLibs(n, *reps, *dir)
	}
}

// fitBoth reads both files in this process, fits y ~ x1 + x2 + x3 +
// (1 | id) to each by GVA and says whether the fits are bit-identical.
func fitBoth(csvPath, pqPath string) {
	var res [2]*vi.Result
	for k, read := range []func() (*datasets.Frame, error){
		func() (*datasets.Frame, error) { return datasets.ReadFile(csvPath) },
		func() (*datasets.Frame, error) { return parquet.ReadFile(pqPath) },
	} {
		fr, err := read()
		if err != nil {
			log.Fatal(err)
		}
		f, err := formula.Parse("y ~ x1 + x2 + x3 + (1 | id)")
		if err != nil {
			log.Fatal(err)
		}
		d, err := formula.Build(f, fr, formula.Options{Family: glmm.Bernoulli, Prior: formula.PriorAuto})
		if err != nil {
			log.Fatal(err)
		}
		res[k], err = vi.Fit(context.Background(), d.Model(), vi.Settings{Seed: 1})
		if err != nil {
			log.Fatal(err)
		}
	}
	same := slices.Equal(res[0].Mu, res[1].Mu) && slices.Equal(res[0].Factor, res[1].Factor) && res[0].LowerBound == res[1].LowerBound
	fmt.Printf("GVA fits bit-identical: %v (lower bound %v)\n", same, res[1].LowerBound)
}

// report is what a child process says of one read.
type report struct {
	Rows    int     `json:"rows"`
	Seconds float64 `json:"seconds"`
	PeakMB  float64 `json:"peak_mb"`  // VmHWM during the read less VmRSS before it
	AllocMB float64 `json:"alloc_mb"` // bytes allocated by the read
	StoreMB float64 `json:"store_mb"` // the columns read
	FileMB  float64 `json:"file_mb"`
}

// readOnce reads path with the reader its extension names and prints a
// report as JSON.
func readOnce(path string) {
	runtime.GC()
	before := procStatus("VmRSS")
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	var (
		fr  *datasets.Frame
		err error
	)
	if strings.HasSuffix(path, ".parquet") {
		fr, err = parquet.ReadFile(path)
	} else {
		fr, err = datasets.ReadFile(path)
	}
	d := time.Since(start)
	if err != nil {
		log.Fatal(err)
	}
	runtime.ReadMemStats(&m1)
	peak := procStatus("VmHWM")
	st, err := os.Stat(path)
	if err != nil {
		log.Fatal(err)
	}
	r := report{
		Rows:    fr.NumRows(),
		Seconds: d.Seconds(),
		PeakMB:  float64(peak-before) / 1e6,
		AllocMB: float64(m1.TotalAlloc-m0.TotalAlloc) / 1e6,
		StoreMB: float64(storeBytes(fr)) / 1e6,
		FileMB:  float64(st.Size()) / 1e6,
	}
	json.NewEncoder(os.Stdout).Encode(r)
	runtime.KeepAlive(fr)
}

// storeBytes returns the bytes of fr's columns: 8 a number, 16 a label's
// header plus its distinct texts, and 1 a missing flag.
func storeBytes(fr *datasets.Frame) int {
	total := 0
	for _, c := range fr.Columns() {
		total += len(c.Missing) + 8*len(c.Num) + 16*len(c.Str)
		seen := make(map[*byte]bool)
		for _, s := range c.Str {
			if p := unsafe.StringData(s); p != nil && !seen[p] {
				seen[p] = true
				total += len(s)
			}
		}
	}
	return total
}

// procStatus returns a field of /proc/self/status in bytes, or 0.
func procStatus(field string) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
			return kb * 1024
		}
	}
	return 0
}

// simCols holds the simulated data.
type simCols struct {
	id, y      []int32
	x1, x2, x3 []float64
}

// simulate draws the data of the sim_logit files: beta (-1, 0.5, -0.5, 1)
// and a random intercept of sd 1 on the logit scale.
func simulate(subjects int) *simCols {
	n := subjects * 7
	rng := rand.New(rand.NewPCG(16, 2))
	c := &simCols{id: make([]int32, n), y: make([]int32, n), x1: make([]float64, n), x2: make([]float64, n), x3: make([]float64, n)}
	round := func(x float64) float64 { return math.Round(x*1e6) / 1e6 }
	var b float64
	for i := range n {
		if i%7 == 0 {
			b = rng.NormFloat64()
		}
		c.id[i] = int32(i/7 + 1)
		c.x1[i], c.x2[i], c.x3[i] = round(rng.NormFloat64()), round(rng.NormFloat64()), round(rng.NormFloat64())
		eta := -1 + 0.5*c.x1[i] - 0.5*c.x2[i] + c.x3[i] + b
		if rng.Float64() < 1/(1+math.Exp(-eta)) {
			c.y[i] = 1
		}
	}
	return c
}

func writeSimCSV(path string, c *simCols) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(fh, 1<<20)
	w.WriteString("id,y,x1,x2,x3\n")
	var buf []byte
	for i := range c.id {
		buf = strconv.AppendInt(buf[:0], int64(c.id[i]), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(c.y[i]), 10)
		for _, x := range []float64{c.x1[i], c.x2[i], c.x3[i]} {
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, x, 'f', -1, 64)
		}
		buf = append(buf, '\n')
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}

type simRow struct {
	ID int32   `parquet:"id"`
	Y  int32   `parquet:"y"`
	X1 float64 `parquet:"x1"`
	X2 float64 `parquet:"x2"`
	X3 float64 `parquet:"x3"`
}

func writeSimParquet(path string, c *simCols) error {
	fh, err := os.Create(path)
	if err != nil {
		return err
	}
	w := pqgo.NewGenericWriter[simRow](fh, pqgo.MaxRowsPerRowGroup(131072), pqgo.Compression(&pqgo.Snappy))
	buf := make([]simRow, 0, 8192)
	for i := range c.id {
		buf = append(buf, simRow{c.id[i], c.y[i], c.x1[i], c.x2[i], c.x3[i]})
		if len(buf) == cap(buf) || i == len(c.id)-1 {
			if _, err := w.Write(buf); err != nil {
				fh.Close()
				return err
			}
			buf = buf[:0]
		}
	}
	if err := w.Close(); err != nil {
		fh.Close()
		return err
	}
	return fh.Close()
}
