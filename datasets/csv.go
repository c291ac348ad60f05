// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/sparsevi/sparsevi/internal/prefetch"
)

// Limits and defaults of a Reader.
const (
	// DefaultMaxLineBytes bounds the bytes of one record.
	DefaultMaxLineBytes = 1 << 20
	// DefaultMaxColumns bounds the number of fields of one record.
	DefaultMaxColumns = 10000
)

// DefaultMissing holds the field values read as missing by default: the
// empty field, R's NA and the UCI repository's ?.
var DefaultMissing = []string{"", "NA", "?"}

// Sentinel errors wrapped by a ParseError; test for them with errors.Is.
var (
	ErrEmptyInput      = errors.New("empty input: no header")
	ErrNoRows          = errors.New("no data rows after the header")
	ErrHeaderName      = errors.New("empty column name in header")
	ErrDuplicateHeader = errors.New("duplicate column name in header")
	ErrFieldCount      = errors.New("wrong number of fields")
	ErrQuote           = errors.New("extraneous or missing \" in quoted field")
	ErrBareQuote       = errors.New("bare \" in unquoted field")
	ErrLineTooLong     = errors.New("record too long")
	ErrTooManyColumns  = errors.New("too many columns")
	ErrNonFinite       = errors.New("non-finite or out-of-range number")
	ErrColumnTooLarge  = errors.New("column holds more than 4 GiB of text")
	ErrNotNumber       = errors.New("not a number")
)

// ParseError is the error returned for malformed input. It names the place
// of the problem and wraps one of the sentinel errors above, or an I/O
// error of the underlying reader.
type ParseError struct {
	File   string // file name, if known
	Line   int    // 1-based line of the problem, counting the header as line 1
	Column int    // 1-based field number; 0 when the whole line is meant
	Name   string // header name of the column, when known
	Err    error  // the underlying error
}

