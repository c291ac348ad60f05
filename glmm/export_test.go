// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package glmm

import (
	"github.com/sparsevi/sparsevi/arrowhead"
	"github.com/sparsevi/sparsevi/parallel"
)

// StartWhole is Start with its rounds over all the subjects, however
// many.
func (mod *Model) StartWhole(pool *parallel.Pool, theta, prec []float64) error {
	n, _, _ := mod.Dims()
	return mod.startRelay(pool, nil, 0, n, false, theta, prec)
}

// StartFromSample is Start's start from its rounds over a sample of size
// of the subjects drawn with seed (startFromSample), for any number of
// subjects.
func (mod *Model) StartFromSample(pool *parallel.Pool, size int, seed uint64, theta, prec []float64) error {
	n, _, _ := mod.Dims()
	st, err := mod.shareStarter(pool, nil, 0, n, false)
	if err != nil {
		return err
	}
	return st.startFromSample(size, seed, theta, prec)
}

// SetStartSample makes Start start from a sample of size of its subjects
// from subjects of them on, until the returned function restores the
// rule; for tests of small models.
func SetStartSample(subjects, size int) (restore func()) {
	at, sz := sampleStartAt, startSampleAt
	sampleStartAt, startSampleAt = subjects, size
	return func() { sampleStartAt, startSampleAt = at, sz }
}

// StartRoundsAt returns theta_g after k of Start's Gaussian variational
// rounds over all the subjects from thetaG, each from the subjects'
// Gaussians at the last theta_g (roundAt): with k large, the rounds'
// fixed point. each, if not nil, sees theta_g after every round.
func (mod *Model) StartRoundsAt(pool *parallel.Pool, thetaG []float64, k int, each func([]float64)) ([]float64, error) {
	n, r, g := mod.Dims()
	theta := make([]float64, n*r+g)
	copy(theta[n*r:], thetaG)
	st := mod.newStarter(pool, theta, make([]float64, arrowhead.Len(n, r, g)))
	for range k {
		if err := st.roundAt(theta[n*r:]); err != nil {
			return nil, err
		}
		if each != nil {
			each(theta[n*r:])
		}
	}
	return theta[n*r:], nil
}

// SetCertifySteps sets whether the start's Newton steps skip the line
// search where certified says it would take the full step, until
// restore.
func SetCertifySteps(on bool) (restore func()) {
	old := certifySteps
	certifySteps = on
	return func() { certifySteps = old }
}
