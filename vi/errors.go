// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import "fmt"

// factorError reports a bad diagonal entry of the factor.
type factorError struct {
	index   int // position in the compressed factor
	value   float64
	n, r, g int
}

func (e *factorError) Error() string {
	return fmt.Sprintf("factor diagonal entry %d is %v", e.index, e.value)
}
