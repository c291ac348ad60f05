// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/parallel"
	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

// realFit is a fit of a benchmark file as a user would run it.
type realFit struct {
	file, formula, family string
	ref                   map[string]string
	method                string // -method; "" for auto
	wantMethod            string
	draws                 int // -draws; 0 for the default
}

var realFits = []realFit{
	{file: datasets.EpilepsyFile, formula: "y ~ lbase*trt + lage + V4 + (1 + V4 | subject)", family: "poisson", wantMethod: "rvb1"},
	{file: datasets.EpilepsyFile, formula: "y ~ lbase*trt + lage + V4 + (1 + V4 | subject)", family: "poisson", method: "gva", wantMethod: "gva"},
	{file: datasets.ToenailFile, formula: "outcome ~ treatment*time + (1 | patientID)", ref: map[string]string{"outcome": "none or mild"}, wantMethod: "rvb1", draws: 1000},
	{file: datasets.ToenailFile, formula: "outcome ~ treatment*time + (1 | patientID)", ref: map[string]string{"outcome": "none or mild"}, method: "rvb2", wantMethod: "rvb2", draws: 1000},
	{file: datasets.CBPPFile, formula: "cbind(incidence, size - incidence) ~ factor(period) + (1 | herd)", wantMethod: "rvb1"},
}

// TestRealData fits the benchmark files with glmmfit and checks the
// summary, the JSON document, the trace, the plot, and that the estimates
// are exactly those of the same fit made with the library.
func TestRealData(t *testing.T) {
	for _, rf := range realFits {
		name := strings.TrimSuffix(rf.file, ".csv") + "/" + rf.wantMethod
		t.Run(name, func(t *testing.T) {
			dir := dataDir(t, rf.file)
			path := filepath.Join(dir, rf.file)
			tmp := t.TempDir()
			args := []string{"fit", "-data", path, "-formula", rf.formula, "-seed", "7", "-threads", "2",
				"-out", "fit.json", "-trace", "trace.csv", "-plot", "plot.png"}
			if rf.family != "" {
				args = append(args, "-family", rf.family)
			}
			if rf.method != "" {
				args = append(args, "-method", rf.method)
			}
			if rf.draws != 0 {
				args = append(args, "-draws", itoa(rf.draws))
			}
			for k, v := range rf.ref {
				args = append(args, "-ref", k+"="+v)
			}
			r := glmmfit(t, tmp, "", nil, args...)
			// toenail's skewed posterior earns the Pareto warning
			// (TestParetoKWarns); nothing else may be said.
			r.stderr = dropDiagnosticWarnings(r.stderr)
			mustSucceed(t, r, args...)
			b, err := os.ReadFile(filepath.Join(tmp, "fit.json"))
			if err != nil {
				t.Fatal(err)
			}
			doc := readDoc(t, b)
			checkDocument(t, doc, rf.wantMethod)
			checkText(t, r.stdout, doc)
			checkTrace(t, filepath.Join(tmp, "trace.csv"), doc)
			checkPNG(t, filepath.Join(tmp, "plot.png"))
			checkLibrary(t, path, rf, doc)
		})
	}
}

