// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package parallel

import "math/rand/v2"

// Streams holds one random number stream per chunk.
//
// The stream of chunk k at iteration t is a PCG generator whose state depends
// only on (seed, t, k). Reseeding is cheap and allocates nothing, so a fitting
// loop reseeds every chunk at every iteration.
type Streams struct {
	seed uint64
	pcg  []rand.PCG
	rng  []*rand.Rand
}

// NewStreams returns streams for the given number of chunks.
func NewStreams(seed uint64, chunks int) *Streams {
	s := &Streams{seed: seed, pcg: make([]rand.PCG, chunks), rng: make([]*rand.Rand, chunks)}
	for k := range s.rng {
		s.rng[k] = rand.New(&s.pcg[k])
	}
	return s
}

// Len returns the number of chunk streams.
func (s *Streams) Len() int { return len(s.rng) }

// At reseeds the stream of chunk k for iteration iter and returns it.
func (s *Streams) At(iter uint64, k int) *rand.Rand {
	return s.AtIndex(iter, k, uint64(k))
}

// AtIndex reseeds the stream of chunk k for iteration iter as the stream of
// chunk index and returns it: the stream a process holding every chunk
// would draw for chunk index, when this one's chunks are a share of those.
func (s *Streams) AtIndex(iter uint64, k int, index uint64) *rand.Rand {
	a, b := StreamSeed(s.seed, iter, index)
	s.pcg[k].Seed(a, b)
	return s.rng[k]
}

// StreamSeed derives the two PCG seed words of a stream from a seed, an
// iteration and a stream index, by splitmix64 mixing so that neighbouring
// indices give unrelated streams.
func StreamSeed(seed, iter, index uint64) (uint64, uint64) {
	x := mix(seed ^ mix(iter+0x9e3779b97f4a7c15) ^ mix(mix(index)+0x632be59bd9b4e019))
	return x, mix(x ^ 0xd1b54a32d192ed03)
}

func mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
