// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Package prefetch reads ahead of its caller in a goroutine, so that a
// costly source, such as gzip decompression, and its consumer, such as the
// CSV parser, run at the same time on two cores.
package prefetch

import (
	"io"
	"sync"
)

// Reader reads from its source in a goroutine, up to depth buffers of size
// bytes ahead of its caller. The bytes and the source's error come out as
// the source gave them. Close stops the goroutine; a Reader must be closed
// when its caller stops reading before the source's end or error.
type Reader struct {
	ch   chan chunk
	free chan []byte
	done chan struct{}
	once sync.Once

	cur, last []byte
	err       error
}

type chunk struct {
	b   []byte
	err error
}

// NewReader starts reading r ahead in buffers of size bytes, at most depth
// of them waiting. It panics if size or depth is below 1.
func NewReader(r io.Reader, size, depth int) *Reader {
	if size < 1 || depth < 1 {
		panic("prefetch: size and depth must be positive")
	}
	p := &Reader{ch: make(chan chunk, depth), free: make(chan []byte, depth+2), done: make(chan struct{})}
	for range depth + 1 {
		p.free <- make([]byte, size)
	}
	go p.fill(r)
	return p
}

func (p *Reader) fill(r io.Reader) {
	defer close(p.ch)
	for {
		var buf []byte
		select {
		case buf = <-p.free:
		case <-p.done:
			return
		}
		// Fill the buffer; the source's error, io.EOF included, as it is.
		n := 0
		var err error
		for n < len(buf) && err == nil {
			var k int
			k, err = r.Read(buf[n:])
			n += k
		}
		select {
		case p.ch <- chunk{buf[:n], err}:
		case <-p.done:
			return
		}
		if err != nil {
			return
		}
	}
}

// Read reads the next bytes of the source.
func (p *Reader) Read(b []byte) (int, error) {
	for len(p.cur) == 0 {
		if p.err != nil {
			return 0, p.err
		}
		if p.last != nil {
			p.free <- p.last[:cap(p.last)]
			p.last = nil
		}
		c, ok := <-p.ch
		if !ok {
			return 0, io.ErrClosedPipe
		}
		p.cur, p.last, p.err = c.b, c.b, c.err
	}
	n := copy(b, p.cur)
	p.cur = p.cur[n:]
	return n, nil
}

// Close stops reading ahead. It does not close the source.
func (p *Reader) Close() error {
	p.once.Do(func() { close(p.done) })
	return nil
}
