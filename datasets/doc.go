// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package datasets provides a column-oriented data frame read from CSV, the
// benchmark data sets of the sparsevi paper and a simulator of GLMM data
// with known truth.
package datasets