// checkDocument checks the documented fields of a fit file.
func checkDocument(t *testing.T, doc *document, method string) {
	t.Helper()
	if doc.SchemaVersion != schemaVersion || doc.Software.Name != "glmmfit" || doc.Software.Version != version {
		t.Errorf("schema_version %d, software %+v", doc.SchemaVersion, doc.Software)
	}
	if doc.Status != "converged" || doc.Iterations <= 0 {
		t.Errorf("status %q after %d iterations", doc.Status, doc.Iterations)
	}
	if doc.Options.Method != method || doc.Options.Seed != 7 || doc.Options.Optimizer != "snngm" || doc.Options.Formula == "" {
		t.Errorf("options %+v", doc.Options)
	}
	lb := doc.LowerBound
	if v := float64(lb.Value); math.IsNaN(v) || v >= 0 || !(float64(lb.MCSE) > 0) || lb.Constants != constantsNote {
		t.Errorf("lower bound %+v", lb)
	}
	if len(doc.Fixed) != len(doc.Data.FixedNames) || len(doc.RESD) != len(doc.Data.RandomNames) {
		t.Errorf("%d fixed effects for %d names, %d SDs for %d random effects", len(doc.Fixed), len(doc.Data.FixedNames), len(doc.RESD), len(doc.Data.RandomNames))
	}
	r := len(doc.Data.RandomNames)
	if len(doc.RECor) != r*(r-1)/2 || len(doc.Omega) != r*(r+1)/2 {
		t.Errorf("%d correlations and %d omegas for r = %d", len(doc.RECor), len(doc.Omega), r)
	}
	for _, m := range slices.Concat(doc.Fixed, doc.RESD, doc.RECor) {
		if !(m.Q025 <= m.Estimate && m.Estimate <= m.Q975 && m.EstError > 0) {
			t.Errorf("%s: estimate %v, error %v, interval [%v, %v]", m.Name, m.Estimate, m.EstError, m.Q025, m.Q975)
		}
	}
	// The fixed effects' marginals are exact; the sds and correlations
	// come from draws, with Monte Carlo errors well below their spread.
	for _, m := range doc.Fixed {
		if m.MCSE != nil {
			t.Errorf("%s: Monte Carlo errors %+v for an exact marginal", m.Name, *m.MCSE)
		}
	}
	for _, m := range slices.Concat(doc.RESD, doc.RECor) {
		if e := m.MCSE; e == nil || !(e.Estimate > 0 && e.Estimate < 0.1*m.EstError && e.Q975 > 0) {
			t.Errorf("%s: Monte Carlo errors %+v for est. error %v", m.Name, e, m.EstError)
		}
	}
	re := doc.RandomEffects
	if len(re.Subjects) != doc.Data.Subjects || re.Group != doc.Data.Group {
		t.Errorf("%d subjects' random effects for %d subjects", len(re.Subjects), doc.Data.Subjects)
	}
	for _, s := range re.Subjects {
		if len(s.Mean) != r || len(s.SD) != r || !(s.SD[0] > 0) || s.Level == "" {
			t.Fatalf("random effects of subject %+v", s)
		}
	}
	if len(doc.Trace) == 0 || doc.Trace[len(doc.Trace)-1].Iter != doc.Iterations {
		t.Errorf("trace of %d windows, last not at iteration %d", len(doc.Trace), doc.Iterations)
	}
	if !(doc.Timings.FitSeconds > 0) || doc.Timings.TotalSeconds < doc.Timings.FitSeconds {
		t.Errorf("timing %+v", doc.Timings)
	}
	if doc.State == nil || doc.State.Method != method || doc.Training == nil {
		t.Errorf("fit file without state or training data")
	}
}

// checkText checks that the text summary holds the call, the status, the
// bound and a row per effect with the numbers of the document.
func checkText(t *testing.T, out string, doc *document) {
	t.Helper()
	for _, want := range []string{"Formula: " + doc.Options.Formula, "Family: " + doc.Options.Family,
		"Method: " + doc.Options.Method, "Step rule: snngm", "converged after", "ELBO", "all constants included",
		"Random effects:", "Fixed effects:"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q", want)
		}
	}
	_, fixed, _ := strings.Cut(out, "Fixed effects:\n")
	fixed, _, _ = strings.Cut(fixed, "\n\n") // the table, not the correlations after it
	rows := make(map[string][]string)
	for _, line := range strings.Split(fixed, "\n") {
		if f := strings.Fields(line); len(f) == 5 {
			rows[f[0]] = f[1:]
		}
	}
	for _, m := range doc.Fixed {
		want := []string{num(m.Estimate), num(m.EstError), num(m.Q025), num(m.Q975)}
		if !slices.Equal(rows[m.Name], want) {
			t.Errorf("summary row of %s is %q, want %q", m.Name, rows[m.Name], want)
		}
	}
}

