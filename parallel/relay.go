// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parallel

import (
	"context"
	"errors"
	"fmt"
)

// A Relay carries the sums of a computation that several processes share
// through a Carrier, and keeps a failure in one process from leaving the
// others waiting for a sum it will never pass on. Before each sum the
// processes exchange a header of three values: whether one of them has
// failed or stopped, and which. A process whose computation fails between
// two sums does not know how wide the next sum is, so it joins the next
// header alone, through Close, and all the processes end together there.
//
// Every process calls Carry for the same sums in the same order and Close
// once at the end, with its own error or nil.
type Relay struct {
	c    Carrier
	head [relayHead]float64
	// err is the failure all the processes agreed on at a header, or the
	// Carrier's own failure; either ends the relay without Close's header.
	err error
}

// Slots of a Relay's header.
const (
	relayFailed = iota // 1 + the first process whose computation failed, or 0
	relayStop          // 1 if a process stopped: its context ended
	relayCount         // the processes that have added to the header
	relayHead
)

// NewRelay returns a Relay over c.
func NewRelay(c Carrier) *Relay { return &Relay{c: c} }

// A ProcessError reports that the computation of another process of a
// Relay failed; that process's own error says why.
type ProcessError struct {
	Process int // the first failed process, in the Carrier's order
}

func (e *ProcessError) Error() string {
	return fmt.Sprintf("parallel: process %d of the group failed", e.Process)
}

// ErrProcessStopped is the error of a Relay that another process stopped:
// its context was cancelled or its deadline passed.
var ErrProcessStopped = errors.New("parallel: another process of the group stopped")

// Carry sets acc to the sum over the processes: the running sums of the
// processes before this one are received into acc, local adds this
// process's terms, and the sums are passed on, so that every process ends
// with the last one's. It returns an error, leaving acc as it is, if a
// process failed or stopped before this sum, or if the Carrier failed.
func (r *Relay) Carry(acc []float64, local func(acc []float64)) error {
	if err := r.header(nil); err != nil {
		return err
	}
	if err := r.c.Receive(acc); err != nil {
		r.err = err
		return err
	}
	local(acc)
	if err := r.c.Pass(acc); err != nil {
		r.err = err
		return err
	}
	return nil
}

// Try is Carry with a local computation that may fail. A process whose
// local fails adds nothing and passes on the sums it received, the
// processes after it add nothing either, and every process returns at
// this sum: the failed process with local's error, the others with a
// *ProcessError naming the first failed process, or ErrProcessStopped
// when local's error was its context's; Close then returns without a
// header. Otherwise acc is set as by Carry.
func (r *Relay) Try(acc []float64, local func(acc []float64) error) error {
	n := len(acc)
	// acc, then the processes that have added, 1 + the first that failed
	// and 1 if one stopped.
	buf := make([]float64, n+3)
	copy(buf, acc) // the first process starts from acc
	work := make([]float64, n)
	var own error
	err := r.Carry(buf, func(buf []float64) {
		rank := buf[n]
		buf[n]++
		if buf[n+1] != 0 || buf[n+2] != 0 {
			return
		}
		copy(work, buf[:n])
		switch own = local(work); {
		case own == nil:
			copy(buf, work)
		case stopped(own):
			buf[n+2] = 1
		default:
			buf[n+1] = rank + 1
		}
	})
	if err != nil {
		return err
	}
	switch failed := int(buf[n+1]); {
	case buf[n+2] != 0:
		r.err = ErrProcessStopped
	case failed != 0:
		r.err = &ProcessError{Process: failed - 1}
	}
	if r.err != nil {
		if own != nil {
			return own
		}
		return r.err
	}
	copy(acc, buf[:n])
	return nil
}

// Close ends the relay with this process's error, nil if its computation
// succeeded, and returns the error the process should report: its own if
// it has one; else a *ProcessError or ErrProcessStopped if another process
// failed or stopped after the last sum; else nil. Unless the processes
// already agreed to stop at a sum, Close exchanges one last header, in
// which a process that failed tells the others.
func (r *Relay) Close(err error) error {
	if r.err != nil {
		if err != nil {
			return err
		}
		return r.err
	}
	if herr := r.header(err); err == nil {
		return herr
	}
	return err
}

// header exchanges a header with this process's error, nil if it has
// none, and returns the group's: the first failure, or a stop.
func (r *Relay) header(own error) error {
	h := r.head[:]
	clear(h)
	if err := r.c.Receive(h); err != nil {
		r.err = err
		return err
	}
	if own != nil {
		switch {
		case stopped(own):
			h[relayStop] = 1
		case h[relayFailed] == 0:
			h[relayFailed] = h[relayCount] + 1
		}
	}
	h[relayCount]++
	if err := r.c.Pass(h); err != nil {
		r.err = err
		return err
	}
	switch {
	case h[relayStop] != 0:
		r.err = ErrProcessStopped
	case h[relayFailed] != 0:
		r.err = &ProcessError{Process: int(h[relayFailed]) - 1}
	}
	return r.err
}

// Gather returns the strings that each process gave, in the processes'
// order. It takes two sums, one of their sizes and one of the strings
// themselves, six bytes to a value, each value an integer that a float64
// holds exactly.
func (r *Relay) Gather(own []string) ([][]string, error) {
	enc := []float64{float64(len(own))}
	for _, s := range own {
		enc = append(enc, float64(len(s)))
		for k := 0; k < len(s); k += gatherBytes {
			var v uint64
			for _, b := range []byte(s[k:min(k+gatherBytes, len(s))]) {
				v = v<<8 | uint64(b)
			}
			enc = append(enc, float64(v))
		}
	}
	size := []float64{0}
	at := 0
	err := r.Carry(size, func(acc []float64) {
		at = int(acc[0])
		acc[0] += float64(len(enc))
	})
	if err != nil {
		return nil, err
	}
	all := make([]float64, int(size[0]))
	if err := r.Carry(all, func(acc []float64) { copy(acc[at:], enc) }); err != nil {
		return nil, err
	}
	var out [][]string
	for len(all) > 0 {
		n := int(all[0])
		all = all[1:]
		list := make([]string, 0, n)
		for range n {
			if len(all) == 0 {
				return nil, errors.New("parallel: Gather: the processes' strings are cut short")
			}
			m := int(all[0])
			words := (m + gatherBytes - 1) / gatherBytes
			if m < 0 || words > len(all)-1 {
				return nil, errors.New("parallel: Gather: the processes' strings are cut short")
			}
			b := make([]byte, 0, m)
			for k, v := range all[1 : 1+words] {
				w := min(gatherBytes, m-k*gatherBytes)
				u := uint64(v)
				for j := w - 1; j >= 0; j-- {
					b = append(b, byte(u>>(8*j)))
				}
			}
			list = append(list, string(b))
			all = all[1+words:]
		}
		out = append(out, list)
	}
	return out, nil
}

// gatherBytes is the number of bytes of a string that Gather packs into
// a value: 48 bits, fewer than float64's 53.
const gatherBytes = 6

// stopped reports whether err stops a computation rather than fails it:
// a context's end, here or in another process.
func stopped(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrProcessStopped)
}
