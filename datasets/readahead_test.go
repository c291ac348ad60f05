// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// TestReadAheadBatches reads inputs whose rows and errors fall on either
// side of the read-ahead's batch boundaries (batchRecords records, or
// batchBytes of text, whichever comes first): every row must arrive once,
// in order, with its line, and an error must name the place it would
// name if the records were read one after the other.
func TestReadAheadBatches(t *testing.T) {
	wide := strings.Repeat("w", batchBytes/3) // 3 such records fill a batch
	for _, test := range []struct {
		name string
		rows int
		// bad, if positive, is the 1-based row made wrong by kind.
		bad  int
		kind string
		// long, if positive, makes every long-th row's label wide.
		long int
	}{
		{name: "one batch less one", rows: batchRecords - 1},
		{name: "one batch", rows: batchRecords},
		{name: "one batch and one", rows: batchRecords + 1},
		{name: "several batches", rows: 3*batchRecords + 17},
		{name: "wide rows", rows: 50, long: 4},
		{name: "every row wide", rows: 9, long: 1},
		{name: "short row first of a batch", rows: 3 * batchRecords, bad: batchRecords + 1, kind: "short"},
		{name: "short row last of a batch", rows: 3 * batchRecords, bad: batchRecords, kind: "short"},
		{name: "short last row", rows: 2*batchRecords + 5, bad: 2*batchRecords + 5, kind: "short"},
		{name: "bare quote after a batch", rows: 2 * batchRecords, bad: batchRecords + 1, kind: "quote"},
		{name: "bare quote after wide rows", rows: 20, bad: 11, kind: "quote", long: 2},
		{name: "NaN late", rows: 3 * batchRecords, bad: 3*batchRecords - 1, kind: "nan"},
		{name: "label late", rows: 2*batchRecords + 3, bad: 2*batchRecords + 2, kind: "label"},
	} {
		t.Run(test.name, func(t *testing.T) {
			var sb strings.Builder
			sb.WriteString("id,x,label\n")
			line := 2
			var wantLines []int
			badLine := 0
			for i := 1; i <= test.rows; i++ {
				// A blank line every 7 rows, so that rows and lines part.
				if i%7 == 0 {
					sb.WriteString("\n")
					line++
				}
				label := "a"
				if test.long > 0 && i%test.long == 0 {
					label = wide
				}
				x := strconv.FormatFloat(float64(i)/8, 'g', -1, 64)
				if i == test.bad {
					badLine = line
					switch test.kind {
					case "short":
						fmt.Fprintf(&sb, "%d,%s\n", i, x)
					case "quote":
						fmt.Fprintf(&sb, "%d,%s,a\"b\n", i, x)
					case "nan":
						fmt.Fprintf(&sb, "%d,NaN,%s\n", i, label)
					case "label":
						fmt.Fprintf(&sb, "%d,x%s,%s\n", i, x, label)
					}
				} else {
					fmt.Fprintf(&sb, "%d,%s,%s\n", i, x, label)
				}
				wantLines = append(wantLines, line)
				line++
			}
			f, err := ReadCSV(strings.NewReader(sb.String()))
			wantErr := map[string]error{"short": ErrFieldCount, "quote": ErrBareQuote, "nan": ErrNonFinite}[test.kind]
			if wantErr != nil {
				var pe *ParseError
				if !errors.Is(err, wantErr) || !errors.As(err, &pe) {
					t.Fatalf("error %v; want a ParseError wrapping %v", err, wantErr)
				}
				if pe.Line != badLine {
					t.Errorf("error on line %d; want %d (%v)", pe.Line, badLine, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.NumRows() != test.rows {
				t.Fatalf("%d rows; want %d", f.NumRows(), test.rows)
			}
			id, _ := f.Column("id")
			x, _ := f.Column("x")
			label, _ := f.Column("label")
			for i := range test.rows {
				if id.Num[i] != float64(i+1) {
					t.Fatalf("row %d: id %v; want %d", i+1, id.Num[i], i+1)
				}
				want := strconv.FormatFloat(float64(i+1)/8, 'g', -1, 64)
				if test.kind == "label" {
					// The column is categorical: its text as written.
					if i+1 == test.bad {
						want = "x" + want
					}
					if got := x.Str[i]; got != want {
						t.Fatalf("row %d: x %q; want %q", i+1, got, want)
					}
				} else if x.Num[i] != float64(i+1)/8 {
					t.Fatalf("row %d: x %v; want %v", i+1, x.Num[i], float64(i+1)/8)
				}
				wantLabel := "a"
				if test.long > 0 && (i+1)%test.long == 0 {
					wantLabel = wide
				}
				if label.Str[i] != wantLabel {
					t.Fatalf("row %d: label of %d bytes; want %d", i+1, len(label.Str[i]), len(wantLabel))
				}
			}
			r := NewReader(strings.NewReader(sb.String()))
			if _, err := r.Read(); err != nil {
				t.Fatal(err)
			}
			for i, want := range wantLines {
				if got := r.Lines.Line(i); got != want {
					t.Fatalf("row %d on line %d; want %d", i+1, got, want)
				}
			}
		})
	}
}

// readLog is an io.Reader that fails the test if it is read after
// closed is set.
type readLog struct {
	t      *testing.T
	r      io.Reader
	closed atomic.Bool
}

func (l *readLog) Read(p []byte) (int, error) {
	if l.closed.Load() {
		l.t.Error("the input was read after Read returned")
	}
	runtime.Gosched() // let the rows' goroutine fall behind
	return l.r.Read(p[:min(len(p), 512)])
}

// TestReadStopsReadingInput: once Read returns, early for an error
// within the first batch or at the end, it reads its input no more.
func TestReadStopsReadingInput(t *testing.T) {
	var sb strings.Builder
	sb.WriteString("a,b\n1,2\n3\n")
	for i := range 20 * batchRecords {
		fmt.Fprintf(&sb, "%d,%d\n", i, i)
	}
	for _, in := range []string{sb.String(), "a,b\n1,2\n3,4\n"} {
		l := &readLog{t: t, r: strings.NewReader(in)}
		_, err := ReadCSV(l)
		l.closed.Store(true)
		if len(in) > 100 && !errors.Is(err, ErrFieldCount) {
			t.Errorf("error %v; want one wrapping %v", err, ErrFieldCount)
		}
		for range 100 {
			runtime.Gosched()
		}
	}
}

// filesLike is an io.Reader that, as glmmfit's reader of several files,
// records where each piece of its text starts, and whose place (a
// Reader.Place) looks that up.
type filesLike struct {
	r      io.Reader
	starts []int // the line each read started on
	lines  int
}

func (f *filesLike) Read(p []byte) (int, error) {
	n, err := f.r.Read(p[:min(len(p), 100)])
	f.starts = append(f.starts, f.lines+1)
	f.lines += strings.Count(string(p[:n]), "\n")
	return n, err
}

func (f *filesLike) place(line int) (string, int) {
	k := 0
	for k+1 < len(f.starts) && f.starts[k+1] <= line {
		k++
	}
	return fmt.Sprintf("piece%d", k), line
}

// TestPlaceBetweenReads: Reader.Place may look at the state of the
// input's reader, which reads on another goroutine (the race detector
// sees it if Place runs during a read), for errors, early or at the end,
// and for warnings.
func TestPlaceBetweenReads(t *testing.T) {
	const bad = 5 * batchRecords // the 0-based row of "1,x" or "1"
	for _, odd := range []string{"1,x", "1"} {
		for _, tail := range []string{"", "1\n"} {
			var sb strings.Builder
			sb.WriteString("a,b\n")
			for i := range 20 * batchRecords {
				if i == bad {
					// "1,x" makes b categorical, with a warning; "1" is
					// an error.
					sb.WriteString(odd + "\n")
					continue
				}
				fmt.Fprintf(&sb, "%d,%d\n", i, i)
			}
			sb.WriteString(tail)
			f := &filesLike{r: strings.NewReader(sb.String())}
			r := NewReader(f)
			r.Place = f.place
			fr, err := r.Read()
			if odd == "1" || tail != "" {
				line := bad + 2
				if odd != "1" {
					line = 20*batchRecords + 2
				}
				var pe *ParseError
				if !errors.As(err, &pe) || !errors.Is(err, ErrFieldCount) {
					t.Fatalf("error %v; want a ParseError wrapping %v", err, ErrFieldCount)
				}
				if pe.Line != line || pe.File == "" {
					t.Errorf("error in %q at line %d; want line %d", pe.File, pe.Line, line)
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			b, _ := fr.Column("b")
			if !strings.Contains(b.Warning, fmt.Sprintf("line %d", bad+2)) {
				t.Errorf("warning %q; want one naming line %d", b.Warning, bad+2)
			}
		}
	}
}
