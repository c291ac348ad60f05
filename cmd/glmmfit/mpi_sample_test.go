// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build mpi && cgo

package main

import (
	"os/exec"
	"reflect"
	"testing"

	"github.com/sparsevi/sparsevi/glmm"
)

// TestMPISampledStart checks that a fit of glmm.SampleStartSubjects
// subjects, whose model's start runs on a sample of them, writes the JSON
// of the fit alone under mpirun: on 2 processes, each reading the whole
// file, and on 3 with -shard, each holding its own subjects' rows; the
// default method (RVB1 at the model's start) and GVA. Every process must
// draw the same sample by global subject index: a process that sampled its
// own subjects alone ended 2.4 nats off on 2 processes. The mpirun tests
// above fit 1000 subjects, below the sample's threshold.
func TestMPISampledStart(t *testing.T) {
	bin, data := mpiGlmmfit(t, glmm.SampleStartSubjects)
	base := []string{"fit", "-data", data, "-formula", "y ~ t + x1 + x2 + x3 + (1 | id)", "-family", "bernoulli",
		"-format", "json", "-quiet"}
	for _, method := range []string{"auto", "gva"} {
		args := append(base[:len(base):len(base)], "-method", method)
		alone, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("%s alone: %v", method, err)
		}
		want := withoutTimings(t, alone)
		for _, run := range []struct {
			np    int
			shard bool
		}{{2, false}, {3, true}} {
			a := args
			if run.shard {
				a = append(args[:len(args):len(args)], "-shard")
			}
			if got := withoutTimings(t, mpiRun(t, run.np, bin, a...)); !reflect.DeepEqual(got, want) {
				t.Errorf("%s on %d processes (shard %t): the JSON differs from the fit alone", method, run.np, run.shard)
			}
		}
	}
}
