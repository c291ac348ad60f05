// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

const (
	plotWidth  = 8 * vg.Inch
	plotHeight = 6 * vg.Inch
)

var colorRef = color.Gray{Y: 150}

// style gives each model and method a colour and a glyph, and each worker
// count a dash pattern, the same in every plot.
type style struct {
	colors  map[string]int // model+method -> palette index
	workers []int
}

func newStyle(results []result) *style {
	s := &style{colors: map[string]int{}}
	for _, r := range results {
		k := r.model.Name + " " + r.o.Method
		if _, ok := s.colors[k]; !ok {
			s.colors[k] = len(s.colors)
		}
		if !slices.Contains(s.workers, r.workers) {
			s.workers = append(s.workers, r.workers)
		}
	}
	slices.Sort(s.workers)
	return s
}

func (s *style) apply(l *plotter.Line, sc *plotter.Scatter, model, method string, workers int) {
	i := s.colors[model+" "+method]
	c := plotutil.Color(i)
	if l != nil {
		l.Color = c
		l.Width = vg.Points(1.5)
		if w := slices.Index(s.workers, workers); w > 0 {
			l.Dashes = plotutil.Dashes(w)
		}
	}
	if sc != nil {
		sc.Color = c
		sc.Shape = plotutil.Shape(i)
		sc.Radius = vg.Points(3.5)
	}
}

func plotAll(dir string, results []result, slopes []slope, sp []speedup) error {
	if len(results) == 0 {
		return nil
	}
	st := newStyle(results)
	if err := plotVsN(filepath.Join(dir, "time_per_iter.png"), results, st, slopes, true); err != nil {
		return err
	}
	if err := plotVsN(filepath.Join(dir, "time_to_converge.png"), results, st, nil, false); err != nil {
		return err
	}
	if err := plotSpeedup(filepath.Join(dir, "speedup.png"), sp, st); err != nil {
		return err
	}
	return plotSpeedupN(filepath.Join(dir, "speedup_n.png"), sp, st)
}

// logLog sets log scales on both axes. The legend goes to the bottom right,
// which lines rising to the right leave free.
func logLog(p *plot.Plot) {
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = logTicks{}, logTicks{}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.Padding = vg.Points(4)
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(6), vg.Points(6)
}

// logTicks marks 1, ..., 9 times each power of ten and labels 1, 2 and 5
// times it when the axis spans at most three decades, else only the powers.
type logTicks struct{}

func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0 && hi > lo) {
		return plot.LogTicks{Prec: -1}.Ticks(lo, hi)
	}
	k0, k1 := int(math.Floor(math.Log10(lo))), int(math.Ceil(math.Log10(hi)))
	var ticks []plot.Tick
	for k := k0; k <= k1; k++ {
		for m := 1; m <= 9; m++ {
			v := float64(m) * math.Pow(10, float64(k))
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				continue
			}
			t := plot.Tick{Value: v}
			if m == 1 || (k1-k0 <= 3 && (m == 2 || m == 5)) {
				t.Label = tickLabel(m, k)
			}
			ticks = append(ticks, t)
		}
	}
	return ticks
}

// tickLabel writes m 10^k as a plain decimal for 10^-2 <= m 10^k < 10^3
// and as 2e5 otherwise.
func tickLabel(m, k int) string {
	if k < -2 || k >= 3 {
		return fmt.Sprintf("%de%d", m, k)
	}
	return strconv.FormatFloat(float64(m)*math.Pow(10, float64(k)), 'f', max(0, -k), 64)
}

