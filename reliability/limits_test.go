// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package reliability_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
)

// endless is an io.Reader of prefix followed by the pattern repeated
// forever: input that is never exhausted, so that a reader without limits
// would run out of memory or never return.
type endless struct {
	prefix  []byte
	pattern []byte
	off     int
	n       int64 // bytes delivered
}

func (e *endless) Read(p []byte) (int, error) {
	k := 0
	for k < len(p) {
		if len(e.prefix) > 0 {
			c := copy(p[k:], e.prefix)
			e.prefix = e.prefix[c:]
			k += c
			continue
		}
		p[k] = e.pattern[e.off]
		e.off = (e.off + 1) % len(e.pattern)
		k++
	}
	e.n += int64(k)
	return k, nil
}

// hangGuard is how long bounded and runChild wait before they call a call
// hung. It catches a loop on endless input, not slowness: the calls it
// guards take milliseconds, and speed is measured by growth and by
// benchmarks, never by deadlines that a loaded machine would miss.
const hangGuard = 2 * time.Minute

// bounded runs f and fails the test if it does not return within limit (a
// guard against hangs) or if it allocates more than maxAlloc bytes in all.
func bounded(t *testing.T, limit time.Duration, maxAlloc uint64, f func()) {
	t.Helper()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(limit):
		t.Fatalf("did not return within %v", limit)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > maxAlloc {
		t.Errorf("allocated %d bytes, want at most %d", got, maxAlloc)
	}
}

// TestCSVLimits: records longer than MaxLineBytes and records with more
// than MaxColumns fields are errors found after reading about the limit,
// even when the input never ends; the default limits are 1 MiB and 10000
// fields.
func TestCSVLimits(t *testing.T) {
	cases := []struct {
		name      string
		in        *endless
		maxLine   int // 0: default
		maxCols   int // 0: default
		is        error
		line, col int
		msg       string
	}{
		{name: "endless unquoted field", in: &endless{prefix: []byte("a,b\n1,2\n3,"), pattern: []byte("7")},
			is: datasets.ErrLineTooLong, line: 3, col: 2, msg: "more than 1048576 bytes"},
		{name: "endless quoted field", in: &endless{prefix: []byte("a,b\n\"open"), pattern: []byte("x,\n")},
			// The error names the line where the limit was reached, not line
			// 2 where the quote opened (see the report).
			is: datasets.ErrLineTooLong, line: 349525, col: 1, msg: "more than 1048576 bytes"},
		{name: "endless header", in: &endless{pattern: []byte("c,")},
			is: datasets.ErrTooManyColumns, line: 1, col: 10001, msg: "more than 10000"},
		{name: "endless data row", in: &endless{prefix: []byte("a,b\n"), pattern: []byte("1,")},
			is: datasets.ErrTooManyColumns, line: 2, col: 10001, msg: "more than 10000"},
		{name: "endless data row of empty fields", in: &endless{prefix: []byte("a,b\n"), pattern: []byte(",")},
			is: datasets.ErrTooManyColumns, line: 2, col: 10001, msg: "more than 10000"},
		{name: "small line limit", in: &endless{prefix: []byte("id,y\n"), pattern: []byte("s")}, maxLine: 64,
			is: datasets.ErrLineTooLong, line: 2, col: 1, msg: "more than 64 bytes"},
		{name: "small column limit", in: &endless{prefix: []byte("id,y\n"), pattern: []byte("1,")}, maxCols: 3,
			is: datasets.ErrTooManyColumns, line: 2, col: 4, msg: "more than 3"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			bounded(t, hangGuard, 16<<20, func() {
				r := datasets.NewReader(c.in)
				r.MaxLineBytes, r.MaxColumns = c.maxLine, c.maxCols
				_, err = r.Read()
			})
			var pe *datasets.ParseError
			if !errors.As(err, &pe) || !errors.Is(err, c.is) {
				t.Fatalf("error %v, want a *ParseError wrapping %v", err, c.is)
			}
			if pe.Line != c.line || pe.Column != c.col || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("error %q at line %d, column %d; want line %d, column %d, %q", err, pe.Line, pe.Column, c.line, c.col, c.msg)
			}
			if c.in.n > 4<<20 {
				t.Errorf("read %d bytes before giving up", c.in.n)
			}
		})
	}
}

