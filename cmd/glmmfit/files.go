// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"

	"github.com/sparsevi/sparsevi/internal/atomicfile"
)

// fileFlag is a flag that names a file.
type fileFlag struct{ flag, path string }

// checkFiles refuses, before any work is done, an output that is the same
// file as an input or as another output (whatever path leads to it), and
// an output that cannot be written. Empty paths and "-" (standard input or
// output) are skipped.
func checkFiles(inputs, outputs []fileFlag) error {
	named := func(ff []fileFlag) []fileFlag {
		var out []fileFlag
		for _, f := range ff {
			if f.path != "" && f.path != "-" {
				out = append(out, f)
			}
		}
		return out
	}
	inputs, outputs = named(inputs), named(outputs)
	for k, out := range outputs {
		for _, in := range inputs {
			if atomicfile.Same(out.path, in.path) {
				return fmt.Errorf("%s %s is the same file as %s %s: it would be overwritten; write to another file", out.flag, out.path, in.flag, in.path)
			}
		}
		for _, other := range outputs[:k] {
			if atomicfile.Same(out.path, other.path) {
				return fmt.Errorf("%s %s and %s %s are the same file: give each output its own file", other.flag, other.path, out.flag, out.path)
			}
		}
		if err := atomicfile.CheckWritable(out.path); err != nil {
			return fmt.Errorf("%s %s cannot be written: %v", out.flag, out.path, err)
		}
	}
	return nil
}
