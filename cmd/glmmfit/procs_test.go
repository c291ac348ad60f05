// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/sparsevi/sparsevi/glmm"
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
