// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"math"

	"github.com/james-bowman/sparse"
	"gonum.org/v1/gonum/mat"
)

// NumObs returns the number of observations.
func (mod *Model) NumObs() int { return mod.nobs }

// ObsRange returns the number of observations of the subjects [lo, hi). It
// makes Model a vi.ObsRanger.
func (mod *Model) ObsRange(lo, hi int) int { return mod.start[hi] - mod.start[lo] }

// NumSubjects returns the number of subjects n.
func (mod *Model) NumSubjects() int { return mod.n }

// P returns the number of fixed effects.
func (mod *Model) P() int { return mod.p }

// R returns the number of random effects per subject.
func (mod *Model) R() int { return mod.r }

// Family returns the response family.
func (mod *Model) Family() Family { return mod.family }

// FixedNames returns the names of the fixed effects. The slice must not be
// modified.
func (mod *Model) FixedNames() []string { return mod.fixedNames }

// RandomNames returns the names of the random effects. The slice must not be
// modified.
func (mod *Model) RandomNames() []string { return mod.randomNames }

// GroupName returns the name of the grouping factor.
func (mod *Model) GroupName() string { return mod.groupName }

// GroupLevels returns the subject labels, indexed by subject. The slice must
// not be modified.
func (mod *Model) GroupLevels() []string { return mod.groupLevels }

// GlobalNames returns the names of the entries of theta_g: the fixed-effect
// names, then OmegaNames of the random-effect names, then "log(sigma)" or
// "log(phi)" for a family with a dispersion parameter.
func (mod *Model) GlobalNames() []string {
	names := append(append([]string(nil), mod.fixedNames...), OmegaNames(mod.randomNames)...)
	if mod.nd == 1 {
		names = append(names, "log("+mod.family.DispersionName()+")")
	}
	for c := range mod.cross {
		f := &mod.cross[c]
		for _, l := range f.levels {
			names = append(names, f.name+"["+l+"]")
		}
		names = append(names, "omega("+f.name+")")
	}
	return names
}

// Dispersion returns the index in theta_g of psi, the log of the family's
// dispersion parameter, and true; or 0 and false for a family without one.
func (mod *Model) Dispersion() (int, bool) {
	if mod.nd == 0 {
		return 0, false
	}
	return mod.p + NumOmega(mod.r), true
}

// DataRow returns the row of the data given to New that is stored row k,
// Perm()[k], without making Perm's identity for data given in order.
func (mod *Model) DataRow(k int) int {
	if mod.perm == nil {
		return k
	}
	return mod.perm[k]
}

// Perm returns the storage order of the observations: stored row k (rows are
// stored subject by subject) is row Perm()[k] of the data given to New. The
// slice must not be modified. For data given grouped by subject in order
// the model keeps no permutation, and Perm returns a new identity.
func (mod *Model) Perm() []int {
	if mod.perm == nil {
		perm := make([]int, mod.nobs)
		for k := range perm {
			perm[k] = k
		}
		return perm
	}
	return mod.perm
}

// SparseX reports whether the fixed design is stored in compressed sparse
// row form (when it is mostly zeros and has many columns).
func (mod *Model) SparseX() bool { return mod.sparseX }

// FixedDesign returns the fixed-effect design in storage order (row k is
// data row Perm()[k]): a *sparse.CSR when SparseX, *Columns when the model
// keeps the columns it was given, else a *mat.Dense; nil when p = 0. It shares the model's storage and must not be modified.
func (mod *Model) FixedDesign() mat.Matrix {
	switch {
	case mod.p == 0:
		return nil
	case mod.sparseX:
		return sparse.NewCSR(mod.nobs, mod.p, mod.xptr, mod.xind, mod.xval)
	case mod.xcols != nil:
		return &Columns{Rows: mod.nobs, Cols: mod.xcols}
	}
	return mat.NewDense(mod.nobs, mod.p, mod.x)
}

// RandomDesign returns the random-effect design in storage order. It shares
// the model's storage and must not be modified.
// A design of ones, which the model does not store, is made anew.
func (mod *Model) RandomDesign() *mat.Dense {
	if mod.z == nil {
		z := mat.NewDense(mod.nobs, mod.r, nil)
		for k := range mod.nobs {
			z.Set(k, 0, 1)
		}
		return z
	}
	return mat.NewDense(mod.nobs, mod.r, mod.z)
}

// PriorSD returns the prior standard deviation sigma0 of theta_g.
func (mod *Model) PriorSD() float64 { return mod.priorSD }

// DataConstant returns the sum over observations of weight × the family's
// data-only constant (Family.Constant): -sum log y! for Poisson,
// sum log C(m, y) for binomial, 0 for Bernoulli. Local includes it.
func (mod *Model) DataConstant() float64 { return mod.dataConst }

// DataConstantFrom returns sum plus DataConstant's terms added subject by
// subject: the processes of a group, each with a model of its own
// subjects (Config.Share), pass it on in rank order to get the bits of
// the whole model's DataConstant.
func (mod *Model) DataConstantFrom(sum float64) float64 {
	if mod.subjConst == nil && mod.n > 0 {
		return sum + 0 // as adding the n zeros
	}
	for _, c := range mod.subjConst {
		sum += c
	}
	return sum
}

