// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

//go:build !mpi || !cgo

package mpi

import (
	"errors"
	"testing"
)

func TestNotBuilt(t *testing.T) {
	if err := Init(); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("Init: %v, want ErrNotBuilt", err)
	}
	if Rank() != 0 || Size() != 1 {
		t.Errorf("Rank, Size = %d, %d, want 0, 1", Rank(), Size())
	}
	if _, err := NewOrderedSum(3, []int{0, 5}); err != nil {
		t.Fatal(err)
	}
	s, _ := NewOrderedSum(3, []int{0, 5})
	if err := s.Sum(make([]float64, 3), make([]float64, 15)); !errors.Is(err, ErrNotBuilt) {
		t.Errorf("OrderedSum.Sum: %v, want ErrNotBuilt", err)
	}
}
