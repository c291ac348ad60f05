// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/glmm"
)

func TestClosest(t *testing.T) {
	cols := []string{"patientID", "outcome", "treatment", "time", "visit"}
	for _, c := range []struct {
		name string
		want []string
	}{
		{"outcom", []string{"outcome"}},
		{"Outcome", []string{"outcome"}},
		{"tim", []string{"time"}},
		{"patient", []string{"patientID"}},
		{"zzzzzzzzzz", cols}, // nothing near: every column, there are few
	} {
		if got := closest(c.name, cols); !slices.Equal(got, c.want) {
			t.Errorf("closest(%q) = %v, want %v", c.name, got, c.want)
		}
	}
	many := make([]string, 20)
	for k := range many {
		many[k] = strings.Repeat("q", k+20)
	}
	if got := closest("x", many); len(got) != 0 {
		t.Errorf("closest among many far names = %v, want none", got)
	}
}

// TestColumnFlags: every flag that names a column fails with exit 1 when the
// column is missing or of the wrong kind, naming the flag, the column and
// the closest names; a right one fits.
func TestColumnFlags(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "d.csv", "id,y,grp,x,w\n1,0,a,0.5,1\n1,1,b,1.5,2\n2,1,a,0.1,1\n2,0,b,2.0,1\n3,1,a,0.3,1\n3,1,b,0.7,1\n4,0,a,1.1,2\n4,0,b,0.2,1\n")
	base := []string{"fit", "-data", "d.csv", "-formula", "y ~ grp + x + (1 | id)", "-family", "bernoulli", "-method", "gva", "-quiet"}
	for _, c := range []struct {
		extra []string
		want  []string
	}{
		{[]string{"-ref", "gpr=b"}, []string{"-ref gpr=b", `"gpr"`, `did you mean "grp"`}},
		{[]string{"-ref", "grp=c"}, []string{"-ref grp=c", `no level "c"`}},
		{[]string{"-ref", "x=1"}, []string{"-ref x=1", "numeric", "factor(x)"}},
		{[]string{"-ref", "w=1"}, []string{"-ref w=1", "does not use"}},
		{[]string{"-weights", "ww"}, []string{"-weights", `"ww"`, `did you mean "w"`}},
		{[]string{"-offset", "grp"}, []string{"-offset", `"grp"`, "not numeric"}},
		{[]string{"-offset", "xx"}, []string{"-offset", `"xx"`, `did you mean "x"`}},
	} {
		args := append(slices.Clone(base), c.extra...)
		r := glmmfit(t, dir, "", nil, args...)
		if r.code != exitFail {
			t.Errorf("%v: exit %d, want %d; stderr %q", c.extra, r.code, exitFail, r.stderr)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: message %q lacks %q", c.extra, r.stderr, w)
			}
		}
	}
	ok := append(slices.Clone(base), "-ref", "grp=b", "-weights", "w")
	if r := glmmfit(t, dir, "", nil, ok...); r.code != 0 && r.code != exitLimit {
		t.Errorf("%v: exit %d: %s", ok, r.code, r.stderr)
	} else if !strings.Contains(r.stdout, "grpa") {
		t.Errorf("-ref grp=b: the coefficient of level a is not reported:\n%s", r.stdout)
	}
}

// TestBinomialZeroOneIsBernoulli: a 0/1 response gets the same fit whether
// it is called binomial (what glmer users type) or bernoulli.
func TestBinomialZeroOneIsBernoulli(t *testing.T) {
	dir := t.TempDir()
	sim := glmmfit(t, dir, "", nil, "simulate", "-family", "bernoulli", "-subjects", "60", "-obs", "5",
		"-beta", "-0.5,0.8", "-re-sd", "1", "-seed", "11", "-out", "b.csv")
	mustSucceed(t, sim)
	var outs []string
	for _, fam := range []string{"binomial", "bernoulli"} {
		args := []string{"fit", "-data", "b.csv", "-formula", "y ~ t + (1 | id)", "-family", fam, "-quiet"}
		r := glmmfit(t, dir, "", nil, args...)
		if r.code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.code, r.stderr)
		}
		// The timing line differs from run to run.
		var keep []string
		for _, l := range strings.Split(r.stdout, "\n") {
			if !strings.Contains(l, "wall time") {
				keep = append(keep, l)
			}
		}
		outs = append(outs, strings.Join(keep, "\n"))
	}
	if outs[0] != outs[1] {
		t.Errorf("binomial and bernoulli fits differ:\n%s\n---\n%s", outs[0], outs[1])
	}
	if !strings.Contains(outs[0], "Family: bernoulli") || !strings.Contains(outs[0], "rvb1 (") {
		t.Errorf("the summary does not say a bernoulli model was fitted by rvb1:\n%s", outs[0])
	}
}

