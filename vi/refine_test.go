// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"math"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/parallel"
)

// quadStart is a conjugate target whose Starter gives the exact precision
// without the coupling of the held global variables to the others (their
// rows and columns are zero off the diagonal) and a mean moved away from
// the posterior mean, and which reports itself quadratic given held.
type quadStart struct {
	*gaussTarget
	held  []int
	shift float64
	off   bool // QuadraticGiven reports false
}

func (q quadStart) QuadraticGiven(dst []int) ([]int, bool) {
	return append(dst, q.held...), !q.off
}

func (q quadStart) Start(_ *parallel.Pool, theta, prec []float64) error {
	mean, p, _ := q.exact()
	n, r, g := q.n, q.r, q.g
	for j := range theta {
		theta[j] = mean.AtVec(j) + q.shift*math.Sin(float64(j+1))
	}
	held := func(j int) bool { return j >= n*r && slices.Contains(q.held, j-n*r) }
	at := func(a, b int) float64 {
		if a != b && (held(a) || held(b)) {
			return 0
		}
		return p.At(a, b)
	}
	sym := arrowhead.WrapSym(n, r, g, prec)
	for i := range n {
		for a := range r {
			for b := 0; b <= a; b++ {
				sym.SetLocal(i, a, b, at(i*r+a, i*r+b))
			}
			for k := range g {
				sym.SetCross(i, k, a, at(n*r+k, i*r+a))
			}
		}
	}
	for a := range g {
		for b := 0; b <= a; b++ {
			sym.SetGlobal(a, b, at(n*r+a, n*r+b))
		}
	}
	return nil
}

// conditionalMode returns the posterior mode of the free variables given
// the held ones at theta's values, densely: P_ff m_f = rhs_f - P_fh theta_h
// with rhs = P mean.
func (q quadStart) conditionalMode(theta []float64) []float64 {
	mean, p, _ := q.exact()
	n, r := q.n, q.r
	d := len(theta)
	var free, held []int
	for j := range d {
		if j >= n*r && slices.Contains(q.held, j-n*r) {
			held = append(held, j)
		} else {
			free = append(free, j)
		}
	}
	rhs := mat.NewVecDense(d, nil)
	rhs.MulVec(p, mean)
	pf := mat.NewSymDense(len(free), nil)
	bf := mat.NewVecDense(len(free), nil)
	for x, a := range free {
		s := rhs.AtVec(a)
		for _, h := range held {
			s -= p.At(a, h) * theta[h]
		}
		bf.SetVec(x, s)
		for y, b := range free[:x+1] {
			pf.SetSym(x, y, p.At(a, b))
		}
	}
	var ch mat.Cholesky
	if !ch.Factorize(pf) {
		panic("conditionalMode: not positive definite")
	}
	var m mat.VecDense
	if err := ch.SolveVecTo(&m, bf); err != nil {
		panic(err)
	}
	out := slices.Clone(theta)
	for x, a := range free {
		out[a] = m.AtVec(x)
	}
	return out
}

// TestRefineStart: a QuadraticStarter's start moves to the mode of the
// conditional posterior given its held variables, its held variables by
// a Newton step with the start's curvature towards E_q of the gradient
// being zero, which on this quadratic target is the gradient at the mean
// (the antithetic pairs cancel the rest), and the others to the mode
// given them again (dense solves), for both families and with and without
// a support, and bit for bit for any number of workers; a target that
// reports itself not quadratic keeps its start.
func TestRefineStart(t *testing.T) {
	for _, tc := range []struct {
		name    string
		method  Method
		r       int
		held    []int
		support bool
	}{
		{"gva-none", GVA, 1, nil, false},
		{"gva-held", GVA, 2, []int{1, 3}, false},
		{"gva-support", GVA, 1, []int{0}, true},
		{"blockdiag-held", BlockDiag, 2, []int{2}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var gt *gaussTarget
			var target Target
			if tc.support {
				st := newSupportedTarget(11, 40, tc.r, 2, 6, 2)
				gt = st.gaussTarget
				target = supportedQuad{quadStart{gaussTarget: gt, held: tc.held, shift: 0.7}, st}
			} else {
				gt = newGaussTarget(11, 40, tc.r, 4)
				target = quadStart{gaussTarget: gt, held: tc.held, shift: 0.7}
			}
			q := quadStart{gaussTarget: gt, held: tc.held, shift: 0.7}
			n, r, g := gt.n, gt.r, gt.g
			d := n*r + g
			start := make([]float64, d)
			if err := q.Start(nil, start, make([]float64, arrowhead.Len(n, r, g))); err != nil {
				t.Fatal(err)
			}
			want := q.refined(start)
			var first []float64
			for _, workers := range []int{1, 2, 3} {
				got := startMean(t, target, tc.method, workers)
				for j := range d {
					if math.Abs(got[j]-want[j]) > 1e-9*(1+math.Abs(want[j])) {
						t.Fatalf("workers %d: mean[%d] = %v, conditional mode %v (start %v)", workers, j, got[j], want[j], start[j])
					}
				}
				if first == nil {
					first = got
				} else if !slices.Equal(got, first) {
					t.Errorf("workers %d: the refined start differs from one worker's", workers)
				}
			}
			off := quadStart{gaussTarget: gt, held: tc.held, shift: 0.7, off: true}
			if got := startMean(t, off, tc.method, 1); !slices.Equal(got, start) {
				t.Errorf("a target not quadratic had its start moved")
			}
		})
	}
}