// PriorConstant returns the normalising constant -(G/2) log(2 pi sigma0^2) of
// the N(0, sigma0^2) prior of theta_g, G counting the entries under it (all
// but the crossed effects). Global includes it.
func (mod *Model) PriorConstant() float64 {
	_, _, g := mod.Dims()
	for c := range mod.cross {
		g -= len(mod.cross[c].levels) // their prior is the hierarchical one
	}
	return -0.5 * float64(g) * math.Log(2*math.Pi*mod.priorSD*mod.priorSD)
}

// PaperConstant returns DataConstant() + PriorConstant(), the constants that
// the lower bounds of Tan's paper (Table 11 of seed 003) leave out:
//
//	elbo_paper = elbo - PaperConstant(),
//
// where elbo is a lower bound computed from Global and Local.
func (mod *Model) PaperConstant() float64 { return mod.DataConstant() + mod.PriorConstant() }

// PaperELBO converts a lower bound with every constant included to the
// convention of Tan's paper: elbo - PaperConstant().
func (mod *Model) PaperELBO(elbo float64) float64 { return elbo - mod.PaperConstant() }

// The per-subject accessors below give allocation-free access to subject i's
// data in storage order, for reparametrisations of the model (package rvb).
// Subject i's observations are the stored rows SubjectRows(i); every slice
// returned is a view that must not be modified.

// SubjectRows returns the half-open range [lo, hi) of subject i's stored
// rows; n_i = hi - lo.
func (mod *Model) SubjectRows(i int) (lo, hi int) { return mod.start[i], mod.start[i+1] }

// MaxSubjectObs returns the largest number of observations of a subject,
// max n_i, for sizing workspaces.
func (mod *Model) MaxSubjectObs() int { return mod.maxNi }

// ZRows returns subject i's random-effect design Z_i, n_i×r row-major.
func (mod *Model) ZRows(i int) []float64 {
	return mod.zRange(mod.start[i], mod.start[i+1])
}

// Response returns subject i's responses y, trials m (1 unless binomial) and
// weights w (1 unless given).
func (mod *Model) Response(i int) (y, m, w []float64) {
	s, e := mod.start[i], mod.start[i+1]
	return mod.yRange(s, e), rowRange(mod.m, mod.ones, s, e), rowRange(mod.w, mod.ones, s, e)
}

// Offsets returns subject i's offsets.
func (mod *Model) Offsets(i int) []float64 {
	return rowRange(mod.off, mod.zeros, mod.start[i], mod.start[i+1])
}

// FixedEta writes X_i beta + offset_i, the fixed part of subject i's linear
// predictor, into dst (length n_i).
func (mod *Model) FixedEta(i int, beta, dst []float64) {
	s, e := mod.start[i], mod.start[i+1]
	p := mod.p
	if len(beta) != p || len(dst) != e-s {
		panic("glmm: bad length in FixedEta")
	}
	if mod.xcols != nil && !mod.sparseX {
		// Column by column: each row's sum is taken in the order of the
		// columns, as by rows, so the bits are the same; the loops run
		// over one array each, with no branch on the column inside.
		for j := range dst {
			dst[j] = mod.offset(s + j)
		}
		for k, col := range mod.xcols {
			b := beta[k]
			if col == nil {
				for j := range dst {
					dst[j] += b
				}
				continue
			}
			for j, x := range col[s:e] {
				dst[j] += x * b
			}
		}
		return
	}
	for j := s; j < e; j++ {
		eta := mod.offset(j)
		switch {
		case mod.sparseX:
			for t := mod.xptr[j]; t < mod.xptr[j+1]; t++ {
				eta += mod.xval[t] * beta[mod.xind[t]]
			}
		case mod.xcols != nil:
			for k, col := range mod.xcols {
				eta += columnAt(col, j) * beta[k]
			}
		default:
			for k, v := range mod.x[j*p : j*p+p] {
				eta += v * beta[k]
			}
		}
		dst[j-s] = eta
	}
}

// AddFixedTVec adds X_i' v into dst (length p), v of length n_i: the chain
// rule from subject i's linear predictor to beta.
func (mod *Model) AddFixedTVec(i int, v, dst []float64) {
	s, e := mod.start[i], mod.start[i+1]
	p := mod.p
	if len(v) != e-s || len(dst) != p {
		panic("glmm: bad length in AddFixedTVec")
	}
	if mod.xcols != nil && !mod.sparseX {
		// Column by column, each column's sum in the order of the rows,
		// as by rows: the same bits (see FixedEta).
		for k, col := range mod.xcols {
			d := dst[k]
			if col == nil {
				for _, vj := range v {
					d += vj
				}
			} else {
				for j, x := range col[s:e][:len(v)] {
					d += x * v[j]
				}
			}
			dst[k] = d
		}
		return
	}
	for j := s; j < e; j++ {
		vj := v[j-s]
		switch {
		case mod.sparseX:
			for t := mod.xptr[j]; t < mod.xptr[j+1]; t++ {
				dst[mod.xind[t]] += mod.xval[t] * vj
			}
		case mod.xcols != nil:
			for k, col := range mod.xcols {
				dst[k] += columnAt(col, j) * vj
			}
		default:
			for k, x := range mod.x[j*p : j*p+p] {
				dst[k] += x * vj
			}
		}
	}
}

// SubjectConstant returns subject i's share of DataConstant.
func (mod *Model) SubjectConstant(i int) float64 { return mod.subjectConst(i) }
