// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutputsNeverOverwriteInputs runs every command with an output that is
// an input or another output under another name, or cannot be written, and
// checks that it is refused with exit 1 naming both flags before any work,
// and that every file is untouched.
func TestOutputsNeverOverwriteInputs(t *testing.T) {
	dir := t.TempDir()
	sim := glmmfit(t, dir, "", nil, "simulate", "-family", "poisson", "-subjects", "30", "-obs", "4",
		"-beta", "0.5,0.2", "-re-sd", "0.5", "-seed", "3", "-out", "a.csv", "-truth", "truth.json")
	mustSucceed(t, sim)
	fit := glmmfit(t, dir, "", nil, "fit", "-data", "a.csv", "-formula", "y ~ t + (1 | id)", "-family", "poisson", "-out", "fit.json", "-quiet")
	if fit.code != 0 {
		t.Fatalf("fit: exit %d: %s", fit.code, fit.stderr)
	}
	if err := os.Symlink("a.csv", filepath.Join(dir, "link.csv")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(dir, filepath.Join(dir, "here")); err != nil {
		t.Fatal(err)
	}
	fitArgs := []string{"fit", "-data", "a.csv", "-formula", "y ~ t + (1 | id)", "-family", "poisson", "-quiet"}
	predArgs := []string{"predict", "-fit", "fit.json", "-data", "a.csv"}
	simArgs := []string{"simulate", "-family", "poisson", "-subjects", "30", "-obs", "4", "-beta", "0.5,0.2", "-re-sd", "0.5"}
	for _, c := range []struct {
		name string
		args []string
		want []string // in the message
	}{
		{"fit -out is -data", append(fitArgs, "-out", "a.csv"), []string{"-out a.csv", "-data a.csv"}},
		{"fit -out is ./-data", append(fitArgs, "-out", "./a.csv"), []string{"-out ./a.csv", "-data a.csv"}},
		{"fit -out is the absolute -data", append(fitArgs, "-out", filepath.Join(dir, "a.csv")), []string{"-data a.csv"}},
		{"fit -out is a link to -data", append(fitArgs, "-out", "link.csv"), []string{"-out link.csv", "-data a.csv"}},
		{"fit -trace is -data through a linked directory", append(fitArgs, "-trace", "here/a.csv"), []string{"-trace here/a.csv", "-data a.csv"}},
		{"fit -out is -trace", append(fitArgs, "-out", "x.json", "-trace", "./x.json"), []string{"-out x.json", "-trace ./x.json"}},
		{"fit -ranef is -data", append(fitArgs, "-ranef", "link.csv"), []string{"-ranef link.csv", "-data a.csv"}},
		{"fit -ranef is -trace", append(fitArgs, "-ranef", "r.csv", "-trace", "r.csv"), []string{"-ranef r.csv", "-trace r.csv"}},
		{"fit -plot in a missing directory", append(fitArgs, "-plot", "nowhere/p.png"), []string{"-plot nowhere/p.png", "does not exist"}},
		{"fit -out is a directory", append(fitArgs, "-out", "here"), []string{"-out here", "is a directory"}},
		{"predict -out is -fit", append(predArgs, "-out", "fit.json"), []string{"-out fit.json", "-fit fit.json"}},
		{"predict -out is -data", append(predArgs, "-out", "link.csv"), []string{"-out link.csv", "-data a.csv"}},
		{"simulate -out is -truth", append(simArgs, "-out", "s.csv", "-truth", "./s.csv"), []string{"-out s.csv", "-truth ./s.csv"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := snapshot(t, dir)
			r := glmmfit(t, dir, "", nil, c.args...)
			if r.code != exitFail {
				t.Errorf("exit %d, want %d; stderr %q", r.code, exitFail, r.stderr)
			}
			for _, w := range c.want {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("message %q does not name %q", r.stderr, w)
				}
			}
			if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 || r.stdout != "" {
				t.Errorf("more than one line of output: stdout %q, stderr %q", r.stdout, r.stderr)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("files changed:\nbefore %s\nafter  %s", before, after)
			}
		})
	}
}

// snapshot returns the names and contents of the regular files in dir.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(e.Name() + ":" + string(data) + ";")
	}
	return b.String()
}