// TestCSVManyBlankLines: blank lines are skipped without being kept, so a
// file of millions of them costs no memory and names the line after them.
func TestCSVManyBlankLines(t *testing.T) {
	in := strings.Repeat("\n", 3_000_000) + "a,b\n" + strings.Repeat("\r\n", 1_000_000) + "1,NaN\n"
	var err error
	bounded(t, hangGuard, 1<<20, func() {
		_, err = datasets.ReadCSV(strings.NewReader(in))
	})
	var pe *datasets.ParseError
	if !errors.As(err, &pe) || !errors.Is(err, datasets.ErrNonFinite) || pe.Line != 4_000_002 || pe.Name != "b" {
		t.Fatalf("error %v, want a non-finite value at line 4000002, column b", err)
	}
}

// TestCSVWideWithinLimits: a file at the column limit reads, one
// column more does not.
func TestCSVWideWithinLimits(t *testing.T) {
	row := func(n int, f func(j int) string) string {
		parts := make([]string, n)
		for j := range parts {
			parts[j] = f(j)
		}
		return strings.Join(parts, ",") + "\n"
	}
	for _, n := range []int{datasets.DefaultMaxColumns, datasets.DefaultMaxColumns + 1} {
		in := row(n, func(j int) string { return fmt.Sprintf("c%d", j) }) + row(n, func(j int) string { return "1" })
		fr, err := datasets.ReadCSV(strings.NewReader(in))
		if n <= datasets.DefaultMaxColumns {
			if err != nil || fr.NumCols() != n {
				t.Errorf("%d columns: %v", n, err)
			}
			continue
		}
		if !errors.Is(err, datasets.ErrTooManyColumns) {
			t.Errorf("%d columns: error %v, want ErrTooManyColumns", n, err)
		}
	}
}

// TestFormulaLimits: hostile formulas fail promptly with a *SyntaxError
// naming the offending token, without exhausting the stack or memory.
func TestFormulaLimits(t *testing.T) {
	letters := make([]string, 26)
	for k := range letters {
		letters[k] = string(rune('a' + k))
	}
	cases := []struct {
		name, src string
		pos       int
		tok, msg  string
	}{
		{"deep parentheses", "y ~ " + strings.Repeat("(", 100_000) + "x" + strings.Repeat(")", 100_000) + " + (1 | g)", 55, "(", "nested too deeply"},
		{"deep negations", "y ~ " + strings.Repeat("-(", 100_000) + "x" + strings.Repeat(")", 100_000) + " + (1 | g)", 105, "-", "nested too deeply"},
		{"deep function calls", "y ~ " + strings.Repeat("log(", 50_000) + "x" + strings.Repeat(")", 50_000) + " + (1 | g)", 205, "log", "nested too deeply"},
		{"deep random-effect term", "y ~ x + (" + strings.Repeat("(", 100_000) + "1" + strings.Repeat(")", 100_000) + " | g)", 59, "(", "nested too deeply"},
		{"interaction explosion", "y ~ (" + strings.Join(letters, " + ") + ")^26 + (1 | g)", 108, "^", "too many terms"},
		{"product explosion", "y ~ " + strings.Join(letters, "*") + " + (1 | g)", 30, "*", "too many terms"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var err error
			bounded(t, hangGuard, 256<<20, func() {
				_, err = formula.Parse(c.src)
			})
			var se *formula.SyntaxError
			if !errors.As(err, &se) || !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %v, want a *SyntaxError containing %q", err, c.msg)
			}
			if se.Pos != c.pos || se.Token != c.tok {
				t.Errorf("error at column %d %q, want %d %q", se.Pos, se.Token, c.pos, c.tok)
			}
			t.Logf("%v", err)
		})
	}

	// A long sum of one repeated term is legal and collapses to the term.
	src := "y ~ " + strings.Repeat("x + ", 50_000) + "(1 | g)"
	var fm *formula.Formula
	var err error
	bounded(t, hangGuard, 256<<20, func() { fm, err = formula.Parse(src) })
	if err != nil || len(fm.Terms()) != 1 || fm.Terms()[0] != "x" {
		t.Errorf("50000 times x: %v, terms %q", err, fm.Terms())
	}
}

