// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// -data may name several CSV files: a pattern, such as
// shards/part-*.csv, whose files are taken in the order of their names,
// or a list separated by commas (whose items may be patterns), taken in
// the order given. The data are the files' rows one file after the other,
// read as one CSV file whose header each file repeats. Alone, glmmfit
// reads them all; in a -shard fit each process reads its own subjects'
// rows (readown.go).

// isPattern reports whether -data names several files (a pattern or a
// list) rather than a file.
func isPattern(path string) bool {
	if strings.ContainsAny(path, "*?[") {
		return true
	}
	if !strings.Contains(path, ",") {
		return false
	}
	_, err := os.Stat(path) // a file whose name has a comma
	return err != nil
}

// dataFiles returns the files of a pattern or list of -data, in order.
func dataFiles(spec string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, item := range strings.Split(spec, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("-data %s: an empty file name in the list", spec)
		}
		files := []string{item}
		if strings.ContainsAny(item, "*?[") {
			var err error
			if files, err = filepath.Glob(item); err != nil {
				return nil, fmt.Errorf("-data %s: %v", item, err)
			}
			kept := files[:0]
			for _, f := range files {
				if st, err := os.Stat(f); err == nil && !st.IsDir() {
					kept = append(kept, f)
				}
			}
			if files = kept; len(files) == 0 {
				return nil, fmt.Errorf("-data %s: no file matches the pattern %s", spec, item)
			}
			sort.Strings(files)
		} else if _, err := os.Stat(item); err != nil {
			return nil, fmt.Errorf("cannot read data file: %v", pathError(err))
		}
		for _, f := range files {
			if isParquet(f) {
				return nil, fmt.Errorf("-data %s: %s is Parquet: several files of -data are CSV files; give Parquet files as their directory", spec, f)
			}
			if seen[f] {
				return nil, fmt.Errorf("-data %s: the file %s is given twice", spec, f)
			}
			seen[f] = true
			out = append(out, f)
		}
	}
	return out, nil
}

// filesReader reads CSV files (each possibly gzip-compressed) as one: the
// first file whole, then each other's rows after its header, which must be
// the first file's. It knows which file and line each of its lines comes
// from.
type filesReader struct {
	ctx   context.Context
	files []string
	k     int // the file being read, len(files) at the end

	fh   *os.File
	br   *bufio.Reader
	done func()

	header  string // the first file's header line, without its line end
	pending []byte // bytes to give before reading on
	last    byte   // the last byte given
	lines   int    // line ends given
	// first[k] is the line of the output on which the data rows of file k
	// start, base[k] what to subtract from it to get the file's line.
	first, base []int
	err         error
}

func newFilesReader(ctx context.Context, files []string) *filesReader {
	return &filesReader{ctx: ctx, files: files, last: '\n'}
}

// open opens file k and reads its header.
func (r *filesReader) open() error {
	path := r.files[r.k]
	name := filepath.Base(path)
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("cannot read data file: %v", pathError(err))
	}
	text, done, err := csvText(&ctxReader{ctx: r.ctx, r: fh}, name)
	if err != nil {
		fh.Close()
		return err
	}
	r.fh, r.done, r.br = fh, done, bufio.NewReaderSize(text, 1<<16)
	line, err := r.br.ReadString('\n')
	if err != nil && err != io.EOF {
		return fmt.Errorf("%s: %v", name, err)
	}
	head := strings.TrimRight(strings.TrimPrefix(line, "\ufeff"), "\r\n")
	if r.k == 0 {
		r.header = head
		r.pending = append(r.pending, line...)
		r.first, r.base = append(r.first, 1), append(r.base, 0)
		return nil
	}
	if head != r.header {
		return fmt.Errorf("%s: line 1: the header %q is not that of %s, %q: the files of -data must have the same columns in the same order", name, head, filepath.Base(r.files[0]), r.header)
	}
	given := r.lines // line ends given once pending is
	if r.last != '\n' {
		r.pending = append(r.pending, '\n')
		given++
	}
	// Data line 2 of this file is the output's line given+1.
	r.first = append(r.first, given+1)
	r.base = append(r.base, given-1)
	return nil
}

func (r *filesReader) close() {
	if r.fh != nil {
		r.done()
		r.fh.Close()
		r.fh, r.br = nil, nil
	}
}

// Read reads the files' text as one.
func (r *filesReader) Read(p []byte) (int, error) {
	for r.err == nil {
		if len(r.pending) > 0 {
			n := copy(p, r.pending)
			r.pending = r.pending[n:]
			r.account(p[:n])
			return n, nil
		}
		if r.br == nil {
			if r.k == len(r.files) {
				r.err = io.EOF
				break
			}
			if err := r.open(); err != nil {
				r.err = err
				break
			}
			continue
		}
		n, err := r.br.Read(p)
		r.account(p[:n])
		if err == io.EOF {
			r.close()
			r.k++
			err = nil
		}
		if n > 0 || err != nil {
			r.err = err
			return n, nil
		}
	}
	return 0, r.err
}

// account counts the line ends of b, given.
func (r *filesReader) account(b []byte) {
	if len(b) > 0 {
		r.lines += bytes.Count(b, []byte{'\n'})
		r.last = b[len(b)-1]
	}
}

// Close closes the file being read.
func (r *filesReader) Close() { r.close() }

// fileOf returns the file of a line of the output.
func (r *filesReader) fileOf(line int) int {
	return sort.Search(len(r.first), func(k int) bool { return r.first[k] > line }) - 1
}

// place returns the file and its line of a line of the output
// (datasets.Reader.Place).
func (r *filesReader) place(line int) (string, int) {
	k := max(r.fileOf(line), 0)
	if k >= len(r.base) {
		return filepath.Base(r.files[len(r.files)-1]), line
	}
	return filepath.Base(r.files[k]), line - r.base[k]
}
