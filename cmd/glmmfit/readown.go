// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/parquet"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/mpi"
	"github.com/sparsevi/sparsevi/parallel"
)

// A -shard fit of a CSV or Parquet file reads the rows of its own subjects
// alone: every process reads the file through a few times, holding a
// piece of rows at a time (a Parquet file's row group), for what the
// design needs of the whole data (formula.Scan: the columns' kinds, the
// subjects and the levels of the factors, the auto prior's scaling, the
// rank check), then once more keeping the rows of its own subjects alone
// (datasets.Reader.Keep; keepRows for Parquet), and builds its part of
// the design from them (formula.Options.Whole). Its memory is that of its
// own rows and of the levels, not of the file.
//
// The files of a pattern are dealt out among the processes, each taking a
// run of them in order: a process reads its own files alone for the
// columns' kinds and formula.ScanShared's passes, the sums carried from
// process to process in the order of the rows (parallel.Relay), and then
// the files that hold its own subjects.

// pieceRows is the number of rows of a piece of the data that a -shard
// fit holds at a time while it reads the whole file.
const pieceRows = 1 << 16

// readsOwnRows reports whether a -shard fit reads its own rows alone
// from -data: a CSV file, compressed or not, or a Parquet file or
// directory, which it can read several times; not standard input, which
// every process reads whole.
func readsOwnRows(path string) bool {
	return path != "" && path != "-"
}

// ownFile is a CSV file, the CSV files of a pattern, or Parquet data, that
// a -shard fit reads several times.
type ownFile struct {
	ctx        context.Context
	path, name string
	files      []string // the files of a pattern; nil for one file
	// parquet says that the data are Parquet; unlabelled names its
	// columns of text without a label, numeric as a whole read makes
	// them (their pieces are not).
	parquet    bool
	unlabelled map[string]bool
	pieceRows  int             // the rows of the Parquet piece being read
	kinds      *datasets.Frame // no rows: the whole file's columns and kinds
	// before and lines are the rows before the piece being read and
	// the lines of its rows, for the line of an error; cur reads the
	// files of a pattern.
	before int
	lines  *datasets.Lines
	cur    *filesReader
	// subjectFile is the file of each subject of a pattern's files (by
	// its label, in column group), which the first pass of Scan finds
	// (subjectsRead).
	group        string
	subjectFile  map[string]int
	subjectsRead bool
	// columns are the columns the model reads, which pieces and the own
	// rows hold alone; nil for all.
	columns []string
	// prog shows the reads, reads counts them.
	prog  *progress
	reads int
	// relay carries the sums of a pattern's files dealt out among the
	// processes (nil when every process reads them all): this process
	// reads mine, the files from first on.
	relay *parallel.Relay
	mine  []string
	first int
	// f is the model's formula, whose interaction grouping factors
	// pieces add as columns (withGroups).
	f *formula.Formula
	// line is the first line of each subject in its file, with
	// subjectFile, when the files are dealt out.
	line map[string]string
	// fileOf is 1 + the file of each subject of the whole data, 0 for
	// none, when the files are dealt out.
	fileOf []float64
	// offset is the number of rows of the Parquet files before this
	// process's.
	offset int
}

// read opens the file, or the files of a pattern (only, when not nil),
// and reads it with a Reader that configure sets up.
func (c *ownFile) read(only []string, configure func(*datasets.Reader), read func(*datasets.Reader) error) error {
	var text io.Reader
	if c.files != nil {
		if only == nil {
			only = c.files
		}
		c.cur = newFilesReader(c.ctx, only)
		defer c.cur.Close()
		text = c.cur
	} else {
		fh, err := os.Open(c.path)
		if err != nil {
			return fmt.Errorf("cannot read data file: %v", pathError(err))
		}
		defer fh.Close()
		r, done, err := csvText(&ctxReader{ctx: c.ctx, r: fh}, c.name)
		if err != nil {
			return err
		}
		defer done()
		text = r
	}
	c.reads++
	if c.prog != nil && c.prog.bar != nil {
		var shown int64
		what := fmt.Sprintf("reading (pass %d): %s", c.reads, c.name)
		text = &ctxReader{ctx: c.ctx, r: text, progress: func(read int64) {
			if read-shown >= 1<<20 {
				shown = read
				c.prog.phase(fmt.Sprintf("%s, %.1f MB", what, float64(read)/1e6))
			}
		}}
	}
	cr := datasets.NewReader(text)
	cr.File = c.name
	if c.cur != nil {
		cr.Place = c.cur.place
	}
	configure(cr)
	if err := read(cr); err != nil {
		if c.ctx.Err() != nil {
			return c.ctx.Err()
		}
		if c.cur != nil && c.cur.err != nil && c.cur.err != io.EOF {
			return c.cur.err
		}
		return err
	}
	return nil
}

