// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// withoutTimings decodes a JSON document without its timings (and the
// trace's and the correction's), which alone may differ between runs.
func withoutTimings(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v in %.200s", err, b)
	}
	delete(doc, "timings")
	if c, ok := doc["correction"].(map[string]any); ok {
		delete(c, "seconds")
	}
	trace, _ := doc["trace"].([]any)
	for _, p := range trace {
		delete(p.(map[string]any), "elapsed_seconds")
	}
	return doc
}

// withoutData drops the data's source and name from a JSON document,
// which name the files given.
func withoutData(doc map[string]any) map[string]any {
	if d, ok := doc["data"].(map[string]any); ok {
		delete(d, "source")
		delete(d, "name")
	}
	return doc
}

// TestCheckpointResume stops glmmfit at an iteration limit after a
// checkpoint, resumes it, and asks for the JSON of the fit that was not
// stopped, for the built-in example and for a nested model (RVB1 on local
// blocks of variable size); a checkpoint of other options is refused,
// naming -resume.
func TestCheckpointResume(t *testing.T) {
	nested, err := filepath.Abs(filepath.Join("..", "..", "benchmarks", "nested", "nested_sim.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"example", []string{"-example", "-correct", "never"}},
		{"nested", []string{"-data", nested, "-formula", "y ~ x + (1 | school/class)", "-family", "bernoulli"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ck := filepath.Join(dir, "fit.ckpt")
			base := append([]string{"fit", "-format", "json", "-quiet"}, c.args...)
			whole := glmmfit(t, dir, "", nil, base...)
			mustSucceed(t, whole, base...)
			want := withoutTimings(t, []byte(whole.stdout))
			if it := want["iterations"].(float64); it < 400 {
				t.Fatalf("the fit converges after %v iterations, too few to stop it half way", it)
			}

			stop := append(append([]string(nil), base...), "-max-iter", "300", "-checkpoint", ck, "-checkpoint-every", "100")
			if r := glmmfit(t, dir, "", nil, stop...); r.code != exitLimit {
				t.Fatalf("glmmfit %s: exit %d, want %d; stderr %q", strings.Join(stop, " "), r.code, exitLimit, r.stderr)
			}
			if _, err := os.Stat(ck); err != nil {
				t.Fatal(err)
			}
			resume := append(append([]string(nil), base...), "-resume", ck)
			r := glmmfit(t, dir, "", nil, resume...)
			mustSucceed(t, r, resume...)
			if got := withoutTimings(t, []byte(r.stdout)); !reflect.DeepEqual(got, want) {
				t.Errorf("the resumed fit differs from the fit that was not stopped")
			}

			other := append(append([]string(nil), resume...), "-seed", "9")
			r = glmmfit(t, dir, "", nil, other...)
			if r.code != exitFail || !strings.Contains(r.stderr, "-resume "+ck) || !strings.Contains(r.stderr, "seed") {
				t.Errorf("glmmfit %s: exit %d, stderr %q; want an error naming -resume and the seed", strings.Join(other, " "), r.code, r.stderr)
			}
		})
	}
}
