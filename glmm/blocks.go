// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import "fmt"

// Independent blocks of random effects, as lme4's (1 + x || g) and
// (1 | g) + (0 + x | g) give: the covariance of b_i is block-diagonal, and
// so are its precision W W' and, whatever the order of the effects, the
// Cholesky factor W (the elimination of one block never reaches another).
// The entries of omega across blocks stay in theta_g, for one layout of
// the global block for every model, but the model reads them as zero:
// their only term is their N(0, sigma0^2) prior, which the fitted q then
// matches, and summaries leave them out (OmegaFree).

// setBlocks records the random effects' blocks: nil, or one block label
// per random effect.
func (mod *Model) setBlocks(blocks []int) error {
	if blocks == nil {
		return nil
	}
	r := mod.r
	if len(blocks) != r {
		return &DataError{Err: fmt.Errorf("%w: REBlocks has %d entries for %d random effects", ErrLength, len(blocks), r)}
	}
	free := make([]bool, NumOmega(r))
	any := false
	for l := range r {
		for k := l; k < r; k++ {
			f := k == l || blocks[k] == blocks[l]
			free[OmegaIndex(k, l, r)] = f
			any = any || !f
		}
	}
	if any {
		mod.omegaFree = free
	}
	return nil
}

// OmegaFree reports whether entry j of omega is a parameter of the model:
// false for the entries across independent blocks of random effects
// (Config.REBlocks), which the model reads as zero.
func (mod *Model) OmegaFree(j int) bool { return mod.omegaFree == nil || mod.omegaFree[j] }

// IndependentBlocks reports whether the random effects form more than one
// independent block (Config.REBlocks).
func (mod *Model) IndependentBlocks() bool { return mod.omegaFree != nil }

// MaskOmega sets the entries of omega across independent blocks to zero,
// so that OmegaToW, RECov and RESDCorr give the model's W and covariance.
func (mod *Model) MaskOmega(omega []float64) {
	for j, f := range mod.omegaFree {
		if !f {
			omega[j] = 0
		}
	}
}

// maskW zeroes the entries of the r×r factor w across independent blocks.
func (mod *Model) maskW(w []float64) {
	if mod.omegaFree == nil {
		return
	}
	r := mod.r
	for l := range r {
		for k := l + 1; k < r; k++ {
			if !mod.omegaFree[OmegaIndex(k, l, r)] {
				w[k*r+l] = 0
			}
		}
	}
}
