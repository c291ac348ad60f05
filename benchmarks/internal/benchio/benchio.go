// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package benchio holds what the benchmark programs share: reading their
// list flags and writing their CSV files.
package benchio

import (
	"bytes"
	"encoding/csv"
	"strings"

	"github.com/sparsevi/sparsevi/internal/atomicfile"
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
	return atomicfile.WriteFile(path, data)
}