// childEnv, set to a test's name, makes that test do its work in this
// process: the parent runs it in a child process that it kills at a
// deadline, so that a test of a hang costs no more than the deadline.
const childEnv = "SPARSEVI_RELIABILITY_CHILD"

// inChild reports whether this process is the child running test name.
func inChild(name string) bool { return os.Getenv(childEnv) == name }

// runChild runs test name in a child process and fails if it does not
// finish within deadline or fails.
func runChild(t *testing.T, name string, deadline time.Duration, what string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+name+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+name)
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("%s did not return within %v", what, deadline)
	}
	if err != nil {
		t.Fatalf("%s: %v\n%s", what, err, out)
	}
	t.Logf("%s: %v", what, time.Since(start).Round(time.Millisecond))
}

// growth returns the ratio of the fastest of three runs of f at size big
// to the fastest of three at size small: timing both in the same test, on
// the same machine at the same load, measures how the cost grows without a
// deadline that a loaded machine would miss.
func growth(t *testing.T, small, big int, f func(n int)) float64 {
	t.Helper()
	best := func(n int) time.Duration {
		d := time.Duration(math.MaxInt64)
		for range 3 {
			start := time.Now()
			f(n)
			d = min(d, time.Since(start))
		}
		return d
	}
	ds, db := best(small), best(big)
	t.Logf("%d: %v, %d: %v", small, ds, big, db)
	return float64(db) / float64(max(ds, time.Microsecond))
}

// TestParseManyTermsPromptly: a formula with 20000 distinct main effects
// (about 150 KB) must be parsed, or rejected, promptly. formula's expansion
// was once quadratic in the number of terms (4000 terms: 2 s; 20000: over
// 20 s); now a sum longer than its limit is rejected. Ten times the terms
// may cost about ten times the time, not the hundred times of a quadratic
// expansion.
func TestParseManyTermsPromptly(t *testing.T) {
	parse := func(terms int) {
		many := make([]string, terms)
		for k := range many {
			many[k] = fmt.Sprintf("x%d", k)
		}
		fm, err := formula.Parse("y ~ " + strings.Join(many, " + ") + " + (1 | g)")
		var se *formula.SyntaxError
		switch {
		case err == nil && len(fm.Terms()) != terms:
			t.Fatalf("%d terms, want %d", len(fm.Terms()), terms)
		case err != nil && !errors.As(err, &se):
			t.Fatalf("error %T, want a *formula.SyntaxError", err)
		}
	}
	if g := growth(t, 2000, 20000, parse); g > 40 {
		t.Errorf("parsing 10 times the terms took %.0f times as long: worse than linear", g)
	}
}

// TestWideFactorBuildPromptly: the grouping factor written also as a fixed
// effect, y ~ t + id + (1 | id), a common slip, gives one fixed effect per
// subject. glmm.New's rank check formed the dense p×p X'X and eliminated it
// in O(p^3) (p = 4000 took about 25 s); glmm now refuses more than
// MaxFixedEffects columns first. Ten times the subjects may cost about ten
// times the time, not the thousand times of the elimination.
func TestWideFactorBuildPromptly(t *testing.T) {
	build := func(subjects int) {
		fr, _ := simulate(t, datasets.SimSpec{Family: "poisson", Subjects: subjects, Obs: 2,
			Beta: []float64{0.5, -0.3}, RECov: [][]float64{{0.4}}, Seed: 61})
		fm, err := formula.Parse("y ~ t + id + (1 | id)")
		if err != nil {
			t.Fatal(err)
		}
		d, err := formula.Build(fm, fr, formula.Options{Family: glmm.Poisson})
		var de *formula.DataError
		switch {
		case err == nil && d.Model().P() != subjects+1:
			t.Fatalf("%d fixed effects, want %d", d.Model().P(), subjects+1)
		case err != nil && !errors.As(err, &de):
			t.Fatalf("error %T, want a *formula.DataError", err)
		}
	}
	if g := growth(t, 400, 4000, build); g > 100 {
		t.Errorf("building with 10 times the subjects took %.0f times as long: worse than linear", g)
	}
}

var _ io.Reader = (*endless)(nil)
