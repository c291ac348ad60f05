package glmm_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/sparsevi/sparsevi/glmm"
)

func threadCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(1, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestZZCPU(t *testing.T) {
	runtime.LockOSThread()
	b := &testing.B{}
	for _, c := range []struct {
		fam  glmm.Family
		p, r int
	}{{glmm.Bernoulli, 5, 1}, {glmm.Poisson, 5, 1}, {glmm.Binomial, 5, 1}} {
		const n, ni = 1000, 7
		mod := benchModel(b, c.fam, n, ni, c.p, c.r)
		_, r, g := mod.Dims()
		rng := rand.New(rand.NewPCG(3, 4))
		local, thetaG := randomLocal(rng, n, r), randomGlobal(rng, c.p, r)
		gl, gg := make([]float64, n*r), make([]float64, g)
		ws := mod.NewWorkspace()
		for rep := 0; rep < 3; rep++ {
			t0 := threadCPU()
			const N = 2000
			for range N {
				mod.Local(ws, 0, n, thetaG, local, gl, gg)
			}
			fmt.Printf("%v %.2f ns/obs\n", c.fam, float64(threadCPU()-t0)/(N*n*ni))
		}
	}
}
