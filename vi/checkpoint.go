// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"encoding/gob"
	"errors"
	"fmt"
	"io"
)

// A Checkpoint is the whole state of a fit at the end of a window, from
// which Fit resumes (Settings.Resume) to the result the fit would have
// reached had it not stopped, bit for bit: the variational parameters, the
// best and last good states, the step rule's moments and step size, the
// convergence test's history and the trace. In a fit over a Group each
// process checkpoints and resumes its own share.
type Checkpoint struct {
	// Iter is the last iteration done.
	Iter int

	d checkpointData
}

// checkpointData is a Checkpoint's state, in gob's form.
type checkpointData struct {
	Version        int
	N, R, G        int
	Rank, Size     int // the process's place in its Group; 0, 1 alone
	Method         Method
	Rule           string
	Seed           uint64
	Iter, GoodIter int
	Backoffs       int
	Refinements    int
	Lambda         []float64
	Good, Best     []float64
	BestSum        float64 // sum of h at the fixed draws of the best state
	BestMean       float64
	FirstBound     float64
	RuleState      []float64
	Means          []float64 // the tracker's window means
	Prev, Cur      []float64
	HavePrev       bool
	LastGain       float64
	Flat           int
	Gains          []float64
	Floor          float64
	Trace          []TracePoint
	// The test of Settings.moveTol: the last window's average of the
	// global means, and the windows it has held back. (Absent from
	// checkpoints written before it: their first window after a resume
	// has no average to compare with and is not flat.)
	MoveAvg     []float64
	HaveMoveAvg bool
	Vetoes      int
}

const checkpointVersion = 1

// WriteTo writes the checkpoint to w, in a binary form ReadCheckpoint
// reads.
func (c *Checkpoint) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	err := gob.NewEncoder(cw).Encode(&c.d)
	return cw.n, err
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadCheckpoint reads a checkpoint that WriteTo wrote.
func ReadCheckpoint(r io.Reader) (*Checkpoint, error) {
	c := &Checkpoint{}
	if err := gob.NewDecoder(r).Decode(&c.d); err != nil {
		return nil, fmt.Errorf("vi: reading a checkpoint: %w", err)
	}
	if c.d.Version != checkpointVersion {
		return nil, fmt.Errorf("vi: checkpoint of version %d, want %d", c.d.Version, checkpointVersion)
	}
	c.Iter = c.d.Iter
	return c, nil
}

// errNoCheckpoint is the error of a rule whose state a Checkpoint cannot
// hold.
var errNoCheckpoint = errors.New("vi: VOGN's fits cannot be checkpointed; use a gradient rule such as Snngm")

// checkFits reports why the checkpoint c cannot resume a fit of the
// settings over a target of n subjects (this process's), r and g.
func (c *Checkpoint) checkFits(set Settings, rule Rule, n, r, g, lambdaLen int) error {
	d := &c.d
	rank, size := 0, 1
	if set.Group != nil {
		rank, size = set.Group.Rank(), set.Group.Size()
	}
	switch {
	case d.N != n || d.R != r || d.G != g:
		return fmt.Errorf("vi: the checkpoint is of a target of n=%d, r=%d, G=%d, not n=%d, r=%d, G=%d", d.N, d.R, d.G, n, r, g)
	case d.Rank != rank || d.Size != size:
		return fmt.Errorf("vi: the checkpoint is of process %d of %d, not %d of %d", d.Rank, d.Size, rank, size)
	case d.Method != set.Method:
		return fmt.Errorf("vi: the checkpoint is of a %v fit, not %v", d.Method, set.Method)
	case d.Rule != rule.String():
		return fmt.Errorf("vi: the checkpoint is of a fit by %s, not %s", d.Rule, rule)
	case d.Seed != set.Seed:
		return fmt.Errorf("vi: the checkpoint is of a fit with seed %d, not %d", d.Seed, set.Seed)
	case len(d.Lambda) != lambdaLen || len(d.Good) != lambdaLen || len(d.Best) != lambdaLen:
		return fmt.Errorf("vi: the checkpoint holds %d variational parameters, the fit %d", len(d.Lambda), lambdaLen)
	case len(d.Prev) != set.ConvergenceDraws || len(d.Cur) != set.ConvergenceDraws:
		return fmt.Errorf("vi: the checkpoint has %d convergence draws, the settings %d", len(d.Cur), set.ConvergenceDraws)
	}
	return nil
}

