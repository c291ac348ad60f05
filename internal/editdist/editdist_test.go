// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package editdist

import "testing"

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"id", "id", 0}, {"idd", "id", 1},
		{"famly", "family", 1}, {"kitten", "sitting", 3}, {"größe", "grösse", 2}, {"€", "e", 1}, {"ab", "ba", 2},
		{"outcom", "outcome", 1}, {"patientID", "patientId", 1}, {"abc", "cab", 2},
	} {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", c.b, c.a, got, c.want)
		}
	}
}
