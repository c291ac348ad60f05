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
	"github.com/sparsevi/sparsevi/posterior"
)

// The -plot image is one file of four kinds of panel: the lower-bound
// trace and the importance ratios' Pareto tail (top left, side by side),
// a caterpillar plot of each random effect (bottom left) and a forest plot
// of the fixed effects with their 95% intervals (the right column, full
// height, so that tens of effects keep readable labels: the image grows
// taller with them). One file keeps a fit and its pictures together.
const (
	plotWidth     = 12 * vg.Inch
	plotMinHeight = 9 * vg.Inch
	forestWidth   = 4.5 * vg.Inch
	// forestRow is the height each fixed effect gets at least.
	forestRow = 0.18 * vg.Inch
	// caterpillarBars is the most subjects drawn one error bar each;
	// above it the curve of the sorted means is drawn with the bars of an
	// evenly spaced sample of caterpillarSampleBars (200 bars made a
	// solid band on a panel 9 inches wide).
	caterpillarBars       = 200
	caterpillarSampleBars = 60
	// caterpillarNamed is how many subjects at each end are named (and
	// drawn whatever the sample) when there are more than
	// caterpillarNamedAll, which are all named on the axis.
	caterpillarNamed    = 3
	caterpillarNamedAll = 40
	// maxCaterpillars is the most random effects given a panel.
	maxCaterpillars = 3
)

// plotHeight returns the height of the image for k fixed effects.
func plotHeight(k int) vg.Length {
	return max(plotMinHeight, 1.6*vg.Inch+vg.Length(k)*forestRow)
}

var (
	colorLine  = color.RGBA{R: 31, G: 119, B: 180, A: 255}
	colorPoint = color.RGBA{R: 214, G: 39, B: 40, A: 255}
	colorZero  = color.Gray{Y: 140}
	// colorCorr draws the importance correction of theta_g (-correct).
	colorCorr = color.RGBA{R: 255, G: 127, B: 14, A: 255}
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
	var (
		canvas draw.Canvas
		write  func(io.Writer) (int64, error)
	)
	height := plotHeight(len(doc.Fixed))
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		c := vgsvg.New(plotWidth, height)
		canvas, write = draw.New(c), c.WriteTo
	default:
		c := vgimg.New(plotWidth, height)
		canvas, write = draw.New(c), vgimg.PngCanvas{Canvas: c}.WriteTo
	}
	// White background: PNGs are otherwise transparent, which viewers
	// with a dark theme render unreadable.
	canvas.SetColor(color.White)
	canvas.Fill(canvas.Rectangle.Path())
	if err := drawPanels(canvas, doc); err != nil {
		return nil, fmt.Errorf("-plot: %v", err)
	}

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

