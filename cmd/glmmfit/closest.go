// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/sparsevi/sparsevi/internal/editdist"
)

// nearest returns up to three of names nearest to name by edit distance
// (case ignored), nearest first, among those within a third of name's
// length (at least 2 edits).
func nearest(name string, names []string) []string {
	type cand struct {
		name string
		d    int
	}
	limit := max(2, utf8.RuneCountInString(name)/3)
	var near []cand
	for _, n := range names {
		if d := editdist.Distance(strings.ToLower(name), strings.ToLower(n)); d <= limit {
			near = append(near, cand{n, d})
		}
	}
	slices.SortStableFunc(near, func(a, b cand) int { return a.d - b.d })
	var out []string
	for _, c := range near[:min(3, len(near))] {
		out = append(out, c.name)
	}
	return out
}

// closest returns nearest's names, or with none near all of names if
// there are at most 12, so that a message can always list what there is.
func closest(name string, names []string) []string {
	if out := nearest(name, names); len(out) > 0 || len(names) > 12 {
		return out
	}
	return names
}

// didYouMean returns " (did you mean a, b?)" or " (columns: ...)" for the
// names closest to name, or "" when there are none to offer.
func didYouMean(name string, names []string) string {
	if near := nearest(name, names); len(near) > 0 {
		return " (did you mean " + strings.Join(quoted(near), " or ") + "?)"
	}
	if c := closest(name, names); len(c) > 0 {
		return " (columns: " + strings.Join(quoted(c), ", ") + ")"
	}
	return ""
}

// quoted returns the names in Go quotes.
func quoted(names []string) []string {
	q := make([]string, len(names))
	for k, n := range names {
		q[k] = fmt.Sprintf("%q", n)
	}
	return q
}
