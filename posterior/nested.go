// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// NewSavedNested returns the saved form of res, a fit of the nested model
// by target: the model itself (GVA, its factor laid as arrowhead.WrapVar
// lays it) or its RVB reparametrisation (rvb.NewNested,
// rvb.NewNestedAtStart; blockdiag.WrapVar). Its Sizes are the subjects'
// block sizes.
func NewSavedNested(res *vi.Result, target vi.Target) (*SavedFit, error) {
	if nestedOf(target) == nil {
		return nil, errors.New("posterior: the target is not a nested model or its RVB reparametrisation")
	}
	return NewSavedFit(res, target)
}

// nestedOf returns the nested model that t is or reparametrises, or nil.
func nestedOf(t vi.Target) *glmm.Nested {
	switch t := t.(type) {
	case *glmm.Nested:
		return t
	case *rvb.Target:
		return t.Nested()
	}
	return nil
}

// LoadNested returns the fit s of the nested model m with its target, m
// itself for GVA and its RVB reparametrisation for RVB, as SavedFit.Load
// does for a Model: m must be the model that was fitted (its Fingerprint
// and block sizes are checked), and rebuilding an expansion at the start
// of a fit saved without it (SavedFit.Start) runs m's start, which ctx
// can stop.
func (s *SavedFit) LoadNested(ctx context.Context, m *glmm.Nested) (*vi.Result, vi.Target, error) {
	if m == nil {
		return nil, nil, errors.New("posterior: nil model")
	}
	if s.Sizes == nil || s.Correction != nil {
		return nil, nil, errors.New("posterior: the saved fit is not a fit of a nested model")
	}
	n, r, g := m.Dims()
	res, err := s.result(m.Fingerprint(), n, r, g)
	if err != nil {
		return nil, nil, err
	}
	sizes := m.BlockSizes()
	if len(s.Sizes) != n {
		return nil, nil, fmt.Errorf("posterior: saved fit of %d block sizes, model %d", len(s.Sizes), n)
	}
	for i, k := range sizes {
		if s.Sizes[i] != k {
			outer, _ := m.FactorNames()
			return nil, nil, fmt.Errorf("posterior: the saved fit's block sizes differ from the model's: subject %d (%s %s) has %d variables, the model's %d", i+1, outer, m.SubjectLevel(i), s.Sizes[i], k)
		}
	}
	pool := parallel.NewPollingPool(ctx, vi.Settings{}.WorkersFor(m))
	target, meth, err := newTarget(m, s.Method, s.Expansion, func(meth rvb.Method, atStart bool) (*rvb.Target, error) {
		switch {
		case atStart && s.Start != nil:
			return rvb.NewNestedAtGivenStart(pool, m, meth, s.Start)
		case atStart:
			return rvb.NewNestedAtStart(pool, m, meth)
		}
		return rvb.NewNested(m, meth)
	})
	pool.Close()
	if err != nil {
		return nil, nil, err
	}
	factorLen := arrowhead.LenVar(sizes, g)
	if meth == vi.BlockDiag {
		factorLen = blockdiag.LenVar(sizes, g)
	}
	res.Sizes = slices.Clone(sizes)
	locals := 0
	for _, k := range sizes {
		locals += k
	}
	if err := s.setMethod(res, meth, locals, factorLen); err != nil {
		return nil, nil, err
	}
	return res, target, nil
}

// NestedData holds rows to predict from a fit of a nested model
// (glmm.Nested), coded as the model's own design.
type NestedData struct {
	// X is the rows' fixed-effect design (rows×p; nil when p = 0).
	X mat.Matrix
	// Outer is the level of a of each row and Inner its level of a:b,
	// numbered as glmm.NestedConfig numbers them, or -1 for a level the
	// model has not seen.
	Outer, Inner []int
	// Offset, ResponseCenter, ResponseScale and Trials are NewData's.
	Offset                        []float64
	ResponseCenter, ResponseScale float64
	Trials                        []float64
}

