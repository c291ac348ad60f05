// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"fmt"
	"math"
	"strconv"
)

// Crossed is a grouping factor crossed with the subjects, with a random
// intercept per level: in (1 | id) + (1 | item) with subjects by id, the
// item effects u_l ~ N(0, tau^2) join the global block, together with
// omega_u = -log tau, the log precision of the effects on the scale of the
// subjects' omega. Any subject may have rows at any level.
type Crossed struct {
	Name      string   // name of the factor; "" means "crossed1", "crossed2", ...
	Index     []int    // level in [0, NumLevels) of each row
	NumLevels int      // number of levels, at least 2
	Levels    []string // NumLevels labels; nil means "1", "2", ...
}

// MaxGlobal is the largest global block New accepts. The global block is
// dense in both factors of package vi, and every iteration factorises it:
// G^3/3 flops, about a billion at this size, and each subject keeps a
// G×r block.
const MaxGlobal = 1500

// crossFactor is a Crossed as stored.
type crossFactor struct {
	name   string
	levels []string
	idx    []int32 // level of each stored row
	off    int     // index in theta_g of u_0
	omega  int     // index in theta_g of omega_u
}

// setCrossed validates and stores the crossed factors, their effects
// placed in theta_g after (beta, omega, psi).
func (mod *Model) setCrossed(cs []Crossed, nobs int, rowName func(int) int) error {
	next := mod.p + NumOmega(mod.r) + mod.nd
	for c, cr := range cs {
		name := cr.Name
		if name == "" {
			name = "crossed" + strconv.Itoa(c+1)
		}
		if len(cr.Index) != nobs {
			return &DataError{Column: name, Err: fmt.Errorf("%w: crossed factor has %d entries for %d observations", ErrLength, len(cr.Index), nobs)}
		}
		if cr.NumLevels < 2 {
			return &DataError{Column: name, Err: fmt.Errorf("%w: crossed factor has %d levels, want at least 2", ErrConfig, cr.NumLevels)}
		}
		levels, err := names(cr.Levels, cr.NumLevels, "", name+" Levels")
		if err != nil {
			return err
		}
		f := crossFactor{name: name, levels: levels, idx: make([]int32, nobs), off: next, omega: next + cr.NumLevels}
		for s, k := range mod.perm {
			l := cr.Index[k]
			if l < 0 || l >= cr.NumLevels {
				return &DataError{Row: rowName(k), Column: name, Err: fmt.Errorf("%w: level index %d is outside [0, %d)", ErrGroup, l, cr.NumLevels)}
			}
			f.idx[s] = int32(l)
		}
		next += cr.NumLevels + 1
		mod.cross = append(mod.cross, f)
	}
	mod.ncross = next - (mod.p + NumOmega(mod.r) + mod.nd)
	if g := next; g > MaxGlobal && len(mod.cross) > 0 {
		big := 0
		for c := range mod.cross {
			if len(mod.cross[c].levels) > len(mod.cross[big].levels) {
				big = c
			}
		}
		f := &mod.cross[big]
		return &DataError{Column: f.name, Err: fmt.Errorf("%w: with its %d levels the global block would hold %d variables, at most %d are supported: make the factor with the most levels the subjects' grouping factor", ErrConfig, len(f.levels), g, MaxGlobal)}
	}
	return nil
}

// NumCrossed returns the number of crossed factors.
func (mod *Model) NumCrossed() int { return len(mod.cross) }

// CrossedFactor returns crossed factor c's name, its level labels, the
// index in theta_g of its first effect u_0 (the effects are contiguous)
// and that of omega_u, its log precision. The slice must not be modified.
func (mod *Model) CrossedFactor(c int) (name string, levels []string, first, omega int) {
	f := &mod.cross[c]
	return f.name, f.levels, f.off, f.omega
}

// addCrossed adds the crossed effects of theta_g to the linear predictors
// eta of stored rows s, s+1, ....
func (mod *Model) addCrossed(s int, thetaG, eta []float64) {
	for c := range mod.cross {
		f := &mod.cross[c]
		u := thetaG[f.off:f.omega]
		for j, l := range f.idx[s : s+len(eta)] {
			eta[j] += u[l]
		}
	}
}

// addCrossedGrad adds the residuals res of stored rows s, s+1, ... into
// the gradient of the crossed effects.
func (mod *Model) addCrossedGrad(s int, res, gradG []float64) {
	for c := range mod.cross {
		f := &mod.cross[c]
		g := gradG[f.off:f.omega]
		for j, l := range f.idx[s : s+len(res)] {
			g[l] += res[j]
		}
	}
}

// crossedPrior returns the log density of the crossed effects given their
// precisions, sum_c sum_l log N(u_l; 0, exp(-2 omega_u)), and adds its
// gradient into grad (unless nil).
func (mod *Model) crossedPrior(thetaG, grad []float64) float64 {
	var lp float64
	for c := range mod.cross {
		f := &mod.cross[c]
		u := thetaG[f.off:f.omega]
		w := thetaG[f.omega]
		prec := math.Exp(2 * w)
		var ss float64
		for _, v := range u {
			ss += v * v
		}
		l := float64(len(u))
		lp += l*(w-0.5*log2Pi) - 0.5*prec*ss
		if grad != nil {
			for k, v := range u {
				grad[f.off+k] -= prec * v
			}
			grad[f.omega] += l - prec*ss
		}
	}
	return lp
}
