// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parquet

import (
	"context"
	"errors"
	"io"
	"testing"
)

// TestGuard: a panic inside the package boundary (the decoder's, on a
// damaged file) is an *Error naming the file and wrapping ErrCorrupt;
// other errors are named by the file, a context's error is left as it is.
func TestGuard(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func() error
		is   error
		want string
	}{
		{"index panic", func() error { var s []int; _ = s[3]; return nil }, ErrCorrupt, "d.parquet: damaged Parquet file: runtime error: index out of range [3] with length 0"},
		{"panic with a value", func() error { panic("bad page") }, ErrCorrupt, "d.parquet: damaged Parquet file: bad page"},
		{"plain error", func() error { return io.ErrUnexpectedEOF }, io.ErrUnexpectedEOF, "d.parquet: unexpected EOF"},
		{"row error", func() error { return &Error{File: "d.parquet", Row: 3, Column: "x", Err: ErrInexact} }, ErrInexact, `d.parquet: row 3, column "x": integer beyond 2^53`},
		{"cancelled", func() error { return context.Canceled }, context.Canceled, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := guard("d.parquet", tc.fn)
			if !errors.Is(err, tc.is) || err.Error() != tc.want {
				t.Errorf("error %v, want %q wrapping %v", err, tc.want, tc.is)
			}
			var e *Error
			if tc.is != context.Canceled && (!errors.As(err, &e) || e.File != "d.parquet") {
				t.Errorf("error %T %v is not an *Error for d.parquet", err, err)
			}
		})
	}
}
