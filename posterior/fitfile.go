// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/blockdiag"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// FitFileVersion is the version of the format Save writes; Load reads it
// and refuses others.
const FitFileVersion = 1

// SavedFit is a fit as Save writes it, in JSON. A program can keep it
// inside a document of its own (glmmfit's fit files do) and hand its JSON
// to Load.
type SavedFit struct {
	Version int `json:"version"`
	// Method is "gva", "rvb1" or "rvb2"; Expansion is RVB's expansion
	// point, "start" (rvb.NewAtStart) or "jeffreys" (rvb.New).
	Method    string `json:"method"`
	Expansion string `json:"expansion,omitempty"`
	// Model is the fingerprint of the model fitted (glmm.Model.Fingerprint
	// or glmm.Nested.Fingerprint).
	Model string `json:"model"`
	N     int    `json:"n"`
	R     int    `json:"r"`
	G     int    `json:"g"`
	// Sizes, for a fit of a nested model (NewSavedNested), is the size of
	// each subject's local block (R is then 0); nil otherwise.
	Sizes      []int   `json:"sizes,omitempty"`
	Rule       string  `json:"optimizer"` // the step rule's name (vi.ParseRule)
	Status     string  `json:"status"`
	Iterations int     `json:"iterations"`
	LowerBound jsonNum `json:"lower_bound"`
	BoundSE    jsonNum `json:"lower_bound_se"`
	// Mu and Factor are vi.Result's: the variational mean and the
	// compressed factor.
	Mu     []float64 `json:"mu"`
	Factor []float64 `json:"factor"`
	// Start, for RVB expanded at the start, is the start it was expanded
	// at (rvb.Target.ExpansionStart), from which Load makes the Target
	// without computing the model's start again (at 10^6 subjects, 7 s
	// of the 30 that glmmfit predict took); nil otherwise, and in fits
	// saved before it was kept, whose start Load computes.
	Start []float64 `json:"start,omitempty"`
	// LogWeights and ImportanceGlobal are vi.Result's importance draws,
	// for the Pareto diagnostic and corrections after loading.
	LogWeights       []float64 `json:"log_weights,omitempty"`
	ImportanceGlobal []float64 `json:"importance_global,omitempty"`
	// Correction, if not nil, is an importance correction of theta_g of
	// the fit (SetCorrection), from which predictions can be drawn after
	// loading (PredictSettings.Correction).
	Correction *SavedCorrection `json:"correction,omitempty"`
}

// SavedCorrection is an importance correction of theta_g as a SavedFit
// keeps it: the draws of theta_g (rows of G) and their log ratios, a draw
// whose integral failed having a log ratio of -Inf (null in JSON).
type SavedCorrection struct {
	Global     []float64 `json:"global"`
	LogWeights []jsonNum `json:"log_weights"`
}

// SetCorrection keeps the draws of imp, an importance correction of the
// fit's theta_g, in s.
func (s *SavedFit) SetCorrection(imp *GlobalImportance) {
	c := &SavedCorrection{Global: imp.Global, LogWeights: make([]jsonNum, len(imp.LogWeights))}
	for k, v := range imp.LogWeights {
		c.LogWeights[k] = jsonNum(v)
	}
	s.Correction = c
}

// Importance returns the saved correction's draws, their log ratios and
// their Pareto k, as PredictSettings.Correction takes them, or an error if
// they do not match theta_g's size g.
func (c *SavedCorrection) Importance(g int) (*GlobalImportance, error) {
	if len(c.LogWeights) == 0 || len(c.Global) != len(c.LogWeights)*g {
		return nil, fmt.Errorf("posterior: saved correction of %d values of theta_g for %d draws of %d", len(c.Global), len(c.LogWeights), g)
	}
	imp := &GlobalImportance{Global: c.Global, LogWeights: make([]float64, len(c.LogWeights))}
	for k, v := range c.LogWeights {
		imp.LogWeights[k] = float64(v)
		if math.IsNaN(imp.LogWeights[k]) {
			imp.LogWeights[k] = math.Inf(-1)
		}
	}
	_, k, err := PSIS(imp.LogWeights)
	if err != nil {
		return nil, fmt.Errorf("posterior: saved correction: %v", err)
	}
	imp.K = k
	return imp, nil
}

