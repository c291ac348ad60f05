// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package parallel runs deterministic chunked loops over subjects on
// goroutines.
//
// The subjects 0..n-1 are cut into chunks of a fixed size. Chunk boundaries
// depend only on n and the chunk size, never on the number of workers, so a
// computation that writes each chunk's partial result into its own slot and
// reduces the slots in chunk order gives bit-identical results for any worker
// count and any GOMAXPROCS.
//
// A Pool keeps its worker goroutines alive between calls to Run, so that an
// iteration of a fitting loop starts no goroutines and allocates nothing. The
// workers are managed by an errgroup.Group created with WithContext and
// SetLimit; cancelling the Pool's context stops the loop between chunks.
// Each worker runs a contiguous share of a loop's chunks and then helps with
// the others'. In a pool made by NewPollingPool, between loops, an idle
// worker polls briefly for the next one when it has a core of its own.
//
// Streams gives every chunk its own random number stream, a PCG generator
// seeded from (seed, iteration, chunk), so draws do not depend on which worker
// ran the chunk.
package parallel