// checkTrace checks the -trace CSV against the document's trace.
func checkTrace(t *testing.T, path string, doc *document) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var lines []string
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if len(lines) == 0 || lines[0] != "iter,lower_bound,gain,step_norm,elapsed_seconds" {
		t.Fatalf("trace header %q", lines)
	}
	if len(lines)-1 != len(doc.Trace) {
		t.Fatalf("trace has %d rows, the document %d windows", len(lines)-1, len(doc.Trace))
	}
	last := strings.Split(lines[len(lines)-1], ",")
	tp := doc.Trace[len(doc.Trace)-1]
	if len(last) != 5 || last[1] != csvFloat(float64(tp.LowerBound)) || last[0] != itoa(tp.Iter) {
		t.Errorf("last trace row %q, want iteration %d and bound %v", last, tp.Iter, tp.LowerBound)
	}
}

// checkPNG checks that the plot decodes as a PNG of the documented size.
func checkPNG(t *testing.T, path string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("plot does not decode as PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() != 1152 || b.Dy() != 864 {
		t.Errorf("plot is %v, want 1152×864 (12×9 in at 96 dpi)", b)
	}
}

// checkLibrary fits the same model with the library, as an analysis
// program would, and checks that glmmfit reports exactly its estimates.
func checkLibrary(t *testing.T, path string, rf realFit, doc *document) {
	t.Helper()
	fr, err := datasets.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := formula.Parse(rf.formula)
	if err != nil {
		t.Fatal(err)
	}
	var fam glmm.Family
	if rf.family != "" {
		if fam, err = glmm.ParseFamily(rf.family); err != nil {
			t.Fatal(err)
		}
	}
	d, err := formula.Build(f, fr, formula.Options{Family: fam, Reference: rf.ref, Prior: formula.PriorAuto})
	if err != nil {
		t.Fatal(err)
	}
	m := d.Model()
	set := vi.Settings{Rule: vi.Snngm{}, Seed: 7, Workers: 2, MaxIter: 20000, Tol: vi.DefaultTol}
	draws := defaultDraws
	if rf.draws != 0 {
		draws = rf.draws
	}
	var fixed []posterior.Marginal
	switch rf.wantMethod {
	case "gva":
		res, err := vi.Fit(context.Background(), m, set)
		if err != nil {
			t.Fatal(err)
		}
		s, err := posterior.Summarize(res, m, draws, 7)
		if err != nil {
			t.Fatal(err)
		}
		fixed = userFixed(d, res)
		for k, sd := range s.SD {
			if float64(doc.RESD[k].Estimate) != sd.Mean || float64(doc.RESD[k].Q975) != sd.Q975 {
				t.Errorf("%s: glmmfit %v, library %v", sd.Name, doc.RESD[k].Estimate, sd.Mean)
			}
		}
	default:
		// glmmfit's RVB: expanded at the start (-expansion start).
		rm := rvb.RVB1
		if rf.wantMethod == "rvb2" {
			rm = rvb.RVB2
		}
		pool := parallel.NewPool(context.Background(), 0)
		tg, err := rvb.NewAtStart(pool, m, rm)
		pool.Close()
		if err != nil {
			t.Fatal(err)
		}
		set.Method = vi.BlockDiag
		res, err := vi.Fit(context.Background(), tg, set)
		if err != nil {
			t.Fatal(err)
		}
		s, err := posterior.SummarizeRVB(context.Background(), res, tg, draws, 7)
		if err != nil {
			t.Fatal(err)
		}
		fixed = userFixed(d, res)
		_, r, _ := m.Dims()
		for i, se := range doc.RandomEffects.Subjects {
			for a := range r {
				if float64(se.Mean[a]) != s.LocalMean[i*r+a] || float64(se.SD[a]) != s.LocalSD[i*r+a] {
					t.Fatalf("random effect %d of subject %s: glmmfit %v ± %v, library %v ± %v", a, se.Level, se.Mean[a], se.SD[a], s.LocalMean[i*r+a], s.LocalSD[i*r+a])
				}
			}
		}
	}
	if len(fixed) != len(doc.Fixed) {
		t.Fatalf("%d fixed effects, library %d", len(doc.Fixed), len(fixed))
	}
	for k, lib := range fixed {
		got := doc.Fixed[k]
		if got.Name != lib.Name || float64(got.Estimate) != lib.Mean || float64(got.EstError) != lib.SD {
			t.Errorf("fixed effect %d: glmmfit %s %v ± %v, library %s %v ± %v", k, got.Name, got.Estimate, got.EstError, lib.Name, lib.Mean, lib.SD)
		}
	}
}