// drawPanels lays the panels out on c: the forest plot in a right column
// of full height; on the left the trace and the Pareto tail side by side
// over the caterpillar plots, side by side.
func drawPanels(c draw.Canvas, doc *document) error {
	pad := vg.Inch / 8
	size := c.Rectangle.Size()
	right := draw.Crop(c, size.X-forestWidth, -pad, pad, -pad)
	left := draw.Crop(c, pad, -forestWidth-pad, pad, -pad)
	topHeight := min(size.Y*0.42, 3.8*vg.Inch)
	top := draw.Crop(left, 0, 0, left.Rectangle.Size().Y-topHeight, 0)
	bottom := draw.Crop(left, 0, 0, 0, -topHeight-pad)

	forest, err := forestPlot(doc)
	if err != nil {
		return err
	}
	forest.Draw(right)
	trace, err := tracePlot(doc)
	if err != nil {
		return err
	}
	tail, err := paretoPlot(doc)
	if err != nil {
		return err
	}
	tiles := draw.Tiles{Rows: 1, Cols: 2, PadX: vg.Inch / 4}
	trace.Draw(tiles.At(top, 0, 0))
	tail.Draw(tiles.At(top, 1, 0))
	r := min(len(doc.RandomEffects.Names), maxCaterpillars)
	tiles = draw.Tiles{Rows: 1, Cols: r, PadX: vg.Inch / 4}
	for a := range r {
		cp, err := caterpillarPlot(doc, a)
		if err != nil {
			return err
		}
		cp.Draw(tiles.At(bottom, a, 0))
	}
	return nil
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
	// With the correction, q's interval sits above each row's line and
	// the corrected one below it.
	var corr []marginal
	if pc := doc.PSISCorrected; pc != nil && doc.Correction != nil && doc.Correction.Ran && len(pc.Fixed) == k {
		corr = pc.Fixed
	}
	shift := 0.0
	if corr != nil {
		shift = 0.15
	}
	bars, sc, err := intervals(doc.Fixed, k, shift, colorLine, colorPoint)
	if err != nil {
		return nil, err
	}
	names := make([]string, k)
	for j, m := range doc.Fixed {
		names[k-1-j] = m.Name
	}
	var extra []plot.Plotter
	if corr != nil {
		cbars, csc, err := intervals(corr, k, -shift, colorCorr, colorCorr)
		if err != nil {
			return nil, err
		}
		extra = append(extra, cbars, csc)
		p.Legend.Add("q", sc)
		p.Legend.Add(fmt.Sprintf("importance-corrected (k = %.2f)", float64(doc.Correction.K)), csc)
		p.Legend.Top = true
	}
	zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: -0.5}, {X: 0, Y: float64(k) - 0.5}})
	if err != nil {
		return nil, err
	}
	zero.Color = colorZero
	zero.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	p.Add(plotter.NewGrid(), zero, bars, sc)
	p.Add(extra...)
	p.NominalY(names...)
	// Each effect has at least forestRow of height (plotHeight).
	p.Y.Tick.Label.Font.Size = min(p.Y.Tick.Label.Font.Size, vg.Points(9))
	p.Y.Min, p.Y.Max = -0.5, float64(k)-0.5
	lo, hi := 0.0, 0.0
	for _, m := range append(slices.Clone(doc.Fixed), corr...) {
		lo, hi = math.Min(lo, float64(m.Q025)), math.Max(hi, float64(m.Q975))
	}
	p.X.Min, p.X.Max = padRange(lo, hi)
	return p, nil
}

// intervals returns the 95% intervals of the k marginals ms as horizontal
// error bars and their means as points, row j at height k-1-j+dy.
func intervals(ms []marginal, k int, dy float64, line, point color.Color) (*plotter.XErrorBars, *plotter.Scatter, error) {
	pts := make(plotter.XYs, k)
	errs := make(plotter.XErrors, k)
	for j, m := range ms {
		est := float64(m.Estimate)
		pts[j] = plotter.XY{X: est, Y: float64(k-1-j) + dy}
		errs[j].Low, errs[j].High = est-float64(m.Q025), float64(m.Q975)-est
	}
	bars, err := plotter.NewXErrorBars(struct {
		plotter.XYs
		plotter.XErrors
	}{pts, errs})
	if err != nil {
		return nil, nil, err
	}
	bars.LineStyle.Width = vg.Points(1.5)
	bars.LineStyle.Color = line
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, nil, err
	}
	sc.GlyphStyle.Color = point
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Radius = vg.Points(3)
	return bars, sc, nil
}