// place returns the place function of the files being read, nil for one.
func (c *ownFile) place() func(int) (string, int) {
	if c.cur == nil {
		return nil
	}
	return c.cur.place
}

// readKinds reads the CSV file at path through for its columns' kinds and
// warnings, and the errors reading it whole would give, keeping no row.
// The files of a pattern in an MPI job of several processes are dealt out
// among them (see ownFile).
func readKinds(ctx context.Context, path string, prog *progress, procs processes) (*input, *ownFile, error) {
	c := &ownFile{ctx: ctx, path: path, name: filepath.Base(path), prog: prog}
	if isParquet(path) && !isPattern(path) {
		if procs != nil && procs.Size() > 1 {
			files, err := parquet.Files(path)
			if err != nil {
				return nil, nil, parquetError(ctx, err)
			}
			c.deal(files, procs)
		}
		if err := c.parquetKinds(); err != nil {
			return nil, nil, c.end(err)
		}
		return &input{frame: c.kinds, name: c.name, path: path}, c, nil
	}
	if isPattern(path) {
		files, err := dataFiles(path)
		if err != nil {
			return nil, nil, err
		}
		c.files = files
		if procs != nil && procs.Size() > 1 {
			c.deal(files, procs)
			if err := c.sharedKinds(); err != nil {
				return nil, nil, c.end(err)
			}
			return &input{frame: c.kinds, name: c.name, path: path}, c, nil
		}
	}
	err := c.read(nil, func(cr *datasets.Reader) {
		cr.Keep = func(string, bool) bool { return false }
	}, func(cr *datasets.Reader) error {
		fr, err := cr.Read()
		c.kinds = fr
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return &input{frame: c.kinds, name: c.name, path: path}, c, nil
}

// deal deals the files out among the processes, each taking a run of
// them in order.
func (c *ownFile) deal(files []string, procs processes) {
	b := mpi.EvenBounds(len(files), procs.Size())
	c.files, c.first = files, b[procs.Rank()]
	c.mine = files[c.first:b[procs.Rank()+1]]
	c.relay = parallel.NewRelay(procs)
}

// sharedKinds reads this process's files for their columns' kinds, and
// makes them those of all the files: a column is categorical if a field
// of any file makes it so.
func (c *ownFile) sharedKinds() error {
	var own *datasets.Frame
	if len(c.mine) > 0 {
		err := c.read(c.mine, func(cr *datasets.Reader) {
			cr.Keep = func(string, bool) bool { return false }
		}, func(cr *datasets.Reader) error {
			fr, err := cr.Read()
			own = fr
			return err
		})
		if errors.Is(err, datasets.ErrNoRows) {
			own, err = nil, nil // the other processes' files may have rows
		}
		if err != nil {
			return err
		}
	}
	// Each process's first file and its header: the files share one.
	var head []string
	if own != nil {
		head = append([]string{filepath.Base(c.mine[0])}, own.Names()...)
	}
	heads, err := c.relay.Gather(head)
	if err != nil {
		return err
	}
	var ref []string
	for _, h := range heads {
		switch {
		case len(h) == 0:
		case ref == nil:
			ref = h
		case !slices.Equal(h[1:], ref[1:]):
			return fmt.Errorf("%s: line 1: the header %q is not that of %s, %q: the files of -data must have the same columns in the same order",
				h[0], strings.Join(h[1:], ","), ref[0], strings.Join(ref[1:], ","))
		}
	}
	if ref == nil {
		return fmt.Errorf("-data %s: %w", c.path, datasets.ErrNoRows)
	}
	names := ref[1:]
	cat := make([]float64, len(names))
	err = c.relay.Carry(cat, func(acc []float64) {
		if own == nil {
			return
		}
		for j, col := range own.Columns() {
			if col.Kind == datasets.Categorical {
				acc[j]++
			}
		}
	})
	if err != nil {
		return err
	}
	cols := make([]*datasets.Column, len(names))
	for j, name := range names {
		cols[j] = &datasets.Column{Name: name, Kind: datasets.Numeric, Num: []float64{}, Missing: []bool{}}
		if cat[j] > 0 {
			cols[j].Kind, cols[j].Num, cols[j].Str = datasets.Categorical, nil, []string{}
		}
	}
	c.kinds, err = datasets.NewFrame(cols...)
	return err
}

// end ends the relay of a pattern's files dealt out among the processes
// with this process's error, and returns the error to report: its own,
// one saying which other process failed, or parallel.ErrProcessStopped.
func (c *ownFile) end(err error) error {
	if c.relay == nil {
		return err
	}
	err, c.relay = c.relay.Close(err), nil
	var pe *parallel.ProcessError
	switch {
	case errors.As(err, &pe):
		return fmt.Errorf("process %d of the MPI job failed reading its files of -data %s; its own message says why", pe.Process, c.path)
	}
	return err
}

// pieces reads the file a piece at a time (formula.Pieces), with the
// whole file's column kinds.
func (c *ownFile) pieces(yield func(*datasets.Frame) error) error {
	if c.parquet {
		record := c.subjectFile != nil && !c.subjectsRead
		if c.relay != nil {
			if err := yield(c.kinds); err != nil {
				return err
			}
		}
		c.offset = -1
		err := c.parquetPieces(c.columns, c.own(), func(fr *datasets.Frame, file, before int) error {
			fr = c.withGroups(fr)
			c.before, c.lines, c.pieceRows = before, nil, fr.NumRows()
			if c.offset < 0 {
				c.offset = before
			}
			if record {
				err := c.subjectFiles(fr, func(i int) (int, string) { return file, fmt.Sprintf("row %d", before+i+1) })
				if err != nil {
					return err
				}
			}
			return yield(fr)
		})
		c.subjectsRead = c.subjectsRead || record && err == nil
		return err
	}
	cat, num := c.kindsOf()
	c.before, c.lines = 0, nil
	record := c.subjectFile != nil && !c.subjectsRead
	var only []string
	if c.relay != nil {
		// formula.ScanShared: every process's pieces begin with the
		// kinds, and it may have no files.
		if err := yield(c.kinds); err != nil {
			return err
		}
		if len(c.mine) == 0 {
			return nil
		}
		only = c.mine
	}
	err := c.read(only, func(cr *datasets.Reader) {
		cr.Categorical, cr.Numeric, cr.Columns = cat, num, c.columns
	}, func(cr *datasets.Reader) error {
		return cr.ReadPieces(pieceRows, func(fr *datasets.Frame, lines *datasets.Lines) error {
			fr = c.withGroups(fr)
			c.lines = lines
			if record {
				err := c.subjectFiles(fr, func(i int) (int, string) {
					_, line := c.cur.place(lines.Line(i))
					return c.first + c.cur.fileOf(lines.Line(i)), fmt.Sprintf("line %d", line)
				})
				if err != nil {
					return err
				}
			}
			if err := yield(fr); err != nil {
				return err
			}
			c.before += fr.NumRows()
			return nil
		})
	})
	c.subjectsRead = c.subjectsRead || record && err == nil
	return err
}

// kindsOf returns the categorical and the numeric columns of the file.
func (c *ownFile) kindsOf() (cat, num []string) {
	for _, col := range c.kinds.Columns() {
		if col.Kind == datasets.Categorical {
			cat = append(cat, col.Name)
		} else {
			num = append(num, col.Name)
		}
	}
	return cat, num
}

// withGroups returns a piece with the columns of the formula's
// interaction grouping factors, once the formula is known: the subjects
// of (1 | a:b) are recorded from it, and Scan takes it as it is.
func (c *ownFile) withGroups(fr *datasets.Frame) *datasets.Frame {
	if c.f == nil {
		return fr
	}
	return c.f.WithGroups(fr)
}

// pieceInput returns the piece being read as an input for messages.
func (c *ownFile) pieceInput() *input {
	in := &input{frame: c.kinds, name: c.name, path: c.path, lines: c.lines, place: c.place()}
	if c.parquet {
		// Rows are named by their number in the data.
		in.rows = &datasets.Lines{}
		for k := range c.pieceRows {
			in.rows.Add(c.before + k + 1)
		}
	}
	return in
}

// subjectFiles records the file of each subject of a piece of the files of
// a pattern or a Parquet directory, and returns an error naming a subject
// whose rows are in two files: each process reads only the files of its
// own subjects. at gives the file of row i of the piece and where it is
// in the file.
func (c *ownFile) subjectFiles(fr *datasets.Frame, at func(i int) (k int, where string)) error {
	col, ok := fr.Column(c.group) // a:b too: pieces added it
	if !ok {
		return nil // Scan names the column
	}
	for i := range fr.NumRows() {
		if col.Missing[i] {
			continue
		}
		s := formula.Label(col, i)
		k, where := at(i)
		if prev, ok := c.subjectFile[s]; !ok {
			c.subjectFile[s] = k
			if c.line != nil {
				c.line[s] = where
			}
		} else if prev != k {
			return c.twiceError(s, prev, k, where)
		}
	}
	return nil
}

// twiceError is the error of subject s, whose rows are in files prev and
// k (where in k).
func (c *ownFile) twiceError(s string, prev, k int, where string) error {
	return fmt.Errorf("-data %s: subject %q (column %q) has rows in %s and in %s (%s): with -shard each subject's rows must lie in one of the files; put them together, or give one file",
		c.path, s, c.group, filepath.Base(c.files[prev]), filepath.Base(c.files[k]), where)
}

// scanError rewrites an error of formula.Scan to name the file's line.
func (c *ownFile) scanError(err error) error {
	var de *formula.DataError
	if errors.As(err, &de) && de.Row > c.before && c.lines != nil && de.Row <= c.before+c.lines.Len() {
		local := *de
		local.Row -= c.before
		return dataError(&local, c.pieceInput())
	}
	if errors.As(err, &de) && c.parquet && c.relay != nil && de.Row > 0 {
		// ScanShared counts the rows of this process's files.
		local := *de
		local.Row += max(c.offset, 0)
		return dataError(&local, &input{frame: c.kinds, name: c.name, path: c.path})
	}
	if errors.As(err, &de) || errors.Is(err, formula.ErrCrossedPart) {
		return dataError(err, &input{frame: c.kinds, name: c.name, path: c.path})
	}
	return err
}

// own returns the files this process reads in the passes: its own run of
// a pattern's or a Parquet directory's files when they are dealt out, nil
// for all.
func (c *ownFile) own() []int {
	if c.relay == nil {
		return nil
	}
	return []int{c.first, c.first + len(c.mine)}
}

// readOwn reads the rows that keep keeps, by the fields of columns
// keepCols.
func (c *ownFile) readOwn(only, keepCols []string, keep func([]string, []bool) bool, rows int) (*input, error) {
	if c.parquet {
		return c.parquetOwn(only, keepCols, keep, rows)
	}
	var in *input
	err := c.read(only, func(cr *datasets.Reader) {
		cr.KeepRow, cr.KeepColumns, cr.Columns = keep, keepCols, c.columns
		cr.ReserveRows = rows
		_, cr.Numeric = c.kindsOf()
	}, func(cr *datasets.Reader) error {
		fr, err := cr.Read()
		if err == nil {
			in = &input{frame: fr, name: c.name, path: c.path, lines: cr.Lines, place: c.place()}
		}
		return err
	})
	return in, err
}

// ownFiles returns the files of a pattern that hold the subjects given,
// the subjects from lo on, in order; nil for one file.
func (c *ownFile) ownFiles(subjects []string, lo int) []string {
	if c.files == nil {
		return nil
	}
	use := make([]bool, len(c.files))
	for i, s := range subjects {
		if c.fileOf != nil {
			if k := int(c.fileOf[lo+i]) - 1; k >= 0 {
				use[k] = true
			}
		} else if k, ok := c.subjectFile[s]; ok {
			use[k] = true
		}
	}
	var out []string
	for k, f := range c.files {
		if use[k] {
			out = append(out, f)
		}
	}
	return out
}

// wholeChecks makes the checks of buildDesign that read the values of
// whole columns (numericTypo, checkReferences) over the pieces of the
// file, in one pass when there is something to check.
func (c *ownFile) wholeChecks(f *formula.Formula, spec *modelSpec) error {
	typos := map[string]*typoCount{}
	for _, col := range typoColumns(c.kinds, f, spec) {
		typos[col.Name] = &typoCount{}
	}
	for _, name := range []string{spec.Weights, spec.Offset} {
		if col, ok := c.kinds.Column(name); ok && col.Kind == datasets.Categorical {
			typos[name] = &typoCount{}
		}
	}
	levels := map[string][]string{}
	for name := range spec.Reference {
		if _, ok := c.kinds.Column(name); ok {
			levels[name] = nil
		}
	}
	if len(typos) > 0 || len(levels) > 0 {
		seen := map[string]map[string]bool{}
		err := c.pieces(func(fr *datasets.Frame) error {
			in := c.pieceInput()
			for name, t := range typos {
				col, _ := fr.Column(name)
				t.count(in, col)
			}
			for name := range levels {
				col, _ := fr.Column(name)
				if seen[name] == nil {
					seen[name] = map[string]bool{}
				}
				for _, s := range columnLevels(col) {
					if !seen[name][s] {
						seen[name][s] = true
						levels[name] = append(levels[name], s)
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if c.relay != nil {
			if err := c.shareChecks(typos, levels); err != nil {
				return err
			}
		}
	}
	whole := &input{frame: c.kinds, name: c.name, path: c.path}
	typo := func(_ *input, col *datasets.Column) error { return typos[col.Name].err(col.Name) }
	if err := checkOptionColumns(whole, spec, typo); err != nil {
		return err
	}
	if err := checkReferencesOf(whole, f, spec, func(col *datasets.Column) []string { return levels[col.Name] }); err != nil {
		return err
	}
	names := make([]string, 0, len(typos))
	for _, col := range typoColumns(c.kinds, f, spec) {
		names = append(names, col.Name)
	}
	for _, name := range names {
		if err := typos[name].err(name); err != nil {
			return err
		}
	}
	return nil
}

// shareChecks adds the other processes' counts and levels to this
// process's, when the files are dealt out: the counts in the order of
// the files, the first value that is not a number that of the first
// process that has one.
func (c *ownFile) shareChecks(typos map[string]*typoCount, levels map[string][]string) error {
	names := slices.Sorted(maps.Keys(typos))
	acc := make([]float64, 2*len(names))
	err := c.relay.Carry(acc, func(acc []float64) {
		for k, name := range names {
			acc[2*k] += float64(typos[name].nums)
			acc[2*k+1] += float64(typos[name].total)
		}
	})
	if err != nil {
		return err
	}
	cols := slices.Sorted(maps.Keys(levels))
	var own []string
	for _, name := range names {
		own = append(own, typos[name].where, typos[name].first)
	}
	for _, name := range cols {
		own = append(own, strconv.Itoa(len(levels[name])))
		own = append(own, levels[name]...)
	}
	all, err := c.relay.Gather(own)
	if err != nil {
		return err
	}
	for k, name := range names {
		t := typos[name]
		t.nums, t.total, t.where = int(acc[2*k]), int(acc[2*k+1]), ""
		for _, list := range all {
			if list[2*k] != "" {
				t.where, t.first = list[2*k], list[2*k+1]
				break
			}
		}
	}
	for name := range levels {
		levels[name] = nil
	}
	for _, list := range all {
		list = list[2*len(names):]
		for _, name := range cols {
			n, _ := strconv.Atoi(list[0])
			for _, s := range list[1 : 1+n] {
				if !slices.Contains(levels[name], s) {
					levels[name] = append(levels[name], s)
				}
			}
			list = list[1+n:]
		}
	}
	return nil
}

// shareSubjectFiles finds the file of each subject of all the processes'
// files, when they are dealt out (subjectFile holds those of this
// process's), and refuses a subject whose rows are in the files of two
// processes, naming them.
func (c *ownFile) shareSubjectFiles(w *formula.Whole) error {
	c.fileOf = make([]float64, len(w.Subjects()))
	return c.relay.Try(c.fileOf, func(acc []float64) error {
		for s, k := range c.subjectFile {
			g, ok := w.SubjectIndex(s)
			if !ok {
				continue // no complete row
			}
			if prev := int(acc[g]) - 1; prev >= 0 && prev != k {
				return c.twiceError(s, prev, k, c.line[s])
			}
			acc[g] = float64(k + 1)
		}
		return nil
	})
}

// buildOwnDesign builds this process's part of the design of a -shard fit
// from the rows of its own subjects alone, which it reads from the CSV
// file c (see readsOwnRows), and returns it with the input of those rows.
func buildOwnDesign(procs processes, c *ownFile, spec *modelSpec, f *formula.Formula, release bool) (*formula.Design, *input, error) {
	d, in, err := c.buildOwn(procs, spec, f, release)
	return d, in, c.end(err)
}

// buildOwn is buildOwnDesign, with the relay of a pattern's files dealt out
// among the processes still open.
func (c *ownFile) buildOwn(procs processes, spec *modelSpec, f *formula.Formula, release bool) (*formula.Design, *input, error) {
	opts, err := spec.options()
	if err != nil {
		return nil, nil, err
	}
	// Pieces and the own rows hold the model's columns alone (all of
	// them if one is missing, which Scan names among the file's).
	c.columns = spec.columns(f)
	for _, name := range c.columns {
		if _, ok := c.kinds.Column(name); !ok {
			c.columns = nil
			break
		}
	}
	if err := c.wholeChecks(f, spec); err != nil {
		return nil, nil, err
	}
	c.f = f
	if c.files != nil {
		c.group, c.subjectFile = f.Group(), map[string]int{}
	}
	var chain formula.Chain
	if c.relay != nil {
		chain, c.line = c.relay, map[string]string{}
	}
	w, err := formula.ScanShared(f, c.pieces, opts, chain)
	if errors.Is(err, formula.ErrCrossedPart) {
		return nil, nil, errors.New("crossed random effects do not run with -shard yet; run glmmfit without it")
	}
	if err != nil {
		return nil, nil, c.scanError(err)
	}
	if c.relay != nil {
		if err := c.shareSubjectFiles(w); err != nil {
			return nil, nil, err
		}
	}
	// What the passes left goes back to the system before the rows come.
	debug.FreeOSMemory()
	bounds, err := shareBounds(procs, len(w.Subjects()))
	if err != nil {
		return nil, nil, err
	}
	lo, hi := bounds[procs.Rank()], bounds[procs.Rank()+1]
	in, err := c.readOwn(c.ownFiles(w.Subjects()[lo:hi], lo), w.KeepColumns(), w.KeepRow(lo, hi), w.Rows(lo, hi))
	c.subjectFile, c.line, c.fileOf = nil, nil, nil
	if err != nil {
		return nil, nil, err
	}
	opts.Part = func(int) (int, int, error) { return lo, hi, nil }
	opts.Whole, opts.Release = w, release
	d, err := formula.Build(f, in.frame, opts)
	if err != nil {
		return nil, nil, dataError(err, in)
	}
	return d, in, nil
}
