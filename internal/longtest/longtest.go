// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package longtest gates the long checks of the test suite — coverage of
// intervals over hundreds of seeded fits, signals sent to fits of 100,000
// subjects — so that go test ./... stays quick while CI runs them all:
//
//	SPARSEVI_LONG=1 go test ./...
package longtest

import (
	"os"
	"testing"
)

// Env is the environment variable that turns the long checks on when it
// is 1.
const Env = "SPARSEVI_LONG"

// Require skips t, saying what it would do, unless Env is 1 and -short is
// not given.
func Require(t testing.TB, what string) {
	t.Helper()
	if testing.Short() || os.Getenv(Env) != "1" {
		t.Skipf("a long check (%s): run with %s=1 and without -short", what, Env)
	}
}