// caterpillarPlot draws random effect a of every subject, sorted by
// posterior mean, with ±2 posterior sd bars: every subject's bar up to
// caterpillarBars subjects; beyond, the curve of all the sorted means with
// the bars of an evenly spaced sample of caterpillarBars of them and of the
// subjects at both ends (thousands of bars make a solid block). Subjects
// are named by their ids: on the axis when few, else those at each end.
func caterpillarPlot(doc *document, a int) (*plot.Plot, error) {
	re := doc.RandomEffects
	p := newPlot()
	name := re.Names[a]
	p.Title.Text = fmt.Sprintf("%s by %s: sorted means ± 2 sd", name, re.Group)
	n := len(re.Subjects)
	p.Y.Label.Text = name
	type eff struct {
		mean, sd float64
		level    string
	}
	effs := make([]eff, n)
	for i, s := range re.Subjects {
		effs[i] = eff{float64(s.Mean[a]), float64(s.SD[a]), s.Level}
	}
	slices.SortStableFunc(effs, func(a, b eff) int { return cmp.Compare(a.mean, b.mean) })
	all := make(plotter.XYs, n)
	for i, e := range effs {
		all[i] = plotter.XY{X: float64(i + 1), Y: e.mean}
	}
	sample, step := caterpillarSample(n)
	pts := make(plotter.XYs, len(sample))
	errs := make(plotter.YErrors, len(sample))
	for j, i := range sample {
		pts[j] = all[i]
		errs[j].Low, errs[j].High = 2*effs[i].sd, 2*effs[i].sd
	}
	zero, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: float64(n + 1), Y: 0}})
	if err != nil {
		return nil, err
	}
	zero.Color = colorZero
	zero.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	bars, err := plotter.NewYErrorBars(struct {
		plotter.XYs
		plotter.YErrors
	}{pts, errs})
	if err != nil {
		return nil, err
	}
	bars.LineStyle.Color = colorLine
	if len(pts) > 100 {
		bars.CapWidth = 0
	}
	p.Add(plotter.NewGrid(), zero, bars)
	if step == 1 {
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return nil, err
		}
		sc.GlyphStyle.Color = colorPoint
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		sc.GlyphStyle.Radius = vg.Points(math.Max(1, math.Min(2.5, 300/float64(n))))
		p.Add(sc)
	} else {
		l, err := plotter.NewLine(all)
		if err != nil {
			return nil, err
		}
		l.Color, l.Width = colorPoint, vg.Points(1.5)
		p.Add(l)
	}
	switch {
	case n <= caterpillarNamedAll:
		ids := make([]string, n+2)
		for i, e := range effs {
			ids[i+1] = e.level
		}
		p.NominalX(ids...)
		p.X.Tick.Label.Rotation = math.Pi / 2
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YCenter
		p.X.Tick.Label.Font.Size = vg.Points(7)
		p.X.Label.Text = re.Group
	default:
		var lo, hi []string
		for i := range caterpillarNamed {
			lo = append(lo, effs[i].level)
			hi = append(hi, effs[n-1-i].level)
		}
		p.X.Label.Text = fmt.Sprintf("rank among the %d levels of %s\nlowest %s; highest %s", n, re.Group, strings.Join(lo, ", "), strings.Join(hi, ", "))
		if step > 1 {
			p.Title.Text = fmt.Sprintf("%s by %s: sorted means; ± 2 sd of every %s", name, re.Group, ordinal(step))
		}
	}
	p.X.Min, p.X.Max = 0, float64(n+1)
	lo, hi := 0.0, 0.0
	for _, e := range effs {
		lo, hi = math.Min(lo, e.mean-2*e.sd), math.Max(hi, e.mean+2*e.sd)
	}
	p.Y.Min, p.Y.Max = padRange(lo, hi)
	return p, nil
}

// caterpillarSample returns the ranks (0-based) of the n sorted subjects
// whose error bars a caterpillar plot draws, and the step between them:
// all of them up to caterpillarBars, else every step-th and those at both
// ends.
func caterpillarSample(n int) (ranks []int, step int) {
	step = 1
	if n > caterpillarBars {
		step = (n + caterpillarSampleBars - 1) / caterpillarSampleBars
	}
	for i := range n {
		if i%step == 0 || i < caterpillarNamed || i >= n-caterpillarNamed {
			ranks = append(ranks, i)
		}
	}
	return ranks, step
}

