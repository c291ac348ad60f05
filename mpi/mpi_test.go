// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build mpi && cgo

package mpi

import (
	"errors"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// These tests run in every process of an mpirun job (mpi/testdata/run.sh);
// each test makes the same collective calls in the same order everywhere.

// calls carries work to TestMain's goroutine, the only one allowed to call
// MPI: tests run on goroutines of their own.
var calls = make(chan func())

// onMPI runs f on the MPI goroutine and waits for it.
func onMPI(f func()) {
	done := make(chan struct{})
	calls <- func() { f(); close(done) }
	<-done
}

func TestMain(m *testing.M) {
	runtime.LockOSThread()
	if err := Init(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	exit := make(chan int)
	go func() { exit <- m.Run() }()
	var code int
serve:
	for {
		select {
		case f := <-calls:
			f()
		case code = <-exit:
			break serve
		}
	}
	// Every process leaves with the same code: failed if any failed.
	in, out := []float64{float64(code)}, make([]float64, 1)
	if err := Allreduce(out, in); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := Finalize(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if out[0] != 0 && code == 0 {
		fmt.Fprintln(os.Stderr, "mpi: a test failed in another process")
		code = 1
	}
	os.Exit(code)
}

func TestRankSize(t *testing.T) {
	// mpirun tells each process its place in the environment.
	if s := os.Getenv("OMPI_COMM_WORLD_SIZE"); s != "" && s != strconv.Itoa(Size()) {
		t.Errorf("Size() = %d, mpirun started %s processes", Size(), s)
	}
	if r := os.Getenv("OMPI_COMM_WORLD_RANK"); r != "" && r != strconv.Itoa(Rank()) {
		t.Errorf("Rank() = %d, mpirun says rank %s", Rank(), r)
	}
	var all [][]byte
	var err error
	onMPI(func() {
		all, err = AllgatherBytes([]byte(strings.Repeat("x", Rank()) + fmt.Sprintf("rank %d", Rank())))
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != Size() {
		t.Fatalf("AllgatherBytes returned %d messages from %d processes", len(all), Size())
	}
	for r, b := range all {
		if want := strings.Repeat("x", r) + fmt.Sprintf("rank %d", r); string(b) != want {
			t.Errorf("message of rank %d is %q, want %q", r, b, want)
		}
	}
}

func TestAllgatherBytesEmpty(t *testing.T) {
	// Odd ranks send nothing.
	src := []byte(nil)
	if Rank()%2 == 0 {
		src = []byte{byte(Rank())}
	}
	var all [][]byte
	var err error
	onMPI(func() { all, err = AllgatherBytes(src) })
	if err != nil {
		t.Fatal(err)
	}
	for r, b := range all {
		if want := r%2 == 0; want != (len(b) == 1 && b[0] == byte(r)) || !want && len(b) != 0 {
			t.Errorf("message of rank %d is %v", r, b)
		}
	}
}

func TestWrongThread(t *testing.T) {
	// This goroutine cannot run on TestMain's locked thread.
	if err := Barrier(); !errors.Is(err, ErrThread) {
		t.Errorf("Barrier from another thread: %v, want ErrThread", err)
	}
	var err error
	onMPI(func() { err = Barrier() })
	if err != nil {
		t.Errorf("Barrier: %v", err)
	}
}

func TestBcast(t *testing.T) {
	root := Size() - 1
	buf := []float64{math.NaN(), math.NaN(), math.NaN()}
	if Rank() == root {
		buf = []float64{1.5, -2, math.Pi}
	}
	var err error
	onMPI(func() { err = Bcast(buf, root) })
	if err != nil {
		t.Fatal(err)
	}
	if !sameBits(buf, []float64{1.5, -2, math.Pi}) {
		t.Errorf("rank %d received %v from root %d", Rank(), buf, root)
	}
}

func TestMPIError(t *testing.T) {
	// An invalid root is caught by MPI's argument checks on every process,
	// before any message: MPI_ERRORS_RETURN makes it an error, not an abort.
	var err error
	onMPI(func() { err = Bcast(make([]float64, 2), Size()+3) })
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Bcast to a root outside the world: %v, want an *Error", err)
	}
	if e.Op != "MPI_Bcast" || e.Code == 0 || !strings.Contains(strings.ToLower(e.Msg), "root") {
		t.Errorf("Bcast to a root outside the world: %+v, want MPI_Bcast and MPI's text about the root", e)
	}
}

// rankValues returns n values that name the process and the position.
func rankValues(r, n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = float64(1000*r + i)
	}
	return v
}

func TestGathers(t *testing.T) {
	const n = 4
	size := Size()
	want := make([]float64, 0, size*n)
	for r := range size {
		want = append(want, rankValues(r, n)...)
	}
	var dst []float64
	if Rank() == 0 {
		dst = make([]float64, size*n)
	}
	var err error
	onMPI(func() { err = Gather(dst, rankValues(Rank(), n), 0) })
	if err != nil {
		t.Fatal(err)
	}
	if Rank() == 0 && !slices.Equal(dst, want) {
		t.Errorf("Gather: %v, want %v", dst, want)
	}
	all := make([]float64, size*n)
	onMPI(func() { err = Allgather(all, rankValues(Rank(), n)) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(all, want) {
		t.Errorf("Allgather: %v, want %v", all, want)
	}
	// Rank r sends r+1 values.
	counts := make([]int, size)
	var wantv []float64
	for r := range size {
		counts[r] = r + 1
		wantv = append(wantv, rankValues(r, r+1)...)
	}
	allv := make([]float64, len(wantv))
	onMPI(func() { err = Allgatherv(allv, rankValues(Rank(), Rank()+1), counts) })
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(allv, wantv) {
		t.Errorf("Allgatherv: %v, want %v", allv, wantv)
	}
}

func TestAllreduce(t *testing.T) {
	size := Size()
	src := []float64{float64(Rank() + 1), 1, -float64(Rank())}
	dst := make([]float64, 3)
	var err error
	onMPI(func() { err = Allreduce(dst, src) })
	if err != nil {
		t.Fatal(err)
	}
	// Small integers: exact in any order.
	want := []float64{float64(size * (size + 1) / 2), float64(size), -float64(size * (size - 1) / 2)}
	if !slices.Equal(dst, want) {
		t.Errorf("Allreduce: %v, want %v", dst, want)
	}
}

// TestOrderedSumMPI checks that the ordered sum over the processes of the
// job equals, bit for bit, the tree sum of one process over all the chunks,
// so that jobs of any size agree with each other.
func TestOrderedSumMPI(t *testing.T) {
	const g = 7
	size := Size()
	for _, n := range []int{1, 5, 100, 3907} {
		x := chunkData(n, g, uint64(n)+7) // the same data in every process
		want := make([]float64, g)
		treeSum(want, x, n, g)
		uneven := make([]int, size+1)
		for r := 1; r <= size; r++ {
			uneven[r] = n - (size-r)*(n/(2*size)) // rank 0 holds the most
		}
		for _, b := range [][]int{EvenBounds(n, size), uneven} {
			s, err := NewOrderedSum(g, b)
			if err != nil {
				t.Fatal(err)
			}
			lo, hi := s.Chunks()
			got := make([]float64, g)
			onMPI(func() { err = s.Sum(got, x[lo*g:hi*g]) })
			if err != nil {
				t.Fatal(err)
			}
			if !sameBits(got, want) {
				t.Errorf("n=%d, bounds %v, rank %d: ordered sum %v, one process %v", n, b, Rank(), got, want)
			}
		}
	}
}

// TestGoSignals checks that MPI left the Go runtime its signals: a nil
// dereference must still be a recoverable run-time panic, not a crash
// reported by Open MPI.
func TestGoSignals(t *testing.T) {
	var p *int
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("%v", r)
			}
		}()
		_ = *p
		return nil
	}()
	if err == nil || !strings.Contains(err.Error(), "nil pointer") {
		t.Errorf("nil dereference: %v, want a run-time panic", err)
	}
}
