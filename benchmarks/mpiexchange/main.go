// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build mpi && cgo

package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/mpi"
)

func main() {
	runtime.LockOSThread() // MPI_THREAD_FUNNELED: every MPI call from this goroutine
	chunks := flag.Int("chunks", 3907, "chunks of subjects (10^6 subjects in chunks of 256 make 3907)")
	gs := flag.String("g", "10,100,1000", "comma-separated sizes G of the exchanged vector")
	batches := flag.Int("batches", 7, "timed batches per figure; the median is printed")
	batch := flag.Duration("batch", 100*time.Millisecond, "least duration of a batch")
	project := flag.String("project", "", "comma-separated process counts for which to print, without running them, the vectors each process would receive per ordered sum over -chunks chunks")
	label := flag.String("transport", os.Getenv("OMPI_MCA_btl"), "transport named in the table (default: the btl setting)")
	flag.Parse()
	if err := mpi.Init(); err != nil {
		fmt.Fprintln(os.Stderr, "mpiexchange:", err)
		os.Exit(1)
	}
	err := run(*chunks, *gs, *batches, *batch, *label)
	if err == nil && *project != "" && mpi.Rank() == 0 {
		err = volumes(*chunks, *project)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "mpiexchange: rank %d: %v\n", mpi.Rank(), err)
		mpi.Abort(1)
	}
	if err := mpi.Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, "mpiexchange:", err)
		os.Exit(1)
	}
}

func run(chunks int, gflag string, batches int, batch time.Duration, label string) error {
	var gs []int
	for f := range strings.SplitSeq(gflag, ",") {
		g, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || g < 1 {
			return fmt.Errorf("flag -g: %q is not a positive integer", f)
		}
		gs = append(gs, g)
	}
	if chunks < 1 {
		return fmt.Errorf("flag -chunks: %d chunks", chunks)
	}
	if batches < 1 {
		return fmt.Errorf("flag -batches: %d batches", batches)
	}
	if label == "" {
		label = "default"
	}
	rank, size := mpi.Rank(), mpi.Size()
	if rank == 0 {
		host, _ := os.Hostname()
		fmt.Printf("%d processes on %s, transport %s, %d chunks, median of %d batches of at least %v, times per call\n\n",
			size, host, label, chunks, batches, batch)
		fmt.Println("| transport | G | sent | received | allreduce | exchange | ordered sum | subtrees | all chunks | chain |")
		fmt.Println("|---|---|---|---|---|---|---|---|---|---|")
	}
	bounds := mpi.EvenBounds(chunks, size)
	tree := mpi.NewTree(chunks)
	lo, hi := bounds[rank], bounds[rank+1]
	for _, g := range gs {
		// Every process generates all the chunks, to check the result.
		rnd := rand.New(rand.NewPCG(uint64(g), 1))
		x := make([]float64, chunks*g)
		for i := range x {
			x[i] = rnd.NormFloat64() * math.Exp(4*rnd.NormFloat64())
		}
		want := make([]float64, g)
		work := make([]float64, tree.Depth()*g)
		tree.Sum(want, x, g, work)
		part := x[lo*g : hi*g]

		s, err := mpi.NewOrderedSum(g, bounds)
		if err != nil {
			return err
		}
		dst := make([]float64, g)
		if err := s.Sum(dst, part); err != nil {
			return err
		}
		for i := range dst {
			if math.Float64bits(dst[i]) != math.Float64bits(want[i]) {
				return fmt.Errorf("G=%d: ordered sum differs from one process's tree at element %d: %v, %v", g, i, dst[i], want[i])
			}
		}

		// The pieces of OrderedSum.Sum, rebuilt from the exported tree.
		var all, local []mpi.Node
		counts := make([]int, size)
		for r := range size {
			n := len(all)
			all = tree.Cover(all, bounds[r], bounds[r+1])
			if r == rank {
				local = all[n:]
			}
			counts[r] = (len(all) - n) * g
		}
		send := make([]float64, len(local)*g)
		recv := make([]float64, len(all)*g)
		tree.Subtrees(send, local, part, g, lo, work)

		src := make([]float64, g)
		copy(src, send[:g])
		chunkCounts := make([]int, size)
		for r := range size {
			chunkCounts[r] = (bounds[r+1] - bounds[r]) * g
		}
		allChunks := make([]float64, chunks*g)
		// The exchange of vi's sums over an mpi.Group: the running values
		// passed from rank to rank, then broadcast from the last.
		grp, err := mpi.NewGroup()
		if err != nil {
			return err
		}
		carried := make([]float64, g)

		methods := []func() error{
			func() error { return mpi.Allreduce(dst, src) },
			func() error {
				if err := mpi.Allgatherv(recv, send, counts); err != nil {
					return err
				}
				tree.Join(dst, all, recv, g)
				return nil
			},
			func() error { return s.Sum(dst, part) },
			func() error {
				tree.Subtrees(send, local, part, g, lo, work)
				return nil
			},
			func() error {
				if err := mpi.Allgatherv(allChunks, part, chunkCounts); err != nil {
					return err
				}
				tree.Sum(dst, allChunks, g, work)
				return nil
			},
			func() error {
				if err := grp.Receive(carried); err != nil {
					return err
				}
				return grp.Pass(carried)
			},
		}
		row := []string{label, strconv.Itoa(g), strconv.Itoa(s.Sent()), strconv.Itoa(len(recv))}
		for _, m := range methods {
			d, err := timeCall(m, batches, batch)
			if err != nil {
				return err
			}
			row = append(row, fmtDur(d))
		}
		if rank == 0 {
			fmt.Println("| " + strings.Join(row, " | ") + " |")
		}
	}
	return nil
}

