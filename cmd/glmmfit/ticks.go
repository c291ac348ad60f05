// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"math"
	"strconv"

	"gonum.org/v1/plot"
)

// niceTicks marks an axis at multiples of 1, 2 or 5 times a power of ten,
// about five labelled ticks with four minor ticks between, and labels them
// with no more digits than the step needs (plot.DefaultTicks labels a
// padded range at values such as -7.5, 2.5, 12.5).
type niceTicks struct{}

func (niceTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) {
		return []plot.Tick{{Value: lo, Label: strconv.FormatFloat(lo, 'g', 4, 64)}}
	}
	raw := (hi - lo) / 5
	pow := math.Pow(10, math.Floor(math.Log10(raw)))
	step := pow
	for _, m := range []float64{2, 5, 10} {
		if raw/pow > m*0.75 {
			step = m * pow
		}
	}
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	minor := step / 5
	var ticks []plot.Tick
	for k := math.Ceil(lo / minor); k*minor <= hi; k++ {
		v := k * minor
		t := plot.Tick{Value: v}
		if r := math.Round(v / step); math.Abs(v/step-r) < 1e-6 {
			v = r * step
			if v == 0 {
				v = 0 // not -0
			}
			t.Value = v
			t.Label = strconv.FormatFloat(v, 'f', prec, 64)
		}
		ticks = append(ticks, t)
	}
	return ticks
}
