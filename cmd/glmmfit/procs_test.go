// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/simshare"
)

// fakeProcesses is the place of a process in a job of size; it exchanges
// nothing.
type fakeProcesses struct{ rank, size int }

func (f fakeProcesses) Rank() int                              { return f.rank }
func (f fakeProcesses) Size() int                              { return f.size }
func (fakeProcesses) Receive([]float64) error                  { return nil }
func (fakeProcesses) Pass([]float64) error                     { return nil }
func (fakeProcesses) Allgatherv(_, _ []float64, _ []int) error { return nil }
func (fakeProcesses) Exchanges() (int, time.Duration)          { return 0, 0 }

// TestCheckProcesses: what does not run as several processes is refused in
// the command line's words (the flag, the formula's term), and the rest
// passes, alone or not.
func TestCheckProcesses(t *testing.T) {
	var b strings.Builder
	b.WriteString("y,x,id,item\n")
	for i := range 40 {
		fmt.Fprintf(&b, "%d,%d,s%d,w%d\n", i%3, i%5, i%10, i%4)
	}
	fr := mustFrame(t, b.String())
	plain := mustDesign(t, fr, "y ~ x + (1 | id)", glmm.Poisson).Model()
	crossed := mustDesign(t, fr, "y ~ x + (1 | id) + (1 | item)", glmm.Poisson).Model()
	two := fakeProcesses{rank: 1, size: 2}
	for _, c := range []struct {
		name      string
		procs     processes
		m         *glmm.Model
		optimizer string
		want      string // "" for no error
	}{
		{"alone", nil, crossed, "vogn", ""},
		{"one process", fakeProcesses{0, 1}, crossed, "vogn", ""},
		{"plain", two, plain, "snngm", ""},
		{"vogn", two, plain, "vogn", "-optimizer vogn does not run as several processes (mpirun -np 2)"},
		{"crossed", two, crossed, "snngm", "crossed random effects (1 | item) do not run as several processes"},
	} {
		err := checkProcesses(c.procs, c.m, &fitOptions{optimizer: c.optimizer})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
	}
}

// TestShardFlags: -shard refuses, in the command line's words, what needs
// every subject in one process; alone it fits as without it, bit for bit;
// in an MPI job of a crossed model it is refused in glmmfit's own words,
// and so is standard input in any MPI job of several processes.
func TestShardFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-out", "fit.json"}, "-out saves the fit with its training data, which -shard leaves spread over the processes"},
	} {
		r := glmmfit(t, t.TempDir(), "", nil, append([]string{"fit", "-example", "-shard"}, c.args...)...)
		if r.code != exitUsage || !strings.Contains(r.stderr, c.want) {
			t.Errorf("-shard %v: exit %d, %q; want a usage error saying %q", c.args, r.code, r.stderr, c.want)
		}
	}
	var docs [2]map[string]any
	for k, args := range [][]string{{}, {"-shard"}} {
		r := glmmfit(t, "", "", nil, append([]string{"fit", "-example", "-format", "json", "-quiet", "-correct", "never"}, args...)...)
		mustSucceed(t, r, append([]string{"fit", "-example"}, args...)...)
		docs[k] = withoutTimings(t, []byte(r.stdout))
	}
	if !reflect.DeepEqual(docs[0], docs[1]) {
		t.Error("-shard alone changes the fit")
	}
	var b strings.Builder
	b.WriteString("y,x,id,item\n")
	for i := range 600 {
		fmt.Fprintf(&b, "%d,%d,s%d,w%d\n", i%3, i%5, i%300, i%4)
	}
	dir := t.TempDir()
	writeFile(t, dir, "crossed.csv", b.String())
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	var stdout bytes.Buffer
	code := runIn(fakeProcesses{0, 2}, []string{"fit", "-data", filepath.Join(dir, "crossed.csv"), "-formula", "y ~ x + (1 | id) + (1 | item)",
		"-family", "poisson", "-shard", "-quiet"}, strings.NewReader(""), &stdout, stderr)
	msg, _ := os.ReadFile(stderr.Name())
	if code != exitFail || !strings.Contains(string(msg), "crossed random effects do not run with -shard") {
		t.Errorf("a crossed model with -shard on 2 processes: exit %d, %q; want %d and a message naming -shard", code, msg, exitFail)
	}
	// Standard input, which mpirun gives the first process alone, is
	// refused in every process, with -shard or without.
	for _, rank := range []int{0, 1} {
		for _, shard := range []string{"-shard", "-quiet"} {
			code, msg := runProcs(t, fakeProcesses{rank, 2}, "fit", "-data", "-", "-formula", "y ~ x + (1 | id)", "-family", "poisson", "-quiet", shard)
			if code != exitUsage || !strings.Contains(msg, "-data - (standard input) does not run as several processes") {
				t.Errorf("-data - %s in process %d of 2: exit %d, %q; want a usage error naming standard input", shard, rank, code, msg)
			}
		}
	}
}

// TestLaunchedProcesses: the number of processes comes from mpirun's or
// PMI's variables; a PMIx rank alone, or a Slurm step of several tasks,
// leaves it to MPI.
func TestLaunchedProcesses(t *testing.T) {
	vars := []string{"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS", "PMIX_RANK"}
	for _, c := range []struct {
		set  map[string]string
		want int
	}{
		{nil, 0},
		{map[string]string{"OMPI_COMM_WORLD_SIZE": "3", "PMIX_RANK": "1"}, 3},
		{map[string]string{"PMI_SIZE": "2"}, 2},
		{map[string]string{"SLURM_STEP_NUM_TASKS": "16", "PMIX_RANK": "5"}, unknownProcesses},
		{map[string]string{"SLURM_STEP_NUM_TASKS": "16"}, unknownProcesses},
		{map[string]string{"PMIX_RANK": "0"}, unknownProcesses},
		{map[string]string{"SLURM_STEP_NUM_TASKS": "1"}, 0},
	} {
		for _, v := range vars {
			t.Setenv(v, c.set[v])
		}
		if got := launchedProcesses(); got != c.want {
			t.Errorf("%v: %d processes, want %d", c.set, got, c.want)
		}
	}
}

// chainProcesses is a process of a group of goroutines
// (simshare.NewGroups) that runs glmmfit in one test binary.
type chainProcesses struct{ *simshare.Group }

// Allgatherv passes dst along the chain, each process adding its own.
func (c chainProcesses) Allgatherv(dst, src []float64, counts []int) error {
	if err := c.Receive(dst); err != nil {
		return err
	}
	at := 0
	for _, n := range counts[:c.Rank()] {
		at += n
	}
	copy(dst[at:], src)
	return c.Pass(dst)
}

func (chainProcesses) Exchanges() (int, time.Duration) { return 0, 0 }

// runGroup runs glmmfit with args in size goroutine processes linked in a
// chain, and returns each one's exit code and messages.
func runGroup(t *testing.T, size int, args ...string) ([]int, []string) {
	t.Helper()
	codes, msgs := make([]int, size), make([]string, size)
	var wg sync.WaitGroup
	for k, g := range simshare.NewGroups(size) {
		wg.Go(func() { codes[k], msgs[k] = runProcs(t, chainProcesses{g}, args...) })
	}
	wg.Wait()
	return codes, msgs
}