// Error returns a message of the form
// "file: line 3, column 2 (name): problem".
func (e *ParseError) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(": ")
	}
	fmt.Fprintf(&b, "line %d", e.Line)
	if e.Column > 0 {
		fmt.Fprintf(&b, ", column %d", e.Column)
	}
	if e.Name != "" {
		fmt.Fprintf(&b, " (%s)", strconv.Quote(e.Name))
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// Reader reads a Frame from CSV input.
//
// The input is a header row of unique column names, each with a non-space
// character, followed by at
// least one data row, each row holding as many fields as the header. Fields
// are separated by commas and rows end in LF or CRLF; a leading UTF-8 byte
// order mark is dropped and blank lines are skipped (so a missing value in a
// one-column file must be written as NA or ""). A field may be enclosed in
// double quotes, and then may hold commas, line ends (kept verbatim, CRLF
// included) and doubled quotes ("").
//
// A field is missing if it is empty, quoted or not, or if it is unquoted and
// equal to one of Missing. A column is Numeric if every non-missing field is
// a decimal number (digits with an optional sign, point and exponent, as in
// "-1.5e3"); a column with no non-missing field is Numeric too. Otherwise it
// is Categorical and its fields are its labels; quoting does not matter for
// the choice. NaN and infinite values are not data: a field such as "NaN",
// "Inf" or "1e999" in a column that is otherwise numeric is an error
// wrapping ErrNonFinite, while in a categorical column it is a label.
//
// A column read as categorical only because a few of its values are not
// numbers (at most 5, and 1% of the values or a single one), as in a
// numeric column with a typo such as "3,1", gets a Warning naming the line
// and the first such value; columns listed in Categorical do not.
//
// Memory is bounded by the input: a record longer than MaxLineBytes or with
// more than MaxColumns fields is an error. Fields go into typed columns as
// they are read, not held as text until the end: a column of numbers
// keeps the text of only those fields that its numbers would not give back
// (such as "1.50" or "1e3"), in case a later field makes it categorical.
//
// Read splits records and parses numbers on a goroutine of its own, a few
// batches of rows ahead of the rows it stores; rows, kinds and errors are
// those of reading in one goroutine, and once Read has returned it reads
// the input no more.
type Reader struct {
	// File names the input in errors.
	File string
	// Missing lists the unquoted field values read as missing; the empty
	// field is always missing. NewReader sets it to DefaultMissing.
	Missing []string
	// TrimSpace drops spaces and tabs around fields and header names.
	// NewReader sets it to true.
	TrimSpace bool
	// MaxLineBytes bounds the bytes of a record (a row, which may span
	// lines inside quotes). Zero or less means DefaultMaxLineBytes.
	MaxLineBytes int
	// MaxColumns bounds the number of fields of a record. Zero or less
	// means DefaultMaxColumns.
	MaxColumns int
	// Categorical names columns to read as Categorical whatever their
	// content, with the field text as label; this keeps identifiers and
	// codes such as "007" as written. Names not in the header are ignored.
	Categorical []string
	// SizeHint, if positive, is about how many bytes of CSV text the input
	// holds (TextSize of a file). After the first rows Read reserves its
	// columns for that much rather than growing them as it reads: growing
	// copies each column several times over into fresh memory.
	SizeHint int64

	// Keep, when not nil, is a row filter: Read stores only the rows for
	// which Keep returns true, given the field of the column KeepColumn
	// (the raw text, trimmed as the other fields, and whether it is
	// missing). Every row is still read and checked, and the kind, the
	// Warning and the errors of each column are those of the whole input,
	// as Read without a filter would give them: a column is categorical
	// if any field of the input makes it so, even one of a row left out.
	// Only the rows kept take memory; their lines are in Lines. A filter
	// that keeps no row gives a frame of no rows (but the input must have
	// some), whose columns have the whole input's kinds.
	Keep func(field string, missing bool) bool
	// KeepColumn names the column whose field Keep is given. When it is
	// empty, Keep decides without a field: it is given "" and true.
	KeepColumn string

	// KeepRow, when not nil and Keep is nil, is a row filter as Keep is,
	// given the fields of the columns KeepColumns in that order (the
	// slices are reused from row to row): for rows told apart by several
	// columns.
	KeepRow     func(fields []string, missing []bool) bool
	KeepColumns []string

	// ReserveRows, if positive, is about how many rows Read keeps (with
	// Keep, where SizeHint, the whole input's size, would reserve too
	// much): Read reserves its columns for that many rows from the start.
	ReserveRows int

	// Numeric names columns known to be numeric (a read of the whole
	// input said so), read faster: their fields go into numbers with
	// nothing kept aside in case the column turned categorical, and a
	// field that is not a finite number is an error wrapping
	// ErrNotNumber. Rows that Keep leaves out are not read in them.
	Numeric []string

	// Columns, when not nil, names the columns to read: the fields of
	// the others are split and counted but not read, and the frame has
	// none of them (their kinds and errors are not known). Names not in
	// the header are ignored.
	Columns []string

	// Place, when not nil, maps a line of the input to the file and the
	// line of it that errors and warnings name: for input made of several
	// files one after the other. Lines still holds lines of the input.
	// Place is not called while the input is being read, so it may look
	// at the state of the input's reader.
	Place func(line int) (file string, fileLine int)

	// Lines is set by Read: the line of the input on which each data row
	// starts (rows may span lines inside quotes, and blank lines are
	// skipped), so that later errors can name the line.
	Lines *Lines

	r io.Reader
}

// NewReader returns a Reader reading from r with the default settings.
func NewReader(r io.Reader) *Reader {
	return &Reader{
		Missing:   DefaultMissing,
		TrimSpace: true,
		r:         r,
	}
}

// ReadCSV reads a Frame from r with the default settings of NewReader.
func ReadCSV(r io.Reader) (*Frame, error) {
	return NewReader(r).Read()
}

// Decompressed bytes are read ahead in prefetchDepth buffers of
// prefetchSize bytes.
const (
	prefetchSize  = 1 << 18
	prefetchDepth = 2
)

// ReadFile reads a Frame from the CSV file at path with the default
// settings of NewReader. A gzip-compressed file is recognised by its magic
// bytes and decompressed. Parse errors carry the file's base name.
func ReadFile(path string) (*Frame, error) {
	return readFile(path, nil)
}

// readFile is ReadFile with a hook to adjust the Reader's settings.
func readFile(path string, configure func(*Reader)) (*Frame, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	r, done, err := Uncompressed(fh)
	if err != nil {
		return nil, fmt.Errorf("datasets: %s: %w", path, err)
	}
	defer done()
	cr := NewReader(r)
	cr.File = filepath.Base(path)
	cr.SizeHint = TextSize(fh)
	if configure != nil {
		configure(cr)
	}
	return cr.Read()
}

// Uncompressed returns the text of src behind a buffer: src's own, or,
// when src begins with gzip's magic bytes, its decompression, which runs
// on another core while the caller parses. done releases what it took.
func Uncompressed(src io.Reader) (r *bufio.Reader, done func(), err error) {
	br := bufio.NewReaderSize(src, 1<<16)
	if magic, _ := br.Peek(2); len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, func() {}, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, func() {}, err
	}
	pr := prefetch.NewReader(zr, prefetchSize, prefetchDepth)
	return bufio.NewReaderSize(pr, 1<<16), func() { pr.Close(); zr.Close() }, nil
}

