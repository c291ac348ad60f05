// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package blockdiag

// whole runs each kernel pair over all blocks, the subjects in one range
// and then the global block, as a serial caller would; package vi runs
// the ranges on its workers. Its methods return an error to read like
// their callers'.
type whole struct{ f *Factor }

func (w whole) MulVec(dst, x []float64) error {
	w.f.MulVecRange(0, w.f.n, dst, x)
	w.f.MulVecGlobal(dst, x)
	return nil
}

func (w whole) MulTransVec(dst, x []float64) error {
	w.f.MulTransVecRange(0, w.f.n, dst, x)
	w.f.MulTransVecGlobal(dst, x)
	return nil
}

func (w whole) Solve(dst, x []float64) error {
	w.f.SolveRange(0, w.f.n, dst, x)
	w.f.SolveGlobal(dst, x)
	return nil
}

func (w whole) SolveTrans(dst, x []float64) error {
	w.f.SolveTransRange(0, w.f.n, dst, x)
	w.f.SolveTransGlobal(dst, x)
	return nil
}

func (w whole) CovMulVec(dst, x []float64) error {
	w.f.CovMulVecRange(0, w.f.n, dst, x)
	w.f.CovMulVecGlobal(dst, x)
	return nil
}

func (w whole) Draw(theta, mu, z []float64) error {
	w.f.DrawRange(0, w.f.n, theta, mu, z)
	w.f.DrawGlobal(theta, mu, z)
	return nil
}

func (w whole) LogDet() (float64, error) {
	return w.f.LogDetRange(0, w.f.n) + w.f.LogDetGlobal(), nil
}

func (w whole) NatGrad(dMu, dC, z, gradH []float64) error {
	w.f.NatGradRange(0, w.f.n, dMu, dC, z, gradH)
	w.f.NatGradGlobal(dMu, dC, z, gradH)
	return nil
}

func (w whole) EuclidGrad(dC, z, gradH []float64) error {
	w.f.EuclidGradRange(0, w.f.n, dC, z, gradH)
	w.f.EuclidGradGlobal(dC, z, gradH)
	return nil
}

func (w whole) InvFisher(dMu, dC, aMu, aC []float64) error {
	w.f.InvFisherRange(0, w.f.n, dMu, dC, aMu, aC)
	w.f.InvFisherGlobal(dMu, dC, aMu, aC)
	return nil
}

func (w whole) Cov(dst []float64) error {
	w.f.CovRange(0, w.f.n, dst)
	w.f.CovGlobal(dst)
	return nil
}

// Chol names the lowest failing subject, or the global block if no
// subject fails.
func (w whole) Chol(s []float64) error {
	if err := w.f.CholRange(0, w.f.n, s); err != nil {
		return err
	}
	return w.f.CholGlobal(s)
}
