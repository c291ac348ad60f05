// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/sparsevi/sparsevi/internal/atomicfile"
)

// The -plot image is one file with three panels: the lower-bound trace
// (top left), a forest plot of the fixed effects with their 95% intervals
// (top right) and a caterpillar plot of the random intercepts, sorted by
// posterior mean with ±2 sd bars (bottom, full width). One file keeps a fit
// and its pictures together; the caterpillar gets the width because it has
// a point per subject.
const (
	plotWidth  = 12 * vg.Inch
	plotHeight = 9 * vg.Inch
)

var (
	colorLine  = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	colorPoint = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	colorZero  = color.Gray{Y: 140}
)

// writePlot draws the panels of doc into path, a .png or .svg file.
func writePlot(ctx context.Context, path string, doc *document) error {
	// Drawn in memory, away from the caller, so that a signal or the time
	// limit need not wait for it (10^5 subjects take a second or two).
	done := make(chan drawn, 1)
	go func() {
		b, err := drawPlot(path, doc)
		done <- drawn{b, err}
	}()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case d := <-done:
		if d.err != nil {
			return d.err
		}
		if err := atomicfile.WriteFile(path, d.b); err != nil {
			return fmt.Errorf("-plot: %v", pathError(err))
		}
		return nil
	}
}

// errPlotStopped reports that a signal or the time limit stopped the
// drawing of -plot, which was not written.
var errPlotStopped = errors.New("-plot was not drawn")

type drawn struct {
	b   []byte
	err error
}

// drawPlot draws the plot in the format path's extension names.
func drawPlot(path string, doc *document) ([]byte, error) {
	panels, err := plotPanels(doc)
	if err != nil {
		return nil, fmt.Errorf("-plot: %v", err)
	}
	var (
		canvas draw.Canvas
		write  func(io.Writer) (int64, error)
	)
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		c := vgsvg.New(plotWidth, plotHeight)
		canvas, write = draw.New(c), c.WriteTo
	default:
		c := vgimg.New(plotWidth, plotHeight)
		canvas, write = draw.New(c), vgimg.PngCanvas{Canvas: c}.WriteTo
	}
	// White background: PNGs are otherwise transparent, which viewers
	// with a dark theme render unreadable.
	canvas.SetColor(color.White)
	canvas.Fill(canvas.Rectangle.Path())

	half := canvas.Rectangle.Size().Y / 2
	top := draw.Crop(canvas, 0, 0, half, 0)
	bottom := draw.Crop(canvas, 0, 0, 0, -half)
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 4, PadTop: vg.Inch / 8, PadBottom: vg.Inch / 8, PadLeft: vg.Inch / 8, PadRight: vg.Inch / 8}
	panels[0].Draw(tiles.At(top, 0, 0))
	panels[1].Draw(tiles.At(top, 1, 0))
	panels[2].Draw(draw.Crop(bottom, vg.Inch/8, -vg.Inch/8, vg.Inch/8, -vg.Inch/8))

	var buf bytes.Buffer
	if _, err := write(&buf); err != nil {
		return nil, fmt.Errorf("-plot: %v", err)
	}
	return buf.Bytes(), nil
}

// newPlot returns a plot with niceTicks on both axes.
func newPlot() *plot.Plot {
	p := plot.New()
	p.X.Tick.Marker = niceTicks{}
	p.Y.Tick.Marker = niceTicks{}
	return p
}

// plotPanels returns the trace, forest and caterpillar plots.
func plotPanels(doc *document) ([3]*plot.Plot, error) {
	var ps [3]*plot.Plot
	var err error
	if ps[0], err = tracePlot(doc); err != nil {
		return ps, err
	}
	if ps[1], err = forestPlot(doc); err != nil {
		return ps, err
	}
	if ps[2], err = caterpillarPlot(doc); err != nil {
		return ps, err
	}
	return ps, nil
}

