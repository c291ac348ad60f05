// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"fmt"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/parallel"
)

// A Share is the subjects [Lo, Hi) of a Target, as a Target of their own:
// the share of one process of a fit over a Group when each process can
// hold the whole target (as glmmfit's processes do, each reading the whole
// data) but fits only its own subjects.
//
// When the whole target is a Starter, Fit with InitMode starts a Share at
// its part of the whole target's start, so that the fit over the group is
// bit-identical to the whole target's in one process: computed by the
// processes together when the whole target is a ShareStarter (and the
// chunks are multiples of parallel.DefaultChunkSize), else whole in each. The whole target's Local must accept any subject range, as
// every Target's does.
type Share struct {
	Target Target
	Lo, Hi int
}

// ObsRanger is implemented by targets that can count the observations of
// a range of subjects, such as glmm.Model; a Share counts its own with it.
type ObsRanger interface {
	// ObsRange returns the number of observations of the subjects [lo, hi).
	ObsRange(lo, hi int) int
}

// NewShare returns the Share of the subjects [lo, hi) of t.
func NewShare(t Target, lo, hi int) (*Share, error) {
	n, _, _ := t.Dims()
	if lo < 0 || lo >= hi || hi > n {
		return nil, fmt.Errorf("vi: share of subjects [%d, %d) of a target of %d", lo, hi, n)
	}
	return &Share{Target: t, Lo: lo, Hi: hi}, nil
}

// Dims returns the share's number of subjects and the whole target's block
// sizes.
func (s *Share) Dims() (n, r, g int) {
	_, r, g = s.Target.Dims()
	return s.Hi - s.Lo, r, g
}

// NewWorkspace returns a workspace of the whole target.
func (s *Share) NewWorkspace() Workspace { return s.Target.NewWorkspace() }

// Global returns the whole target's log p_g.
func (s *Share) Global(thetaG, grad []float64) float64 { return s.Target.Global(thetaG, grad) }

// Local is the whole target's Local on the share's subjects [lo, hi),
// that is the whole target's [Lo+lo, Lo+hi).
func (s *Share) Local(ws Workspace, lo, hi int, thetaG, local, gradLocal, gradG []float64) (float64, error) {
	return s.Target.Local(ws, s.Lo+lo, s.Lo+hi, thetaG, local, gradLocal, gradG)
}

// NumObs returns the number of observations of the share's subjects, or
// the number of subjects when the whole target cannot count them
// (ObsRanger).
func (s *Share) NumObs() int {
	if or, ok := s.Target.(ObsRanger); ok {
		return or.ObsRange(s.Lo, s.Hi)
	}
	return s.Hi - s.Lo
}

// LocalsReparametrised reports whether the whole target's locals are
// reparametrised (see Reparametrised).
func (s *Share) LocalsReparametrised() bool {
	rp, ok := s.Target.(Reparametrised)
	return ok && rp.LocalsReparametrised()
}

// start writes the share's part of the whole target's start into theta and
// prec, laid out as Starter.Start's for the share: computed by the
// processes together through c if st is a ShareStarter and c is not nil,
// else whole in this process.
func (s *Share) start(st Starter, c parallel.Carrier, p *parallel.Pool, theta, prec []float64) error {
	n, r, g := s.Target.Dims()
	all := make([]float64, n*r+g)
	allPrec := make([]float64, arrowhead.Len(n, r, g))
	var err error
	if ss, ok := st.(ShareStarter); ok && c != nil {
		err = ss.StartShare(p, c, s.Lo, s.Hi, all, allPrec)
	} else {
		err = st.Start(p, all, allPrec)
	}
	if err != nil {
		return err
	}
	stride := arrowhead.Stride(r, g)
	m := s.Hi - s.Lo
	copy(theta[:m*r], all[s.Lo*r:s.Hi*r])
	copy(theta[m*r:], all[n*r:])
	copy(prec[:m*stride], allPrec[s.Lo*stride:s.Hi*stride])
	copy(prec[m*stride:], allPrec[n*stride:])
	return nil
}
