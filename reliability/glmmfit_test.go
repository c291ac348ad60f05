// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package reliability_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	glmmfitOnce sync.Once
	glmmfitBin  string
	glmmfitErr  error
)

// glmmfitBinary builds cmd/glmmfit once for the end-to-end catalogue.
func glmmfitBinary(t *testing.T) string {
	t.Helper()
	glmmfitOnce.Do(func() {
		dir, err := os.MkdirTemp("", "reliability-glmmfit")
		if err != nil {
			glmmfitErr = err
			return
		}
		glmmfitBin = filepath.Join(dir, "glmmfit")
		out, err := exec.Command("go", "build", "-o", glmmfitBin, "../cmd/glmmfit").CombinedOutput()
		if err != nil {
			glmmfitErr = fmt.Errorf("building glmmfit: %v\n%s", err, out)
		}
	})
	if glmmfitErr != nil {
		t.Fatal(glmmfitErr)
	}
	return glmmfitBin
}

// catalogueCSV writes the data files of the catalogue into dir.
func catalogueCSV(t *testing.T, dir string) {
	t.Helper()
	var ok, zero, ones, sep bytes.Buffer
	ok.WriteString("id,y,x,w,z\n")
	zero.WriteString("id,y,x\n")
	ones.WriteString("id,y,x\n")
	sep.WriteString("id,y,x\n")
	for i := range 40 {
		for j := range 5 {
			x := float64((i*7+j*3)%11)/5 - 1
			y := (i + j) % 3
			fmt.Fprintf(&ok, "s%d,%d,%.2f,1,%d\n", i, y, x, i%4)
			fmt.Fprintf(&zero, "s%d,0,%.2f\n", i, x)
			fmt.Fprintf(&ones, "s%d,1,%.2f\n", i, x)
			b := 0
			if x > 0 {
				b = 1
			}
			fmt.Fprintf(&sep, "s%d,%d,%.2f\n", i, b, x)
		}
	}
	files := map[string]string{
		"ok.csv": ok.String(), "zero.csv": zero.String(), "ones.csv": ones.String(), "sep.csv": sep.String(),
		"semicolon.csv": strings.ReplaceAll(ok.String(), ",", ";"),
		"tab.csv":       strings.ReplaceAll(ok.String(), ",", "\t"),
		"cr.csv":        strings.ReplaceAll(ok.String(), "\n", "\r"),
		"huge.csv":      "id,y,x\na,1,0\na,1e300,1\nb,0,0\nb,2,1\n",
		"spaced.csv":    "id,y,my x\na,1,0\na,2,1\nb,0,0\nb,2,1\nc,1,0\nc,3,1\n",
	}
	var u16 bytes.Buffer
	u16.Write([]byte{0xff, 0xfe})
	for _, c := range []byte(ok.String()) {
		u16.Write([]byte{c, 0})
	}
	files["utf16.csv"] = u16.String()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGlmmfitCatalogue runs the built glmmfit on the cases of issue 12 as a
// user would meet them: each ends with a result and the right exit code,
// or exit 1 and a message naming the row, column, flag or token; nothing
// panics, and no file is lost. (Signals and the progress display are
// tested in cmd/glmmfit, on a pseudo-terminal.)
func TestGlmmfitCatalogue(t *testing.T) {
	bin := glmmfitBinary(t)
	dir := t.TempDir()
	catalogueCSV(t, dir)
	if err := os.Symlink("ok.csv", filepath.Join(dir, "link.csv")); err != nil {
		t.Fatal(err)
	}
	fit := func(data, fml, fam string, extra ...string) []string {
		return append([]string{"fit", "-data", data, "-formula", fml, "-family", fam, "-quiet", "-max-iter", "400"}, extra...)
	}
	for _, c := range []struct {
		name string
		args []string
		code []int    // acceptable exit codes
		want []string // substrings of stderr
	}{
		{"ordinary fit", fit("ok.csv", "y ~ x + (1 | id)", "poisson"), []int{0, 3}, nil},
		{"-out is -data", fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-out", "ok.csv"), []int{1}, []string{"-out ok.csv", "-data ok.csv"}},
		{"-out is a link to -data", fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-out", "link.csv"), []int{1}, []string{"-out link.csv", "same file"}},
		{"-out is -trace", fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-out", "a.json", "-trace", "./a.json"), []int{1}, []string{"-trace ./a.json"}},
		{"-plot in a missing directory", fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-plot", "no/p.png"), []int{1}, []string{"-plot no/p.png", "does not exist"}},
		{"-ref misspelt", fit("ok.csv", "y ~ z + (1 | id)", "poisson", "-ref", "zz=1"), []int{1}, []string{"-ref zz=1", `did you mean "z"`}},
		{"-ref on a numeric column", fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-ref", "x=1"), []int{1}, []string{"-ref x=1", "numeric"}},
		{"-weights misspelt", fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-weights", "ww"), []int{1}, []string{"-weights", `did you mean "w"`}},
		{"all-zero counts", fit("zero.csv", "y ~ x + (1 | id)", "poisson", "-max-iter", "20000"), []int{0}, []string{"warning", "every response is 0"}},
		{"all-one bernoulli", fit("ones.csv", "y ~ x + (1 | id)", "bernoulli"), []int{0, 3}, []string{"warning", "every response is a success"}},
		{"separation", fit("sep.csv", "y ~ x + (1 | id)", "bernoulli", "-max-iter", "20000"), []int{0, 3}, []string{"warning", "hardly inform the fixed effects x"}},
		{"semicolon-separated", fit("semicolon.csv", "y ~ x + (1 | id)", "poisson"), []int{1}, []string{"semicolon.csv", "semicolon-separated"}},
		{"tab-separated", fit("tab.csv", "y ~ x + (1 | id)", "poisson"), []int{1}, []string{"tab.csv", "tab-separated"}},
		{"UTF-16", fit("utf16.csv", "y ~ x + (1 | id)", "poisson"), []int{1}, []string{"utf16.csv", "UTF-16"}},
		{"CR line ends", fit("cr.csv", "y ~ x + (1 | id)", "poisson"), []int{0, 3}, nil},
		{"a count of 1e300", fit("huge.csv", "y ~ x + (1 | id)", "poisson"), []int{1}, []string{"line 3", "1e+300"}},
		{"a name with a space", fit("spaced.csv", "y ~ my x + (1 | id)", "poisson"), []int{1}, []string{"`my x`"}},
		{"-prior-sd 1e-300", fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-prior-sd", "1e-300"), []int{2}, []string{"-prior-sd"}},
		{"-prior-sd 1e300", fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-prior-sd", "1e300"), []int{2}, []string{"-prior-sd"}},
		{"missing-value advice speaks flags", []string{"fit", "-data", "huge.csv", "-formula", "y ~ q + (1 | id)", "-family", "poisson"}, []int{1}, []string{`"q"`}},
		{"-max-memory too small", fit("ok.csv", "y ~ x + (1 | id)", "poisson", "-max-memory", "1MB"), []int{1}, []string{"needs about", "-max-memory"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command(bin, c.args...)
			cmd.Dir = dir
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			msg := stderr.String()
			okCode := false
			for _, want := range c.code {
				okCode = okCode || code == want
			}
			if !okCode {
				t.Errorf("exit %d, want one of %v; stderr %q", code, c.code, msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr %q lacks %q", msg, w)
				}
			}
			for _, bad := range []string{"panic", "goroutine ", "Options.", "runtime error"} {
				if strings.Contains(msg, bad) {
					t.Errorf("stderr holds %q: %s", bad, msg)
				}
			}
		})
	}
	// No data file was touched.
	if b, err := os.ReadFile(filepath.Join(dir, "ok.csv")); err != nil || !strings.HasPrefix(string(b), "id,y,x,w,z\n") {
		t.Errorf("ok.csv changed or lost: %v", err)
	}
}