// paretoPlot draws the upper tail of the log importance ratios log p/q
// against the log of their rank: a generalized Pareto tail of shape k is
// a line of slope -k there, drawn through the tail for comparison. It is
// the picture of the Pareto diagnostic (posterior.ParetoK).
func paretoPlot(doc *document) (*plot.Plot, error) {
	p := newPlot()
	p.X.Label.Text = "log rank of the ratio"
	p.Y.Label.Text = "log ratio p/q − largest"
	pk := doc.LowerBound.ParetoK
	lw := doc.logWeights
	if pk == nil || len(lw) < 2 {
		if cr := doc.Correction; cr != nil && cr.Checked && len(cr.checkLogWeights) > 1 {
			return checkPlot(p, cr.checkLogWeights)
		}
		p.Title.Text = "Importance ratios: not computed (too many variables)"
		p.X.Label.Text, p.Y.Label.Text = "", ""
		p.HideAxes()
		return p, nil
	}
	k := float64(pk.K)
	verdict := kVerdict(k)
	p.Title.Text = fmt.Sprintf("Importance ratios' tail: Pareto k = %.2f (%s)", k, verdict)
	sc, line, err := tailSeries(lw, k, pk.Tail, colorLine, colorPoint)
	if err != nil {
		return nil, err
	}
	p.Add(plotter.NewGrid(), sc, line)
	p.Legend.Add(fmt.Sprintf("every variable: slope −k = %.2f", -k), line)
	if cr, clw := doc.Correction, doc.corrLogWeights; cr != nil && cr.Ran && len(clw) > 1 {
		ck, tail, err := posterior.ParetoK(clw)
		if err == nil {
			csc, cline, err := tailSeries(clw, ck, tail, colorCorr, colorCorr)
			if err != nil {
				return nil, err
			}
			p.Add(csc, cline)
			p.Legend.Add(fmt.Sprintf("fixed effects and variances: slope −k = %.2f", -ck), cline)
			p.Title.Text = fmt.Sprintf("Importance ratios' tail: Pareto k = %.2f\n(%s); corrected: %.2f", k, verdict, ck)
			// The corrected ratios run along the top: the legend goes
			// below the steeper tail of the others.
			p.Legend.Top, p.Legend.Left = false, true
			return p, nil
		}
	}
	p.Legend.Top = true
	return p, nil
}

// checkPlot draws on p the tail of the ratios of the check of q's marginal
// of the fixed effects and variance parameters, where the ratios over
// every variable were not drawn (HERS).
func checkPlot(p *plot.Plot, lw []float64) (*plot.Plot, error) {
	k, tail, err := posterior.ParetoK(lw)
	if err != nil {
		return nil, err
	}
	sc, line, err := tailSeries(lw, k, tail, colorCorr, colorCorr)
	if err != nil {
		return nil, err
	}
	p.Add(plotter.NewGrid(), sc, line)
	p.Legend.Add(fmt.Sprintf("q's marginal: slope −k = %.2f", -k), line)
	p.Legend.Top = true
	p.Title.Text = fmt.Sprintf("Importance ratios' tail, fixed effects and variances\n(q's marginal, %d draws): Pareto k = %.2f (%s)", len(lw), k, kVerdict(k))
	return p, nil
}

// kVerdict reads a Pareto k.
func kVerdict(k float64) string {
	switch {
	case k > posterior.ParetoKBad:
		return "not to be trusted"
	case k > posterior.ParetoKGood:
		return "usable"
	}
	return "good"
}

// tailSeries returns the largest log ratios of lw less the largest
// against the log of their rank (three times the tail's length of them),
// and the line of slope -k through the centroid of the tail's points.
func tailSeries(lw []float64, k float64, tail int, points, line color.Color) (*plotter.Scatter, *plotter.Line, error) {
	sorted := slices.Clone(lw)
	slices.SortFunc(sorted, func(a, b float64) int { return cmp.Compare(b, a) })
	top := sorted[0]
	m := min(len(sorted), max(tail, 2)*3)
	pts := make(plotter.XYs, m)
	for i := range m {
		pts[i] = plotter.XY{X: math.Log(float64(i + 1)), Y: sorted[i] - top}
	}
	sc, err := plotter.NewScatter(pts)
	if err != nil {
		return nil, nil, err
	}
	sc.GlyphStyle.Color = points
	sc.GlyphStyle.Shape = draw.CircleGlyph{}
	sc.GlyphStyle.Radius = vg.Points(1.5)
	t := max(min(tail, m), 2)
	var cx, cy float64
	for _, xy := range pts[:t] {
		cx, cy = cx+xy.X/float64(t), cy+xy.Y/float64(t)
	}
	x1 := pts[m-1].X
	l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: cy + k*cx}, {X: x1, Y: cy - k*(x1-cx)}})
	if err != nil {
		return nil, nil, err
	}
	l.Color = line
	l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
	return sc, l, nil
}

// ordinal returns n as an English ordinal: 2nd, 3rd, 11th, 21st.
func ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
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
