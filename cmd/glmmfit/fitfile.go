// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/vi"
)

// A fit file is the JSON document of the fit with two more members: state,
// the variational mean and factor, and training_data, the columns of the
// training data that the model uses, as gzip-compressed CSV in base64.
// Predict rebuilds the design from training_data with the recorded formula
// and options, which gives the same coding, levels and subjects as the fit
// whatever happened to the original file since (or if it was standard
// input), and checks the rebuilt model against the state.

// trainingData holds the used columns of the training data.
type trainingData struct {
	Name        string   `json:"name"`
	Rows        int      `json:"rows"`
	Columns     []string `json:"columns"`
	Categorical []string `json:"categorical"`
	Encoding    string   `json:"encoding"`
	Content     string   `json:"content"`

	// frame holds the columns of a fit's training data, which the fit
	// file's writer encodes into content as it writes it (encodeField):
	// the text is never held whole. Nil in a fit file read back.
	frame *datasets.Frame
	// text, when not nil, is the content as the fit file read back holds
	// it (decodeWritten), in place of Content, for input alone: such a
	// document is not written again.
	text []byte
}

const trainingEncoding = "csv+gzip+base64"

// newTrainingData keeps the columns cols of in.
func newTrainingData(in *input, cols []string) (*trainingData, error) {
	t := &trainingData{Name: in.name, Rows: in.frame.NumRows(), Columns: cols, Categorical: []string{}, Encoding: trainingEncoding}
	var keep []*datasets.Column
	for _, c := range cols {
		col, ok := in.frame.Column(c)
		if !ok {
			return nil, fmt.Errorf("no column %q", c)
		}
		keep = append(keep, col)
		if col.Kind == datasets.Categorical {
			t.Categorical = append(t.Categorical, c)
		}
	}
	fr, err := datasets.NewFrame(keep...)
	if err != nil {
		return nil, err
	}
	t.frame = fr
	return t, nil
}

// writeContent writes the training data's content, its columns as
// gzip-compressed CSV in base64, to w.
func (t *trainingData) writeContent(w io.Writer) error {
	if t.frame == nil {
		_, err := io.WriteString(w, t.Content)
		return err
	}
	b64 := base64.NewEncoder(base64.StdEncoding, w)
	// Huffman coding alone (no matches): the text of numbers has few
	// long repeats, and on 10^5 simulated subjects it compressed the CSV
	// 4 times as fast as BestSpeed to 7% more bytes.
	zw, _ := gzip.NewWriterLevel(b64, gzip.HuffmanOnly)
	// The CSV text is made on a goroutine of its own while this one
	// compresses it: at 10^6 subjects the one took 4.8 s of CPU and the
	// other 9 s, one after the other. The bytes are the same: deflate's
	// output depends on its input alone, not on how it is cut into
	// writes (TestWriteContent).
	pr, pw := io.Pipe()
	made := make(chan error, 1)
	go func() {
		bw := bufio.NewWriterSize(pw, 1<<16)
		err := datasets.WriteCSV(bw, t.frame)
		if err == nil {
			err = bw.Flush()
		}
		pw.CloseWithError(err)
		made <- err
	}()
	if _, err := io.Copy(zw, pr); err != nil {
		// The goroutine's next write fails, and it ends.
		pr.CloseWithError(err)
		<-made
		return err
	}
	if err := <-made; err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return b64.Close()
}

// input decodes the training data as it reads them, until ctx ends: the
// decoded text is never held whole, and the columns are reserved for all
// the rows at once (at 10^6 subjects, growing them and holding the text
// took 17 s of the 37 that predict took).
func (t *trainingData) input(ctx context.Context) (*input, error) {
	if t.Encoding != trainingEncoding {
		return nil, fmt.Errorf("unknown training data encoding %q", t.Encoding)
	}
	var numeric []string
	for _, c := range t.Columns {
		if !slices.Contains(t.Categorical, c) {
			numeric = append(numeric, c)
		}
	}
	var text io.Reader = strings.NewReader(t.Content)
	if t.text != nil {
		text = bytes.NewReader(t.text)
	}
	src := base64.NewDecoder(base64.StdEncoding, &ctxReader{ctx: ctx, r: text})
	in, err := readCSVInput(src, t.Name+" (training data in the fit file)", "", readOptions{categorical: t.Categorical, numeric: numeric, reserveRows: t.Rows})
	if err != nil {
		return nil, err
	}
	if in.frame.NumRows() != t.Rows || !slices.Equal(in.frame.Names(), t.Columns) {
		return nil, errors.New("training data do not match their description")
	}
	in.lines = nil
	return in, nil
}

// savedFit is a fit read back from a fit file.
type savedFit struct {
	// doc is the fit file's document, without the subjects' random
	// effects when the file is as written (decodeWritten).
	doc    *document
	design *formula.Design
	approx *approx // nil for a nested model
	// nested and nestedTarget are the fit of the design's nested model, if
	// it has one (formula.Design.Nested), and what it was of: the model
	// (GVA) or its RVB reparametrisation.
	nested       *vi.Result
	nestedTarget vi.Target
}

