// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package posterior_test

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/sparsevi/sparsevi/posterior"
	"github.com/sparsevi/sparsevi/vi"
)

// TestPredictCorrected: on tinyPoisson's six subjects, where q's sds are
// 17-20% too small, predictions drawn from an importance correction
// (PredictSettings.Correction) give each subject's linear predictor
// beta + b_i, and a new subject's, a posterior mean within 0.1 posterior
// sd and an sd within 10% of nested numerical integration's, where q's
// predictions miss some sd by more; they are the same for 1 and 2
// workers, and after a round trip of the correction through a saved fit.
func TestPredictCorrected(t *testing.T) {
	m, counts := tinyPoisson(t, 1, 1)
	ctx := context.Background()
	res, err := vi.Fit(ctx, m, vi.Settings{Seed: 3, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	imp, err := posterior.ImportanceGlobal(ctx, res, m, posterior.ImportanceSettings{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	n := len(counts)
	ones := make([]float64, n+1)
	group, known := make([]int, n+1), make([]bool, n+1)
	for i := range ones {
		ones[i] = 1
		if i < n {
			group[i], known[i] = i, true
		}
	}
	nd := posterior.NewData{X: mat.NewDense(n+1, 1, ones), Z: mat.NewDense(n+1, 1, ones), Group: group, Known: known}

	const priorSD = 2
	logPrior := func(x float64) float64 {
		return -0.5*math.Log(2*math.Pi*priorSD*priorSD) - 0.5*x*x/(priorSD*priorSD)
	}
	cov := res.GlobalCov()
	_, _, em, es := bruteLocalMoments(counts, res.Mu[n:], math.Sqrt(cov.At(0, 0)), math.Sqrt(cov.At(1, 1)), 60, 0.05, logPrior)

	predict := func(c *posterior.GlobalImportance, workers int) *posterior.Predictions {
		pr, err := posterior.Predict(ctx, res, m, m, nd, posterior.PredictSettings{Draws: 4000, Seed: 5, Correction: c, Workers: workers})
		if err != nil {
			t.Fatal(err)
		}
		return pr
	}
	// worst returns the largest distance of a mean from the truth in
	// posterior sds, and of an sd in relative terms.
	worst := func(name string, pr *posterior.Predictions) (mean, sd float64) {
		for i := range n + 1 {
			t.Logf("%s: row %d: %.4f ± %.4f, brute force %.4f ± %.4f", name, i+1, pr.Eta[i], pr.EtaSD[i], em[i], es[i])
			mean = max(mean, math.Abs(pr.Eta[i]-em[i])/es[i])
			sd = max(sd, math.Abs(pr.EtaSD[i]/es[i]-1))
		}
		return mean, sd
	}
	corr := predict(imp, 2)
	if m, s := worst("corrected", corr); m > 0.1 || s > 0.1 {
		t.Errorf("corrected predictions: means up to %.3f sds and sds up to %.1f%% off", m, 100*s)
	}
	if _, s := worst("q", predict(nil, 2)); s < 0.1 {
		t.Errorf("q's predictions' sds are within %.1f%%: the test cannot tell", 100*s)
	}
	if !reflect.DeepEqual(corr, predict(imp, 1)) {
		t.Error("corrected predictions differ between 1 and 2 workers")
	}

	// A saved fit keeps the correction.
	s, err := posterior.NewSavedFit(res, m)
	if err != nil {
		t.Fatal(err)
	}
	s.SetCorrection(imp)
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(s); err != nil {
		t.Fatal(err)
	}
	var back posterior.SavedFit
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if _, _, err := back.Load(ctx, m); err != nil {
		t.Fatal(err)
	}
	loaded, err := back.Correction.Importance(2)
	if err != nil {
		t.Fatal(err)
	}
	if loaded.K != imp.K || !reflect.DeepEqual(corr, predict(loaded, 2)) {
		t.Errorf("after saving, k %v (was %v) or the predictions differ", loaded.K, imp.K)
	}
}
