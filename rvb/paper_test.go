package rvb

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/paper"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/vi"
)

// dataDir returns the benchmark data directory, skipping the test (with a
// message) when it is absent.
func dataDir(t testing.TB) string {
	t.Helper()
	dir := datasets.DataDir("")
	if _, err := os.Stat(filepath.Join(dir, "epilepsy.csv")); err != nil {
		t.Skipf("benchmark data not found in %q (set SPARSEVI_DATA): %v", dir, err)
	}
	return dir
}

// paperModel loads one of the models of the paper's Table 11.
func paperModel(t testing.TB, name string) *glmm.Model {
	t.Helper()
	d, err := paper.Load(name, dataDir(t))
	if err != nil {
		t.Fatal(err)
	}
	return d.Model()
}

// fitPaper fits the named model with the method and returns the result
// and the bound in the paper's convention.
func fitPaper(t testing.TB, m *glmm.Model, method Method, set vi.Settings) (*vi.Result, float64, time.Duration) {
	t.Helper()
	tg, err := New(m, method)
	if err != nil {
		t.Fatal(err)
	}
	set.Method = vi.RVB
	start := time.Now()
	res, err := vi.Fit(context.Background(), tg, set)
	el := time.Since(start)
	if err != nil {
		t.Fatalf("%v: %v", method, err)
	}
	return res, m.PaperELBO(res.LowerBound), el
}
