// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// noTemporaries fails when a temporary file was left in dir.
func noTemporaries(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}
}

func TestWriteFileReplacesKeepingMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "fit.json")
	if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(path, []byte("new")); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(b) != "new" || st.Mode().Perm() != 0o600 {
		t.Errorf("contents %q mode %v, want \"new\" and 0600", b, st.Mode().Perm())
	}
	noTemporaries(t, dir)
}

func TestAbortLeavesTheOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "trace.csv")
	if err := os.WriteFile(path, []byte("good"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("half of a new file")
	f.Abort()
	f.Abort() // idempotent
	if err := f.Commit(); err == nil {
		t.Error("Commit after Abort succeeded")
	}
	if b, _ := os.ReadFile(path); string(b) != "good" {
		t.Errorf("after Abort the file holds %q", b)
	}
	noTemporaries(t, dir)
}

func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro")
	if err := os.Mkdir(ro, 0o555); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	for _, c := range []struct {
		path, want string
	}{
		{filepath.Join(dir, "new.json"), ""},
		{file, ""},
		{filepath.Join(dir, "missing", "x.json"), "does not exist"},
		{dir, "is a directory"},
		{filepath.Join(file, "x.json"), "is not a directory"},
		{filepath.Join(ro, "x.json"), "cannot create files"},
	} {
		err := CheckWritable(c.path)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("CheckWritable(%s): %v", c.path, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			if c.want == "cannot create files" && os.Geteuid() == 0 {
				continue // root writes anywhere
			}
			t.Errorf("CheckWritable(%s) = %v, want an error containing %q", c.path, err, c.want)
		}
	}
	noTemporaries(t, dir)
}

func TestSame(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	os.WriteFile("a.csv", []byte("x"), 0o644)
	os.WriteFile("b.csv", []byte("x"), 0o644)
	os.Mkdir("sub", 0o755)
	os.Symlink("a.csv", "link.csv")
	os.Link("a.csv", "hard.csv")
	os.Symlink(dir, "dirlink")
	os.Symlink("nowhere.json", "dangling.json")
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"a.csv", "./a.csv", true},
		{"a.csv", filepath.Join(dir, "a.csv"), true},
		{"a.csv", "sub/../a.csv", true},
		{"a.csv", "link.csv", true},
		{"a.csv", "hard.csv", true},
		{"a.csv", "dirlink/a.csv", true},
		{"a.csv", "b.csv", false},
		{"out.json", "./out.json", true},        // neither exists
		{"out.json", "dirlink/out.json", true},  // through a linked directory
		{"out.json", "other.json", false},       // neither exists
		{"dangling.json", "nowhere.json", true}, // a link to a file to be written
		{"a.csv", "out.json", false},            // one exists
	} {
		if got := Same(c.a, c.b); got != c.want {
			t.Errorf("Same(%s, %s) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}
