// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"reflect"
	"strings"

	"github.com/sparsevi/sparsevi/internal/atomicfile"
	"github.com/sparsevi/sparsevi/posterior"
)

// A fit file is the document's compact JSON, json.Marshal's bytes, with
// the checksums of its sections last. writeFitFile streams it: each field
// is encoded on its own, and the large ones (the subjects' effects, the
// state's mean and factor, the training data's text) a part at a time, so
// that the file's text is never held whole, and each section's checksum is
// taken from its bytes as they are written. Marshalling the sections and
// then the document had peaked at 4.5 times the fit's memory (2·10^5
// subjects: 839-856 MB against 189 MB, for a 112 MB file).

// writeFitFile writes doc, which must hold State and Training, to path,
// atomically, and sets doc.Checksums.
func writeFitFile(path string, doc *document) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return fmt.Errorf("-out: %v", pathError(err))
	}
	defer f.Abort()
	w := bufio.NewWriterSize(f, 1<<20)
	if err := encodeFitFile(w, doc); err != nil {
		return fmt.Errorf("-out %s: %v", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("-out: %v", pathError(err))
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("-out: %v", pathError(err))
	}
	return nil
}

// encodeFitFile writes doc's fit file to w and sets doc.Checksums.
func encodeFitFile(w io.Writer, doc *document) error {
	doc.Checksums = nil
	sums := map[string]string{}
	v := reflect.ValueOf(doc).Elem()
	typ := v.Type()
	if _, err := io.WriteString(w, "{"); err != nil {
		return err
	}
	first := true
	for i := range typ.NumField() {
		field := typ.Field(i)
		name, omitEmpty, ok := jsonField(field)
		if !ok || name == "checksums" {
			continue
		}
		fv := v.Field(i)
		if omitEmpty && emptyJSON(fv) {
			continue
		}
		if !first {
			if _, err := io.WriteString(w, ","); err != nil {
				return err
			}
		}
		first = false
		key, _ := json.Marshal(name)
		if _, err := w.Write(append(key, ':')); err != nil {
			return err
		}
		out := w
		var h hash.Hash
		if checkedSections[name] {
			h = sha256.New()
			out = io.MultiWriter(w, h)
		}
		if err := encodeField(out, name, fv.Interface()); err != nil {
			return fmt.Errorf("%s: %v", name, err)
		}
		if h != nil {
			sums[name] = hex.EncodeToString(h.Sum(nil))
		}
	}
	// Sections that are empty and omitted are checked as json.Marshal
	// gives them.
	for name := range checkedSections {
		if _, ok := sums[name]; !ok {
			b, err := json.Marshal(sectionValue(doc, name))
			if err != nil {
				return err
			}
			h := sha256.Sum256(b)
			sums[name] = hex.EncodeToString(h[:])
		}
	}
	doc.Checksums = sums
	b, err := json.Marshal(sums)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, `,"checksums":%s}`+"\n", b); err != nil {
		return err
	}
	return nil
}

// encodeField writes the JSON of a field of the document, streaming the
// large ones.
func encodeField(w io.Writer, name string, v any) error {
	switch name {
	case "random_effects":
		re := v.(randomEffects)
		return spliceList(w, func(mark []subjectEffects) any { re.Subjects = mark; return re }, re.Subjects)
	case "psis_corrected":
		if pc, ok := v.(*corrected); ok && pc != nil {
			c := *pc
			return spliceList(w, func(mark []subjectEffects) any { c.RandomEffects = mark; return &c }, pc.RandomEffects)
		}
	case "state":
		return encodeState(w, v)
	case "training_data":
		// Base64 needs no escaping in JSON.
		if td, ok := v.(*trainingData); ok && td != nil && (td.frame != nil || plainJSON(td.Content)) {
			head := *td
			head.Content = ""
			return splice(w, &head, part{`"content":""`, func(w io.Writer) error {
				if _, err := io.WriteString(w, `"content":"`); err != nil {
					return err
				}
				if err := td.writeContent(w); err != nil {
					return err
				}
				_, err := io.WriteString(w, `"`)
				return err
			}})
		}
	}
	return encodeWhole(w, v)
}

