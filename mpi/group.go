// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package mpi

import (
	"fmt"
	"time"
)

// Group is the processes of MPI_COMM_WORLD as a vi.Group: set
// vi.Settings.Group to it in every process, each fitting its own share of
// the subjects (SubjectBounds), and the fit is bit-identical to one
// process's. vi.Fit must then be called from the goroutine that called
// Init: the fit makes its MPI calls from the goroutine that calls it.
//
// A sum passes from rank to rank: Receive takes the running values from
// the rank before (MPI_Recv), Pass sends them to the rank after (MPI_Send)
// and then copies the last rank's values to all (MPI_Bcast). One sum costs
// Size()-1 messages in sequence and a broadcast.
type Group struct {
	rank, size int
	sums       int
	spent      time.Duration
}

// groupTag tags the messages of a Group's sums.
const groupTag = 0x5356

// NewGroup returns the Group of MPI_COMM_WORLD. It fails before Init.
func NewGroup() (*Group, error) {
	if err := ready(); err != nil {
		return nil, err
	}
	return &Group{rank: Rank(), size: Size()}, nil
}

// Rank returns this process's rank.
func (g *Group) Rank() int { return g.rank }

// Size returns the number of processes.
func (g *Group) Size() int { return g.size }

// Receive overwrites acc with the values the rank before passed on; rank 0
// leaves acc as it is.
func (g *Group) Receive(acc []float64) error {
	if g.rank == 0 {
		return nil
	}
	start := time.Now()
	err := Recv(acc, g.rank-1, groupTag)
	g.spent += time.Since(start)
	return err
}

// Pass sends acc to the next rank, then overwrites it with the last rank's
// values.
func (g *Group) Pass(acc []float64) error {
	g.sums++
	if g.size == 1 {
		return nil
	}
	start := time.Now()
	defer func() { g.spent += time.Since(start) }()
	if g.rank < g.size-1 {
		if err := Send(acc, g.rank+1, groupTag); err != nil {
			return err
		}
	}
	return Bcast(acc, g.size-1)
}

// Exchanges returns the number of sums the Group has passed on and the time
// this process spent in their exchange: waiting for the processes before
// it, sending, and waiting for the last one's values (so the time others
// took to compute their shares counts too).
func (g *Group) Exchanges() (sums int, spent time.Duration) { return g.sums, g.spent }

// SubjectBounds shares n subjects, in chunks of chunk subjects, among size
// processes as evenly as whole chunks allow: process r holds the subjects
// [b[r], b[r+1]). Every process but the last holds whole chunks, as a
// vi.Group needs, and each holds at least one subject; it is an error if
// there are fewer chunks than processes.
func SubjectBounds(n, chunk, size int) ([]int, error) {
	if chunk < 1 || size < 1 {
		return nil, fmt.Errorf("mpi: SubjectBounds: chunk size %d, %d processes", chunk, size)
	}
	chunks := (n + chunk - 1) / chunk
	if chunks < size {
		return nil, fmt.Errorf("mpi: %d subjects make %d chunks of %d, fewer than the %d processes", n, chunks, chunk, size)
	}
	b := EvenBounds(chunks, size)
	for r := range b {
		b[r] = min(b[r]*chunk, n)
	}
	return b, nil
}
