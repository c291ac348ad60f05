// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build mpi && cgo

package mpi

/*
#cgo pkg-config: ompi-c
#include <stdlib.h>
#include <pthread.h>
#include <mpi.h>

// SV_WRONG_THREAD is returned instead of calling MPI from a thread other
// than the one of Init; MPI's own error codes are never negative.
#define SV_WRONG_THREAD (-1)

static pthread_t sv_main;

static int sv_init(int *provided) {
	int err = MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, provided);
	if (err != MPI_SUCCESS) return err;
	sv_main = pthread_self();
	return MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

static int sv_initialized(int *flag) { return MPI_Initialized(flag); }
static int sv_finalized(int *flag) { return MPI_Finalized(flag); }

#define SV_CHECK if (!pthread_equal(pthread_self(), sv_main)) return SV_WRONG_THREAD

static int sv_finalize(void) { SV_CHECK; return MPI_Finalize(); }
static int sv_rank(int *r) { SV_CHECK; return MPI_Comm_rank(MPI_COMM_WORLD, r); }
static int sv_size(int *s) { SV_CHECK; return MPI_Comm_size(MPI_COMM_WORLD, s); }
static int sv_abort(int code) { SV_CHECK; return MPI_Abort(MPI_COMM_WORLD, code); }
static int sv_barrier(void) { SV_CHECK; return MPI_Barrier(MPI_COMM_WORLD); }

static int sv_bcast(double *buf, int n, int root) {
	SV_CHECK;
	return MPI_Bcast(buf, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
}

static int sv_send(double *buf, int n, int dest, int tag) {
	SV_CHECK;
	return MPI_Send(buf, n, MPI_DOUBLE, dest, tag, MPI_COMM_WORLD);
}

static int sv_recv(double *buf, int n, int src, int tag, int *got) {
	SV_CHECK;
	MPI_Status st;
	int rc = MPI_Recv(buf, n, MPI_DOUBLE, src, tag, MPI_COMM_WORLD, &st);
	if (rc != MPI_SUCCESS) {
		return rc;
	}
	return MPI_Get_count(&st, MPI_DOUBLE, got);
}

static int sv_gather(double *src, int n, double *dst, int root) {
	SV_CHECK;
	return MPI_Gather(src, n, MPI_DOUBLE, dst, n, MPI_DOUBLE, root, MPI_COMM_WORLD);
}

static int sv_allgather(double *src, int n, double *dst) {
	SV_CHECK;
	return MPI_Allgather(src, n, MPI_DOUBLE, dst, n, MPI_DOUBLE, MPI_COMM_WORLD);
}

static int sv_allgatherv(double *src, int n, double *dst, int *counts, int *displs) {
	SV_CHECK;
	return MPI_Allgatherv(src, n, MPI_DOUBLE, dst, counts, displs, MPI_DOUBLE, MPI_COMM_WORLD);
}

static int sv_allgather_int(int n, int *dst) {
	SV_CHECK;
	return MPI_Allgather(&n, 1, MPI_INT, dst, 1, MPI_INT, MPI_COMM_WORLD);
}

static int sv_allgatherv_bytes(void *src, int n, void *dst, int *counts, int *displs) {
	SV_CHECK;
	return MPI_Allgatherv(src, n, MPI_BYTE, dst, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
}

static int sv_allreduce_sum(double *src, double *dst, int n) {
	SV_CHECK;
	return MPI_Allreduce(src, dst, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
}

static void sv_error_string(int code, char *buf) {
	int n = 0;
	if (MPI_Error_string(code, buf, &n) != MPI_SUCCESS) n = 0;
	buf[n] = 0;
}
*/
import "C"

import (
	"fmt"
	"math"
	"os"
	"runtime"
	"sync/atomic"
	"unsafe"
)

// state is 0 before Init, 1 between Init and Finalize and 2 after Finalize.
var state atomic.Int32

// rank and size of this process in MPI_COMM_WORLD, set by Init.
var rank, size = 0, 1

// check turns the return code of a wrapper into an error.
func check(op string, code C.int) error {
	switch {
	case code == C.MPI_SUCCESS:
		return nil
	case code == C.SV_WRONG_THREAD:
		return ErrThread
	}
	buf := (*C.char)(C.malloc(C.MPI_MAX_ERROR_STRING + 1))
	defer C.free(unsafe.Pointer(buf))
	C.sv_error_string(code, buf)
	return &Error{Op: op, Code: int(code), Msg: C.GoString(buf)}
}

// ready reports ErrNotInitialized outside Init..Finalize.
func ready() error {
	if state.Load() != 1 {
		return ErrNotInitialized
	}
	return nil
}