// encodeWhole writes json.Marshal's bytes of v.
func encodeWhole(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// A part is a mark in a head's text and what to write in its place.
type part struct {
	mark string
	body func(io.Writer) error
}

// splice writes json.Marshal's bytes of head with each part's writing in
// the place of its mark, which the text holds once, the parts in the
// text's order.
func splice(w io.Writer, head any, parts ...part) error {
	b, err := json.Marshal(head)
	if err != nil {
		return err
	}
	for _, p := range parts {
		at := bytes.Index(b, []byte(p.mark))
		if at < 0 {
			panic("glmmfit: a fit file's placeholder is not in its section")
		}
		if _, err := w.Write(b[:at]); err != nil {
			return err
		}
		if err := p.body(w); err != nil {
			return err
		}
		b = b[at+len(p.mark):]
	}
	_, err = w.Write(b)
	return err
}

// spliceList writes the JSON of a value holding a list of subjects, which
// with(mark) returns with the list set to mark, the subjects encoded one
// at a time.
func spliceList(w io.Writer, with func(mark []subjectEffects) any, list []subjectEffects) error {
	if len(list) == 0 {
		return encodeWhole(w, with(list))
	}
	mark, err := json.Marshal([]subjectEffects{{Level: streamMark}})
	if err != nil {
		return err
	}
	return splice(w, with([]subjectEffects{{Level: streamMark}}), part{string(mark), func(w io.Writer) error {
		if _, err := io.WriteString(w, "["); err != nil {
			return err
		}
		var elem []byte
		for k := range list {
			elem = elem[:0]
			if k > 0 {
				elem = append(elem, ',')
			}
			elem = appendSubjectCompact(elem, &list[k])
			if _, err := w.Write(elem); err != nil {
				return err
			}
		}
		_, err := io.WriteString(w, "]")
		return err
	}})
}

// floatChunk is the number of values of a large array encoded at a time.
const floatChunk = 1 << 12

// encodeState writes the saved state, its mean and factor a part at a
// time.
func encodeState(w io.Writer, v any) error {
	st, ok := v.(*posterior.SavedFit)
	if !ok || st == nil || len(st.Mu) == 0 || len(st.Factor) == 0 {
		return encodeWhole(w, v)
	}
	head := *st
	head.Mu, head.Factor = []float64{}, []float64{}
	return splice(w, &head, part{`"mu":[]`, func(w io.Writer) error {
		return floatArray(w, "mu", st.Mu)
	}}, part{`"factor":[]`, func(w io.Writer) error {
		return floatArray(w, "factor", st.Factor)
	}})
}

// floatArray writes "name":[...] as json.Marshal writes a []float64, a part
// at a time.
func floatArray(w io.Writer, name string, xs []float64) error {
	if _, err := fmt.Fprintf(w, "%q:[", name); err != nil {
		return err
	}
	for lo := 0; lo < len(xs); lo += floatChunk {
		b, err := json.Marshal(xs[lo:min(lo+floatChunk, len(xs))])
		if err != nil {
			return err
		}
		b = b[1 : len(b)-1]
		if lo > 0 {
			if _, err := io.WriteString(w, ","); err != nil {
				return err
			}
		}
		if _, err := w.Write(b); err != nil {
			return err
		}
	}
	_, err := io.WriteString(w, "]")
	return err
}

// plainJSON reports whether s encodes in JSON as itself between quotes.
func plainJSON(s string) bool {
	for i := range len(s) {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// jsonField returns a struct field's JSON name and whether it is omitted
// when empty; ok is false for a field that JSON leaves out.
func jsonField(f reflect.StructField) (name string, omitEmpty, ok bool) {
	if f.Anonymous {
		// encoding/json would flatten its fields into the document's.
		panic("glmmfit: encodeFitFile does not write an embedded field: " + f.Name)
	}
	if !f.IsExported() {
		return "", false, false
	}
	tag := f.Tag.Get("json")
	if tag == "-" {
		return "", false, false
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, strings.Contains(","+opts+",", ",omitempty,"), true
}

// emptyJSON reports whether omitempty leaves v out, as encoding/json
// decides it.
func emptyJSON(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}
