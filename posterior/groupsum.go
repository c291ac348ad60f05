// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior

import (
	"fmt"

	"github.com/sparsevi/sparsevi/vi"
)

// An Integrator over a vi.Group integrates this process's subjects, and
// carries every sum over the subjects through the processes in rank
// order, as the fit does: a process receives the running sums of those
// before it, adds its own chunks' in chunk order and passes them on, and
// the last one's go to all. With every process but the last holding a
// whole number of chunks, the sums are bit for bit those of one process
// holding every subject. Ahead of the sums ride the flags by which all
// processes stop together.
const (
	slotStop   = iota // 1 if a process's context ended
	slotFailed        // 1 + the first rank whose integral failed, or 0
	sumHead
)

// setGroup joins the Integrator to the processes of grp: it carries the
// number of subjects of all of them, and refuses (in every process) a
// share that would misalign the chunks.
func (in *Integrator) setGroup(grp vi.Group) error {
	in.grp = grp
	vals := []float64{0, 0}
	err := in.carry(vals, func(v []float64) error {
		v[0] += float64(in.n)
		if grp.Rank() < grp.Size()-1 && in.n%integChunk != 0 {
			v[1]++
		}
		return nil
	})
	if err != nil {
		return err
	}
	if vals[1] != 0 {
		return fmt.Errorf("posterior: a process other than the last holds a number of subjects that is not a multiple of %d", integChunk)
	}
	in.total = int(vals[0])
	return nil
}

// carry runs local, which adds this process's terms to vals, after the
// running sums of the processes before it; over a group it passes them
// on, so that every process ends with the totals, and every process
// returns an error if any failed (local's own in the process that failed)
// or had its context end. Alone it is local(vals).
func (in *Integrator) carry(vals []float64, local func(vals []float64) error) error {
	if in.grp == nil {
		return local(vals)
	}
	if cap(in.acc) < sumHead+len(vals) {
		in.acc = make([]float64, sumHead+len(vals))
	}
	acc := in.acc[:sumHead+len(vals)]
	clear(acc)
	copy(acc[sumHead:], vals)
	if err := in.grp.Receive(acc); err != nil {
		return err
	}
	copy(vals, acc[sumHead:])
	var err error
	if acc[slotStop] == 0 && acc[slotFailed] == 0 {
		// Past a failure the sums do not matter: every process stops.
		err = local(vals)
	}
	copy(acc[sumHead:], vals)
	switch {
	case err != nil && in.pool.Context().Err() != nil:
		acc[slotStop] = 1
	case err != nil && acc[slotFailed] == 0:
		acc[slotFailed] = float64(1 + in.grp.Rank())
	}
	if perr := in.grp.Pass(acc); perr != nil {
		return perr
	}
	copy(vals, acc[sumHead:])
	switch {
	case err != nil:
		return err
	case acc[slotFailed] != 0:
		return &vi.ProcessError{Rank: int(acc[slotFailed]) - 1}
	case acc[slotStop] != 0:
		return vi.ErrGroupStopped
	}
	return nil
}

// groupNodes returns Nodes over the subjects of all the processes.
func (in *Integrator) groupNodes() (fewest, most int, err error) {
	fewest, most = in.Nodes()
	if in.grp == nil {
		return fewest, most, nil
	}
	// The largest of (the most nodes allowed less the fewest) and of the
	// most: carried sums need not be sums.
	top := float64(nodeCounts[len(nodeCounts)-1])
	vals := []float64{0, 0}
	err = in.carry(vals, func(v []float64) error {
		v[0], v[1] = max(v[0], top-float64(fewest)), max(v[1], float64(most))
		return nil
	})
	return int(top - vals[0]), int(vals[1]), err
}