// newCheckpoint returns the state of the fit after iteration iter, at the
// end of a window.
func newCheckpoint(set Settings, fam family, it iterator, tr *tracker, iter, goodIter int, res *Result,
	refinements int, lambda, good, best []float64, bestSum, firstBound float64) (*Checkpoint, error) {
	gc, ok := tr.conv.(*gainConverger)
	if !ok {
		return nil, errors.New("vi: a Settings.Converger of its own cannot be checkpointed")
	}
	rs, err := it.state(nil)
	if err != nil {
		return nil, err
	}
	n, r, g := res.N, res.R, res.G
	rank, size := 0, 1
	if set.Group != nil {
		rank, size = set.Group.Rank(), set.Group.Size()
	}
	d := checkpointData{
		Version: checkpointVersion, N: n, R: r, G: g, Rank: rank, Size: size,
		Method: set.Method, Rule: res.Rule.String(), Seed: set.Seed,
		Iter: iter, GoodIter: goodIter, Backoffs: res.Backoffs, Refinements: refinements,
		Lambda: append([]float64(nil), lambda...), Good: append([]float64(nil), good...),
		Best: append([]float64(nil), best...), BestSum: bestSum, BestMean: res.bestBound,
		FirstBound: firstBound, RuleState: rs,
		Means: append([]float64(nil), tr.means...),
		Prev:  append([]float64(nil), tr.prev...), Cur: append([]float64(nil), tr.cur...),
		HavePrev: tr.havePrev, LastGain: tr.lastGain,
		Flat: gc.flat, Gains: append([]float64(nil), gc.gains...), Floor: gc.floor,
		Trace:  append([]TracePoint(nil), res.Trace...),
		Vetoes: gc.vetoes,
	}
	if tr.mv != nil {
		d.MoveAvg, d.HaveMoveAvg = append([]float64(nil), tr.mv.avg...), tr.mv.haveAvg
	}
	if tr.n != 0 {
		panic("vi: checkpoint inside a window")
	}
	return &Checkpoint{Iter: iter, d: d}, nil
}

// resume restores the state of ck into the iterator, the tracker and its
// converger (nil for one of the user's own), and lambda, good and best.
func resume(ck *Checkpoint, it iterator, tr *tracker, gc *gainConverger, lambda, good, best []float64) error {
	d := &ck.d
	if gc == nil {
		return errors.New("vi: a fit with a Settings.Converger of its own cannot resume from a checkpoint")
	}
	if err := it.setState(d.RuleState); err != nil {
		return err
	}
	copy(lambda, d.Lambda)
	copy(good, d.Good)
	copy(best, d.Best)
	tr.means = append(tr.means[:0], d.Means...)
	copy(tr.prev, d.Prev)
	copy(tr.cur, d.Cur)
	tr.havePrev, tr.lastGain = d.HavePrev, d.LastGain
	gc.flat, gc.floor, gc.vetoes = d.Flat, d.Floor, d.Vetoes
	gc.gains = append(gc.gains[:0], d.Gains...)
	return nil
}

// resumeMover restores the test of Settings.moveTol from ck into m.
func resumeMover(ck *Checkpoint, m *mover) {
	if d := &ck.d; d.HaveMoveAvg && len(d.MoveAvg) == len(m.avg) {
		copy(m.avg, d.MoveAvg)
		m.haveAvg = true
	}
}