// userFixed returns the fixed effects of a library fit of a PriorAuto
// design on the data's scale, through the design's FixedMap.
func userFixed(d *formula.Design, res *vi.Result) []posterior.Marginal {
	fm := d.FixedMap()
	names := d.Model().FixedNames()
	p := len(names)
	nr := res.N * res.R
	mean := make([]float64, p)
	fm.Apply(res.Mu[nr:nr+p], mean)
	cov, u := fm.ScaledCov(res.GlobalCov().SliceSym(0, p))
	out := make([]posterior.Marginal, p)
	for j := range p {
		out[j] = posterior.Marginal{Name: names[j], Mean: mean[j], SD: u[j] * math.Sqrt(cov.At(j, j))}
	}
	return out
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestDatasetFlag fits a benchmark data set with its derived columns and
// the paper's formula.
func TestDatasetFlag(t *testing.T) {
	dir := dataDir(t, datasets.EpilepsyFile)
	r := glmmfit(t, "", "", nil, "fit", "-dataset", "epilepsy", "-data-dir", dir, "-format", "json", "-method", "gva")
	mustSucceed(t, r, "fit -dataset epilepsy")
	doc := readDoc(t, []byte(r.stdout))
	want := []string{"(Intercept)", "Base", "Trt", "Age", "Visit", "Base:Trt"}
	if !slices.Equal(doc.Data.FixedNames, want) || doc.Options.Family != "poisson" || doc.Data.Subjects != 59 {
		t.Errorf("dataset epilepsy: fixed %v, family %s, %d subjects", doc.Data.FixedNames, doc.Options.Family, doc.Data.Subjects)
	}
	if doc.State != nil || doc.Training != nil {
		t.Errorf("-format json output holds the fit state; only -out files should")
	}
}

// TestLibraryDefaultIsGlmmfitDefault checks that the library's default
// path, posterior.Fit with zero settings on a model built as glmmfit
// builds it, is glmmfit fit's default run bit for bit: the same method
// (RVB1 at the start for epilepsy's Poisson random slope), the same bound
// and iterations, and the same fixed effects and omega.
func TestLibraryDefaultIsGlmmfitDefault(t *testing.T) {
	dir := dataDir(t, "epilepsy.csv")
	const fml = "y ~ lbase*trt + lage + V4 + (1 + V4 | subject)"
	path := filepath.Join(dir, "epilepsy.csv")
	r := glmmfit(t, "", "", nil, "fit", "-data", path, "-formula", fml, "-family", "poisson", "-format", "json")
	mustSucceed(t, r, "fit epilepsy by default")
	doc := readDoc(t, []byte(r.stdout))

	d, res, target := libraryFit(t, path, fml)
	m := d.Model()
	method, _, _ := posterior.Choose(m)
	if doc.Options.Method != method || method != "rvb1" {
		t.Errorf("glmmfit fitted %s, the library chose %s; want rvb1", doc.Options.Method, method)
	}
	if _, ok := target.(*rvb.Target); !ok {
		t.Errorf("the library fitted a %T", target)
	}
	if float64(doc.LowerBound.Value) != res.LowerBound || doc.Iterations != res.Iterations {
		t.Errorf("glmmfit: bound %v after %d iterations; library %v after %d", doc.LowerBound.Value, doc.Iterations, res.LowerBound, res.Iterations)
	}
	for k, lib := range userFixed(d, res) {
		if got := doc.Fixed[k]; float64(got.Estimate) != lib.Mean || float64(got.EstError) != lib.SD {
			t.Errorf("%s: glmmfit %v ± %v, library %v ± %v", lib.Name, got.Estimate, got.EstError, lib.Mean, lib.SD)
		}
	}
	n, r2, _ := m.Dims()
	off := n*r2 + m.P()
	cov := res.GlobalCov()
	for k, om := range doc.Omega {
		if float64(om.Estimate) != res.Mu[off+k] || float64(om.EstError) != math.Sqrt(cov.At(m.P()+k, m.P()+k)) {
			t.Errorf("omega %d: glmmfit %v ± %v, library %v", k, om.Estimate, om.EstError, res.Mu[off+k])
		}
	}
}

// libraryFit fits the Poisson model fml to the CSV file at path as a
// library user would to get glmmfit fit's default: formula.Build on
// glmmfit's default prior, posterior.Fit with zero settings.
func libraryFit(t *testing.T, path, fml string) (*formula.Design, *vi.Result, vi.Target) {
	t.Helper()
	fr, err := datasets.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := formula.Parse(fml)
	if err != nil {
		t.Fatal(err)
	}
	d, err := formula.Build(f, fr, formula.Options{Family: glmm.Poisson, Prior: formula.PriorAuto})
	if err != nil {
		t.Fatal(err)
	}
	res, target, err := posterior.Fit(context.Background(), d.Model(), vi.Settings{})
	if err != nil {
		t.Fatal(err)
	}
	return d, res, target
}

// TestLibraryPredictIsGlmmfitPredict: predictions made with the library
// (formula.Build, posterior.Fit, the design's NewData, posterior.Predict,
// zero settings) are glmmfit fit -out and glmmfit predict's, bit for bit,
// for rows of known subjects and of a new one.
func TestLibraryPredictIsGlmmfitPredict(t *testing.T) {
	dir := dataDir(t, "epilepsy.csv")
	const fml = "y ~ lbase*trt + lage + V4 + (1 + V4 | subject)"
	path := filepath.Join(dir, "epilepsy.csv")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// Twelve rows: the first eight as they are, four of them again as a
	// subject the fit has not seen.
	lines := strings.SplitAfter(string(raw), "\n")
	header := strings.Split(strings.TrimSpace(lines[0]), ",")
	col := slices.Index(header, "subject")
	newCSV := lines[0]
	for k, l := range lines[1:13] {
		if k >= 8 {
			f := strings.Split(strings.TrimRight(l, "\n"), ",")
			f[col] = "9999"
			l = strings.Join(f, ",") + "\n"
		}
		newCSV += l
	}
	tmp := t.TempDir()
	writeFile(t, tmp, "new.csv", newCSV)
	mustSucceed(t, glmmfit(t, tmp, "", nil, "fit", "-data", path, "-formula", fml, "-family", "poisson", "-out", "fit.json", "-quiet"), "fit -out")
	r := glmmfit(t, tmp, "", nil, "predict", "-fit", "fit.json", "-data", "new.csv")
	mustSucceed(t, r, "predict")
	rows := strings.Split(strings.TrimSpace(r.stdout), "\n")[1:]

	d, res, target := libraryFit(t, path, fml)
	m := d.Model()
	ctx := context.Background()
	nf, err := datasets.ReadCSV(strings.NewReader(newCSV))
	if err != nil {
		t.Fatal(err)
	}
	X, Z, group, known, err := d.NewData(nf)
	if err != nil {
		t.Fatal(err)
	}
	off, err := d.NewOffset(nf)
	if err != nil {
		t.Fatal(err)
	}
	rc, rs := d.ResponseScale()
	pr, err := posterior.Predict(ctx, res, target, m, posterior.NewData{X: X, Z: Z, Group: group, Known: known, Offset: off, ResponseCenter: rc, ResponseScale: rs}, posterior.PredictSettings{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 12 || len(pr.Eta) != 12 {
		t.Fatalf("glmmfit predicted %d rows, the library %d", len(rows), len(pr.Eta))
	}
	for k, row := range rows {
		f := strings.Split(row, ",")
		lib := []float64{pr.Eta[k], pr.EtaSD[k], pr.EtaLo[k], pr.EtaHi[k], pr.Mean[k], pr.MeanSD[k], pr.MeanLo[k], pr.MeanHi[k]}
		for j, v := range lib {
			got, err := strconv.ParseFloat(f[3+j], 64)
			if err != nil || got != v {
				t.Errorf("row %d (%s), column %d: glmmfit %s, library %v", k+1, f[2], j+3, f[3+j], v)
			}
		}
		if want := k < 8; known[k] != want || (f[2] == "conditional") != want {
			t.Errorf("row %d: known %v, glmmfit says %s", k+1, known[k], f[2])
		}
	}
}
