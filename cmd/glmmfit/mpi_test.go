// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build mpi && cgo

package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/parquet"
	"github.com/sparsevi/sparsevi/formula"
)

// These tests start glmmfit, built with -tags mpi, under mpirun: go test
// -tags mpi -run MPI ./cmd/glmmfit (mpi/testdata/run.sh does).

// mpiGlmmfit builds glmmfit with MPI into a temporary directory and writes
// a simulated data set of n Bernoulli subjects there. It skips the test
// without mpirun.
func mpiGlmmfit(t *testing.T, n int) (bin, data string) {
	t.Helper()
	if _, err := exec.LookPath("mpirun"); err != nil {
		t.Skip("mpirun not installed")
	}
	dir := t.TempDir()
	bin = filepath.Join(dir, "glmmfit")
	if out, err := exec.Command("go", "build", "-tags", "mpi", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build -tags mpi: %v\n%s", err, out)
	}
	data = filepath.Join(dir, "sim.csv")
	if out, err := exec.Command(bin, "simulate", "-family", "bernoulli", "-subjects", fmt.Sprint(n), "-obs", "7",
		"-beta", "-1,0.5,0.5,-0.5,1", "-re-sd", "1", "-seed", "5", "-out", data).CombinedOutput(); err != nil {
		t.Fatalf("glmmfit simulate: %v\n%s", err, out)
	}
	return bin, data
}

// mpirun returns the command that runs args under mpirun on np processes.
func mpirun(ctx context.Context, np int, args ...string) *exec.Cmd {
	a := []string{"--oversubscribe", "-np", fmt.Sprint(np)}
	if os.Getuid() == 0 {
		a = append([]string{"--allow-run-as-root"}, a...)
	}
	return exec.CommandContext(ctx, "mpirun", append(a, args...)...)
}

// TestMPIMatchesOneProcess checks that glmmfit fit under mpirun on 2 and 3
// processes writes the JSON of the same fit alone, but for the timings:
// the default method (RVB1 here) and GVA.
func TestMPIMatchesOneProcess(t *testing.T) {
	bin, data := mpiGlmmfit(t, 1000)
	for _, method := range []string{"auto", "gva"} {
		args := []string{"fit", "-data", data, "-formula", "y ~ t + x1 + x2 + x3 + (1 | id)", "-family", "bernoulli",
			"-method", method, "-format", "json", "-quiet"}
		alone, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("%s alone: %v", method, err)
		}
		want := withoutTimings(t, alone)
		for _, np := range []int{2, 3} {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			var stderr bytes.Buffer
			cmd := mpirun(ctx, np, append([]string{bin}, args...)...)
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			cancel()
			if err != nil {
				t.Fatalf("%s on %d processes: %v\n%s", method, np, err, stderr.Bytes())
			}
			got := withoutTimings(t, out)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s on %d processes: the JSON differs from the fit alone", method, np)
			}
			var timings struct {
				Timings timing `json:"timings"`
			}
			if err := json.Unmarshal(out, &timings); err != nil || timings.Timings.Processes != np {
				t.Errorf("%s on %d processes: timings say %d processes (%v)", method, np, timings.Timings.Processes, err)
			}
		}
	}
}