// Read reads the whole input and returns it as a Frame.
func (r *Reader) Read() (*Frame, error) {
	var out *Frame
	err := r.read(0, func(f *Frame, lines *Lines) error {
		out, r.Lines = f, lines
		return nil
	})
	return out, err
}

// ReadPieces reads the input a piece at a time: it calls fn with a frame
// of each run of rows consecutive rows (the last may have fewer), in
// order, with the lines they start on, and stops at the first error of
// the input or of fn, which it returns. Memory holds one piece. Each
// piece's columns have their own kinds, as if the piece were the whole
// input: list in Categorical the columns that must be categorical in
// every piece. Pieces have no Warning. Keep, if set, filters the rows as
// it does for Read, and pieces count the rows kept.
func (r *Reader) ReadPieces(rows int, fn func(f *Frame, lines *Lines) error) error {
	if rows < 1 {
		return fmt.Errorf("datasets: ReadPieces of %d rows", rows)
	}
	return r.read(rows, fn)
}

// read reads the input and calls emit with its frame, or with each piece
// of piece rows when piece > 0.
func (r *Reader) read(piece int, emit func(f *Frame, lines *Lines) error) error {
	// The input is read on readAhead's goroutine; Place may look at the
	// state of its reader, and so runs between its reads.
	in := &lockedReader{r: r.r}
	p := &parser{
		br:      bufio.NewReaderSize(in, 1<<16),
		trim:    r.TrimSpace,
		maxLine: r.MaxLineBytes,
		maxCols: r.MaxColumns,
		line:    1,
	}
	if p.maxLine <= 0 {
		p.maxLine = DefaultMaxLineBytes
	}
	if p.maxCols <= 0 {
		p.maxCols = DefaultMaxColumns
	}
	perr := func(line, col int, name string, err error) error {
		file := r.File
		if r.Place != nil {
			in.mu.Lock()
			file, line = r.Place(line)
			in.mu.Unlock()
		}
		return &ParseError{File: file, Line: line, Column: col, Name: name, Err: err}
	}
	if err := p.skipBOM(); err != nil {
		return perr(1, 0, "", err)
	}

	// Header.
	err := p.readRecord()
	if err == io.EOF {
		return perr(p.line, 0, "", ErrEmptyInput)
	}
	if err != nil {
		return perr(p.errLine, p.errCol, "", err)
	}
	ncol := len(p.fields)
	headerLine := p.recLine
	names := make([]string, ncol)
	seen := make(map[string]int, ncol)
	for j, fld := range p.fields {
		name := string(fld.b)
		if strings.TrimSpace(name) == "" {
			return perr(p.recLine, j+1, "", ErrHeaderName)
		}
		if k, dup := seen[name]; dup {
			return perr(p.recLine, j+1, name, fmt.Errorf("%w: also column %d", ErrDuplicateHeader, k+1))
		}
		seen[name] = j
		names[j] = name
	}

	missing := make(map[string]bool, len(r.Missing))
	for _, m := range r.Missing {
		missing[m] = true
	}
	forced := make(map[string]bool, len(r.Categorical))
	for _, name := range r.Categorical {
		forced[name] = true
	}
	sure := make(map[string]bool, len(r.Numeric))
	for _, name := range r.Numeric {
		sure[name] = !forced[name]
	}
	cols := make([]colBuilder, ncol)
	for j := range cols {
		cols[j].init(forced[names[j]])
		cols[j].sure = sure[names[j]]
	}
	// fields lists the columns read (Columns), all of them by default.
	fields := make([]int, 0, ncol)
	for j, name := range names {
		if r.Columns == nil || slices.Contains(r.Columns, name) {
			fields = append(fields, j)
		}
	}
	if r.ReserveRows > 0 && piece == 0 {
		for _, j := range fields {
			cols[j].grow(r.ReserveRows)
		}
	}
	keepCol := -1
	var keepCols []int // KeepRow's
	var keepFields []string
	var keepMissing []bool
	var typos []typoCount // a filter's count of each column's typos
	filter := r.Keep != nil || r.KeepRow != nil
	if filter {
		keepCol = ncol // no field: "" and missing
		if r.Keep != nil && r.KeepColumn != "" {
			k, ok := seen[r.KeepColumn]
			if !ok {
				return perr(headerLine, 0, "", fmt.Errorf("%w: %q (Reader.KeepColumn)", ErrNoKeepColumn, r.KeepColumn))
			}
			keepCol = k
		}
		if r.Keep == nil {
			for _, name := range r.KeepColumns {
				k, ok := seen[name]
				if !ok {
					return perr(headerLine, 0, "", fmt.Errorf("%w: %q (Reader.KeepColumns)", ErrNoKeepColumn, name))
				}
				keepCols = append(keepCols, k)
			}
			keepFields, keepMissing = make([]string, len(keepCols)), make([]bool, len(keepCols))
		}
		typos = make([]typoCount, ncol)
	}
	lines := &Lines{} // starting line of each data row, for later errors
	rowBytes := 0     // bytes of the first rows, for SizeHint
	total := 0        // data rows read, kept or not
	// The records are split, and the numbers of the columns read parsed,
	// on another goroutine.
	parse := make([]bool, ncol)
	for _, j := range fields {
		parse[j] = !forced[names[j]]
	}
	ra := newReadAhead(p, parse)
	defer ra.stop()
	for {
		err := ra.next()
		if err == io.EOF {
			break
		}
		if err != nil {
			col := ra.errCol
			name := ""
			if col >= 1 && col <= ncol {
				name = names[col-1]
			}
			return perr(ra.errLine, col, name, err)
		}
		if len(ra.fields) != ncol {
			col := min(len(ra.fields), ncol) + 1
			name := ""
			if col <= ncol {
				name = names[col-1]
			}
			return perr(ra.line, col, name,
				fmt.Errorf("%w: got %d, header has %d", ErrFieldCount, len(ra.fields), ncol))
		}
		total++
		isMissing := func(fld field) bool {
			return len(fld.b) == 0 || (!fld.quoted && missing[string(fld.b)])
		}
		if filter {
			var keep bool
			if r.Keep != nil {
				fld := field{}
				if keepCol < ncol {
					fld = ra.fields[keepCol]
				}
				keep = r.Keep(unsafeString(fld.b), isMissing(fld))
			} else {
				for q, k := range keepCols {
					keepFields[q], keepMissing[q] = unsafeString(ra.fields[k].b), isMissing(ra.fields[k])
				}
				keep = r.KeepRow(keepFields, keepMissing)
			}
			if !keep {
				for _, j := range fields {
					if cols[j].sure {
						continue // numeric, as the whole input says
					}
					fld := ra.fields[j]
					miss := isMissing(fld)
					typos[j].count(fld.b, miss, ra.line)
					cols[j].skip(fld.b, miss, ra.line, ra.nums[j])
				}
				continue
			}
		}
		row := lines.Len()
		for _, j := range fields {
			fld := ra.fields[j]
			miss := isMissing(fld)
			if typos != nil && !cols[j].sure {
				typos[j].count(fld.b, miss, ra.line)
			}
			if err := cols[j].add(row, fld.b, miss, ra.nums[j]); err != nil {
				return perr(ra.line, j+1, names[j], err)
			}
			if row < reserveAfter {
				rowBytes += len(fld.b) + 1
			}
		}
		lines.Add(ra.line)
		if row+1 == reserveAfter && r.SizeHint > 0 && !filter {
			reserve(cols, fields, reserveAfter, rowBytes, r.SizeHint)
		}
		if piece > 0 && lines.Len() == piece {
			f, err := buildFrame(cols, fields, names, forced, lines, nil, perr)
			if err != nil {
				return err
			}
			if err := emit(f, lines); err != nil {
				return err
			}
			for j := range cols {
				cols[j] = colBuilder{}
				cols[j].init(forced[names[j]])
				cols[j].sure = sure[names[j]]
			}
			lines = &Lines{}
		}
	}
	if total == 0 {
		return perr(max(ra.endLine, headerLine+1), 0, "", ErrNoRows)
	}
	if piece > 0 && lines.Len() == 0 {
		return nil
	}
	f, err := buildFrame(cols, fields, names, forced, lines, typos, perr)
	if err != nil {
		return err
	}
	if piece > 0 {
		for _, c := range f.cols {
			c.Warning = ""
		}
	}
	return emit(f, lines)
}

