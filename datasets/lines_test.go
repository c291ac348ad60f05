// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package datasets

import (
	"strings"
	"testing"
)

// TestLines: Read's Lines gives the line each row starts on, past blank
// lines, CRLF and quoted line ends, and keeps an entry only where rows and
// lines part.
func TestLines(t *testing.T) {
	in := "a,b\n1,2\n\n3,\"x\ny\"\r\n4,5\n5,6\n\n\n7,8\n"
	r := NewReader(strings.NewReader(in))
	if _, err := r.Read(); err != nil {
		t.Fatal(err)
	}
	want := []int{2, 4, 6, 7, 10}
	if r.Lines.Len() != len(want) {
		t.Fatalf("%d rows, want %d", r.Lines.Len(), len(want))
	}
	for k, w := range want {
		if got := r.Lines.Line(k); got != w {
			t.Errorf("row %d: line %d, want %d", k, got, w)
		}
	}
	if len(r.Lines.from) != 4 {
		t.Errorf("%d entries for 4 changes of line minus row", len(r.Lines.from))
	}
	var l Lines
	for k := range 1000 {
		l.Add(k + 2)
	}
	if len(l.from) != 1 || l.Line(999) != 1001 {
		t.Errorf("1000 rows on consecutive lines: %d entries, last row on line %d", len(l.from), l.Line(999))
	}
}
