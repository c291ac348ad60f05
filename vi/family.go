// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"errors"
	"fmt"

	"github.com/sparsevi/sparsevi/parallel"
)

// Kind labels an entry of a Family's Lambda.
type Kind uint8

// Kinds of the entries of Lambda.
const (
	Mean     Kind = Kind(kindMean) // an entry of mu
	Diagonal Kind = Kind(kindDiag) // a diagonal entry of the factor
	OffDiag  Kind = Kind(kindOff)  // an off-diagonal entry of the factor
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case Mean:
		return "mean"
	case Diagonal:
		return "diagonal"
	case OffDiag:
		return "off-diagonal"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Family is the Gaussian approximation of one Method to a Target, with its
// variational parameters lambda: the contract through which Fit steps
// either factor, open to callers who evaluate or step q themselves (to
// test a Target, or to drive another optimiser).
//
// Lambda is mu, the n local blocks in subject order and then the global
// block, followed by the factor: for GVA the block-arrowhead Cholesky
// factor T of q's precision, q = N(mu, (T T')^-1), stored as
// arrowhead.Factor stores it; for BlockDiag the block-diagonal factor C of
// q's covariance, q = N(mu, C C'), stored as blockdiag.Factor stores it.
// Kinds labels every entry. A GlobalSupporter target keeps the rows of
// T_gi outside its supports at zero; every other entry is free.
//
// Estimate, Fisher and Start run on the Family's own workers
// (Settings.Workers), which Close releases, under the context NewFamily
// was given: once it is done they return its error. Results are
// bit-identical for any number of workers, as Fit's are.
type Family struct {
	f    family
	pool *parallel.Pool
	g    int
}

// NewFamily returns set.Method's approximation of t at the paper's start
// (mean zero, factor sqrt(N) I); Start moves it to set.Init's start. Of
// the settings it reads Method, Init, Seed, ChunkSize, Workers and
// Antithetic.
func NewFamily(ctx context.Context, t Target, set Settings) (*Family, error) {
	if ctx == nil {
		return nil, errors.New("vi: NewFamily with a nil context (use context.Background())")
	}
	if t == nil {
		return nil, errors.New("vi: NewFamily with a nil target")
	}
	if set.Group != nil || set.Stochastic.Batch != 0 {
		return nil, fmt.Errorf("vi: %w: NewFamily takes a Target of one process with full-batch gradients (Settings.Group and Settings.Stochastic are Fit's)", ErrSettings)
	}
	if err := checkSizes(t, set, blockSizes(t)); err != nil {
		return nil, err
	}
	sup, _, err := newCrossSupport(t, set.Method == GVA)
	if err != nil {
		return nil, err
	}
	if set.Workers == 0 {
		set.Workers = set.WorkersFor(t)
	}
	// No Rule (withDefaults fills one in): GVA under Snngm would hold a
	// draw chunk by chunk and give its natural gradient to the step
	// alone, never whole.
	set = set.withDefaults()
	set.Rule = nil
	pool := parallel.NewPool(ctx, set.Workers)
	f, err := newFamily(t, set, pool, sup, nil)
	if err != nil {
		pool.Close()
		return nil, err
	}
	fam := &Family{f: f, pool: pool}
	_, _, fam.g = t.Dims()
	if err := fam.Start(InitPaper); err != nil {
		pool.Close()
		return nil, err
	}
	return fam, nil
}

// Close releases the Family's workers. A closed Family must not be used.
func (f *Family) Close() { f.pool.Close() }

// Lambda returns the variational parameters, laid out as Family says. It
// is the Family's own storage: writes to it change q.
func (f *Family) Lambda() []float64 { return f.f.lambda() }

// Kinds returns the kind of every entry of Lambda.
func (f *Family) Kinds() []Kind {
	k := f.f.kinds()
	dst := make([]Kind, len(f.f.lambda()))
	if k == nil {
		// A family that labels its factor chunk by chunk; not one that
		// NewFamily makes.
		panic("vi: Family without labels")
	}
	for j, v := range k {
		dst[j] = Kind(v)
	}
	return dst
}

// Precision reports whether the factor is of q's precision (GVA) rather
// than of its covariance (BlockDiag).
func (f *Family) Precision() bool { return f.f.precision() }

// Globals returns the number of trailing entries of mu that are the global
// block, G.
func (f *Family) Globals() int { return f.g }

// Start sets Lambda to the start that how selects (see Init), on the
// Family's workers.
func (f *Family) Start(how Init) error {
	if how != InitMode && how != InitPaper {
		return fmt.Errorf("vi: %w: Start with Init(%d)", ErrSettings, int(how))
	}
	scratch := make([]float64, len(f.f.lambda()))
	f.f.lend(scratch)
	defer f.f.lend(nil)
	return f.f.init(context.Background(), how)
}

// Estimate draws theta = theta(lambda, z) from q, z from the random
// streams of iteration iter (the same iter gives the same z), and returns
// h(theta) = log p(theta) - log q(theta), whose mean over q is the lower
// bound. Into nat and euc, when not nil and of Lambda's length, it writes
// single-draw unbiased estimates of the bound's natural gradient and of
// its Euclidean gradient in lambda: the gradient of log p(theta(lambda,
// z)) at fixed z, plus (unless noEntropy) that of -log q(theta(lambda, z))
// with q's own parameters held, whose mean is the entropy's gradient.
// (With z fixed, log q(theta) = c + log|T| - z'z/2 for GVA and c - log|C|
// - z'z/2 for BlockDiag, so h's own gradient in lambda is the first part
// and that of -log|T| or log|C|.)
func (f *Family) Estimate(iter uint64, nat, euc []float64, noEntropy bool) (float64, error) {
	n := len(f.f.lambda())
	if (nat != nil && len(nat) != n) || (euc != nil && len(euc) != n) {
		return 0, fmt.Errorf("vi: Estimate with gradients of %d and %d entries, want %d or nil", len(nat), len(euc), n)
	}
	return f.f.estimate(iter, nat, euc, noEntropy)
}

// Fisher maps the Euclidean gradient src to the natural gradient dst,
// the inverse of q's Fisher information in lambda applied to src; both are
// of Lambda's length, and may not overlap.
func (f *Family) Fisher(src, dst []float64) error {
	n := len(f.f.lambda())
	if len(src) != n || len(dst) != n {
		return fmt.Errorf("vi: Fisher of %d entries into %d, want %d", len(src), len(dst), n)
	}
	return f.f.fisher(src, dst)
}

// Check returns an error when a diagonal entry of the factor is not
// positive and finite: q is then not a Gaussian.
func (f *Family) Check() error { return f.f.check() }