// ErrNoKeepColumn is the error of a Reader whose KeepColumn is not in the
// header.
var ErrNoKeepColumn = errors.New("no such column to filter rows by")

// buildFrame makes the frame of the columns read, with the lines of their
// rows, and sets the Warning of each categorical column that looks numeric
// with a few typos: from the columns' own values, or from typos, a
// filter's counts over every row read, when not nil.
func buildFrame(cols []colBuilder, fields []int, names []string, forced map[string]bool, lines *Lines, typos []typoCount, perr func(line, col int, name string, err error) error) (*Frame, error) {
	f := &Frame{index: make(map[string]int, len(fields)), nrows: lines.Len()}
	for _, j := range fields {
		c, row, err := cols[j].build(names[j])
		if err != nil {
			line := cols[j].badLine
			if row >= 0 {
				line = lines.Line(row)
			}
			return nil, perr(line, j+1, names[j], err)
		}
		if c.Kind == Categorical && !forced[names[j]] {
			if typos != nil {
				if t := typos[j]; t.looksNumeric() {
					c.Warning = perr(t.firstLine, j+1, names[j], typoError(t.firstText, t.bad, t.nums)).Error()
				}
			} else if first, bad, nums := numericTypos(c); first >= 0 {
				c.Warning = perr(lines.Line(first), j+1, names[j], typoError(c.Str[first], bad, nums)).Error()
			}
		}
		if c.Kind == Categorical {
			line, text := 0, ""
			if typos != nil {
				line, text = typos[j].notUTF8Line, typos[j].notUTF8Text
			} else if !cols[j].labelsUTF8() {
				if row := firstNotUTF8(c.Str); row >= 0 {
					line, text = lines.Line(row), c.Str[row]
				}
			}
			if line > 0 {
				w := perr(line, j+1, names[j], notUTF8Error(text)).Error()
				if c.Warning != "" {
					w = c.Warning + "; " + w
				}
				c.Warning = w
			}
		}
		cols[j] = colBuilder{} // let what the column kept aside go
		f.index[c.Name] = len(f.cols)
		f.cols = append(f.cols, c)
	}
	return f, nil
}

