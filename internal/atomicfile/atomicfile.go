// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package atomicfile writes files so that a reader, or a later run, sees
// the old file or the new one and never a part: the data go to a temporary
// file in the same directory, which is renamed over the target only when
// everything was written. A full disk, a file-size limit or an interrupted
// run therefore leaves the previous file intact.
//
// It also answers the two questions a program should ask about its output
// files before it spends time computing them: can this file be written,
// and is it the same file as one of the inputs or another output.
package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a file being written. Its contents replace the target when
// Commit is called; Abort, or a failed Commit, leaves the target as it was.
type File struct {
	*os.File
	path string
	perm os.FileMode
	done bool
}

// Create starts writing the file path. The new file gets the permissions
// of the file it replaces, or 0644 less the umask when there is none.
func Create(path string) (*File, error) {
	perm := os.FileMode(0o644)
	if st, err := os.Stat(path); err == nil {
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s is not a regular file", path)
		}
		perm = st.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	return &File{File: f, path: path, perm: perm}, nil
}

// Commit closes the file and renames it over the target.
func (f *File) Commit() error {
	if f.done {
		return errors.New("atomicfile: Commit after Commit or Abort")
	}
	f.done = true
	tmp := f.File.Name()
	err := f.File.Sync()
	if cerr := f.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, f.perm)
	}
	if err == nil {
		err = os.Rename(tmp, f.path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("writing %s: %w", f.path, err)
	}
	return nil
}

// Abort discards what was written; the target is left as it was. It does
// nothing after Commit, so that it can be deferred.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.File.Close()
	os.Remove(f.File.Name())
}

// WriteFile writes data to path atomically (see Create).
func WriteFile(path string, data []byte) error {
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return f.Commit()
}

// CheckWritable reports why path could not be written by Create: its
// directory is missing or not a directory, path is a directory or not a
// regular file, or the directory does not let us create a file. It creates
// and removes a temporary file to find out, so that permissions, read-only
// file systems and the like are all caught.
func CheckWritable(path string) error {
	if path == "" {
		return errors.New("empty file name")
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("directory %s does not exist", dir)
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st, err := os.Stat(path); err == nil {
		if st.IsDir() {
			return fmt.Errorf("%s is a directory", path)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s is not a regular file", path)
		}
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return fmt.Errorf("cannot create files in %s: %v", dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return nil
}

// Same reports whether the paths a and b name the same file: the same
// existing file (through any relative or absolute path, symbolic or hard
// link), or, when neither exists yet, the same path once made absolute
// with its directory's symbolic links resolved.
func Same(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	if errA == nil || errB == nil {
		// One exists and the other does not: different files (a dangling
		// symbolic link is compared by its resolved name below).
		if !isDangling(a) && !isDangling(b) {
			return false
		}
	}
	return canonical(a) == canonical(b)
}

// isDangling reports whether path is a symbolic link to nothing.
func isDangling(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Mode()&fs.ModeSymlink != 0
}

// canonical returns the absolute form of path with the symbolic links of
// its directory (and of path itself, when it is a link) resolved.
func canonical(path string) string {
	if t, err := filepath.EvalSymlinks(path); err == nil {
		path = t
	} else if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
		if t, rerr := os.Readlink(path); rerr == nil {
			if !filepath.IsAbs(t) {
				t = filepath.Join(filepath.Dir(path), t)
			}
			path = t
		}
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = filepath.Clean(path)
	}
	dir, base := filepath.Split(abs)
	if d, err := filepath.EvalSymlinks(dir); err == nil {
		return filepath.Join(d, base)
	}
	return abs
}