// Init initializes MPI with MPI_THREAD_FUNNELED and sets MPI_ERRORS_RETURN on
// MPI_COMM_WORLD. The caller must have locked its goroutine to its thread
// with runtime.LockOSThread, and must make every later MPI call, Finalize
// included, from the same goroutine. Init may be called once per process.
//
// Unless the environment sets OMPI_MCA_opal_signal, Init tells Open MPI not
// to install its own handlers for SIGSEGV, SIGBUS, SIGFPE and SIGABRT. Open
// MPI 4.1 already leaves alone the handlers that the Go runtime installed;
// the setting keeps other builds from taking those signals from Go.
//
// If Init returns an error after MPI_Init_thread succeeded (MPI provides a
// thread level below MPI_THREAD_FUNNELED), the caller should still call
// Finalize.
func Init() error {
	var flag C.int
	if err := check("MPI_Finalized", C.sv_finalized(&flag)); err != nil {
		return err
	}
	if flag != 0 || state.Load() != 0 {
		return fmt.Errorf("mpi: Init called twice")
	}
	if err := check("MPI_Initialized", C.sv_initialized(&flag)); err != nil {
		return err
	}
	if flag != 0 {
		return fmt.Errorf("mpi: MPI was initialized outside this package")
	}
	if _, ok := os.LookupEnv("OMPI_MCA_opal_signal"); !ok {
		os.Setenv("OMPI_MCA_opal_signal", "")
	}
	runtime.LockOSThread()
	var provided C.int
	if err := check("MPI_Init_thread", C.sv_init(&provided)); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	state.Store(1)
	if provided < C.MPI_THREAD_FUNNELED {
		return fmt.Errorf("mpi: MPI_Init_thread provided thread level %d, below MPI_THREAD_FUNNELED", int(provided))
	}
	var r, s C.int
	if err := check("MPI_Comm_rank", C.sv_rank(&r)); err != nil {
		return err
	}
	if err := check("MPI_Comm_size", C.sv_size(&s)); err != nil {
		return err
	}
	rank, size = int(r), int(s)
	return nil
}

// Finalize shuts MPI down; every process must call it after its last MPI
// call. It releases the thread lock taken by Init.
func Finalize() error {
	if err := ready(); err != nil {
		return err
	}
	if err := check("MPI_Finalize", C.sv_finalize()); err != nil {
		return err
	}
	state.Store(2)
	runtime.UnlockOSThread()
	return nil
}

// Rank returns the rank of this process in MPI_COMM_WORLD, from 0 to
// Size()-1. Before Init it returns 0.
func Rank() int { return rank }

// Size returns the number of processes in MPI_COMM_WORLD. Before Init it
// returns 1.
func Size() int { return size }

// Abort stops every process of the job with the exit code code
// (MPI_Abort on MPI_COMM_WORLD). It returns only if the abort failed.
func Abort(code int) error {
	if err := ready(); err != nil {
		return err
	}
	return check("MPI_Abort", C.sv_abort(C.int(code)))
}

// Barrier returns when every process has called it.
func Barrier() error {
	if err := ready(); err != nil {
		return err
	}
	return check("MPI_Barrier", C.sv_barrier())
}

// count converts a slice length to the int of MPI's C API.
func count(op string, n int) (C.int, error) {
	if n > math.MaxInt32 {
		return 0, fmt.Errorf("mpi: %s: %d elements exceed MPI's limit of %d", op, n, math.MaxInt32)
	}
	return C.int(n), nil
}