// jsonNum is a float64 that is null in JSON when not finite, as the bound
// of an interrupted fit is.
type jsonNum float64

func (f jsonNum) MarshalJSON() ([]byte, error) {
	if v := float64(f); math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

func (f *jsonNum) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = jsonNum(math.NaN())
		return nil
	}
	return json.Unmarshal(b, (*float64)(f))
}

// NewSavedFit returns the saved form of res, a fit of target: the model
// itself (GVA) or an *rvb.Target of it, the model a glmm.Model or a
// glmm.Nested (see NewSavedNested).
func NewSavedFit(res *vi.Result, target vi.Target) (*SavedFit, error) {
	if res == nil || target == nil {
		return nil, errors.New("posterior: nil result or target")
	}
	rule := res.Rule
	if rule == nil {
		rule = vi.Snngm{}
	}
	s := &SavedFit{
		Version: FitFileVersion, N: res.N, R: res.R, G: res.G,
		Rule: rule.String(), Status: res.Status.String(), Iterations: res.Iterations,
		LowerBound: jsonNum(res.LowerBound), BoundSE: jsonNum(res.LowerBoundSE),
		Mu: res.Mu, Factor: res.Factor, LogWeights: res.LogWeights, ImportanceGlobal: res.ImportanceGlobal,
	}
	var nm *glmm.Nested
	switch t := target.(type) {
	case *glmm.Model:
		if res.Method != vi.GVA {
			return nil, fmt.Errorf("posterior: a %v fit of the model itself cannot be saved", res.Method)
		}
		s.Method, s.Model = GVA, t.Fingerprint()
	case *glmm.Nested:
		if res.Method != vi.GVA {
			return nil, fmt.Errorf("posterior: a %v fit of the model itself cannot be saved", res.Method)
		}
		s.Method, nm = GVA, t
	case *rvb.Target:
		if res.Method != vi.BlockDiag {
			return nil, fmt.Errorf("posterior: a %v fit of an RVB target cannot be saved", res.Method)
		}
		s.Method = t.Method().String()
		if nm = t.Nested(); nm == nil {
			s.Model = t.Model().Fingerprint()
		}
		s.Expansion = Jeffreys
		if t.ExpandedAtStart() {
			s.Expansion, s.Start = AtStart, t.ExpansionStart()
		}
	default:
		return nil, fmt.Errorf("posterior: cannot save a fit of a %T", target)
	}
	if nm != nil {
		// Each subject's block size is saved, and checked on loading.
		if !slices.Equal(res.Sizes, nm.BlockSizes()) {
			return nil, errors.New("posterior: the result is not a fit of the nested model")
		}
		s.Model, s.Sizes = nm.Fingerprint(), res.Sizes
	}
	return s, nil
}

// Save writes res, a fit of target (the model itself for GVA, or an
// *rvb.Target of it), to w as JSON: the method and RVB's expansion point,
// the variational mean and factor, the status and lower bound, the
// importance draws, and the model's fingerprint, against which Load
// checks the model it is given.
func Save(w io.Writer, res *vi.Result, target vi.Target) error {
	s, err := NewSavedFit(res, target)
	if err != nil {
		return err
	}
	return json.NewEncoder(w).Encode(s)
}

// Load reads a fit that Save wrote and returns it with its target for m,
// which must be the model that was fitted (its fingerprint is checked):
// m itself for GVA, its RVB reparametrisation for RVB (rebuilding an
// expansion at the start of a fit saved without it, SavedFit.Start, runs
// m's start, which ctx can stop). Summaries,
// draws and predictions from the loaded fit are those of the original.
func Load(ctx context.Context, r io.Reader, m *glmm.Model) (*vi.Result, vi.Target, error) {
	var s SavedFit
	if err := json.NewDecoder(r).Decode(&s); err != nil {
		return nil, nil, fmt.Errorf("posterior: not a saved fit: %v", err)
	}
	return s.Load(ctx, m)
}