// typoCount is numericTypos counted field by field, for a filter that does
// not keep every row.
type typoCount struct {
	nums, bad int
	firstLine int // line of the first value that is not a number, 0 if none
	firstText string
	// The line and text of the first value that is not UTF-8, as
	// firstNotUTF8 finds it; 0 if none.
	notUTF8Line int
	notUTF8Text string
}

// count counts the field b of the row starting on line.
func (t *typoCount) count(b []byte, missing bool, line int) {
	if missing {
		return
	}
	if isDecimal(unsafeString(b)) {
		t.nums++
		return
	}
	t.bad++
	if t.firstLine == 0 {
		t.firstLine, t.firstText = line, string(b)
	}
	if t.notUTF8Line == 0 && !utf8.Valid(b) {
		t.notUTF8Line, t.notUTF8Text = line, string(b)
	}
}

// looksNumeric reports whether the counts are those of a numeric column
// with a few typos, as numericTypos decides it.
func (t typoCount) looksNumeric() bool {
	limit := min(maxTypos, max(1, (t.nums+t.bad)/100))
	return t.bad > 0 && t.bad <= limit && t.nums >= minTypoNums
}

// reserveAfter is the number of rows from which Read estimates the size
// of a row for SizeHint.
const reserveAfter = 256

// reserve grows the capacity of the columns for the rows that size bytes
// of CSV hold, estimated from the bytes of the first rows, with 5% to
// spare: growing a column as it is read would copy it several times
// over into fresh memory.
func reserve(cols []colBuilder, fields []int, rows, bytes int, size int64) {
	total := int(min(1.05*float64(size)*float64(rows)/float64(bytes), float64(size)/float64(len(cols))))
	if total <= rows {
		return
	}
	for _, j := range fields {
		cols[j].grow(total)
	}
}

// TextSize returns about how many bytes of text the file f holds: its
// size, or for a gzip-compressed file the size of the uncompressed data
// that its trailer records (modulo 2^32; 0 when that is smaller than the
// file, as it is past 4 GiB), or 0 when it cannot tell. It is a hint for
// Reader.SizeHint and reads f only with ReadAt.
func TextSize(f *os.File) int64 {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return 0
	}
	size := st.Size()
	var b [4]byte
	if size < 18 {
		return size
	}
	if _, err := f.ReadAt(b[:2], 0); err != nil {
		return 0
	}
	if b[0] != 0x1f || b[1] != 0x8b {
		return size
	}
	if _, err := f.ReadAt(b[:], size-4); err != nil {
		return 0
	}
	isize := int64(binary.LittleEndian.Uint32(b[:]))
	if isize < size {
		return 0
	}
	return isize
}

