// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// decodeWritten decodes raw, a fit file, into doc when every checked
// section is byte for byte as glmmfit wrote it (its SHA-256 is its
// checksum), and reports whether it did. It then reads neither the
// subjects' random effects, which predict does not use (doc's are left
// empty), nor the training data's text, which doc.Training's text holds
// in place, undecoded: at 10^6 subjects json.Unmarshal of the whole file
// took 6 s, most of it copying the 330 MB text and building the 10^6
// subjects. Anything else (an edited or reformatted file, invalid JSON)
// is for json.Unmarshal and sectionSums, which say what is wrong.
func decodeWritten(raw []byte, doc *document) bool {
	members, ok := topMembers(raw)
	if !ok {
		return false
	}
	cs, ok := members["checksums"]
	if !ok {
		return false
	}
	var sums map[string]string
	if err := json.Unmarshal(raw[cs[0]:cs[1]], &sums); err != nil {
		return false
	}
	// The sections present are hashed concurrently.
	match := make(chan bool, len(checkedSections))
	present := 0
	for name := range checkedSections {
		if span, ok := members[name]; ok {
			present++
			go func() {
				h := sha256.Sum256(raw[span[0]:span[1]])
				match <- hex.EncodeToString(h[:]) == sums[name]
			}()
		}
	}
	all := true
	for range present {
		all = <-match && all
	}
	if !all {
		return false
	}
	// The training data's text is the last member of its section, as
	// json.Marshal writes a trainingData; base64 needs no escaping.
	var text []byte
	var cuts [][2]int // spans of raw left out of what json.Unmarshal reads
	if span, ok := members["training_data"]; ok {
		sec := raw[span[0]:span[1]]
		const key = `,"content":"`
		k := bytes.LastIndex(sec, []byte(key))
		if k < 0 || !bytes.HasSuffix(sec, []byte(`"}`)) {
			return false
		}
		text = sec[k+len(key) : len(sec)-2]
		if bytes.IndexByte(text, '"') >= 0 || bytes.IndexByte(text, '\\') >= 0 {
			return false
		}
		cuts = append(cuts, [2]int{span[0] + k + len(key), span[1] - 2})
	}
	if span, ok := members["random_effects"]; ok {
		cuts = append(cuts, [2]int{span[0] + 1, span[1] - 1})
		if raw[span[0]] != '{' || raw[span[1]-1] != '}' {
			return false
		}
	}
	if len(cuts) == 2 && cuts[1][0] < cuts[0][0] {
		cuts[0], cuts[1] = cuts[1], cuts[0]
	}
	rest := make([]byte, 0, len(raw)-len(text))
	at := 0
	for _, c := range cuts {
		rest = append(rest, raw[at:c[0]]...)
		at = c[1]
	}
	rest = append(rest, raw[at:]...)
	if err := json.Unmarshal(rest, doc); err != nil {
		*doc = document{}
		return false
	}
	// Sections omitted as empty are checked as json.Marshal gives them.
	for name := range checkedSections {
		if _, ok := members[name]; ok {
			continue
		}
		b, err := json.Marshal(sectionValue(doc, name))
		h := sha256.Sum256(b)
		if err != nil || hex.EncodeToString(h[:]) != sums[name] {
			*doc = document{}
			return false
		}
	}
	if doc.Training != nil {
		doc.Training.text = text
	}
	return true
}

// topMembers returns the span in raw of the value of each member of the
// JSON object that raw holds, or false if raw is not such an object or a
// name appears twice. It checks only the object's structure: the values
// are for json.Unmarshal or a checksum to check.
func topMembers(raw []byte) (map[string][2]int, bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	members := map[string][2]int{}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return members, onlySpace(raw, i+1)
	}
	for {
		if i >= len(raw) || raw[i] != '"' {
			return nil, false
		}
		end := skipString(raw, i)
		if end < 0 {
			return nil, false
		}
		var name string
		if err := json.Unmarshal(raw[i:end], &name); err != nil {
			return nil, false
		}
		if _, dup := members[name]; dup {
			return nil, false
		}
		i = skipSpace(raw, end)
		if i >= len(raw) || raw[i] != ':' {
			return nil, false
		}
		start := skipSpace(raw, i+1)
		end = skipValue(raw, start)
		if end < 0 {
			return nil, false
		}
		members[name] = [2]int{start, end}
		i = skipSpace(raw, end)
		if i >= len(raw) {
			return nil, false
		}
		switch raw[i] {
		case ',':
			i = skipSpace(raw, i+1)
		case '}':
			if !onlySpace(raw, i+1) {
				return nil, false
			}
			return members, true
		default:
			return nil, false
		}
	}
}

// onlySpace reports whether raw holds only white space from i on.
func onlySpace(raw []byte, i int) bool { return skipSpace(raw, i) == len(raw) }

// skipSpace returns the index of the first byte of raw from i on that is
// not JSON white space.
func skipSpace(raw []byte, i int) int {
	for i < len(raw) && (raw[i] == ' ' || raw[i] == '\n' || raw[i] == '\r' || raw[i] == '\t') {
		i++
	}
	return i
}

// skipString returns the index just past the string that starts at
// raw[i], a quote, or -1 if it does not end.
func skipString(raw []byte, i int) int {
	i++
	for {
		k := bytes.IndexByte(raw[i:], '"')
		if k < 0 {
			return -1
		}
		q := i + k
		// A quote after an odd number of backslashes is escaped.
		b := 0
		for q-1-b >= i && raw[q-1-b] == '\\' {
			b++
		}
		if b%2 == 0 {
			return q + 1
		}
		i = q + 1
	}
}

// skipValue returns the index just past the value that starts at raw[i],
// or -1 if it does not end: a string, an object or array (matching its
// brackets outside strings), or a literal (up to a delimiter).
func skipValue(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	switch raw[i] {
	case '"':
		return skipString(raw, i)
	case '{', '[':
		depth := 0
		for i < len(raw) {
			switch raw[i] {
			case '"':
				if i = skipString(raw, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	start := i
	for i < len(raw) && bytes.IndexByte([]byte(",}] \n\r\t"), raw[i]) < 0 {
		i++
	}
	if i == start {
		return -1
	}
	return i
}
