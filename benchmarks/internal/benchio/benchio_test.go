// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package benchio

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestList(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"gva", []string{"gva"}},
		{" GVA, rvb1 ,,RVB2 ", []string{"gva", "rvb1", "rvb2"}},
	} {
		if got := List(c.in); !slices.Equal(got, c.want) {
			t.Errorf("List(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestWriteCSV(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.csv")
	rows := [][]string{{"a", "b"}, {"1", "x,y"}}
	if err := WriteCSV(path, rows); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || !slices.Equal(got[1], rows[1]) {
		t.Errorf("read back %q, want %q", got, rows)
	}
	if err := WriteCSV(filepath.Join(t.TempDir(), "no", "such", "dir.csv"), rows); err == nil {
		t.Error("no error for a file in a missing directory")
	}
}

func TestWriteFileReplacesAndLeavesNoTemporary(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.md")
	for _, content := range []string{"first\n", "second\n"} {
		if err := WriteFile(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != content {
			t.Errorf("read back %q, want %q", got, content)
		}
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after two writes, want 1", len(entries))
	}
}