// A categorical column is taken for a numeric one with typos when at most
// maxTypos of its values, and at most 1% of them (but always 1), are not
// numbers, and at least minTypoNums are.
const (
	maxTypos    = 5
	minTypoNums = 3
)

// numericTypos returns the row of the first value of c that is not a number,
// the number of such values and the number of numbers, if c looks like a
// numeric column with a few typos; else first is -1.
func numericTypos(c *Column) (first, bad, nums int) {
	first = -1
	total := len(c.Str) - c.NumMissing()
	limit := min(maxTypos, max(1, total/100))
	for i, s := range c.Str {
		if c.Missing[i] {
			continue
		}
		if isDecimal(s) {
			nums++
			continue
		}
		if bad++; bad > limit {
			return -1, 0, 0
		}
		if first < 0 {
			first = i
		}
	}
	if nums < minTypoNums {
		return -1, 0, 0
	}
	return first, bad, nums
}

// typoError describes the first typo of a numeric-looking column.
func typoError(s string, bad, nums int) error {
	others := ""
	if bad > 1 {
		others = fmt.Sprintf(" (nor are %d other values)", bad-1)
	}
	return fmt.Errorf("%q is not a number%s, but the column's other %d values are: it is read as categorical; correct the value, or write NA if it is missing", s, others, nums)
}

// firstNotUTF8 returns the first row of labels that is not valid UTF-8,
// or -1. A row with the label of the row before it is not checked again:
// a subject's rows follow each other.
func firstNotUTF8(labels []string) int {
	for i, s := range labels {
		if i > 0 && s == labels[i-1] {
			continue
		}
		if !utf8.ValidString(s) {
			return i
		}
	}
	return -1
}

// notUTF8Error is the warning of a label s that is not UTF-8, as text in
// Latin-1 or Windows-1252 is: the labels keep their bytes, so the fit is
// right, but JSON cannot hold such bytes.
func notUTF8Error(s string) error {
	return fmt.Errorf("%q is not UTF-8 text: labels keep their bytes, but JSON output shows those that are not UTF-8 as U+FFFD, so labels that differ only there look alike in it; convert the file to UTF-8 (from Latin-1: iconv -f latin1 -t utf-8)", s)
}

// IsDecimal reports whether s is a number as Read reads one: an optional
// sign, digits with an optional point (at least one digit), and an
// optional exponent. Unlike strconv.ParseFloat it rejects hexadecimal,
// underscores, NaN and Inf.
func IsDecimal(s string) bool { return isDecimal(s) }

// isDecimal is IsDecimal.
func isDecimal(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && '0' <= s[i] && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		exp := 0
		for i < len(s) && '0' <= s[i] && s[i] <= '9' {
			i++
			exp++
		}
		if exp == 0 {
			return false
		}
	}
	return i == len(s)
}

// isNonFinite reports whether s spells NaN or an infinity, as
// strconv.ParseFloat accepts them.
func isNonFinite(s string) bool {
	if len(s) > 0 && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	return strings.EqualFold(s, "nan") || strings.EqualFold(s, "inf") || strings.EqualFold(s, "infinity")
}

// field is one parsed field; b aliases the parser's buffer.
type field struct {
	b      []byte
	quoted bool
}

// parser splits the input into records. It counts lines so that errors can
// name them, and enforces the limits on record size and field count.
type parser struct {
	br      *bufio.Reader
	trim    bool
	maxLine int
	maxCols int

	line    int // current line, 1-based
	recLine int // line where the current record started
	nbytes  int // bytes read in the current record

	buf    []byte // the current record's field bytes
	ends   []int  // end offset in buf of each field
	quoted []bool
	fields []field

	errLine, errCol int // place of the last error
	openQuote       int // line of the quote still open when the limit was hit, or 0
}

func (p *parser) skipBOM() error {
	b, err := p.br.Peek(3)
	if err != nil && err != io.EOF {
		return err
	}
	if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
		p.br.Discard(3)
	}
	return nil
}

// next returns the next byte of the record, counting it against the limit.
// run appends to p.buf the bytes of an unquoted field up to the next
// ',', '\n' or '"' that the reader holds already, and consumes them: the
// bulk of a file, read a slice at a time rather than a byte at a time
// (which was a fifth of reading).
func (p *parser) run() error {
	buf, _ := p.br.Peek(p.br.Buffered())
	i := 0
	for i < len(buf) {
		if b := buf[i]; b == ',' || b == '\n' || b == '"' {
			break
		}
		i++
	}
	if i == 0 {
		return nil
	}
	if p.nbytes+i > p.maxLine {
		return fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, p.maxLine)
	}
	p.nbytes += i
	p.buf = append(p.buf, buf[:i]...)
	p.br.Discard(i)
	return nil
}

