// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
)

// binary is the glmmfit executable built by TestMain: the end-to-end tests
// run it as a user would.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "glmmfit-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "glmmfit")
	build := exec.Command("go", "build", "-o", binary, ".")
	build.Stderr = os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building glmmfit:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// result is what one run of the binary produced.
type result struct {
	stdout, stderr string
	code           int
	elapsed        time.Duration
}

// glmmfit runs the binary with args in dir (the test's temporary directory
// if empty), feeding stdin, with env added to the environment.
func glmmfit(t *testing.T, dir, stdin string, env []string, args ...string) result {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	res := result{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	default:
		t.Fatalf("running glmmfit %s: %v", strings.Join(args, " "), err)
	}
	return res
}

// mustSucceed fails the test unless the run exited 0 with nothing on
// standard error but the Pareto diagnostic's warnings, which depend on the
// posterior's shape rather than on what the test checks.
func mustSucceed(t *testing.T, r result, args ...string) {
	t.Helper()
	if r.code != 0 || dropDiagnosticWarnings(r.stderr) != "" {
		t.Fatalf("glmmfit %s: exit %d, stderr %q", strings.Join(args, " "), r.code, r.stderr)
	}
}

// dataDir returns the directory of the benchmark data sets, or skips the
// test when the file it needs is absent.
func dataDir(t *testing.T, file string) string {
	t.Helper()
	dir, err := filepath.Abs(datasets.DataDir(""))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, file)); err != nil {
		t.Skipf("benchmark data %s not found in %s (set SPARSEVI_DATA): %v", file, dir, err)
	}
	return dir
}

// readDoc parses a JSON document of a fit.
func readDoc(t *testing.T, b []byte) *document {
	t.Helper()
	var doc document
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("invalid JSON: %v\n%.400s", err, b)
	}
	return &doc
}

// writeFile writes a file into dir and returns its path.
func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