// TestErrorsSpeakFlags: messages that would advise a library option advise
// the flag instead, and the flag they name works.
func TestErrorsSpeakFlags(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "m.csv", "id,y,t\n1,1,0\n1,,1\n1,2,2\n2,0,0\n2,1,1\n2,3,2\n3,1,0\n3,0,1\n3,2,2\n")
	for _, c := range []struct {
		args []string
		want string
		fix  []string
	}{
		{[]string{"-formula", "y ~ t + (1 | id)"}, "-missing drop", []string{"-missing", "drop"}},
		{[]string{"-formula", "y ~ 1 + (1 | id) + (0 + t | id)", "-missing", "drop", "-double-bar", "reject"}, "-double-bar correlated", []string{"-double-bar", "correlated"}},
	} {
		args := append([]string{"fit", "-data", "m.csv", "-family", "poisson", "-quiet", "-max-iter", "200"}, c.args...)
		r := glmmfit(t, dir, "", nil, args...)
		if r.code != exitFail || !strings.Contains(r.stderr, c.want) || strings.Contains(r.stderr, "Options.") {
			t.Errorf("%v: exit %d, message %q; want exit 1 advising %q", c.args, r.code, r.stderr, c.want)
		}
		r = glmmfit(t, dir, "", nil, append(args, c.fix...)...)
		if r.code != exitOK && r.code != exitLimit {
			t.Errorf("%v with %v: exit %d: %s", c.args, c.fix, r.code, r.stderr)
		}
	}
}

// TestFileDialects: files as spreadsheets and other tools write them are
// read, or refused with a message saying what the file is and what to do.
func TestFileDialects(t *testing.T) {
	dir := t.TempDir()
	rows := [][]string{{"id", "y", "x"}, {"1", "0", "0.5"}, {"1", "1", "1.5"}, {"2", "1", "0.1"}, {"2", "0", "2"}, {"3", "1", "0.7"}, {"3", "0", "1.2"}}
	join := func(sep, eol string) string {
		var b strings.Builder
		for _, r := range rows {
			b.WriteString(strings.Join(r, sep) + eol)
		}
		return b.String()
	}
	utf16 := func(s string) string {
		b := []byte{0xff, 0xfe}
		for _, c := range []byte(s) {
			b = append(b, c, 0)
		}
		return string(b)
	}
	for _, c := range []struct {
		name, content string
		want          string // "" reads it
	}{
		{"comma.csv", join(",", "\n"), ""},
		{"crlf.csv", join(",", "\r\n"), ""},
		{"cr.csv", join(",", "\r"), ""},
		{"bom.csv", "\ufeff" + join(",", "\n"), ""},
		{"semicolon.csv", join(";", "\n"), "semicolon-separated"},
		{"tab.csv", join("\t", "\n"), "tab-separated"},
		{"utf16.csv", utf16(join(",", "\r\n")), "UTF-16"},
	} {
		writeFile(t, dir, c.name, c.content)
		r := glmmfit(t, dir, "", nil, "fit", "-data", c.name, "-formula", "y ~ x + (1 | id)", "-family", "bernoulli", "-method", "gva", "-quiet", "-max-iter", "100")
		if c.want == "" {
			if r.code != exitOK && r.code != exitLimit {
				t.Errorf("%s: exit %d: %s", c.name, r.code, r.stderr)
			}
			continue
		}
		if r.code != exitFail || !strings.Contains(r.stderr, c.want) || !strings.Contains(r.stderr, c.name) {
			t.Errorf("%s: exit %d, message %q; want exit 1 naming the file and %q", c.name, r.code, r.stderr, c.want)
		}
	}
}

// TestNamesBeyondASCII: columns with letters beyond ASCII are names in a
// formula, and a column with a space gets advice to quote it.
func TestNamesBeyondASCII(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "n.csv", "id,y,größe,my x\n1,0,1,0.5\n1,1,2,1.5\n2,1,3,0.1\n2,0,1,2\n3,1,2,0.4\n3,0,3,0.9\n")
	base := []string{"fit", "-data", "n.csv", "-family", "bernoulli", "-method", "gva", "-quiet", "-max-iter", "100"}
	if r := glmmfit(t, dir, "", nil, append(base, "-formula", "y ~ größe + (1 | id)")...); r.code != exitOK && r.code != exitLimit {
		t.Errorf("größe: exit %d: %s", r.code, r.stderr)
	}
	if r := glmmfit(t, dir, "", nil, append(base, "-formula", "y ~ `my x` + (1 | id)")...); r.code != exitOK && r.code != exitLimit {
		t.Errorf("`my x`: exit %d: %s", r.code, r.stderr)
	}
	r := glmmfit(t, dir, "", nil, append(base, "-formula", "y ~ my x + (1 | id)")...)
	if r.code == exitOK || !strings.Contains(r.stderr, "backticks, `my x`") {
		t.Errorf("my x unquoted: exit %d, message %q; want advice to write `my x`", r.code, r.stderr)
	}
}