// tracePlot draws the windowed lower bound against the iteration. The
// first windows can be thousands of nats below the end; when they would
// squeeze the rest of the trace into a few pixels, the y axis starts at the
// lowest value after the first tenth of the trace instead, so that the
// approach to convergence stays visible.
func tracePlot(doc *document) (*plot.Plot, error) {
	p := newPlot()
	p.Title.Text = "Lower bound (ELBO, windowed mean) by iteration"
	p.X.Label.Text = "iteration"
	p.Y.Label.Text = "lower bound (nats)"
	var pts plotter.XYs
	for _, t := range doc.Trace {
		if v := float64(t.LowerBound); !math.IsNaN(v) {
			pts = append(pts, plotter.XY{X: float64(t.Iter), Y: v})
		}
	}
	if len(pts) == 0 {
		p.Title.Text += ": no complete window"
		return p, nil
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	line.Color = colorLine
	line.Width = vg.Points(1.5)
	p.Add(line, plotter.NewGrid())
	lo, tail, hi := math.Inf(1), math.Inf(1), math.Inf(-1)
	for k, xy := range pts {
		lo = math.Min(lo, xy.Y)
		if k >= len(pts)/10 {
			tail = math.Min(tail, xy.Y)
		}
		hi = math.Max(hi, xy.Y)
	}
	if hi-lo > 5*(hi-tail) {
		lo = tail
		p.Title.Text += " (first windows off scale)"
	}
	// Show at least one nat, so that the Monte Carlo noise of a flat,
	// converged trace does not look like a trend.
	if mid := (lo + hi) / 2; hi-lo < 1 {
		lo, hi = mid-0.5, mid+0.5
	}
	p.Y.Min, p.Y.Max = padRange(lo, hi)
	p.X.Min = 0
	return p, nil
}

// forestPlot draws each fixed effect's posterior mean with its 95%
// credible interval, first effect at the top, and a dashed line at zero.
func forestPlot(doc *document) (*plot.Plot, error) {
	p := newPlot()
	p.Title.Text = "Fixed effects: posterior mean and 95% interval"
	p.X.Label.Text = "estimate (linear predictor scale)"
	k := len(doc.Fixed)
	if k == 0 {
		p.Title.Text = "No fixed effects"
		p.HideAxes()
		return p, nil
	}
	pts := make(plotter.XYs, k)
	errs := make(plotter.XErrors, k)
	names := make([]string, k)
	for j, m := range doc.Fixed {
		y := float64(k - 1 - j)
		est := float64(m.Estimate)
		pts[j] = plotter.XY{X: est, Y: y}
		errs[j].Low, errs[j].High = est-float64(m.Q025), float64(m.Q975)-est
		names[k-1-j] = m.Name
	}
	bars, err := plotter.NewXErrorBars(struct {
		plotter.XYs
		plotter.XErrors
	}{pts, errs})
	if err != nil {
		return nil, err
	}
	bars.LineStyle.Width = vg.Points(1.5)
	bars.LineStyle.Color = colorLine
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Color = colorPoint
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Radius = vg.Points(3)
	zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: -0.5}, {X: 0, Y: float64(k) - 0.5}})
	if err != nil {
		return nil, err
	}
	zero.Color = colorZero
	zero.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(plotter.NewGrid(), zero, bars, sc)
	p.NominalY(names...)
	p.Y.Min, p.Y.Max = -0.5, float64(k)-0.5
	lo, hi := 0.0, 0.0
	for _, m := range doc.Fixed {
		lo, hi = math.Min(lo, float64(m.Q025)), math.Max(hi, float64(m.Q975))
	}
	p.X.Min, p.X.Max = padRange(lo, hi)
	return p, nil
}

// caterpillarPlot draws the first random effect of every subject (the
// random intercept when there is one), sorted by posterior mean, with
// ±2 posterior sd bars.
func caterpillarPlot(doc *document) (*plot.Plot, error) {
	re := doc.RandomEffects
	p := newPlot()
	name := "random effect " + re.Names[0]
	if re.Names[0] == "(Intercept)" {
		name = "random intercepts"
	}
	p.Title.Text = fmt.Sprintf("Caterpillar plot: %s of %s, sorted, ±2 sd", name, re.Group)
	p.X.Label.Text = fmt.Sprintf("%s (rank of the posterior mean)", re.Group)
	p.Y.Label.Text = re.Names[0]
	n := len(re.Subjects)
	type eff struct{ mean, sd float64 }
	effs := make([]eff, n)
	for i, s := range re.Subjects {
		effs[i] = eff{float64(s.Mean[0]), float64(s.SD[0])}
	}
	slices.SortStableFunc(effs, func(a, b eff) int { return cmp.Compare(a.mean, b.mean) })
	pts := make(plotter.XYs, n)
	errs := make(plotter.YErrors, n)
	for i, e := range effs {
		pts[i] = plotter.XY{X: float64(i + 1), Y: e.mean}
		errs[i].Low, errs[i].High = 2*e.sd, 2*e.sd
	}
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, errs})
	if err != nil {
		return nil, err
	}
	bars.LineStyle.Color = colorLine
	if n > 100 {
		bars.CapWidth = 0
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, err
	}
	sc.GlyphStyle.Color = colorPoint
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Radius = vg.Points(math.Max(0.8, math.Min(2.5, 300/float64(n))))
	zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: float64(n + 1), Y: 0}})
	if err != nil {
		return nil, err
	}
	zero.Color = colorZero
	zero.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(plotter.NewGrid(), zero, bars, sc)
	p.X.Min, p.X.Max = 0, float64(n+1)
	lo, hi := 0.0, 0.0
	for _, e := range effs {
		lo, hi = math.Min(lo, e.mean-2*e.sd), math.Max(hi, e.mean+2*e.sd)
	}
	p.Y.Min, p.Y.Max = padRange(lo, hi)
	return p, nil
}

// padRange widens [lo, hi] by 5% on each side, so that nothing is drawn on
// the frame of a panel.
func padRange(lo, hi float64) (float64, float64) {
	pad := 0.05 * (hi - lo)
	if !(pad > 0) {
		pad = math.Max(0.5, 0.05*math.Abs(hi))
	}
	return lo - pad, hi + pad
}
