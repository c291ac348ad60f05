// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Scratch experiment (not committed).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sparsevi/sparsevi/datasets"
	"github.com/sparsevi/sparsevi/datasets/paper"
	"github.com/sparsevi/sparsevi/formula"
	"github.com/sparsevi/sparsevi/glmm"
	"github.com/sparsevi/sparsevi/rvb"
	"github.com/sparsevi/sparsevi/vi"
)

func main() {
	data := flag.String("data", "", "")
	fml := flag.String("formula", "y ~ x1+x2+x3+(1|id)", "")
	fam := flag.String("family", "bernoulli", "")
	ds := flag.String("dataset", "", "")
	alphas := flag.String("alpha0", "0.003,0.01,0.03", "")
	win := flag.Int("window", 0, "")
	flag.Parse()
	var d *formula.Design
	var err error
	dir := "/work/shared/datasets"
	switch *ds {
	case "hers":
		d, err = paper.HERS(dir)
	case "epilepsy":
		d, err = paper.Epilepsy(dir)
	case "diabetes":
		d, err = paper.Diabetes(dir, paper.DiabetesOptions{})
	case "":
		var fr *datasets.Frame
		fr, err = datasets.ReadFile(*data)
		if err != nil {
			log.Fatal(err)
		}
		f, err2 := formula.Parse(*fml)
		if err2 != nil {
			log.Fatal(err2)
		}
		family, _ := glmm.ParseFamily(*fam)
		d, err = formula.Build(f, fr, formula.Options{Family: family, Prior: formula.PriorAuto})
	}
	if err != nil {
		log.Fatal(err)
	}
	m := d.Model()
	p := m.P()
	for _, a := range strings.Split(*alphas, ",") {
		a0, _ := strconv.ParseFloat(a, 64)
		t1 := time.Now()
		tg, err := rvb.NewAtStart(context.Background(), m, rvb.RVB1)
		if err != nil {
			log.Fatal(err)
		}
		res, err := vi.Fit(context.Background(), tg, vi.Settings{Method: vi.RVB, Seed: 1, Workers: 2, Alpha0: a0, Window: *win})
		el := time.Since(t1)
		if err != nil {
			fmt.Println(a, err)
			continue
		}
		cov := res.GlobalCov()
		n, r, _ := m.Dims()
		mo, so := res.Mu[n*r+p], math.Sqrt(cov.At(p, p))
		mean := math.Exp(-mo + so*so/2)
		fmt.Printf("alpha0 %-6s %6d iter %8.3fs bound %.2f ± %.2f  sd0 %.3f ± %.3f beta0 %.4f\n", a, res.Iterations, el.Seconds(), res.LowerBound, res.LowerBoundSE, mean, mean*math.Sqrt(math.Exp(so*so)-1), res.Mu[n*r])
	}
}