func (p *parser) next() (byte, error) {
	c, err := p.br.ReadByte()
	if err != nil {
		return 0, err
	}
	p.nbytes++
	if p.nbytes > p.maxLine {
		return 0, fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, p.maxLine)
	}
	return c, nil
}

func (p *parser) fail(col int, err error) error {
	if p.errLine == 0 {
		p.errLine = p.line
	}
	p.errCol = col
	return err
}

// tooLong adds to an ErrLineTooLong error where the record, and a quoted
// field still open, started: the limit is hit where the record has run to,
// often far from the runaway quote that caused it.
func (p *parser) tooLong(err error) error {
	var where []string
	if p.recLine != p.line {
		where = append(where, fmt.Sprintf("the record started on line %d", p.recLine))
	}
	if p.openQuote > 0 {
		where = append(where, fmt.Sprintf("the quoted field opened on line %d is still open (is its closing quote missing?)", p.openQuote))
	}
	if len(where) == 0 {
		return err
	}
	return fmt.Errorf("%w; %s", err, strings.Join(where, "; "))
}

// readRecord reads the next record into p.fields. It returns io.EOF when
// the input holds no further record.
func (p *parser) readRecord() error {
	p.errLine, p.errCol = 0, 0
	// Skip blank lines. Peek, not ReadByte, so that a first byte that
	// starts a record stays in the buffer.
	for {
		b, err := p.br.Peek(2)
		if len(b) == 0 {
			if err == io.EOF {
				return io.EOF
			}
			return p.fail(0, err)
		}
		switch {
		case b[0] == '\n':
			p.br.Discard(1)
		case len(b) == 2 && b[0] == '\r' && b[1] == '\n':
			p.br.Discard(2)
		default:
			goto record
		}
		p.line++
	}
record:
	p.recLine = p.line
	p.openQuote = 0
	p.nbytes = 0
	p.buf = p.buf[:0]
	p.ends = p.ends[:0]
	p.quoted = p.quoted[:0]
	for {
		col := len(p.ends) + 1
		if col > p.maxCols {
			return p.fail(col, fmt.Errorf("%w: more than %d", ErrTooManyColumns, p.maxCols))
		}
		endRec, quoted, err := p.readField(col)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			if errors.Is(err, ErrLineTooLong) {
				err = p.tooLong(err)
			}
			return p.fail(col, err)
		}
		p.ends = append(p.ends, len(p.buf))
		p.quoted = append(p.quoted, quoted)
		if endRec {
			break
		}
	}
	p.fields = p.fields[:0]
	start := 0
	for k, end := range p.ends {
		p.fields = append(p.fields, field{b: p.buf[start:end], quoted: p.quoted[k]})
		start = end
	}
	return nil
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// readField appends the next field to p.buf. It reports whether the field
// ended its record (by a newline or the end of input) and whether it was
// quoted.
func (p *parser) readField(col int) (endRec, quoted bool, err error) {
	start := len(p.buf)
	c, err := p.next()
	if p.trim {
		for err == nil && isSpace(c) {
			c, err = p.next()
		}
	}
	if err == io.EOF {
		return true, false, nil
	}
	if err != nil {
		return false, false, err
	}
	if c == '"' {
		return p.readQuoted(col)
	}
	for {
		switch c {
		case ',':
			p.trimField(start)
			return false, false, nil
		case '\n':
			p.line++
			if n := len(p.buf); n > start && p.buf[n-1] == '\r' {
				p.buf = p.buf[:n-1]
			}
			p.trimField(start)
			return true, false, nil
		case '"':
			p.errLine = p.line
			return false, false, ErrBareQuote
		}
		p.buf = append(p.buf, c)
		if err := p.run(); err != nil {
			return false, false, err
		}
		c, err = p.next()
		if err == io.EOF {
			if n := len(p.buf); n > start && p.buf[n-1] == '\r' {
				p.buf = p.buf[:n-1]
			}
			p.trimField(start)
			return true, false, nil
		}
		if err != nil {
			return false, false, err
		}
	}
}

func (p *parser) trimField(start int) {
	if !p.trim {
		return
	}
	n := len(p.buf)
	for n > start && isSpace(p.buf[n-1]) {
		n--
	}
	p.buf = p.buf[:n]
}

