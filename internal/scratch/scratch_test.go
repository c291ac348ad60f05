// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package scratch

import (
	"testing"
	"unsafe"
)

// addr returns the address of x[i] (x[i-1]+8 past the end allowed).
func addr(x []float64, i int) uintptr {
	return uintptr(unsafe.Pointer(unsafe.SliceData(x))) + uintptr(i)*8
}

func TestPartialsApart(t *testing.T) {
	for _, c := range []struct{ k, g int }{{1, 1}, {3, 1}, {5, 7}, {4, 8}, {2, 9}, {6, 28}} {
		p := Partials(c.k, c.g)
		if len(p) != c.k {
			t.Fatalf("k=%d g=%d: %d slices", c.k, c.g, len(p))
		}
		for j := range p {
			if len(p[j]) != c.g || cap(p[j]) != c.g {
				t.Errorf("k=%d g=%d: slice %d has length %d, capacity %d", c.k, c.g, j, len(p[j]), cap(p[j]))
			}
			if j > 0 {
				if gap := addr(p[j], 0) - addr(p[j-1], c.g); gap < Line {
					t.Errorf("k=%d g=%d: slices %d and %d are %d bytes apart, want at least %d", c.k, c.g, j-1, j, gap, Line)
				}
			}
		}
	}
}

func TestCarver(t *testing.T) {
	c := NewCarver(10)
	a, b := c.Take(3), c.Take(7)
	if len(a) != 3 || cap(a) != 3 || len(b) != 7 {
		t.Fatalf("lengths %d (cap %d), %d", len(a), cap(a), len(b))
	}
	if addr(b, 0) != addr(a, 3) {
		t.Error("slices are not consecutive")
	}
	// The padding keeps the first and last slice a line from the ends.
	if addr(a, 0)-addr(c.buf, 0) < Line || addr(c.buf, len(c.buf))-addr(b, 7) < Line {
		t.Error("no cache line of padding at the ends")
	}
	defer func() {
		if recover() == nil {
			t.Error("Take beyond the buffer did not panic")
		}
	}()
	c.Take(1)
}
