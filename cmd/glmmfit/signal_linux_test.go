// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/sparsevi/sparsevi/internal/longtest"
	"github.com/sparsevi/sparsevi/vi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/sparsevi/sparsevi/datasets"
)

// openPTY opens a pseudo-terminal pair, so that glmmfit's standard error
// can be a terminal in tests.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err := unix.IoctlSetPointerInt(int(m.Fd()), unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		t.Skipf("unlocking the pseudo-terminal: %v", err)
	}
	n, err := unix.IoctlGetInt(int(m.Fd()), unix.TIOCGPTN)
	if err != nil {
		m.Close()
		t.Skipf("pseudo-terminal number: %v", err)
	}
	s, err := os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Skipf("opening the pseudo-terminal: %v", err)
	}
	return m, s
}

// terminal collects what glmmfit writes to its terminal and signals when
// it first contains a string.
type terminal struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen chan struct{}
	once sync.Once
	want string
	done chan struct{}
}

func readTerminal(m *os.File, want string) *terminal {
	tm := &terminal{seen: make(chan struct{}), want: want, done: make(chan struct{})}
	go func() {
		defer close(tm.done)
		b := make([]byte, 4096)
		for {
			n, err := m.Read(b)
			tm.mu.Lock()
			tm.buf.Write(b[:n])
			found := strings.Contains(tm.buf.String(), tm.want)
			tm.mu.Unlock()
			if found {
				tm.once.Do(func() { close(tm.seen) })
			}
			if err != nil { // EIO once glmmfit has exited
				return
			}
		}
	}()
	return tm
}

func (tm *terminal) String() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.buf.String()
}

