// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command parquet measures reading the same data from CSV and from Parquet
// into the column store: the scaling program's design (Bernoulli responses,
// a random intercept, four covariates, 7 rows per subject), written once
// by datasets.WriteCSV and once by parquet.Write (Snappy,
// dictionary-encoded subject labels, row groups of 2^17 rows). It prints each read's wall
// time (the fastest of -reps), the bytes it allocated, the peak heap
// while reading, and the size of the columns read; with -fit it also
// fits both frames by GVA and says whether the fits are bit-identical.
//
//	go run ./benchmarks/parquet -subjects 1000000 -reps 3
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync/atomic"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/parquet"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

func main() {
	subjects := flag.Int("subjects", 1_000_000, "subjects, 7 rows each")
	reps := flag.Int("reps", 3, "reads of each file; the fastest counts")
	fit := flag.Bool("fit", false, "also fit both frames and compare")
	flag.Parse()
	dir, err := os.MkdirTemp("", "parquet-bench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	fr, _, err := datasets.Simulate(datasets.SimSpec{Family: "bernoulli", Subjects: *subjects, Obs: 7,
		Beta: []float64{-0.5, 0.3, 0.2, -0.2, 0.1}, RECov: [][]float64{{1}}, Seed: 1})
	if err != nil {
		log.Fatal(err)
	}
	csvPath, pqPath := filepath.Join(dir, "d.csv"), filepath.Join(dir, "d.parquet")
	var b bytes.Buffer
	if err := datasets.WriteCSV(&b, fr); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(csvPath, b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	b.Reset()
	if err := parquet.Write(&b, fr, 1<<17); err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(pqPath, b.Bytes(), 0o644); err != nil {
		log.Fatal(err)
	}
	fr, b = nil, bytes.Buffer{}
	csvSize, pqSize := size(csvPath), size(pqPath)
	fmt.Printf("%d subjects, %d rows; CSV %.1f MB, Parquet %.1f MB\n", *subjects, 7**subjects, csvSize/1e6, pqSize/1e6)
	var frames [2]*datasets.Frame
	for k, r := range []struct {
		name string
		read func() (*datasets.Frame, error)
	}{
		{"CSV", func() (*datasets.Frame, error) { return datasets.ReadFile(csvPath) }},
		{"Parquet", func() (*datasets.Frame, error) { return parquet.ReadFile(pqPath) }},
	} {
		best := time.Duration(1 << 62)
		var alloc, peak uint64
		for range *reps {
			frames[k] = nil
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			stop := watchPeak()
			start := time.Now()
			f, err := r.read()
			el := time.Since(start)
			p := stop()
			if err != nil {
				log.Fatal(err)
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if el < best {
				best, alloc, peak = el, after.TotalAlloc-before.TotalAlloc, p-min(p, before.HeapAlloc)
			}
			frames[k] = f
		}
		store := storeSize(frames[k])
		fmt.Printf("%-8s read %8.3f s  allocated %7.1f MB  peak heap over the start %7.1f MB  columns %7.1f MB (peak/columns %.2f)\n",
			r.name, best.Seconds(), float64(alloc)/1e6, float64(peak)/1e6, float64(store)/1e6, float64(peak)/float64(store))
	}
	if *fit {
		var mu [2][]float64
		for k, f := range frames {
			fm, err := formula.Parse("y ~ t + x1 + x2 + x3 + (1 | id)")
			if err != nil {
				log.Fatal(err)
			}
			d, err := formula.Build(fm, f, formula.Options{Family: glmm.Bernoulli})
			if err != nil {
				log.Fatal(err)
			}
			res, err := vi.Fit(context.Background(), d.Model(), vi.Settings{Seed: 1})
			if err != nil {
				log.Fatal(err)
			}
			mu[k] = res.Mu
		}
		fmt.Printf("fits bit-identical: %v\n", slices.Equal(mu[0], mu[1]))
	}
}

// size returns a file's size in bytes.
func size(path string) float64 {
	st, err := os.Stat(path)
	if err != nil {
		log.Fatal(err)
	}
	return float64(st.Size())
}

// storeSize returns the bytes of a frame's columns: 8 per number, a string
// header and the missing flag per row, and each distinct label's bytes.
func storeSize(f *datasets.Frame) int {
	n := 0
	for _, c := range f.Columns() {
		n += len(c.Missing)
		n += 8 * len(c.Num)
		n += 16 * len(c.Str)
		seen := map[string]bool{}
		for _, s := range c.Str {
			if !seen[s] {
				seen[s] = true
				n += len(s)
			}
		}
	}
	return n
}

// watchPeak samples the heap's objects every millisecond until the
// returned function is called, which returns the largest sample. It reads
// runtime/metrics, not runtime.ReadMemStats, which stops the world: a
// thousand times a second that slowed the CSV reader's two goroutines.
func watchPeak() func() uint64 {
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		return max(peak.Load(), m.HeapAlloc)
	}
}
