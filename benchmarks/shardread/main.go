// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command shardread measures the peak resident memory of reading a CSV
// file and building one process's part of a design, as a process of a
// glmmfit fit with -shard on P processes does it: before, reading the
// whole file and cutting the part from the whole design
// (formula.Options.Part); now, reading the file through a piece at a time
// for what the part needs of every row (formula.Scan), then the rows of the
// process's own subjects alone (datasets.Reader.Keep) and building the part
// from them (formula.Options.Whole). Each figure comes from a process of
// its own (this program run again), for the first and the last process of
// P, with the time it took.
//
//	go run ./benchmarks/shardread -data big.csv -formula 'y ~ t + x1 + x2 + x3 + (1 | id)' -family bernoulli -procs 1,2,3
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/benchmarks/internal/benchio"
	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/mpi"
	"github.com/sparsevi/sparsevi/parallel"
)

func main() {
	data := flag.String("data", "", "CSV file (gzip-compressed or not)")
	form := flag.String("formula", "", "the model's formula")
	family := flag.String("family", "bernoulli", "the model's family")
	procs := flag.String("procs", "1,2,3", "numbers of processes")
	one := flag.String("one", "", "internal: measure way,P,rank in this process")
	flag.Parse()
	if *data == "" || *form == "" {
		log.Fatal("give -data and -formula")
	}
	if *one != "" {
		if err := measure(*data, *form, *family, *one); err != nil {
			log.Fatal(err)
		}
		return
	}
	fmt.Printf("Peak resident memory of reading and building a process's part (`go run ./benchmarks/shardread -data %s -formula '%s' -family %s -procs %s`):\n\n", *data, *form, *family, *procs)
	fmt.Println("| processes | process | whole file, then the part (before) | own rows (now) |")
	fmt.Println("|---|---|---|---|")
	for _, ps := range strings.Split(*procs, ",") {
		p, err := strconv.Atoi(ps)
		if err != nil || p < 1 {
			log.Fatalf("-procs: %q", ps)
		}
		ranks := []int{0}
		if p > 1 {
			ranks = append(ranks, p-1)
		}
		for _, r := range ranks {
			row := fmt.Sprintf("| %d | %d", p, r)
			for _, way := range []string{"whole", "own"} {
				out, err := exec.Command(os.Args[0], "-data", *data, "-formula", *form, "-family", *family,
					"-one", fmt.Sprintf("%s,%d,%d", way, p, r)).Output()
				if err != nil {
					log.Fatalf("%s on %d processes: %v", way, p, err)
				}
				row += " | " + strings.TrimSpace(string(out))
			}
			fmt.Println(row + " |")
		}
	}
}

// measure reads and builds the part of process rank of p, the way given,
// and prints its peak resident memory and time.
func measure(path, form, family, spec string) error {
	parts := strings.Split(spec, ",")
	way := parts[0]
	p, _ := strconv.Atoi(parts[1])
	rank, _ := strconv.Atoi(parts[2])
	f, err := formula.Parse(form)
	if err != nil {
		return err
	}
	fam, err := glmm.ParseFamily(family)
	if err != nil {
		return err
	}
	opts := formula.Options{Family: fam, Prior: formula.PriorAuto, DoubleBar: formula.IndependentDoubleBar, Release: true}
	part := func(n int) (int, int, error) {
		bounds, err := mpi.SubjectBounds(n, parallel.DefaultChunkSize, p)
		if err != nil {
			return 0, 0, err
		}
		return bounds[rank], bounds[rank+1], nil
	}
	start := time.Now()
	var d *formula.Design
	switch way {
	case "whole":
		fr, err := datasets.ReadFile(path)
		if err != nil {
			return err
		}
		if p > 1 {
			opts.Part = part
		}
		if d, err = formula.Build(f, fr, opts); err != nil {
			return err
		}
	case "own":
		d, err = own(path, f, opts, part)
		if err != nil {
			return err
		}
	default:
		return fmt.Errorf("unknown way %q", way)
	}
	elapsed := time.Since(start)
	runtime.KeepAlive(d)
	kb, err := benchio.PeakKB()
	if err != nil {
		return err
	}
	fmt.Printf("%.0f MB, %.1f s", float64(kb)/1024, elapsed.Seconds())
	return nil
}

// own reads and builds the part as glmmfit -shard does (cmd/glmmfit
// readown.go).
func own(path string, f *formula.Formula, opts formula.Options, part func(int) (int, int, error)) (*formula.Design, error) {
	read := func(configure func(*datasets.Reader), run func(*datasets.Reader) error) error {
		fh, err := os.Open(path)
		if err != nil {
			return err
		}
		defer fh.Close()
		r, done, err := datasets.Uncompressed(fh)
		if err != nil {
			return err
		}
		defer done()
		cr := datasets.NewReader(r)
		configure(cr)
		return run(cr)
	}
	var kinds *datasets.Frame
	err := read(func(cr *datasets.Reader) { cr.Keep = func(string, bool) bool { return false } },
		func(cr *datasets.Reader) (err error) { kinds, err = cr.Read(); return err })
	if err != nil {
		return nil, err
	}
	var cat, num []string
	for _, c := range kinds.Columns() {
		if c.Kind == datasets.Categorical {
			cat = append(cat, c.Name)
		} else {
			num = append(num, c.Name)
		}
	}
	cols := f.Columns()
	w, err := formula.Scan(f, func(yield func(*datasets.Frame) error) error {
		return read(func(cr *datasets.Reader) { cr.Categorical, cr.Numeric, cr.Columns = cat, num, cols }, func(cr *datasets.Reader) error {
			return cr.ReadPieces(1<<16, func(fr *datasets.Frame, _ *datasets.Lines) error { return yield(fr) })
		})
	}, opts)
	if err != nil {
		return nil, err
	}
	debug.FreeOSMemory() // as glmmfit does
	lo, hi, err := part(len(w.Subjects()))
	if err != nil {
		return nil, err
	}
	var fr *datasets.Frame
	err = read(func(cr *datasets.Reader) {
		cr.KeepRow, cr.KeepColumns, cr.Columns, cr.ReserveRows = w.KeepRow(lo, hi), w.KeepColumns(), cols, w.Rows(lo, hi)
		cr.Numeric = num
	}, func(cr *datasets.Reader) (err error) { fr, err = cr.Read(); return err })
	if err != nil {
		return nil, err
	}
	opts.Part = func(int) (int, int, error) { return lo, hi, nil }
	opts.Whole = w
	return formula.Build(f, fr, opts)
}