// TestMPIShard checks that glmmfit fit -shard under mpirun on 2 and 3
// processes, each holding its own subjects' rows alone, writes the JSON of
// the same fit alone, but for the timings: the default method (RVB1
// expanded at the start here), GVA and RVB2, and by default (the check of
// q's marginal) and with -correct always, whose correction sums each
// draw's integrals over the processes and gathers every subject's
// corrected moments.
func TestMPIShard(t *testing.T) {
	bin, data := mpiGlmmfit(t, 1000)
	base := []string{"fit", "-data", data, "-formula", "y ~ t + x1 + x2 + x3 + (1 | id)", "-family", "bernoulli", "-format", "json", "-quiet"}
	// shardLikeAlone runs glmmfit with args alone and with -shard on 2 and
	// 3 processes, and returns the -shard runs' output.
	shardLikeAlone := func(what string, args []string) [][]byte {
		alone, err := exec.Command(bin, args...).Output()
		if err != nil {
			t.Fatalf("%s alone: %v", what, err)
		}
		want := withoutTimings(t, alone)
		var outs [][]byte
		for _, np := range []int{2, 3} {
			out := mpiRun(t, np, bin, append(args, "-shard")...)
			if got := withoutTimings(t, out); !reflect.DeepEqual(got, want) {
				t.Errorf("%s -shard on %d processes: the JSON differs from the fit alone", what, np)
			}
			outs = append(outs, out)
		}
		return outs
	}
	for _, method := range []string{"auto", "gva", "rvb2"} {
		shardLikeAlone(method, append(slices.Clone(base), "-method", method, "-correct", "never"))
	}
	// Rows left out for a missing value, in a covariate and in the
	// subject's id (which no process keeps): every process reports all.
	text, err := os.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(text), "\n")
	for _, k := range []int{3, 500, 4001} {
		f := strings.Split(lines[k], ",")
		f[2] = "NA" // x1
		lines[k] = strings.Join(f, ",")
	}
	f := strings.Split(lines[2000], ",")
	f[0] = "" // id
	lines[2000] = strings.Join(f, ",")
	gaps := filepath.Join(t.TempDir(), "gaps.csv")
	writeFile(t, filepath.Dir(gaps), "gaps.csv", strings.Join(lines, "\n"))
	gapArgs := append(slices.Clone(base), "-missing", "drop", "-correct", "never")
	gapArgs[2] = gaps
	for k, out := range shardLikeAlone("-missing drop", gapArgs) {
		var doc document
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Data.RowsLeftOut != 4 || doc.Data.Observations != 7000-4 {
			t.Errorf("-missing drop -shard on %d processes: %d rows left out, %d observations; want 4 and 6996", k+2, doc.Data.RowsLeftOut, doc.Data.Observations)
		}
	}
	// The correction of q and its check: by default (the check of q's
	// marginal, or nothing, at 1000 subjects) and -correct always.
	shardLikeAlone("-correct auto", slices.Clone(base))
	for k, out := range shardLikeAlone("-correct always", append(slices.Clone(base), "-correct", "always")) {
		var doc document
		if err := json.Unmarshal(out, &doc); err != nil {
			t.Fatal(err)
		}
		if c := doc.Correction; c == nil || !c.Ran || doc.PSISCorrected == nil || len(doc.PSISCorrected.RandomEffects) != 1000 {
			t.Errorf("-correct always -shard on %d processes: correction %+v", k+2, c)
		}
	}
}

// TestMPILaunchedWithoutSize starts glmmfit under mpirun without the
// variable that tells Open MPI's processes their number, as Slurm's srun
// starts them under PMIx: the PMIx rank alone makes glmmfit join the MPI
// job, which says how many processes there are, instead of fitting
// everything in each.
func TestMPILaunchedWithoutSize(t *testing.T) {
	bin, data := mpiGlmmfit(t, 600)
	out := mpiRun(t, 2, "env", "-u", "OMPI_COMM_WORLD_SIZE", bin, "fit", "-data", data, "-formula", "y ~ t + (1 | id)",
		"-family", "bernoulli", "-method", "gva", "-correct", "never", "-format", "json", "-quiet")
	var doc struct {
		Timings timing `json:"timings"`
	}
	if err := json.Unmarshal(out, &doc); err != nil || doc.Timings.Processes != 2 {
		t.Errorf("timings say %d processes (%v), want 2", doc.Timings.Processes, err)
	}
}

// TestMPIOneProcessFails resumes a fit on two processes whose second
// checkpoint file is missing: that process fails alone, before any sum,
// and the job must end with an error naming the file, not wait for it.
func TestMPIOneProcessFails(t *testing.T) {
	bin, data := mpiGlmmfit(t, 600)
	ck := filepath.Join(filepath.Dir(data), "fit.ckpt")
	args := []string{"fit", "-data", data, "-formula", "y ~ t + (1 | id)", "-family", "bernoulli", "-method", "gva",
		"-correct", "never", "-format", "json", "-quiet"}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := mpirun(ctx, 2, append([]string{bin}, append(args, "-max-iter", "60", "-checkpoint", ck, "-checkpoint-every", "50")...)...).Run(); err == nil {
		t.Fatal("the fit stopped at -max-iter 60 exited 0")
	}
	if err := os.Remove(ck + ".1"); err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd := mpirun(ctx, 2, append([]string{bin}, append(args, "-resume", ck)...)...)
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("the job did not end: %s", stderr.Bytes())
	}
	if err == nil || !strings.Contains(stderr.String(), "-resume: open "+ck+".1") {
		t.Errorf("exit %v, stderr %q: want an error naming %s.1", err, stderr.Bytes(), ck)
	}
}

// mpiRun returns the standard output of bin args under mpirun on np
// processes, failing t if it fails.
func mpiRun(t *testing.T, np int, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	cmd := mpirun(ctx, np, append([]string{bin}, args...)...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v on %d processes: %v\n%s", args, np, err, stderr.Bytes())
	}
	return out
}