// PredictNested draws the linear predictor of every row of nd from res, a
// fit of the nested model m by target (m itself for GVA, or its RVB
// reparametrisation; NewSavedNested, LoadNested), as Predict does for a
// Model: q's draws (an RVB fit's effects mapped back from its b~) of (beta, omega, u, v) give a row of known
// levels of a and a:b the draws of their effects u_a and v_b; a new level
// of a:b gets v ~ N(0, sigma_b^2) and a new level of a u ~ N(0,
// sigma_a^2), drawn once per draw of q with that draw's sds, the same for
// every new row, as new subjects and new levels of crossed factors get
// them. The draws depend only on the seed; PredictSettings.Correction
// must be nil.
func PredictNested(ctx context.Context, res *vi.Result, target vi.Target, m *glmm.Nested, nd NestedData, set PredictSettings) (*Predictions, error) {
	if res == nil || target == nil || m == nil {
		return nil, errors.New("posterior: nil result, target or model")
	}
	if set.Correction != nil {
		return nil, errors.New("posterior: PredictNested: a nested fit has no importance correction")
	}
	sizes := m.BlockSizes()
	rt, _ := target.(*rvb.Target)
	if nestedOf(target) != m || (rt == nil) != (res.Method == vi.GVA) || !slices.Equal(res.Sizes, sizes) {
		return nil, errors.New("posterior: PredictNested: the result is not a fit of the model by the target")
	}
	draws, level, err := predictDraws(set)
	if err != nil {
		return nil, err
	}
	rows := len(nd.Outer)
	p := m.NumFixed()
	if len(nd.Inner) != rows || (nd.Offset != nil && len(nd.Offset) != rows) || (nd.Trials != nil && len(nd.Trials) != rows) {
		return nil, errors.New("posterior: PredictNested: the new data do not match the model")
	}
	if nd.X != nil {
		if r, c := nd.X.Dims(); r != rows || c != p {
			return nil, errors.New("posterior: PredictNested: the new data do not match the model")
		}
	} else if p > 0 {
		return nil, errors.New("posterior: PredictNested: the new data do not match the model")
	}
	// Where each subject's block starts, and each level of a:b's subject
	// (-1 for none) and place in theta.
	start := make([]int, len(sizes)+1)
	numInner := 0
	for i, r := range sizes {
		start[i+1] = start[i] + r
		for q := 1; q < r; q++ {
			numInner = max(numInner, m.InnerLevel(i, q)+1)
		}
	}
	parent, at := make([]int, numInner), make([]int, numInner)
	for b := range parent {
		parent[b] = -1
	}
	for i, r := range sizes {
		for q := 1; q < r; q++ {
			b := m.InnerLevel(i, q)
			parent[b], at[b] = i, start[i]+q
		}
	}
	for k := range rows {
		if a, b := nd.Outer[k], nd.Inner[k]; a >= len(sizes) || b >= numInner {
			return nil, fmt.Errorf("posterior: PredictNested: row %d: level out of range", k)
		}
	}
	nr := start[len(sizes)]
	er := newEtaRows(nd.X, nd.Offset, nd.ResponseCenter, nd.ResponseScale)
	theta := make([]float64, len(res.Mu))
	smp := newSampler(res, rt, set.Seed, predictStream)
	mean := m.Family().Mean
	if l := m.LinkFunc(); l != glmm.CanonicalLink {
		mean = func(eta float64) float64 { return glmm.LinkMean(l, eta) }
	}
	var need []int
	batch := func(lo, hi int) error {
		// The subjects whose effects the batch's rows use.
		need = need[:0]
		for k := lo; k < hi && !set.FixedOnly; k++ {
			if a := nd.Outer[k]; a >= 0 {
				need = append(need, a)
			}
			if b := nd.Inner[k]; b >= 0 && parent[b] >= 0 {
				need = append(need, parent[b])
			}
		}
		slices.Sort(need)
		need = slices.Compact(need)
		return nil
	}
	return predictBatches(ctx, rows, draws, level, set.Workers, mean, response{fam: m.Family(), trials: nd.Trials}, set.Seed, batch, func(s, lo, hi int, etaDraws []float64) (float64, error) {
		if err := smp.draw(uint64(s), theta, need); err != nil {
			return 0, err
		}
		beta := theta[nr : nr+p]
		// New levels' effects from N(0, exp(-2 omega)): u then v,
		// one each per draw of q.
		s1, s2 := parallel.StreamSeed(set.Seed, newSubjectStream, uint64(s))
		rng := rand.New(rand.NewPCG(s1, s2))
		uNew := math.Exp(-theta[nr+p]) * rng.NormFloat64()
		vNew := math.Exp(-theta[nr+p+1]) * rng.NormFloat64()
		for k := lo; k < hi; k++ {
			eta := er.fixed(k, beta)
			if set.FixedOnly {
				etaDraws[(k-lo)*draws+s] = er.onDataScale(k, eta)
				continue
			}
			u, v := uNew, vNew
			if a := nd.Outer[k]; a >= 0 {
				u = theta[start[a]]
			}
			if b := nd.Inner[k]; b >= 0 && parent[b] >= 0 {
				v = theta[at[b]]
			}
			etaDraws[(k-lo)*draws+s] = er.onDataScale(k, eta+u+v)
		}
		return dispersionOf(m, theta[nr:], nd.ResponseScale), nil
	})
}
