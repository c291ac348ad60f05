// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
			elem, err := json.MarshalIndent(&list[k], indent, "  ")
			if err != nil {
				return fmt.Errorf("subject %q: %v", list[k].Level, err)
			}
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