// TestMPIKilledProcess kills one process of a fit on three and checks that
// the job ends, with an exit status that says so and a message naming the
// process.
func TestMPIKilledProcess(t *testing.T) {
	// Enough subjects that the fit is still running when rank 1 dies: on
	// 1000 it can converge within a second or two.
	bin, data := mpiGlmmfit(t, 20000)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stderr bytes.Buffer
	// A fit that does not converge on its own.
	cmd := mpirun(ctx, 3, bin, "fit", "-data", data, "-formula", "y ~ t + x1 + x2 + x3 + (1 | id)", "-family", "bernoulli",
		"-method", "gva", "-tol", "1e-300", "-max-iter", "100000000", "-quiet", "-format", "json")
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Rank 1's process: a child of mpirun whose environment names it.
	var pid int
	for deadline := time.Now().Add(time.Minute); pid == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		pid = findRank(bin, 1)
	}
	if pid == 0 {
		cmd.Process.Kill()
		t.Fatal("rank 1 never started")
	}
	time.Sleep(500 * time.Millisecond) // into the fit
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	if ctx.Err() != nil {
		t.Fatalf("the job did not end after rank 1 was killed: %v", err)
	}
	if err == nil {
		t.Fatal("the job exited 0 after rank 1 was killed")
	}
	if msg := stderr.String(); !strings.Contains(msg, "rank 1") {
		t.Errorf("mpirun's message does not name rank 1:\n%s", msg)
	}
}

// findRank returns the process id of the process of bin whose environment
// gives it MPI rank rank, or 0.
func findRank(bin string, rank int) int {
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		exe, err := os.Readlink(filepath.Join(d, "exe"))
		if err != nil || exe != bin {
			continue
		}
		env, err := os.ReadFile(filepath.Join(d, "environ"))
		if err != nil || !bytes.Contains(env, []byte(fmt.Sprintf("OMPI_COMM_WORLD_RANK=%d\x00", rank))) {
			continue
		}
		var pid int
		fmt.Sscan(filepath.Base(d), &pid)
		return pid
	}
	return 0
}

// TestMPIResume stops a fit on two processes at an iteration limit after a
// checkpoint (one file per process), resumes it on two processes, and asks
// for the JSON of the fit alone that was not stopped; with and without
// -shard.
func TestMPIResume(t *testing.T) {
	bin, data := mpiGlmmfit(t, 600)
	for _, shard := range []bool{false, true} {
		ck := filepath.Join(filepath.Dir(data), fmt.Sprintf("fit%v.ckpt", shard))
		base := []string{"fit", "-data", data, "-formula", "y ~ t + x1 + x2 + x3 + (1 | id)", "-family", "bernoulli",
			"-method", "gva", "-format", "json", "-quiet", "-correct", "never"}
		alone, err := exec.Command(bin, base...).Output()
		if err != nil {
			t.Fatal(err)
		}
		if shard {
			base = append(base, "-shard")
		}
		resumeMatches(t, bin, base, ck, withoutTimings(t, alone))
	}
}

// resumeMatches stops the fit of args on two processes at an iteration
// limit after checkpoints in ck, resumes it, and checks the resumed JSON
// against want.
func resumeMatches(t *testing.T, bin string, base []string, ck string, want map[string]any) {
	t.Helper()
	run := func(args ...string) ([]byte, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		var stderr bytes.Buffer
		cmd := mpirun(ctx, 2, append([]string{bin}, append(append([]string(nil), base...), args...)...)...)
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			err = fmt.Errorf("%v\n%s", err, stderr.Bytes())
		}
		return out, err
	}
	if _, err := run("-max-iter", "150", "-checkpoint", ck, "-checkpoint-every", "50"); err == nil {
		t.Fatal("the fit stopped at -max-iter 150 exited 0")
	}
	for r := range 2 {
		if _, err := os.Stat(fmt.Sprintf("%s.%d", ck, r)); err != nil {
			t.Fatalf("process %d wrote no checkpoint: %v", r, err)
		}
	}
	out, err := run("-resume", ck)
	if err != nil {
		t.Fatal(err)
	}
	if got := withoutTimings(t, out); !reflect.DeepEqual(got, want) {
		t.Errorf("%v: the resumed fit on two processes differs from the fit alone", base)
	}
}

