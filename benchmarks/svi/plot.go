// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/sparsevi/sparsevi/vi"
)

// plotBound plots the bound of the full-batch fit (the trace's window
// averages of h, one iteration a pass over the data) and of the stochastic
// fit (each pass's average of its minibatches' estimates, n/|B| times
// theirs; a pass evaluates each subject four times) against the passes
// over the data, with each fit's final bound (fresh draws over all
// subjects) at its last pass.
func plotBound(path, title string, full, sto *vi.Result) error {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "passes over the data (log scale)"
	p.Y.Label.Text = "lower bound (nats)"
	p.Legend.Top = false
	p.Legend.Left = false
	// Log passes: the stochastic fit's few passes beside the full batch's
	// hundred.
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	add := func(i int, label string, pts plotter.XYs, res *vi.Result) error {
		final := plotter.XYs{{X: pts[len(pts)-1].X, Y: res.LowerBound}}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		l.Color, sc.Color = plotutil.Color(i), plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		f, err := plotter.NewScatter(final)
		if err != nil {
			return err
		}
		f.Color = plotutil.Color(i)
		f.Shape = plotutil.Shape(i + 2)
		f.Radius = vg.Points(5)
		p.Add(l, sc, f)
		p.Legend.Add(label, l, sc)
		p.Legend.Add(fmt.Sprintf("%s: final bound %.1f ± %.1f", label, res.LowerBound, res.LowerBoundSE), f)
		return nil
	}
	var fp, sp plotter.XYs
	for _, tp := range full.Trace {
		fp = append(fp, plotter.XY{X: float64(tp.Iter), Y: tp.LowerBound})
	}
	for k, tp := range sto.Trace {
		sp = append(sp, plotter.XY{X: float64(k + 1), Y: tp.LowerBound})
	}
	if len(fp) == 0 || len(sp) == 0 {
		return nil
	}
	if err := add(0, "full batch", fp, full); err != nil {
		return err
	}
	if err := add(1, "stochastic", sp, sto); err != nil {
		return err
	}
	return p.Save(8*vg.Inch, 5*vg.Inch, path)
}