// ptr returns the address of the first element of s, or nil for an empty s.
func ptr[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

// Bcast copies buf of the process root into buf of every other process.
// Every process must pass the same root and a buf of the same length; a root
// outside 0..Size()-1 is an *Error from MPI.
func Bcast(buf []float64, root int) error {
	if err := ready(); err != nil {
		return err
	}
	n, err := count("Bcast", len(buf))
	if err != nil {
		return err
	}
	return check("MPI_Bcast", C.sv_bcast((*C.double)(ptr(buf)), n, C.int(root)))
}

// Send sends buf to the process dest with the given tag (MPI_Send), and
// returns when buf may be reused.
func Send(buf []float64, dest, tag int) error {
	if err := ready(); err != nil {
		return err
	}
	n, err := count("Send", len(buf))
	if err != nil {
		return err
	}
	return check("MPI_Send", C.sv_send((*C.double)(ptr(buf)), n, C.int(dest), C.int(tag)))
}

// Recv receives into buf what the process src sent with the given tag
// (MPI_Recv). A message of another length than buf's is an error.
func Recv(buf []float64, src, tag int) error {
	if err := ready(); err != nil {
		return err
	}
	n, err := count("Recv", len(buf))
	if err != nil {
		return err
	}
	var got C.int
	if err := check("MPI_Recv", C.sv_recv((*C.double)(ptr(buf)), n, C.int(src), C.int(tag), &got)); err != nil {
		return err
	}
	if int(got) != len(buf) {
		return fmt.Errorf("mpi: Recv: %d values from process %d, want %d", int(got), src, len(buf))
	}
	return nil
}

// Gather collects src of every process into dst of the process root, rank
// r's src at dst[r*len(src):(r+1)*len(src)]. Every process passes a src of
// the same length; dst must have length Size()*len(src) on root and is not
// used elsewhere (it may be nil). Every process passes the same root; a root
// outside 0..Size()-1 is an *Error from MPI.
func Gather(dst, src []float64, root int) error {
	if err := ready(); err != nil {
		return err
	}
	if rank == root && len(dst) != size*len(src) {
		panic("mpi: Gather: len(dst) != Size()*len(src)")
	}
	if _, err := count("Gather", size*len(src)); err != nil {
		return err
	}
	n := C.int(len(src))
	return check("MPI_Gather", C.sv_gather((*C.double)(ptr(src)), n, (*C.double)(ptr(dst)), C.int(root)))
}

// Allgather collects src of every process into dst of every process, rank
// r's src at dst[r*len(src):(r+1)*len(src)]. Every process passes a src of
// the same length, and a dst of length Size()*len(src).
func Allgather(dst, src []float64) error {
	if err := ready(); err != nil {
		return err
	}
	if len(dst) != size*len(src) {
		panic("mpi: Allgather: len(dst) != Size()*len(src)")
	}
	if _, err := count("Allgather", len(dst)); err != nil {
		return err
	}
	return check("MPI_Allgather", C.sv_allgather((*C.double)(ptr(src)), C.int(len(src)), (*C.double)(ptr(dst))))
}

// Allgatherv collects src of every process into dst of every process, in
// rank order: rank r contributes counts[r] values, placed after those of
// ranks 0..r-1. Every process passes the same counts, of length Size(), with
// len(src) == counts[Rank()] and len(dst) the sum of counts.
func Allgatherv(dst, src []float64, counts []int) error {
	if err := ready(); err != nil {
		return err
	}
	if len(counts) != size {
		panic("mpi: Allgatherv: len(counts) != Size()")
	}
	if len(src) != counts[rank] {
		panic("mpi: Allgatherv: len(src) != counts[Rank()]")
	}
	cs, ds, err := countsDispls("Allgatherv", counts)
	if err != nil {
		return err
	}
	if len(dst) != int(ds[size-1]+cs[size-1]) {
		panic("mpi: Allgatherv: len(dst) != sum of counts")
	}
	return check("MPI_Allgatherv", C.sv_allgatherv((*C.double)(ptr(src)), C.int(len(src)), (*C.double)(ptr(dst)),
		(*C.int)(unsafe.Pointer(&cs[0])), (*C.int)(unsafe.Pointer(&ds[0]))))
}

// scratch holds the counts and displacements of the last variable-length
// collective; only the thread of Init uses it, so it needs no lock, and
// reusing it keeps Allgatherv free of allocations.
var scratch []C.int

// countsDispls converts counts to C ints with their running displacements,
// in scratch.
func countsDispls(op string, counts []int) (cs, ds []C.int, err error) {
	if cap(scratch) < 2*len(counts) {
		scratch = make([]C.int, 2*len(counts))
	}
	cs = scratch[:len(counts)]
	ds = scratch[len(counts) : 2*len(counts)]
	total := 0
	for r, c := range counts {
		if c < 0 {
			panic("mpi: " + op + ": negative count")
		}
		ds[r] = C.int(total)
		cs[r] = C.int(c)
		total += c
		if total > math.MaxInt32 {
			return nil, nil, fmt.Errorf("mpi: %s: %d elements exceed MPI's limit of %d", op, total, math.MaxInt32)
		}
	}
	return cs, ds, nil
}

// AllgatherBytes collects a byte slice of any length from every process and
// returns them all, indexed by rank, on every process. It allocates and is
// meant for messages, names and small records, not for hot loops.
func AllgatherBytes(src []byte) ([][]byte, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	n, err := count("AllgatherBytes", len(src))
	if err != nil {
		return nil, err
	}
	lens := make([]C.int, size)
	if err := check("MPI_Allgather", C.sv_allgather_int(n, &lens[0])); err != nil {
		return nil, err
	}
	counts := make([]int, size)
	for r, l := range lens {
		counts[r] = int(l)
	}
	cs, ds, err := countsDispls("AllgatherBytes", counts)
	if err != nil {
		return nil, err
	}
	all := make([]byte, int(ds[size-1]+cs[size-1]))
	if err := check("MPI_Allgatherv", C.sv_allgatherv_bytes(ptr(src), n, ptr(all),
		&cs[0], &ds[0])); err != nil {
		return nil, err
	}
	out := make([][]byte, size)
	for r := range out {
		out[r] = all[ds[r] : ds[r]+cs[r] : ds[r]+cs[r]]
	}
	return out, nil
}

// Allreduce sets dst to the element-wise sum of src over every process
// (MPI_Allreduce with MPI_SUM). MPI does not fix the order of the additions,
// so the result may differ in its last bits with the number of processes;
// OrderedSum is the reproducible alternative. dst and src must have the same
// length and must not overlap.
func Allreduce(dst, src []float64) error {
	if err := ready(); err != nil {
		return err
	}
	if len(dst) != len(src) {
		panic("mpi: Allreduce: len(dst) != len(src)")
	}
	n, err := count("Allreduce", len(src))
	if err != nil {
		return err
	}
	return check("MPI_Allreduce", C.sv_allreduce_sum((*C.double)(ptr(src)), (*C.double)(ptr(dst)), n))
}
