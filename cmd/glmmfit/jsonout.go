// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"strconv"
)

// writeJSON writes doc as -format json does: the text of a json.Encoder
// indenting by two spaces, byte for byte, but with each subject's random
// effects (and their corrected ones) encoded and written one subject at a
// time. The encoder holds the whole text twice over, which at 2·10^5
// subjects (32 MB of JSON) raised the peak by 131 MB.
func writeJSON(w io.Writer, doc *document) error {
	// The document with one placeholder subject in each list, whose
	// text the lists' subjects replace.
	// The lists in the order of the document's fields.
	head := *doc
	var lists [][]subjectEffects
	if pc := doc.PSISCorrected; pc != nil && len(pc.RandomEffects) > 0 {
		lists = append(lists, pc.RandomEffects)
		c := *pc
		c.RandomEffects = []subjectEffects{{Level: streamMark}}
		head.PSISCorrected = &c
	}
	if s := doc.RandomEffects.Subjects; len(s) > 0 {
		lists = append(lists, s)
		head.RandomEffects.Subjects = []subjectEffects{{Level: streamMark}}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&head); err != nil {
		return err
	}
	text := b.Bytes()
	var elem []byte
	mark := []byte(`"level": "\u0000glmmfit-stream\u0000"`)
	for _, list := range lists {
		at := bytes.Index(text, mark)
		if at < 0 {
			panic("glmmfit: the placeholder of a list of subjects is not in the JSON")
		}
		open := bytes.LastIndexByte(text[:at], '{')
		end := at + bytes.IndexByte(text[at:], '}') + 1
		indent := string(text[bytes.LastIndexByte(text[:open], '\n')+1 : open])
		if _, err := w.Write(text[:open]); err != nil {
			return err
		}
		for k := range list {
			if k > 0 {
				if _, err := io.WriteString(w, ",\n"+indent); err != nil {
					return err
				}
			}
			elem = appendSubject(elem[:0], &list[k], indent)
			if _, err := w.Write(elem); err != nil {
				return err
			}
		}
		text = text[end:]
	}
	_, err := w.Write(text)
	return err
}

// streamMark is the level of writeJSON's placeholder subject, a label
// that data do not hold: it starts with a NUL byte. (The placeholders are
// found in the order of the document, after the levels of the crossed
// factors and the names of the variables.)
const streamMark = "\x00glmmfit-stream\x00"

// appendSubject appends s as json.MarshalIndent(s, indent, "  ") writes
// it, byte for byte (TestWriteJSON, TestAppendJSONFloat), but without
// reflection and a second pass to indent: at 10^6 subjects those took
// 2.4 s of the 2.6 s that writing -format json took, on one core.
func appendSubject(b []byte, s *subjectEffects, indent string) []byte {
	b = append(b, "{\n"...)
	b = append(b, indent...)
	b = append(b, `  "level": `...)
	b = appendJSONString(b, s.Level)
	b = append(b, ",\n"...)
	b = appendJSONFloats(b, indent, "mean", s.Mean)
	b = append(b, ",\n"...)
	b = appendJSONFloats(b, indent, "sd", s.SD)
	b = append(b, '\n')
	b = append(b, indent...)
	return append(b, '}')
}

// appendSubjectCompact appends s as json.Marshal writes it, byte for
// byte (TestEncodeFitFile, TestAppendJSONFloat), for the fit file.
func appendSubjectCompact(b []byte, s *subjectEffects) []byte {
	b = append(b, `{"level":`...)
	b = appendJSONString(b, s.Level)
	b = append(b, `,"mean":`...)
	b = appendJSONFloatsCompact(b, s.Mean)
	b = append(b, `,"sd":`...)
	b = appendJSONFloatsCompact(b, s.SD)
	return append(b, '}')
}

// appendJSONFloatsCompact appends xs as json.Marshal writes a []jfloat.
func appendJSONFloatsCompact(b []byte, xs []jfloat) []byte {
	if xs == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for k, x := range xs {
		if k > 0 {
			b = append(b, ',')
		}
		b = appendJSONFloat(b, float64(x))
	}
	return append(b, ']')
}

// appendJSONFloats appends the field name: xs of appendSubject's object.
func appendJSONFloats(b []byte, indent, name string, xs []jfloat) []byte {
	b = append(b, indent...)
	b = append(b, `  "`...)
	b = append(b, name...)
	b = append(b, `": `...)
	switch {
	case xs == nil:
		return append(b, "null"...)
	case len(xs) == 0:
		return append(b, "[]"...)
	}
	b = append(b, '[')
	for k, x := range xs {
		if k > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
		b = append(b, indent...)
		b = append(b, "    "...)
		b = appendJSONFloat(b, float64(x))
	}
	b = append(b, '\n')
	b = append(b, indent...)
	return append(b, "  ]"...)
}

// appendJSONFloat appends x as a jfloat encodes it: null for NaN and
// infinities, else as encoding/json writes a float64 (the shortest
// decimal that reads back as x, in exponent form below 1e-6 and from 1e21
// on, with a one-digit exponent not padded to two).
func appendJSONFloat(b []byte, x float64) []byte {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return append(b, "null"...)
	}
	if a := math.Abs(x); a == 0 || a >= 1e-6 && a < 1e21 {
		return strconv.AppendFloat(b, x, 'f', -1, 64)
	}
	b = strconv.AppendFloat(b, x, 'e', -1, 64)
	// e-07 becomes e-7.
	if n := len(b); b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

// appendJSONString appends s quoted as encoding/json writes it: its own
// quoting for plain printable ASCII, which needs none, and
// json.Marshal's for the rest (HTML characters, quotes, control
// characters, invalid UTF-8).
func appendJSONString(b []byte, s string) []byte {
	for i := range len(s) {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