// TestMPIShardOwnRows checks that -shard fits that read their own
// subjects' rows alone (from one CSV file and three by a pattern on two
// processes, a gzip-compressed file and a list of two files on three)
// write the JSON of the fit alone on the whole file, timings and the
// data's name aside: a Bernoulli random intercept and a Poisson random
// slope, by the default method and GVA, on 2 and 3 processes.
func TestMPIShardOwnRows(t *testing.T) {
	bin, bern := mpiGlmmfit(t, 1000)
	dir := filepath.Dir(bern)
	pois := filepath.Join(dir, "pois.csv")
	if out, err := exec.Command(bin, "simulate", "-family", "poisson", "-subjects", "1000", "-obs", "6",
		"-beta", "0.5,-0.4,0.3", "-re-sd", "0.5,0.3", "-seed", "3", "-out", pois).CombinedOutput(); err != nil {
		t.Fatalf("glmmfit simulate: %v\n%s", err, out)
	}
	for _, c := range []struct {
		name, data, formula, family string
	}{
		{"bern", bern, "y ~ t + x1 + x2 + x3 + (1 | id)", "bernoulli"},
		{"pois", pois, "y ~ t + x1 + (1 + t | id)", "poisson"},
	} {
		// The file split by subjects into three files (the middle one
		// compressed), and the whole file compressed.
		text, err := os.ReadFile(c.data)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.SplitAfter(strings.TrimSuffix(string(text), "\n"), "\n")
		header, rows := lines[0], lines[1:]
		var files [3]strings.Builder
		for k := range files {
			files[k].WriteString(header)
		}
		subject := func(row string) string { return row[:strings.IndexByte(row, ',')] }
		cuts := []string{subject(rows[len(rows)/4]), subject(rows[len(rows)*2/3])}
		for _, row := range rows {
			k := 0
			for _, cut := range cuts {
				if subject(row) >= cut {
					k++
				}
			}
			files[k].WriteString(row)
		}
		var parts []string
		for k := range files {
			name := filepath.Join(dir, fmt.Sprintf("%s-part-%d.csv", c.name, k))
			if k == 1 {
				name += ".gz"
				writeGzip(t, name, files[k].String())
			} else if err := os.WriteFile(name, []byte(files[k].String()), 0o644); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, name)
		}
		gz := filepath.Join(dir, c.name+".csv.gz")
		writeGzip(t, gz, string(text))
		// The same data as one Parquet file and as a directory of two,
		// split between subjects, in row groups of 500 rows.
		pq, pqDir := writeParquetParts(t, c.data, cuts[0])
		for _, method := range []string{"auto", "gva"} {
			args := func(data string) []string {
				return []string{"fit", "-data", data, "-formula", c.formula, "-family", c.family,
					"-method", method, "-format", "json", "-quiet"}
			}
			alone, err := exec.Command(bin, args(c.data)...).Output()
			if err != nil {
				t.Fatalf("%s %s alone: %v", c.name, method, err)
			}
			want := withoutData(withoutTimings(t, alone))
			// One file and the pattern on 2 processes; the compressed
			// file and two files on 3.
			for _, np := range []int{2, 3} {
				inputs := []string{c.data, filepath.Join(dir, c.name+"-part-*"), pq}
				if np == 3 {
					inputs = []string{gz, parts[0] + "," + parts[1], pqDir}
				}
				for _, data := range inputs {
					what := fmt.Sprintf("%s %s -data %s -shard on %d processes", c.name, method, filepath.Base(data), np)
					got := withoutData(withoutTimings(t, mpiRun(t, np, bin, append(args(data), "-shard")...)))
					if strings.Contains(data, ",") {
						// Two of the three files: the same fit as alone on them.
						out, err := exec.Command(bin, args(data)...).Output()
						if err != nil {
							t.Fatalf("%s alone: %v", what, err)
						}
						if alone2 := withoutData(withoutTimings(t, out)); !reflect.DeepEqual(got, alone2) {
							t.Errorf("%s: the JSON differs from the fit alone on the same files", what)
						}
						continue
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s: the JSON differs from the fit alone on the whole file", what)
					}
				}
			}
		}
	}
}

// writeParquetParts writes the CSV file data as a Parquet file beside it,
// and as a directory of two Parquet files, the second from the first row
// of subject cut on.
func writeParquetParts(t *testing.T, data, cut string) (file, dir string) {
	t.Helper()
	fr, err := datasets.ReadFile(data)
	if err != nil {
		t.Fatal(err)
	}
	write := func(path string, fr *datasets.Frame) {
		var b bytes.Buffer
		if err := parquet.Write(&b, fr, 500); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	base := strings.TrimSuffix(data, ".csv")
	file, dir = base+".parquet", base+"-parquet"
	write(file, fr)
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	ids := fr.Columns()[0]
	split := 0
	for split < fr.NumRows() && formula.Label(ids, split) != cut {
		split++
	}
	all := make([]int, fr.NumRows())
	for i := range all {
		all[i] = i
	}
	write(filepath.Join(dir, "0.parquet"), fr.Rows(all[:split]))
	write(filepath.Join(dir, "1.parquet"), fr.Rows(all[split:]))
	return file, dir
}

// writeGzip writes text gzip-compressed to the file name.
func writeGzip(t *testing.T, name, text string) {
	t.Helper()
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(text))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}
