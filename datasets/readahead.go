// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"io"
	"math"
	"strconv"
	"sync"
)

// number is a field's value as the reading goroutine parsed it.
type number struct {
	v    float64
	kind numberKind
}

// numberKind says what a field's text is as a number.
type numberKind uint8

const (
	notParsed  numberKind = iota // not a decimal (isDecimal), or not looked at
	finite                       // a decimal whose value, v, is finite
	outOfRange                   // a decimal that strconv.ParseFloat refuses or makes infinite
)

// parseNumber returns the number that b's text is, if a decimal.
func parseNumber(b []byte) number {
	s := unsafeString(b)
	if !isDecimal(s) {
		return number{}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) {
		return number{kind: outOfRange}
	}
	return number{v: v, kind: finite}
}

// A batch holds up to batchBytes of field text (or one record) of
// consecutive records, and at most batchRecords of them: small, so that
// the batches in flight add little to reading's peak memory (1.17 times
// the columns in TestReadMemory, 1.26-1.30 with batches of 64 KiB).
const (
	batchBytes   = 1 << 14
	batchRecords = 256
	// Batches in flight: one the rows are taken from, one ready, one
	// being read.
	batchesAhead = 3
)

// recordBatch is a run of records that readAhead's goroutine has split
// and parsed, with the parser's error after them, if any.
type recordBatch struct {
	buf    []byte   // the fields' text
	ends   []int    // the end in buf of each field
	quoted []bool   // of each field
	nums   []number // of each field
	counts []int    // the number of fields of each record
	lines  []int    // the line each record starts on

	// After the records: the parser's error (io.EOF at the end of the
	// input) with its place, and the parser's line then; err is nil if
	// more records follow.
	err             error
	errLine, errCol int
	line            int
}

// readAhead splits the records of a parser and parses their numbers on a
// goroutine of its own, batches ahead of the rows that Reader.read
// stores. The two halves take about as long as each other: one after the
// other on one core, the CSV of a million simulated subjects took 7.3 s
// to read, and side by side 6.0 s (go run ./benchmarks/parquet
// -subjects 1000000 -reps 3, the best of 3 each). Records come out in
// order with the parser's error after them, so that errors and rows are
// those of reading in one goroutine.
type readAhead struct {
	free, full chan *recordBatch
	done       chan struct{} // closed by stop
	finished   chan struct{} // closed by the goroutine as it returns

	cur   *recordBatch
	rec   int // the next record of cur
	field int // its first field in cur
	// The current record.
	fields []field
	nums   []number
	line   int
	// The parser's error, once the records before it are taken.
	errLine, errCol int
	endLine         int
}

// newReadAhead starts reading the records of p; parse says which
// columns' fields to parse as numbers. stop must be called once the
// records are no longer needed.
func newReadAhead(p *parser, parse []bool) *readAhead {
	ra := &readAhead{
		free:     make(chan *recordBatch, batchesAhead),
		full:     make(chan *recordBatch, batchesAhead),
		done:     make(chan struct{}),
		finished: make(chan struct{}),
	}
	for range batchesAhead {
		ra.free <- &recordBatch{}
	}
	go ra.run(p, parse)
	return ra
}

// run fills batches from p until its error, or until stop.
func (ra *readAhead) run(p *parser, parse []bool) {
	defer close(ra.finished)
	for {
		var b *recordBatch
		select {
		case b = <-ra.free:
		case <-ra.done:
			return
		}
		b.buf, b.ends, b.quoted, b.nums = b.buf[:0], b.ends[:0], b.quoted[:0], b.nums[:0]
		b.counts, b.lines, b.err = b.counts[:0], b.lines[:0], nil
		for len(b.buf) < batchBytes && len(b.lines) < batchRecords {
			if err := p.readRecord(); err != nil {
				b.err, b.errLine, b.errCol, b.line = err, p.errLine, p.errCol, p.line
				break
			}
			for j, f := range p.fields {
				b.buf = append(b.buf, f.b...)
				b.ends = append(b.ends, len(b.buf))
				b.quoted = append(b.quoted, f.quoted)
				var x number
				if j < len(parse) && parse[j] {
					x = parseNumber(f.b)
				}
				b.nums = append(b.nums, x)
			}
			b.counts = append(b.counts, len(p.fields))
			b.lines = append(b.lines, p.recLine)
		}
		select {
		case ra.full <- b:
		case <-ra.done:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// next makes the next record current (fields, nums and line), or returns
// the parser's error (io.EOF after the last record), whose place is then
// in errLine and errCol, and the parser's line in endLine.
func (ra *readAhead) next() error {
	for ra.cur == nil || ra.rec == len(ra.cur.lines) {
		if b := ra.cur; b != nil {
			if b.err != nil {
				ra.errLine, ra.errCol, ra.endLine = b.errLine, b.errCol, b.line
				return b.err
			}
			ra.free <- b // never blocks: there are batchesAhead batches
		}
		ra.cur = <-ra.full
		ra.rec, ra.field = 0, 0
	}
	b := ra.cur
	n := b.counts[ra.rec]
	ra.fields = ra.fields[:0]
	start := 0
	if ra.field > 0 {
		start = b.ends[ra.field-1]
	}
	for k := ra.field; k < ra.field+n; k++ {
		ra.fields = append(ra.fields, field{b: b.buf[start:b.ends[k]], quoted: b.quoted[k]})
		start = b.ends[k]
	}
	ra.nums = b.nums[ra.field : ra.field+n]
	ra.line = b.lines[ra.rec]
	ra.field += n
	ra.rec++
	return nil
}

// stop ends the goroutine and waits for it, so that the input is not
// read once stop has returned. The goroutine may be inside a read of the
// input, which stop then waits for.
func (ra *readAhead) stop() {
	close(ra.done)
	<-ra.finished
}

// lockedReader reads r holding mu, so that whoever else holds mu does not
// run during a read.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}