// plotVsN draws seconds per iteration (perIter) or to convergence against
// n on log-log axes, one line per model, method and worker count, and a
// grey line of slope 1 through the smallest time at the largest n. With
// slopes, the legend gives each line's fitted slope.
func plotVsN(path string, results []result, st *style, slopes []slope, perIter bool) error {
	p := plot.New()
	logLog(p)
	p.X.Label.Text = "subjects n (7 observations each)"
	if perIter {
		p.Title.Text = "Time per iteration (from the trace, convergence tests included)"
		p.Y.Label.Text = "seconds per iteration"
	} else {
		p.Title.Text = "Wall time to convergence (start included, final bound excluded)"
		p.Y.Label.Text = "seconds"
	}
	value := func(o *outcome) float64 {
		if perIter {
			return o.SecPerIter
		}
		return o.SecConv
	}
	if !perIter {
		stopped := 0
		for _, r := range results {
			if r.o.Status != "converged" {
				stopped++
			}
		}
		if stopped > 0 {
			p.Title.Text = fmt.Sprintf("Wall time to the last window: %d of %d fits did not converge (see status)", stopped, len(results))
		}
	}
	keys, by := seriesOf(results)
	nMin, nMax := math.Inf(1), math.Inf(-1)
	for _, k := range keys {
		var pts plotter.XYs
		for _, r := range by[k] {
			if v := value(r.o); v > 0 {
				pts = append(pts, plotter.XY{X: float64(r.o.N), Y: v})
				nMin, nMax = min(nMin, float64(r.o.N)), max(nMax, float64(r.o.N))
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		st.apply(l, sc, k.model, k.method, k.workers)
		p.Add(l, sc)
		label := k.String()
		for _, s := range slopes {
			if s.key == k {
				label += fmt.Sprintf(": slope %.2f", s.slope)
				if s.allN {
					label += " (all n)"
				}
			}
		}
		p.Legend.Add(label, l, sc)
	}
	setLogRange(p, results, value)
	// The reference line of slope 1 ends at the smallest value at the
	// largest n, below the measured lines.
	yAtMax := math.Inf(1)
	for _, r := range results {
		if float64(r.o.N) == nMax && value(r.o) > 0 {
			yAtMax = min(yAtMax, value(r.o))
		}
	}
	if nMax > nMin && !math.IsInf(yAtMax, 0) {
		ref, err := plotter.NewLine(plotter.XYs{{X: nMin, Y: yAtMax * nMin / nMax}, {X: nMax, Y: yAtMax}})
		if err != nil {
			return err
		}
		ref.Color = colorRef
		ref.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
		p.Add(ref)
		p.Legend.Add("slope 1 (linear in n)", ref)
	}
	return p.Save(plotWidth, plotHeight, path)
}

// setLogRange sets the axes of a log-log plot of value against n to the
// data's range with a margin: the automatic range of a single point is
// empty, which a log scale rejects.
func setLogRange(p *plot.Plot, results []result, value func(*outcome) float64) {
	xlo, xhi, ylo, yhi := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for _, r := range results {
		if v := value(r.o); v > 0 && r.o.N > 0 {
			xlo, xhi = min(xlo, float64(r.o.N)), max(xhi, float64(r.o.N))
			ylo, yhi = min(ylo, v), max(yhi, v)
		}
	}
	if math.IsInf(xlo, 0) {
		return
	}
	p.X.Min, p.X.Max = xlo/1.25, xhi*1.25
	p.Y.Min, p.Y.Max = ylo/1.5, yhi*1.5
}

// plotSpeedup draws the speed-up per iteration against the number of
// workers at the largest n of each model and method, with the ideal.
func plotSpeedup(path string, sp []speedup, st *style) error {
	p := plot.New()
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	p.X.Label.Text = "workers (= GOMAXPROCS)"
	p.Y.Label.Text = "speed-up of the time per iteration"
	p.Title.Text = "Speed-up against workers at the largest n"
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(6), vg.Points(6)
	type key struct{ model, method string }
	var keys []key
	largest := map[key]int{}
	for _, s := range sp {
		k := key{s.model, s.method}
		if _, ok := largest[k]; !ok {
			keys = append(keys, k)
		}
		largest[k] = max(largest[k], s.n)
	}
	wMax := 1
	for _, k := range keys {
		var pts plotter.XYs
		for _, s := range sp {
			if s.model == k.model && s.method == k.method && s.n == largest[k] && s.perIter > 0 {
				pts = append(pts, plotter.XY{X: float64(s.workers), Y: s.perIter})
				wMax = max(wMax, s.workers)
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return err
		}
		st.apply(l, sc, k.model, k.method, 0)
		p.Add(l, sc)
		p.Legend.Add(fmt.Sprintf("%s %s, n = %d: %.2f at %d workers", k.model, k.method, largest[k], pts[len(pts)-1].Y, int(pts[len(pts)-1].X)), l, sc)
	}
	ideal, err := plotter.NewLine(plotter.XYs{{X: 1, Y: 1}, {X: float64(wMax), Y: float64(wMax)}})
	if err != nil {
		return err
	}
	ideal.Color = colorRef
	ideal.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	p.Add(ideal)
	p.Legend.Add("ideal", ideal)
	p.X.Min, p.X.Max = 0.9, float64(wMax)+0.1
	p.Y.Min, p.Y.Max = 0, float64(wMax)+0.25
	p.X.Tick.Marker = intTicks{}
	p.Y.Tick.Marker = stepTicks{major: 0.5, minor: 0.1}
	return p.Save(plotWidth, plotHeight, path)
}

// plotSpeedupN draws the speed-up per iteration at the most workers
// against n, one line per model and method.
func plotSpeedupN(path string, sp []speedup, st *style) error {
	wMax := 0
	for _, s := range sp {
		wMax = max(wMax, s.workers)
	}
	p := plot.New()
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	p.X.Scale = plot.LogScale{}
	p.X.Label.Text = "subjects n"
	p.Y.Label.Text = fmt.Sprintf("speed-up of the time per iteration, %d workers", wMax)
	p.Title.Text = fmt.Sprintf("Speed-up with %d workers against n", wMax)
	p.Legend.Top, p.Legend.Left = false, false
	p.Legend.XOffs, p.Legend.YOffs = -vg.Points(6), vg.Points(6)
	p.X.Tick.Marker = logTicks{}
	type key struct{ model, method string }
	var keys []key
	pts := map[key]plotter.XYs{}
	nMin, nMax := math.Inf(1), math.Inf(-1)
	for _, s := range sp {
		if s.workers != wMax || s.base == wMax || !(s.perIter > 0) {
			continue
		}
		k := key{s.model, s.method}
		if _, ok := pts[k]; !ok {
			keys = append(keys, k)
		}
		pts[k] = append(pts[k], plotter.XY{X: float64(s.n), Y: s.perIter})
		nMin, nMax = min(nMin, float64(s.n)), max(nMax, float64(s.n))
	}
	if len(keys) == 0 {
		return nil
	}
	for _, k := range keys {
		l, sc, err := plotter.NewLinePoints(pts[k])
		if err != nil {
			return err
		}
		st.apply(l, sc, k.model, k.method, 0)
		p.Add(l, sc)
		p.Legend.Add(k.model+" "+k.method, l, sc)
	}
	ideal, err := plotter.NewLine(plotter.XYs{{X: nMin, Y: float64(wMax)}, {X: nMax, Y: float64(wMax)}})
	if err != nil {
		return err
	}
	ideal.Color = colorRef
	ideal.Dashes = []vg.Length{vg.Points(2), vg.Points(3)}
	p.Add(ideal)
	p.Legend.Add("ideal", ideal)
	p.Y.Min, p.Y.Max = 0, float64(wMax)+0.25
	p.Y.Tick.Marker = stepTicks{major: 0.5, minor: 0.1}
	p.X.Min, p.X.Max = nMin/1.25, nMax*1.25
	return p.Save(plotWidth, plotHeight, path)
}

// stepTicks marks multiples of minor and labels multiples of major.
type stepTicks struct{ major, minor float64 }

func (t stepTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for k := math.Ceil(lo / t.minor); k*t.minor <= hi; k++ {
		v := k * t.minor
		tk := plot.Tick{Value: v}
		if r := math.Round(v / t.major); math.Abs(v/t.major-r) < 1e-6 {
			tk.Label = strconv.FormatFloat(r*t.major, 'f', -1, 64)
		}
		ticks = append(ticks, tk)
	}
	return ticks
}

// intTicks marks every integer.
type intTicks struct{}

func (intTicks) Ticks(lo, hi float64) []plot.Tick {
	var t []plot.Tick
	for v := math.Ceil(lo); v <= hi; v++ {
		t = append(t, plot.Tick{Value: v, Label: fmt.Sprint(v)})
	}
	return t
}