// TestFailedWriteKeepsTheOldFile: under a file-size limit too small for a
// fit file, writing -out fails with exit 1 and the previous fit file is
// left whole, with no temporary file beside it.
func TestFailedWriteKeepsTheOldFile(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	args := []string{"fit", "-example", "-quiet", "-correct", "never", "-out", "prev.json"}
	mustSucceed(t, glmmfit(t, dir, "", nil, args...), args...)
	prev, err := os.ReadFile(filepath.Join(dir, "prev.json"))
	if err != nil {
		t.Fatal(err)
	}
	// 8 blocks of 512 bytes: smaller than a fit file; SIGXFSZ ignored so
	// that the write fails instead of killing the process.
	cmd := exec.Command("sh", "-c", `trap '' XFSZ; ulimit -f 8; exec "$0" "$@"`, binary, "fit", "-example", "-method", "gva", "-seed", "5", "-quiet", "-correct", "never", "-out", "prev.json")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if code := exitCode(t, err); code != exitFail {
		t.Errorf("exit %d under ulimit -f 8, want %d; output %q", code, exitFail, out)
	}
	if !strings.Contains(string(out), "-out") {
		t.Errorf("the message does not name -out: %q", out)
	}
	now, err := os.ReadFile(filepath.Join(dir, "prev.json"))
	if err != nil || string(now) != string(prev) {
		t.Errorf("the previous fit file changed (%d bytes, was %d): %v", len(now), len(prev), err)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if e.Name() != "prev.json" {
			t.Errorf("file %s left beside the fit file", e.Name())
		}
	}
}

// TestTimeoutBoundsTheRun: -timeout stops the run, whatever phase it is in,
// exits 3 and writes what was computed; the limited run takes less time
// than the same run without a limit, measured side by side.
func TestTimeoutBoundsTheRun(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "bernoulli", "-subjects", "1000", "-obs", "6",
		"-beta", "-0.5,0.8,0.4", "-re-sd", "1", "-seed", "9", "-out", "big.csv"))
	args := []string{"fit", "-data", "big.csv", "-formula", "y ~ t + x1 + (1 | id)", "-family", "bernoulli", "-method", "rvb2", "-quiet", "-tol", "1e-9"}
	full := glmmfit(t, dir, "", nil, append(args, "-max-iter", "100000")...)
	if full.code != exitOK && full.code != exitLimit {
		t.Fatalf("untimed fit: exit %d: %s", full.code, full.stderr)
	}
	limited := glmmfit(t, dir, "", nil, append(args, "-max-iter", "100000", "-timeout", "200ms", "-out", "fit.json")...)
	if limited.code != exitLimit || !strings.Contains(limited.stderr, "-timeout 200ms") {
		t.Errorf("-timeout 200ms: exit %d, stderr %q; want exit %d naming -timeout", limited.code, limited.stderr, exitLimit)
	}
	_, err := os.Stat(filepath.Join(dir, "fit.json"))
	switch before := strings.Contains(limited.stderr, "before the first iteration"); {
	case before && err == nil:
		t.Errorf("-timeout 200ms stopped before the first iteration and wrote a fit file: %q", limited.stderr)
	case !before && err != nil:
		// On a loaded machine the limit may come before the first
		// iteration (TestTimeoutBeforeFirstIteration); otherwise the
		// last good state is written.
		t.Errorf("-timeout: no fit file written: %v", err)
	}
	// A limit that has passed before the data are read stops the reading.
	r := glmmfit(t, dir, "", nil, append(args, "-timeout", "1ns")...)
	if r.code != exitLimit || !strings.Contains(r.stderr, "-timeout 1ns") {
		t.Errorf("-timeout 1ns: exit %d, stderr %q; want exit %d naming -timeout", r.code, r.stderr, exitLimit)
	}
	t.Logf("untimed %v, -timeout 200ms %v", full.elapsed, limited.elapsed)
	if limited.elapsed >= full.elapsed {
		t.Errorf("-timeout 200ms took %v, no less than the untimed run's %v", limited.elapsed, full.elapsed)
	}
}

// TestTimeoutBeforeFirstIteration: a -timeout that ends the run before the
// fit's first iteration, in the reading, the start or just after it,
// exits 3 naming -timeout and writes nothing, neither the fit file nor a
// summary whose estimates would be the start's.
func TestTimeoutBeforeFirstIteration(t *testing.T) {
	dir := t.TempDir()
	// 1ns: the limit has passed before the fit starts (the built-in
	// example's reading does not stop for it), so no iteration can run.
	r := glmmfit(t, dir, "", nil, "fit", "-example", "-method", "gva", "-timeout", "1ns", "-out", "fit.json")
	if r.code != exitLimit || !strings.Contains(r.stderr, "-timeout 1ns") || !strings.Contains(r.stderr, "nothing was written") {
		t.Errorf("exit %d, stderr %q; want exit %d naming -timeout, nothing written", r.code, r.stderr, exitLimit)
	}
	if strings.Contains(r.stdout, "Fixed effects") {
		t.Errorf("a summary was printed:\n%s", r.stdout)
	}
	if _, err := os.Stat(filepath.Join(dir, "fit.json")); err == nil {
		t.Error("a fit file was written")
	}
}
