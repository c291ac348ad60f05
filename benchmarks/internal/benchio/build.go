// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package benchio

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// BuildGlmmfit builds cmd/glmmfit into a temporary directory, once, so that
// no timed run pays for compiling, and returns the binary and a function
// that removes it. It must run from the repository root.
func BuildGlmmfit() (bin string, cleanup func(), err error) {
	if _, err := os.Stat(filepath.Join("cmd", "glmmfit")); err != nil {
		return "", nil, errors.New("run from the repository root (cmd/glmmfit not found)")
	}
	dir, err := os.MkdirTemp("", "glmmfit-bench")
	if err != nil {
		return "", nil, err
	}
	bin = filepath.Join(dir, "glmmfit")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/glmmfit")
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("building glmmfit: %v", err)
	}
	return bin, func() { os.RemoveAll(dir) }, nil
}