// readQuoted reads a quoted field after its opening quote.
func (p *parser) readQuoted(col int) (endRec, quoted bool, err error) {
	openLine := p.line
	for {
		c, err := p.next()
		if err == io.EOF {
			p.errLine = openLine
			return false, true, fmt.Errorf("%w: quote opened on line %d not closed", ErrQuote, openLine)
		}
		if err != nil {
			if errors.Is(err, ErrLineTooLong) {
				p.openQuote = openLine
			}
			return false, true, err
		}
		switch c {
		case '"':
			d, err := p.next()
			if p.trim {
				for err == nil && isSpace(d) {
					d, err = p.next()
				}
			}
			if err == io.EOF {
				return true, true, nil
			}
			if err != nil {
				return false, true, err
			}
			switch d {
			case '"':
				p.buf = append(p.buf, '"')
				continue
			case ',':
				return false, true, nil
			case '\n':
				p.line++
				return true, true, nil
			case '\r':
				if e, err := p.next(); err == nil && e == '\n' {
					p.line++
					return true, true, nil
				}
			}
			p.errLine = p.line
			return false, true, fmt.Errorf("%w: text after closing quote", ErrQuote)
		case '\n':
			// Line ends inside quotes are kept as they are, CR and
			// all, so that writing the label back loses nothing.
			p.line++
		}
		p.buf = append(p.buf, c)
	}
}

// WriteCSV writes f to w as CSV with a header row, in a form ReadCSV reads
// back to the same values. Numbers are written in the shortest form that
// reads back exactly (integers below 1e15 without an exponent); missing values are written as
// empty fields, or as "" in a one-column frame since blank lines are
// skipped on reading. Labels and names are quoted when they hold a comma,
// quote, newline or surrounding space, or equal a default missing token. A
// categorical column whose labels all look like numbers is read back as
// numeric (use SetCategorical after reading), or rejected if some of its
// labels are NaN or Inf.
func WriteCSV(w io.Writer, f *Frame) error {
	bw := bufio.NewWriter(w)
	for j, c := range f.cols {
		if j > 0 {
			bw.WriteByte(',')
		}
		writeText(bw, c.Name)
	}
	bw.WriteByte('\n')
	var scratch []byte
	for i := range f.nrows {
		for j, c := range f.cols {
			if j > 0 {
				bw.WriteByte(',')
			}
			switch {
			case c.Missing[i]:
				if len(f.cols) == 1 {
					bw.WriteString(`""`)
				}
			case c.Kind == Numeric:
				v := c.Num[i]
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("datasets: WriteCSV: row %d, column %q: non-finite value %v", i+1, c.Name, v)
				}
				scratch = appendNumber(scratch[:0], v)
				bw.Write(scratch)
			default:
				writeText(bw, c.Str[i])
			}
		}
		if err := bw.WriteByte('\n'); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendNumber appends the shortest text that reads back as v, without an
// exponent for integers such as identifiers below 1e15.
func appendNumber(dst []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.AppendFloat(dst, v, 'f', -1, 64)
	}
	return strconv.AppendFloat(dst, v, 'g', -1, 64)
}

// writeText writes s, quoted if reading it back needs quotes.
func writeText(w *bufio.Writer, s string) {
	need := s == "" || strings.ContainsAny(s, ",\"\r\n") ||
		isSpace(s[0]) || isSpace(s[len(s)-1]) ||
		strings.HasPrefix(s, "\xef\xbb\xbf")
	for _, m := range DefaultMissing {
		need = need || s == m
	}
	if !need {
		w.WriteString(s)
		return
	}
	w.WriteByte('"')
	w.WriteString(strings.ReplaceAll(s, `"`, `""`))
	w.WriteByte('"')
}

// DataDir returns the directory holding the benchmark data files:
// flagValue if it is not empty, else the environment variable
// SPARSEVI_DATA if set, else "../shared/datasets". In the last case, if
// that directory does not exist relative to the working directory, the
// parents of the working directory are searched for a shared/datasets
// directory, so that tests run from a package directory find the data;
// "../shared/datasets" is returned if none is found.
func DataDir(flagValue string) string {
	if flagValue != "" {
		return flagValue
	}
	if env := os.Getenv("SPARSEVI_DATA"); env != "" {
		return env
	}
	const def = "../shared/datasets"
	if isDir(def) {
		return def
	}
	wd, err := os.Getwd()
	if err != nil {
		return def
	}
	for dir := wd; ; {
		cand := filepath.Join(dir, "shared", "datasets")
		if isDir(cand) {
			return cand
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return def
		}
		dir = parent
	}
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}
