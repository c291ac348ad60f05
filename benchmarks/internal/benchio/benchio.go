// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package benchio holds what the benchmark programs share: reading their
// list flags and writing their CSV files.
package benchio

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"strings"
)

// List splits a comma-separated flag value into lower-case items, dropping
// blanks.
func List(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, strings.ToLower(f))
		}
	}
	return out
}

// WriteCSV writes rows to the file path, replacing it atomically: a
// reader sees the old file or the new one, never a part.
func WriteCSV(path string, rows [][]string) error {
	var b bytes.Buffer
	if err := csv.NewWriter(&b).WriteAll(rows); err != nil {
		return err
	}
	return WriteFile(path, b.Bytes())
}

// WriteFile writes data to the file path through a temporary file in the
// same directory and a rename, so that path is replaced atomically.
func WriteFile(path string, data []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