// refined returns what refineStart makes of start on the quadratic
// target: the conditional mode m given the held variables; the held ones
// moved by the gradient at m over the precision's diagonal (at most
// maxHeldStep); the conditional mode given those.
func (q quadStart) refined(start []float64) []float64 {
	m := q.conditionalMode(start)
	if len(q.held) == 0 {
		return m
	}
	mean, p, _ := q.exact()
	nr := q.n * q.r
	step := make([]float64, len(q.held))
	for x, h := range q.held {
		j := nr + h
		var g float64 // -(P (m - mean))_j
		for k := range m {
			g -= p.At(j, k) * (m[k] - mean.AtVec(k))
		}
		step[x] = max(-maxHeldStep, min(maxHeldStep, g/p.At(j, j)))
	}
	for x, h := range q.held {
		m[nr+h] += step[x]
	}
	return q.conditionalMode(m)
}

// supportedQuad is a quadStart whose subjects each depend on part of the
// global block.
type supportedQuad struct {
	quadStart
	s *supportedTarget
}

func (s supportedQuad) GlobalSupport(i int, dst []int) []int { return s.s.GlobalSupport(i, dst) }

// startMean returns the mean after the family's InitMode start of target.
func startMean(t *testing.T, target Target, m Method, workers int) []float64 {
	t.Helper()
	ctx := context.Background()
	set := Settings{Method: m, Seed: 1}.withDefaults()
	pool := parallel.NewPool(ctx, workers)
	defer pool.Close()
	sup, _, err := newCrossSupport(target, m == GVA)
	if err != nil {
		t.Fatal(err)
	}
	fam, err := newFamily(target, set, pool, sup, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := fam.init(ctx, InitMode); err != nil {
		t.Fatal(err)
	}
	n, r, g := target.Dims()
	return slices.Clone(fam.lambda()[:n*r+g])
}

// TestQuadraticStartWindow: Fit takes LargeWindow for a target whose start
// is refined, and DefaultWindow otherwise.
func TestQuadraticStartWindow(t *testing.T) {
	gt := newGaussTarget(3, 20, 1, 2)
	for _, tc := range []struct {
		target Target
		init   Init
		want   bool
	}{
		{quadStart{gaussTarget: gt}, InitMode, true},
		{quadStart{gaussTarget: gt, off: true}, InitMode, false},
		{quadStart{gaussTarget: gt}, InitPaper, false},
		{gt, InitMode, false},
	} {
		if got := quadraticStart(tc.target, Settings{Init: tc.init}); got != tc.want {
			t.Errorf("%T init %v: quadraticStart %v, want %v", tc.target, tc.init, got, tc.want)
		}
	}
}

// TestQuadraticStartStep: with more than StepShared partly supported
// global variables, a refined start divides Snngm's default step by
// QuadraticStepDivisor and skips the refinement of the step; a start that
// is not refined keeps both, and so does a refined one with few such
// variables.
func TestQuadraticStartStep(t *testing.T) {
	many := newSupportedTarget(13, 60, 1, 2, 40, 3)
	few := newSupportedTarget(13, 60, 1, 2, 6, 3)
	for _, tc := range []struct {
		name       string
		st         *supportedTarget
		off        bool
		div        float64
		refine     int
		wantWindow int
	}{
		{"many-quadratic", many, false, QuadraticStepDivisor, 0, LargeWindow},
		{"many-not", many, true, 1, 1, DefaultWindow},
		{"few-quadratic", few, false, 1, 1, LargeWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			target := supportedQuad{quadStart{gaussTarget: tc.st.gaussTarget, off: tc.off}, tc.st}
			_, partial, err := newCrossSupport(target, false)
			if err != nil {
				t.Fatal(err)
			}
			var refine, window int
			set := Settings{Method: GVA, Seed: 1, MaxIter: 2 * LargeWindow, Progress: func(p Progress) {
				refine = p.Refine
				if window == 0 {
					window = p.Iter
				}
			}}
			res, err := Fit(context.Background(), target, set)
			if err != nil {
				t.Fatal(err)
			}
			alpha0 := DefaultAlpha0
			if partial > StepShared {
				alpha0 *= StepShared / float64(partial)
			}
			want := alpha0 / tc.div
			if got := res.Rule.(Snngm).Alpha0; math.Abs(got-want) > 1e-15*want {
				t.Errorf("Alpha0 %v, want %v (%d partly supported)", got, want, partial)
			}
			if refine != tc.refine || window != tc.wantWindow {
				t.Errorf("refinements %d, window %d; want %d and %d", refine, window, tc.refine, tc.wantWindow)
			}
		})
	}
}
