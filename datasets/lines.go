// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import "sort"

// Lines maps the data rows of a CSV input to the lines they start on, for
// error messages. Row and line advance together but for blank lines and
// line ends inside quotes, so Lines keeps only the rows where the
// difference changes: a few bytes for a whole file rather than a number
// per row. The zero Lines is empty and ready to use.
type Lines struct {
	n     int
	from  []int // rows from which shift holds, ascending
	shift []int // line minus row from from[k] on
}

// Len returns the number of rows.
func (l *Lines) Len() int { return l.n }

// Add appends a row that starts on line.
func (l *Lines) Add(line int) {
	d := line - l.n
	if k := len(l.shift); k == 0 || l.shift[k-1] != d {
		l.from = append(l.from, l.n)
		l.shift = append(l.shift, d)
	}
	l.n++
}

// Line returns the line on which row k (0-based) starts. It panics if k
// is out of range.
func (l *Lines) Line(k int) int {
	if k < 0 || k >= l.n {
		panic("datasets: Lines.Line: row out of range")
	}
	j := sort.Search(len(l.from), func(j int) bool { return l.from[j] > k }) - 1
	return k + l.shift[j]
}
