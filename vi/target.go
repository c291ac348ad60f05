// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

// Target is a log density over n local blocks of r variables each and one
// global block of G variables, in which the local blocks are independent
// given the global one:
//
//	log p(theta) = log p_g(theta_g) + sum_i log p_i(theta_i | theta_g).
//
// The vector theta is laid out subject-major: theta_1, ..., theta_n, then
// theta_g. GLMMs (package glmm) and their reparametrisations (package rvb)
// are Targets, and so is any hierarchical model a user writes.
//
// Local is called concurrently on disjoint subject ranges, each caller with
// its own Workspace.
type Target interface {
	// Dims returns the number of subjects n, the size r of each local block
	// and the size G of the global block.
	Dims() (n, r, g int)

	// NewWorkspace returns scratch space for one concurrent caller of Local.
	NewWorkspace() Workspace

	// Global returns log p_g(theta_g) and adds its gradient into grad.
	Global(thetaG, grad []float64) float64

	// Local returns the sum over the subjects i in [lo, hi) of
	// log p_i(theta_i | theta_g). The slice local holds theta_lo, ...,
	// theta_{hi-1} ((hi-lo)*r values). Unless gradLocal is nil, the gradients
	// with respect to those local blocks are written into gradLocal and the
	// gradient with respect to theta_g is added into gradG. A non-finite
	// value is reported as an error naming the subject; it must not allocate
	// otherwise.
	Local(ws Workspace, lo, hi int, thetaG, local, gradLocal, gradG []float64) (float64, error)
}

// A BlockSizer is a Target whose local blocks vary in size from subject to
// subject, such as glmm.Nested: its Dims gives r = 0, and theta_i, of
// BlockSizes()[i] variables, follows the blocks of the subjects before
// it. Local's local then holds the blocks of its subjects in order. Fit
// takes such targets with methods GVA and BlockDiag in one process, with
// full-batch steps and any rule but VOGN.
type BlockSizer interface {
	// BlockSizes returns the size of each subject's local block.
	BlockSizes() []int
}

// blockSizes returns a BlockSizer's sizes, nil for other targets.
func blockSizes(t Target) []int {
	if bs, ok := t.(BlockSizer); ok {
		return bs.BlockSizes()
	}
	return nil
}

// Workspace is a Target's scratch space for one concurrent caller.
type Workspace = any

// Reparametrised is implemented by targets whose local variables are a
// transformation of the model's random effects, such as rvb.Target, so
// that a Result records it and posterior.Summarize, which reads the local
// blocks as random effects, refuses it.
type Reparametrised interface {
	// LocalsReparametrised reports whether the local variables are
	// transformed random effects.
	LocalsReparametrised() bool
}

// A WarmStarter is a Target whose evaluation of a subject may start from
// its last one, such as rvb.Target's RVB2, which starts each subject's
// solve from its last mode: its values depend, in the last bits, on the
// order in which a subject's evaluations come. Fit then evaluates each
// subject's draws in one sequence.
type WarmStarter interface {
	// WarmStarts reports whether evaluations start from earlier ones.
	WarmStarts() bool
}

// warmStarts reports whether t, or the whole target of a Share, is a
// WarmStarter that warm-starts.
func warmStarts(t Target) bool {
	if sh, ok := t.(*Share); ok {
		t = sh.Target
	}
	ws, ok := t.(WarmStarter)
	return ok && ws.WarmStarts()
}

// LocalHessianer is implemented by Targets that can give the Hessian of a
// subject's log density with respect to its own local block. Fit does not
// use it; package posterior's Integrator does, to find each subject's
// conditional mode and the curvature there.
type LocalHessianer interface {
	// LocalHessian writes the r×r Hessian of log p_i(theta_i | theta_g) with
	// respect to theta_i, row-major, into h.
	LocalHessian(ws Workspace, i int, thetaG, thetaI, h []float64)
}