// readFitFile reads a fit file and rebuilds its design and approximation
// (for RVB at the start, the start again), until ctx ends.
func readFitFile(ctx context.Context, path string) (*savedFit, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read fit file: %v", pathError(err))
	}
	name := filepath.Base(path)
	var doc document
	written := decodeWritten(raw, &doc)
	if !written {
		if err := json.Unmarshal(raw, &doc); err != nil {
			var se *json.SyntaxError
			if errors.As(err, &se) {
				return nil, fmt.Errorf("%s: not a fit file: invalid JSON at byte %d: %v", name, se.Offset, err)
			}
			return nil, fmt.Errorf("%s: not a fit file: %v", name, err)
		}
	}
	if doc.SchemaVersion == 0 || doc.State == nil || doc.Training == nil {
		return nil, fmt.Errorf("%s: not a fit file written by 'glmmfit fit -out' (no schema_version, state or training_data)", name)
	}
	if doc.SchemaVersion > schemaVersion {
		return nil, fmt.Errorf("%s: fit file schema version %d is newer than this glmmfit's (%d)", name, doc.SchemaVersion, schemaVersion)
	}
	if doc.SchemaVersion < schemaVersion {
		return nil, fmt.Errorf("%s: fit file schema version %d was written by an older glmmfit, whose saved state this one does not read (version %d); refit with 'glmmfit fit -out'", name, doc.SchemaVersion, schemaVersion)
	}
	if !written && doc.Checksums != nil {
		sums, err := sectionSums(&doc)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", name, err)
		}
		var edited []string
		for sec, want := range sums {
			if doc.Checksums[sec] != want {
				edited = append(edited, sec)
			}
		}
		if len(edited) > 0 {
			slices.Sort(edited)
			return nil, fmt.Errorf("%s: the file was edited after glmmfit wrote it: its %s differ from what was written (checksums), so it no longer describes the fit; refit with 'glmmfit fit -out', or restore the file", name, strings.Join(edited, ", "))
		}
	}
	in, err := doc.Training.input(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	spec := doc.Options.modelSpec
	f, err := parseFormula(spec.Formula)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	d, err := buildDesign(&spec, f, in, nil, false)
	if err != nil {
		return nil, fmt.Errorf("%s: rebuilding the model: %v", name, err)
	}
	st := doc.State
	var n, r, g int
	nm := d.Nested()
	if nm != nil {
		// Not compacted: predict's check of extrapolation reads the
		// design's X, which the nested model does not show.
		n, r, g = nm.Dims()
	} else {
		d.Compact()
		n, r, g = d.Model().Dims()
	}
	if st.N != n || st.R != r || st.G != g || !slices.Equal(d.FixedNames(), doc.Data.FixedNames) {
		return nil, fmt.Errorf("%s: the rebuilt model (n=%d, r=%d, G=%d) does not match the saved state (n=%d, r=%d, G=%d)", name, n, r, g, st.N, st.R, st.G)
	}
	if nm != nil {
		res, target, err := st.LoadNested(ctx, nm)
		if err != nil {
			return nil, fmt.Errorf("%s: %s", name, withoutPackage(err))
		}
		return &savedFit{doc: &doc, design: d, nested: res, nestedTarget: target}, nil
	}
	m := d.Model()
	// The library's loader checks the rebuilt model's fingerprint against
	// the fitted one's and rebuilds RVB's reparametrisation.
	res, target, err := st.Load(ctx, m)
	if err != nil {
		// Without the library's package name, which means nothing to a
		// user of the command.
		return nil, fmt.Errorf("%s: %s", name, withoutPackage(err))
	}
	a := &approx{model: m, res: res, target: target}
	if st.Correction != nil {
		// Load has checked its size.
		if c, err := st.Correction.Importance(g); err == nil && trusted(c) {
			a.corr = c
		}
	}
	return &savedFit{doc: &doc, design: d, approx: a}, nil
}

// checkedSections are the sections of a fit file whose change would make
// predictions or summaries other than the fit's: the file keeps the
// SHA-256 of each one's JSON (json.Marshal's bytes).
var checkedSections = map[string]bool{
	"options": true, "data": true, "status": true, "lower_bound": true, "prior": true, "fixed": true,
	"re_sd": true, "re_cor": true, "omega": true, "random_effects": true, "state": true, "training_data": true,
}

// sectionValue returns the value of the checked section name of doc.
func sectionValue(doc *document, name string) any {
	switch name {
	case "options":
		return doc.Options
	case "data":
		return doc.Data
	case "status":
		return doc.Status
	case "lower_bound":
		return doc.LowerBound
	case "prior":
		return doc.Prior
	case "fixed":
		return doc.Fixed
	case "re_sd":
		return doc.RESD
	case "re_cor":
		return doc.RECor
	case "omega":
		return doc.Omega
	case "random_effects":
		return doc.RandomEffects
	case "state":
		return doc.State
	case "training_data":
		return doc.Training
	}
	panic("glmmfit: no section " + name)
}

// sectionSums returns the SHA-256, in hex, of the JSON of each checked
// section of doc: of json.Marshal's bytes, which encodeField streams into
// the hash as writeFitFile streams them into the file, never holding a
// section's text (on 10^5 subjects the state, the random effects and the
// training data are each tens of MB).
func sectionSums(doc *document) (map[string]string, error) {
	// The sections are hashed concurrently.
	type sum struct {
		name, hex string
		err       error
	}
	out := make(chan sum, len(checkedSections))
	for name := range checkedSections {
		v := sectionValue(doc, name)
		go func() {
			h := sha256.New()
			w := bufio.NewWriterSize(h, 1<<16)
			err := encodeField(w, name, v)
			if err == nil {
				err = w.Flush()
			}
			out <- sum{name, hex.EncodeToString(h.Sum(nil)), err}
		}()
	}
	sums := make(map[string]string, len(checkedSections))
	var firstErr error
	for range checkedSections {
		r := <-out
		if r.err != nil && firstErr == nil {
			firstErr = fmt.Errorf("checksum of %s: %v", r.name, r.err)
		}
		sums[r.name] = r.hex
	}
	if firstErr != nil {
		return nil, firstErr
	}
	return sums, nil
}