// runOnTerminal starts glmmfit with standard error on a pseudo-terminal.
func runOnTerminal(t *testing.T, dir, want string, args ...string) (*exec.Cmd, *terminal, *bytes.Buffer) {
	t.Helper()
	m, s := openPTY(t)
	t.Cleanup(func() { m.Close() })
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, s
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	return cmd, readTerminal(m, want), &out
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// TestInterrupt starts a long fit with its progress bar on a terminal,
// sends SIGINT once the bar shows a lower bound (so the fit is iterating),
// and checks exit code 130, the message, and that the summary and the -out
// file hold the last good state and parse.
func TestInterrupt(t *testing.T) {
	for _, c := range []struct {
		name string
		sig  os.Signal
		code int
	}{
		{"SIGINT", os.Interrupt, exitInterrupted},
		{"SIGTERM", syscall.SIGTERM, exitTerminated},
	} {
		t.Run(c.name, func(t *testing.T) { testInterrupt(t, c.sig, c.code) })
	}
}

// writeBigData writes big.csv, a Poisson data set whose fit takes several
// windows, into dir.
func writeBigData(t *testing.T, dir string) {
	t.Helper()
	fr, _, err := datasets.Simulate(datasets.SimSpec{Family: "poisson", Subjects: 1500, Obs: 8,
		Beta: []float64{0.5, -0.3, 0.2}, RECov: [][]float64{{0.5, 0.1}, {0.1, 0.3}}, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := datasets.WriteCSV(&buf, fr); err != nil {
		t.Fatal(err)
	}
	writeFile(t, dir, "big.csv", buf.String())
}

func testInterrupt(t *testing.T, sig os.Signal, want int) {
	dir := t.TempDir()
	writeBigData(t, dir)
	cmd, term, out := runOnTerminal(t, dir, "ELBO", "fit", "-data", "big.csv", "-formula", "y ~ t + x1 + (1 + t | id)",
		"-family", "poisson", "-method", "gva", "-max-iter", "1000000", "-out", "fit.json", "-format", "json")
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-term.seen:
	case err := <-waited:
		t.Fatalf("glmmfit ended (%v) before its progress bar showed a lower bound; terminal: %q", err, term.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no lower bound on the progress bar after 60 s; terminal: %q", term.String())
	}
	if err := cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
	var code int
	select {
	case err := <-waited:
		code = exitCode(t, err)
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("glmmfit did not stop within 60 s of %v", sig)
	}
	<-term.done
	if code != want {
		t.Errorf("exit code %d after %v, want %d; terminal: %q", code, sig, want, term.String())
	}
	if tty := term.String(); !strings.Contains(tty, "glmmfit: interrupted; wrote the last good state") || !strings.Contains(tty, "-out fit.json") {
		t.Errorf("terminal does not say what was written: %q", tty)
	}
	doc := readDoc(t, out.Bytes())
	if doc.Status != "cancelled" || doc.Iterations < vi.DefaultWindow || len(doc.Fixed) != 3 {
		t.Errorf("summary after %v: status %q after %d iterations, %d fixed effects", sig, doc.Status, doc.Iterations, len(doc.Fixed))
	}
	sf, err := readFitFile(context.Background(), filepath.Join(dir, "fit.json"))
	if err != nil {
		t.Fatalf("the -out file of an interrupted fit does not load: %v", err)
	}
	if sf.doc.Status != "cancelled" || sf.doc.Iterations != doc.Iterations {
		t.Errorf("-out file: status %q after %d iterations", sf.doc.Status, sf.doc.Iterations)
	}
}

// TestSecondSignal: a second SIGINT stops glmmfit at once, with exit 130,
// even while the first is being honoured.
func TestSecondSignal(t *testing.T) {
	dir := t.TempDir()
	writeBigData(t, dir)
	cmd, term, _ := runOnTerminal(t, dir, "ELBO", "fit", "-data", "big.csv", "-formula", "y ~ t + x1 + (1 + t | id)",
		"-family", "poisson", "-method", "gva", "-max-iter", "1000000", "-out", "fit.json")
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-term.seen:
	case err := <-waited:
		t.Fatalf("glmmfit ended (%v) before its progress bar showed a lower bound; terminal: %q", err, term.String())
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no lower bound on the progress bar after 60 s; terminal: %q", term.String())
	}
	// Signals of one kind sent together are delivered once: send the
	// second when the first has been seen.
	cmd.Process.Signal(os.Interrupt)
	for i := 0; i < 60_000 && !strings.Contains(term.String(), "stopping"); i++ {
		time.Sleep(time.Millisecond)
	}
	second := cmd.Process.Signal(os.Interrupt) == nil
	var code int
	select {
	case err := <-waited:
		code = exitCode(t, err)
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("glmmfit did not stop within 60 s of two SIGINTs")
	}
	<-term.done
	if code != exitInterrupted {
		t.Errorf("exit code %d after two SIGINTs, want %d; terminal: %q", code, exitInterrupted, term.String())
	}
	tty := term.String()
	if second && !strings.Contains(tty, "second signal: stopping at once") && !strings.Contains(tty, "interrupted; wrote") {
		t.Errorf("the terminal says neither that the second signal stopped glmmfit nor what the first wrote: %q", tty)
	}
}

// TestProgressBar checks that the progress display is drawn on a terminal,
// names the phase and during the fit shows the bound and how near the
// convergence rule is, and that -quiet silences it.
func TestProgressBar(t *testing.T) {
	dir := t.TempDir()
	writeBigData(t, dir)
	for _, quiet := range []bool{false, true} {
		args := []string{"fit", "-data", "big.csv", "-formula", "y ~ t + x1 + (1 + t | id)", "-family", "poisson", "-method", "gva"}
		if quiet {
			args = append(args, "-quiet")
		}
		cmd, term, out := runOnTerminal(t, dir, "\x00", args...)
		if code := exitCode(t, cmd.Wait()); code != 0 {
			t.Fatalf("%v: exit %d: %q", args, code, term.String())
		}
		<-term.done
		tty := term.String()
		if quiet && tty != "" {
			t.Errorf("-quiet: the terminal got %q", tty)
		}
		if !quiet && !(strings.Contains(tty, "fit: iteration") && strings.Contains(tty, "flat windows")) {
			t.Errorf("no progress bar on the terminal: %q", tty)
		}
		if !strings.Contains(out.String(), "Fixed effects:") || strings.Contains(out.String(), "flat windows") {
			t.Errorf("the summary on stdout is missing or holds the bar")
		}
	}
}

// signalWhen runs glmmfit with args in dir on a terminal, sends sig once
// the terminal shows want, and returns the exit code, what the terminal
// got and standard output. It skips the test if glmmfit ends before the
// signal can be sent. It fails the test if glmmfit takes more than twice
// as long to stop (and more than 15 s) as it ran before the signal:
// stopping takes a step and the writing of what was computed (a 30 MB fit
// file; 1 s on an idle machine, 5 s at a load of 8 on 2 cores), not the
// rest of a phase. (A baseline from the same run rather than a fixed
// deadline, with a floor for the writing, which load slows more.)
func signalWhen(t *testing.T, dir, want string, sig os.Signal, args ...string) (int, string, *bytes.Buffer) {
	t.Helper()
	started := time.Now()
	cmd, term, out := runOnTerminal(t, dir, want, args...)
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-term.seen:
	case err := <-waited:
		t.Skipf("glmmfit ended (%v) before the terminal showed %q: %q", err, want, term.String())
	case <-time.After(300 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("no %q on the terminal after 300 s: %q", want, term.String())
	}
	sent := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		t.Skipf("glmmfit ended before %v: %v", sig, err)
	}
	var code int
	select {
	case err := <-waited:
		code = exitCode(t, err)
	case <-time.After(120 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("glmmfit did not stop within 120 s of %v", sig)
	}
	before, after := sent.Sub(started), time.Since(sent)
	t.Logf("%v after %v; stopped %v later", sig, before, after)
	if after > max(2*before, 15*time.Second) {
		t.Errorf("glmmfit took %v to stop after %v, more than twice the %v it ran before", after, sig, before)
	}
	<-term.done
	return code, term.String(), out
}

// simulateHuge writes huge.csv, 100,000 Bernoulli subjects, into dir.
func simulateHuge(t *testing.T, dir string) {
	t.Helper()
	longtest.Require(t, "simulates 100,000 subjects and fits them, signalled in each phase")
	mustSucceed(t, glmmfit(t, dir, "", nil, "simulate", "-family", "bernoulli", "-subjects", "100000", "-obs", "4",
		"-beta", "-0.5,0.8,0.4", "-re-sd", "1", "-seed", "9", "-out", "huge.csv"))
}

// TestSignalInEachPhase sends SIGINT and SIGTERM in each phase of a fit on
// 100,000 subjects: reading, the start, the final bound, the summaries and
// drawing -plot (the iterations: TestInterrupt). Each must stop the phase
// promptly (signalWhen), exit 130 or 143, say what it wrote, and leave the
// files of what was computed, whole. If the signal misses its phase (the
// phase ended first), the case says so and skips.
func TestSignalInEachPhase(t *testing.T) {
	dir := t.TempDir()
	simulateHuge(t, dir)
	// Four copies of the data, so that reading takes a while.
	b, err := os.ReadFile(filepath.Join(dir, "huge.csv"))
	if err != nil {
		t.Fatal(err)
	}
	header, body, _ := bytes.Cut(b, []byte("\n"))
	big := append(append([]byte{}, header...), '\n')
	for range 4 {
		big = append(big, body...)
	}
	writeFile(t, dir, "bigger.csv", string(big))
	model := []string{"-formula", "y ~ t + x1 + (1 | id)", "-family", "bernoulli"}

	type outcome struct {
		code int
		tty  string
		out  []byte
		dir  string
	}
	// Each check returns a reason to skip when the signal missed the phase.
	for _, c := range []struct {
		phase string
		when  string // what the terminal shows in the phase
		args  []string
		check func(t *testing.T, o outcome) (missed string)
	}{
		{"reading", "reading: bigger.csv", []string{"-data", "bigger.csv", "-out", "fit.json"}, func(t *testing.T, o outcome) string {
			if strings.Contains(o.tty, "start:") {
				return "the reading ended first"
			}
			if !strings.Contains(o.tty, "interrupted while reading the data; nothing was written") {
				t.Errorf("terminal %q", o.tty)
			}
			if _, err := os.Stat(filepath.Join(o.dir, "fit.json")); !os.IsNotExist(err) {
				t.Errorf("a fit file after a signal while reading: %v", err)
			}
			return ""
		}},
		{"start", "start:", []string{"-data", "huge.csv", "-out", "fit.json"}, func(t *testing.T, o outcome) string {
			if strings.Contains(o.tty, "fit: iteration") {
				return "the start ended first"
			}
			// The start's state is not a fit: nothing is written.
			if !strings.Contains(o.tty, "interrupted before the first iteration; nothing was written") {
				t.Errorf("terminal %q", o.tty)
			}
			if _, err := os.Stat(filepath.Join(o.dir, "fit.json")); !os.IsNotExist(err) {
				t.Errorf("a fit file after a signal in the start: %v", err)
			}
			return ""
		}},
		{"final bound", "final bound:", []string{"-data", "huge.csv", "-max-iter", "10", "-format", "json", "-out", "fit.json"}, func(t *testing.T, o outcome) string {
			doc := readDoc(t, o.out)
			if doc.Status != "cancelled" {
				return fmt.Sprintf("the final bound ended first (status %q)", doc.Status)
			}
			if !strings.Contains(o.tty, "interrupted; wrote the last good state, of iteration 10") {
				t.Errorf("terminal %q", o.tty)
			}
			sf, err := readFitFile(context.Background(), filepath.Join(o.dir, "fit.json"))
			if err != nil {
				t.Fatalf("the -out file does not load: %v", err)
			}
			// readFitFile does not read the subjects' effects.
			raw, err := os.ReadFile(filepath.Join(o.dir, "fit.json"))
			if err != nil {
				t.Fatal(err)
			}
			saved := readDoc(t, raw)
			if sf.doc.Iterations != 10 || len(saved.RandomEffects.Subjects) != 100000 {
				t.Errorf("-out file: %d iterations, %d subjects", sf.doc.Iterations, len(saved.RandomEffects.Subjects))
			}
			return ""
		}},
		// RVB2's summaries, which solve each subject's mode per draw, last
		// long enough to be hit; the default's take a tenth of a second.
		{"summaries", "summaries:", []string{"-data", "huge.csv", "-method", "rvb2", "-max-iter", "50", "-format", "json", "-out", "fit.json"}, func(t *testing.T, o outcome) string {
			doc := readDoc(t, o.out)
			if !strings.Contains(doc.Message, "during the summaries") {
				return fmt.Sprintf("the summaries ended first (message %q)", doc.Message)
			}
			if len(doc.RandomEffects.Subjects) != 100000 || len(doc.Fixed) != 3 {
				t.Errorf("summary: %d subjects, %d fixed effects", len(doc.RandomEffects.Subjects), len(doc.Fixed))
			}
			if _, err := readFitFile(context.Background(), filepath.Join(o.dir, "fit.json")); err != nil {
				t.Errorf("the -out file does not load: %v", err)
			}
			return ""
		}},
		{"drawing -plot", "drawing -plot", []string{"-data", "huge.csv", "-method", "gva", "-max-iter", "10", "-out", "fit.json", "-plot", "fit.png"}, func(t *testing.T, o outcome) string {
			if !strings.Contains(o.tty, "not drawn") {
				return "the plot was drawn first"
			}
			if !strings.Contains(o.tty, "-plot fit.png was not drawn") {
				t.Errorf("terminal %q", o.tty)
			}
			if _, err := os.Stat(filepath.Join(o.dir, "fit.png")); !os.IsNotExist(err) {
				t.Errorf("-plot written after a signal while drawing: %v", err)
			}
			if _, err := readFitFile(context.Background(), filepath.Join(o.dir, "fit.json")); err != nil {
				t.Errorf("the -out file does not load: %v", err)
			}
			if !strings.Contains(string(o.out), "Fixed effects:") {
				t.Errorf("no summary on standard output")
			}
			return ""
		}},
	} {
		for _, sig := range []struct {
			s    os.Signal
			code int
		}{{os.Interrupt, exitInterrupted}, {syscall.SIGTERM, exitTerminated}} {
			t.Run(c.phase+"/"+sig.s.String(), func(t *testing.T) {
				run := t.TempDir()
				for _, name := range []string{"huge.csv", "bigger.csv"} {
					if err := os.Symlink(filepath.Join(dir, name), filepath.Join(run, name)); err != nil {
						t.Fatal(err)
					}
				}
				args := append(append([]string{"fit"}, model...), c.args...)
				code, tty, out := signalWhen(t, run, c.when, sig.s, args...)
				if missed := c.check(t, outcome{code, tty, out.Bytes(), run}); missed != "" {
					t.Skipf("%s (exit %d)", missed, code)
				}
				if code != sig.code {
					t.Errorf("exit %d, want %d; terminal %q", code, sig.code, tty)
				}
				entries, _ := os.ReadDir(run)
				for _, e := range entries {
					if strings.HasPrefix(e.Name(), ".") {
						t.Errorf("a temporary file is left: %s", e.Name())
					}
				}
			})
		}
	}
}

// TestInterruptPredict: SIGINT while predict draws (its progress on the
// terminal says "predicting") stops it with exit 130 and a message that
// nothing was written, and leaves no -out file.
func TestInterruptPredict(t *testing.T) {
	dir := t.TempDir()
	mustSucceed(t, glmmfit(t, dir, "", nil, "fit", "-example", "-out", "fit.json", "-quiet", "-correct", "never"))
	writeFile(t, dir, "new.csv", "id,t,x1\nnew,0,0\nnew,1,0.5\nother,2,1\n")
	code, tty, _ := signalWhen(t, dir, "predicting", os.Interrupt, "predict", "-fit", "fit.json", "-data", "new.csv", "-draws", "3000000", "-out", "p.csv")
	if code != exitInterrupted || !strings.Contains(tty, "interrupted while predicting; nothing was written") {
		t.Errorf("exit %d, terminal %q", code, tty)
	}
	if _, err := os.Stat(filepath.Join(dir, "p.csv")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("-out p.csv after the interrupt: %v", err)
	}
}