// volumes prints, for each process count in list, how many vectors of G
// values each process receives per ordered sum over the given chunks, and
// how many the busiest process sends, with even shares of chunks.
func volumes(chunks int, list string) error {
	fmt.Printf("\nvectors of G values per ordered sum over %d chunks, even shares\n\n", chunks)
	fmt.Println("| processes | received by each | sent by the busiest |")
	fmt.Println("|---|---|---|")
	tree := mpi.NewTree(chunks)
	for f := range strings.SplitSeq(list, ",") {
		p, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || p < 1 {
			return fmt.Errorf("flag -project: %q is not a positive integer", f)
		}
		b := mpi.EvenBounds(chunks, p)
		total, most := 0, 0
		for r := range p {
			c := len(tree.Cover(nil, b[r], b[r+1]))
			total += c
			most = max(most, c)
		}
		fmt.Printf("| %d | %d | %d |\n", p, total, most)
	}
	return nil
}

// timeCall returns the median time per call of f over batches, measured on
// rank 0. The number of calls per batch doubles until a batch lasts at least
// least on rank 0; rank 0 broadcasts its decisions so that every process
// makes the same calls.
func timeCall(f func() error, batches int, least time.Duration) (time.Duration, error) {
	n := 1
	flag := make([]float64, 1)
	for {
		d, err := timeBatch(f, n)
		if err != nil {
			return 0, err
		}
		flag[0] = 0
		if d >= least {
			flag[0] = 1
		}
		if err := mpi.Bcast(flag, 0); err != nil {
			return 0, err
		}
		if flag[0] == 1 {
			break
		}
		n *= 2
	}
	per := make([]time.Duration, batches)
	for b := range per {
		d, err := timeBatch(f, n)
		if err != nil {
			return 0, err
		}
		per[b] = d / time.Duration(n)
	}
	slices.Sort(per)
	return per[batches/2], nil
}

// timeBatch times n calls of f after a barrier.
func timeBatch(f func() error, n int) (time.Duration, error) {
	if err := mpi.Barrier(); err != nil {
		return 0, err
	}
	start := time.Now()
	for range n {
		if err := f(); err != nil {
			return 0, err
		}
	}
	return time.Since(start), nil
}

func fmtDur(d time.Duration) string {
	us := float64(d) / float64(time.Microsecond)
	switch {
	case us < 10:
		return fmt.Sprintf("%.2f µs", us)
	case us < 10000:
		return fmt.Sprintf("%.0f µs", us)
	}
	return fmt.Sprintf("%.1f ms", us/1000)
}
