package rvb

import (
	"os"
	"strconv"
	"testing"

	"github.com/sparsevi/sparsevi/vi"
)

func TestDev(t *testing.T) {
	name := os.Getenv("DEV")
	if name == "" {
		t.Skip()
	}
	m := paperModel(t, name)
	a0, _ := strconv.ParseFloat(os.Getenv("A0"), 64)
	init, _ := strconv.Atoi(os.Getenv("INIT"))
	meth := RVB1
	if os.Getenv("M") == "2" {
		meth = RVB2
	}
	seed, _ := strconv.ParseUint(os.Getenv("SEED"), 10, 64)
	res, pe, el := fitPaper(t, m, meth, vi.Settings{Alpha0: a0, Init: vi.Init(init), Seed: seed})
	t.Logf("%s %v: paper %.2f full %.2f ± %.2f, %v, %d iters, %v, backoffs %d", name, meth, pe, res.LowerBound, res.LowerBoundSE, res.Status, res.Iterations, el, res.Backoffs)
	for _, tp := range res.Trace {
		if tp.Iter%1000 == 0 {
			t.Logf("  %d %.2f %.3f %v", tp.Iter, m.PaperELBO(tp.LowerBound), tp.Gain, tp.Elapsed)
		}
	}
}