// TestCausesNamed: impossible values get a message naming their cause, not
// a failure deep in the fit.
func TestCausesNamed(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "c.csv", "id,y,x,big\n1,0,0.5,95000000\n1,3,1.5,96000000\n2,1,0.1,95500000\n2,0,2,97000000\n3,2,1,96500000\n3,1,0,95200000\n")
	writeFile(t, dir, "huge.csv", "id,y,x\n1,0,0.5\n1,1e300,1.5\n2,1,0.1\n2,0,2\n")
	base := []string{"fit", "-family", "poisson", "-quiet"}
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"-data", "huge.csv", "-formula", "y ~ x + (1 | id)"}, []string{"line 3", `"y"`, "count 1e+300", "largest"}},
		{[]string{"-data", "c.csv", "-formula", "y ~ x + (1 | id)", "-prior-sd", "1e-300"}, []string{"-prior-sd 1e-300", "pins every coefficient"}},
		{[]string{"-data", "c.csv", "-formula", "y ~ x + (1 | id)", "-prior-sd", "1e300"}, []string{"-prior-sd 1e+300", "no prior at all"}},
	} {
		r := glmmfit(t, dir, "", nil, append(base, c.args...)...)
		if r.code == exitOK {
			t.Errorf("%v: exit 0", c.args)
		}
		for _, w := range c.want {
			if !strings.Contains(r.stderr, w) {
				t.Errorf("%v: message %q lacks %q", c.args, r.stderr, w)
			}
		}
		if strings.Contains(r.stderr, "not positive definite") || strings.Contains(r.stderr, "singular") {
			t.Errorf("%v: the message names a symptom, not the cause: %q", c.args, r.stderr)
		}
	}
	// A predictor far from unit scale fits under the default prior.
	if r := glmmfit(t, dir, "", nil, append(base, "-data", "c.csv", "-formula", "y ~ big + (1 | id)", "-max-iter", "200")...); r.code != exitOK && r.code != exitLimit {
		t.Errorf("big predictor, default prior: exit %d: %s", r.code, r.stderr)
	}
}

// TestMemoryCountsHeld: without -max-memory a fit is refused only when its
// estimate, the whole run's peak, is above the machine's available memory
// and what the run already holds (the data read), which the available
// memory no longer counts; the message names both.
func TestMemoryCountsHeld(t *testing.T) {
	var b strings.Builder
	b.WriteString("y,x,id\n")
	for i := range 40 {
		fmt.Fprintf(&b, "%d,%d,s%d\n", i%3, i%5, i%10)
	}
	if _, err := os.Stat("/proc/self/status"); err == nil && !(residentMemory() > 1<<20) {
		t.Errorf("this process's resident memory reads as %v bytes", residentMemory())
	}
	m := mustDesign(t, mustFrame(t, b.String()), "y ~ x + (1 | id)", glmm.Poisson).Model()
	need := fitMemory(m)
	defer func(a, r func() float64) { memAvailable, memResident = a, r }(memAvailable, memResident)
	for _, c := range []struct {
		avail, held float64
		refused     bool
	}{
		{need / 2, need/2 + 1e6, false},
		{need / 2, 0, true},
		{need + 1e6, 0, false},
		{need / 2, need / 4, true},
	} {
		memAvailable = func() float64 { return c.avail }
		memResident = func() float64 { return c.held }
		err := checkMemory(m, 0)
		if (err != nil) != c.refused {
			t.Errorf("estimate %.3g, available %.3g, held %.3g: error %v; want refused %v", need, c.avail, c.held, err, c.refused)
		}
		if err != nil && !strings.Contains(err.Error(), "available memory and the") {
			t.Errorf("the refusal %q does not say what it counted", err)
		}
	}
}

// TestMaxMemory: a fit whose estimated memory is above -max-memory is
// refused before it starts, stating the estimate; a bad size is a usage
// error; parseBytes reads the usual units.
func TestMaxMemory(t *testing.T) {
	for _, c := range []struct {
		in   string
		want float64
	}{{"512MB", 512e6}, {"4GB", 4e9}, {"2GiB", 2 << 30}, {"1e9", 1e9}, {"100 kb", 1e5}} {
		if got, err := parseBytes(c.in); err != nil || got != c.want {
			t.Errorf("parseBytes(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{"", "-1GB", "lots", "0"} {
		if _, err := parseBytes(bad); err == nil {
			t.Errorf("parseBytes(%q) accepted", bad)
		}
	}
	dir := t.TempDir()
	args := []string{"fit", "-example", "-quiet"}
	r := glmmfit(t, dir, "", nil, append(args, "-max-memory", "1MB")...)
	if r.code != exitFail || !strings.Contains(r.stderr, "needs about") || !strings.Contains(r.stderr, "-max-memory") {
		t.Errorf("-max-memory 1MB: exit %d, message %q", r.code, r.stderr)
	}
	if r := glmmfit(t, dir, "", nil, append(args, "-max-memory", "lots")...); r.code != exitUsage {
		t.Errorf("-max-memory lots: exit %d, want %d", r.code, exitUsage)
	}
	if r := glmmfit(t, dir, "", nil, append(args, "-max-memory", "1GB", "-correct", "never")...); r.code != exitOK {
		t.Errorf("-max-memory 1GB: exit %d: %s", r.code, r.stderr)
	}
}
