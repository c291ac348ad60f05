package rvb

import (
	"fmt"
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
		if tp.Iter%400 == 0 {
			t.Logf("  %d %.2f %.3f %v", tp.Iter, m.PaperELBO(tp.LowerBound), tp.Gain, tp.Elapsed)
		}
	}
}

func TestDevCount(t *testing.T) {
	name := os.Getenv("DEVC")
	if name == "" {
		t.Skip()
	}
	m := paperModel(t, name)
	evalCount, solveCount = 0, 0
	_, pe, el := fitPaper(t, m, RVB2, vi.Settings{Workers: 1})
	t.Logf("%.2f %v evals/solve %.2f solves %d", pe, el, float64(evalCount)/float64(solveCount), solveCount)
}

func TestDevInit(t *testing.T) {
	name := os.Getenv("DEVI")
	if name == "" {
		t.Skip()
	}
	m := paperModel(t, name)
	for _, in := range []vi.Init{vi.InitMode, vi.InitPaper} {
		for _, meth := range []Method{RVB1, RVB2} {
			res, pe, _ := fitPaper(t, m, meth, vi.Settings{Init: in, MaxIter: 400, Window: 20, Refine: -1, Tol: 1e-9})
			t.Logf("init %v %v: %.2f", in, meth, pe)
			for _, tp := range res.Trace[:5] {
				t.Logf("   %d %.2f", tp.Iter, m.PaperELBO(tp.LowerBound))
			}
			n, r, _ := m.Dims()
			t.Logf("   mu_g %.3f", res.Mu[n*r:])
		}
	}
}

func TestDevInit2(t *testing.T) {
	name := os.Getenv("DEVI2")
	if name == "" {
		t.Skip()
	}
	m := paperModel(t, name)
	for _, it := range []int{20, 60, 100, 200, 400} {
		a0, _ := strconv.ParseFloat(os.Getenv("A0"), 64)
		res, pe, _ := fitPaper(t, m, RVB2, vi.Settings{Init: vi.InitPaper, MaxIter: it, Window: 20, Refine: -1, Tol: 1e-9, Alpha0: a0})
		n, r, g := m.Dims()
		t.Logf("iter %d: %.2f mu_g %.3f", it, pe, res.Mu[n*r:])
		tri := r * (r + 1) / 2
		var small []string
		for i := range n {
			for a := range r {
				if v := res.Factor[i*tri+a*(a+1)/2+a]; v < 0.05 {
					small = append(small, fmt.Sprintf("s%d[%d]=%.2g mu=%.3g", i, a, v, res.Mu[i*r+a]))
				}
			}
		}
		for a := range g {
			small = append(small, fmt.Sprintf("g%d=%.2g", a, res.Factor[n*tri+a*(a+1)/2+a]))
		}
		t.Log(small)
	}
}
