// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/internal/atomicfile"
)

// simulateOptions are the flags of 'glmmfit simulate'.
type simulateOptions struct {
	spec  datasets.SimSpec
	beta  string
	reSD  string
	reCov string
	out   string
	truth string
}

func parseSimulateFlags(e *env, args []string) (*simulateOptions, error) {
	o := &simulateOptions{}
	fs := o.flagSet()
	if err := parseFlags(e, fs, simulateUsage, args); err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) error { return usageErrorf("simulate", format, args...) }
	if err := conflict(fs, "re-sd", "re-cov"); err != nil {
		return nil, err
	}
	if o.spec.Family == "" {
		return nil, bad("-family is missing (poisson, bernoulli, binomial, gaussian or negbinomial)")
	}
	fam, err := glmm.ParseFamily(o.spec.Family)
	if err != nil {
		return nil, bad("unknown family %q (want poisson, bernoulli, binomial, gaussian or negbinomial)", o.spec.Family)
	}
	o.spec.Family = fam.String()
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	for _, name := range []string{"sigma", "phi"} {
		if set[name] && fam.DispersionName() != name {
			return nil, bad("-%s is not a parameter of the %s family", name, fam)
		}
	}
	if fam.HasDispersion() {
		if !(o.spec.Dispersion > 0) || math.IsInf(o.spec.Dispersion, 0) {
			return nil, bad("-%s %v: the %s family needs a positive -%s (%s)", fam.DispersionName(), o.spec.Dispersion, fam, fam.DispersionName(), dispersionNotes[fam.String()])
		}
	}
	if o.spec.Subjects <= 0 || o.spec.Obs <= 0 {
		return nil, bad("-subjects and -obs must be positive")
	}
	if o.spec.Beta, err = parseFloats(o.beta); err != nil || len(o.spec.Beta) == 0 {
		return nil, bad("-beta %q: want a comma-separated list of numbers, intercept first", o.beta)
	}
	switch {
	case o.reSD != "":
		sd, err := parseFloats(o.reSD)
		if err != nil || len(sd) == 0 {
			return nil, bad("-re-sd %q: want a comma-separated list of standard deviations", o.reSD)
		}
		o.spec.RECov = make([][]float64, len(sd))
		for k, s := range sd {
			if s < 0 {
				return nil, bad("-re-sd %q: a standard deviation cannot be negative", o.reSD)
			}
			o.spec.RECov[k] = make([]float64, len(sd))
			o.spec.RECov[k][k] = s * s
		}
	case o.reCov != "":
		for _, row := range strings.Split(o.reCov, ";") {
			v, err := parseFloats(row)
			if err != nil || len(v) == 0 {
				return nil, bad("-re-cov %q: want rows of comma-separated numbers separated by ';'", o.reCov)
			}
			o.spec.RECov = append(o.spec.RECov, v)
		}
	default:
		return nil, bad("give the random effects' -re-sd (standard deviations) or -re-cov (covariance)")
	}
	if err := checkFiles(nil, []fileFlag{{"-out", o.out}, {"-truth", o.truth}}); err != nil {
		return nil, err
	}
	return o, nil
}

// flagSet returns the flags of 'glmmfit simulate', bound to o.
func (o *simulateOptions) flagSet() *flag.FlagSet {
	fs := newFlagSet("simulate")
	fs.StringVar(&o.spec.Family, "family", "", "")
	fs.IntVar(&o.spec.Subjects, "subjects", 0, "")
	fs.IntVar(&o.spec.Obs, "obs", 0, "")
	fs.IntVar(&o.spec.ObsMax, "obs-max", 0, "")
	fs.StringVar(&o.beta, "beta", "", "")
	fs.StringVar(&o.reSD, "re-sd", "", "")
	fs.StringVar(&o.reCov, "re-cov", "", "")
	fs.IntVar(&o.spec.Trials, "trials", 0, "")
	fs.Float64Var(&o.spec.Dispersion, "sigma", 0, "")
	fs.Float64Var(&o.spec.Dispersion, "phi", 0, "")
	fs.Uint64Var(&o.spec.Seed, "seed", 1, "")
	fs.StringVar(&o.out, "out", "", "")
	fs.StringVar(&o.truth, "truth", "", "")
	return fs
}

// parseFloats parses a comma-separated list of numbers.
func parseFloats(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// truthFile is the JSON written by -truth.
type truthFile struct {
	Family  string      `json:"family"`
	Formula string      `json:"formula"`
	Beta    []float64   `json:"beta"`
	RECov   [][]float64 `json:"re_cov"`
	// Dispersion is sigma (gaussian) or phi (negbinomial).
	Dispersion float64        `json:"dispersion,omitempty"`
	Seed       uint64         `json:"seed"`
	Subjects   []truthSubject `json:"subjects"`
}

type truthSubject struct {
	ID string    `json:"id"`
	B  []float64 `json:"b"`
}

func runSimulate(e *env, args []string) error {
	o, err := parseSimulateFlags(e, args)
	if err != nil {
		return err
	}
	fr, truth, err := datasets.Simulate(o.spec)
	if err != nil {
		return usageErrorf("simulate", "%v", err)
	}
	var w io.Writer = e.stdout
	var f *atomicfile.File
	if o.out != "" {
		if f, err = atomicfile.Create(o.out); err != nil {
			return fmt.Errorf("-out: %v", pathError(err))
		}
		defer f.Abort()
		w = f
	}
	bw := bufio.NewWriter(w)
	err = datasets.WriteCSV(bw, fr)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil && f != nil {
		err = f.Commit()
	}
	if err != nil {
		return fmt.Errorf("writing the data: %v", err)
	}
	if o.truth != "" {
		if err := writeTruth(o.truth, o.spec, fr, truth); err != nil {
			return err
		}
	}
	note := fmt.Sprintf("%d rows of %d subjects from the %s model %s", fr.NumRows(), o.spec.Subjects, o.spec.Family, truth.Formula)
	if o.out != "" {
		fmt.Fprintf(e.stdout, "wrote %s: %s\n", o.out, note)
	} else {
		fmt.Fprintf(e.stderr, "glmmfit: simulated %s\n", note)
	}
	return nil
}

func writeTruth(path string, spec datasets.SimSpec, fr *datasets.Frame, truth *datasets.Truth) error {
	tf := truthFile{Family: spec.Family, Formula: truth.Formula, Beta: truth.Beta, RECov: truth.RECov, Dispersion: spec.Dispersion, Seed: spec.Seed}
	ids, _ := fr.Column("id")
	levels := ids.Levels() // the order of truth.B
	for i, b := range truth.B {
		tf.Subjects = append(tf.Subjects, truthSubject{ID: levels[i], B: b})
	}
	buf, err := json.MarshalIndent(tf, "", "  ")
	if err != nil {
		return fmt.Errorf("-truth: %v", err)
	}
	if err := atomicfile.WriteFile(path, append(buf, '\n')); err != nil {
		return fmt.Errorf("-truth: %v", pathError(err))
	}
	return nil
}