// Load returns the fit with its target for m; see the function Load.
func (s *SavedFit) Load(ctx context.Context, m *glmm.Model) (*vi.Result, vi.Target, error) {
	if m == nil {
		return nil, nil, errors.New("posterior: nil model")
	}
	if s.Sizes != nil {
		return nil, nil, errors.New("posterior: the saved fit is of a nested model (LoadNested)")
	}
	n, r, g := m.Dims()
	res, err := s.result(m.Fingerprint(), n, r, g)
	if err != nil {
		return nil, nil, err
	}
	if s.Correction != nil {
		if _, err := s.Correction.Importance(g); err != nil {
			return nil, nil, err
		}
	}
	pool := parallel.NewPollingPool(ctx, vi.Settings{}.WorkersFor(m))
	target, meth, err := newTarget(m, s.Method, s.Expansion, func(meth rvb.Method, atStart bool) (*rvb.Target, error) {
		switch {
		case atStart && s.Start != nil:
			return rvb.NewAtGivenStart(pool, m, meth, s.Start)
		case atStart:
			return rvb.NewAtStart(pool, m, meth)
		}
		return rvb.New(m, meth)
	})
	pool.Close()
	if err != nil {
		return nil, nil, err
	}
	factorLen := arrowhead.Len(n, r, g)
	if meth == vi.BlockDiag {
		factorLen = blockdiag.Len(n, r, g)
	}
	if err := s.setMethod(res, meth, n*r, factorLen); err != nil {
		return nil, nil, err
	}
	return res, target, nil
}

// result checks s's version, model fingerprint fp, dimensions, method,
// step rule and status, and returns the fit they describe but for its
// method (setMethod).
func (s *SavedFit) result(fp string, n, r, g int) (*vi.Result, error) {
	if s.Version != FitFileVersion {
		return nil, fmt.Errorf("posterior: saved fit of version %d, want %d", s.Version, FitFileVersion)
	}
	if fp != s.Model {
		return nil, fmt.Errorf("posterior: the saved fit is of another model (fingerprint %.12s…, this model %.12s…): its data, design, family or prior differ", s.Model, fp)
	}
	if s.N != n || s.R != r || s.G != g {
		return nil, fmt.Errorf("posterior: saved fit of dimensions (%d, %d, %d), model (%d, %d, %d)", s.N, s.R, s.G, n, r, g)
	}
	if err := checkMethod(s.Method, s.Expansion); err != nil {
		return nil, fmt.Errorf("posterior: saved fit: %w", err)
	}
	rule, err := vi.ParseRule(s.Rule)
	if err != nil {
		return nil, fmt.Errorf("posterior: saved fit: %v", err)
	}
	status, ok := parseStatus(s.Status)
	if !ok {
		return nil, fmt.Errorf("posterior: saved fit: unknown status %q", s.Status)
	}
	return &vi.Result{Rule: rule, Status: status, Iterations: s.Iterations, N: n, R: r, G: g,
		Mu: s.Mu, Factor: s.Factor, LowerBound: float64(s.LowerBound), LowerBoundSE: float64(s.BoundSE),
		LogWeights: s.LogWeights, ImportanceGlobal: s.ImportanceGlobal}, nil
}

// setMethod sets res's vi method and checks the lengths of its mean and
// factor against locals local variables and factorLen.
func (s *SavedFit) setMethod(res *vi.Result, meth vi.Method, locals, factorLen int) error {
	res.Method, res.Reparametrised = meth, meth == vi.BlockDiag
	if len(s.Mu) != locals+res.G || len(s.Factor) != factorLen {
		return fmt.Errorf("posterior: saved fit: mean and factor of lengths %d and %d, want %d and %d", len(s.Mu), len(s.Factor), locals+res.G, factorLen)
	}
	return nil
}

// parseStatus returns the vi.Status whose String is s.
func parseStatus(s string) (vi.Status, bool) {
	for st := vi.Converged; st <= vi.Cancelled; st++ {
		if st.String() == s {
			return st, true
		}
	}
	return 0, false
}
