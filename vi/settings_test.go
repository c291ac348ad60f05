// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package vi

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

// TestSettingsValidation: a setting out of range makes Fit fail before any
// iteration with an error naming the field and its value; zero (the
// default) and the documented special values are accepted.
func TestSettingsValidation(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tg := newGaussTarget(1, 6, 1, 2)
	for _, test := range []struct {
		name string
		set  Settings
		msg  string // in the error; "" means valid
	}{
		{"zero value", Settings{}, ""},
		{"negative Refine means none", Settings{Refine: -1}, ""},
		{"negative Jitter means none", Settings{Jitter: -1}, ""},
		{"negative RelTol means none", Settings{RelTol: -1}, ""},
		{"NaN RelTol", Settings{RelTol: math.NaN()}, "RelTol"},
		{"NaN Jitter", Settings{Jitter: nan}, "Settings.Jitter is NaN"},
		{"infinite Tol", Settings{Tol: inf}, ""},
		{"infinite Clip", Settings{Rule: Nagm{Clip: inf}}, ""},
		{"explicit values", Settings{Rule: Adam{Alpha: 0.01, Beta1: 0.5, Beta2: 0.99, Eps: 1e-6}, Workers: 1, ChunkSize: 2, TimeLimit: time.Minute}, ""},
		{"explicit Snngm", Settings{Rule: Snngm{Alpha: 0.01, Alpha0: 0.1, Beta1: 0.5, Beta2: 0.99}}, ""},
		{"explicit VOGN", Settings{Rule: VOGN{Alpha: 0.01, Beta1: 0.5, Beta2: 0.99}}, ""},
		{"unknown Init", Settings{Init: Init(9)}, "Settings.Init is Init(9)"},
		{"NaN Alpha", Settings{Rule: Snngm{Alpha: nan}}, "Snngm.Alpha is NaN"},
		{"negative Alpha", Settings{Rule: PGA{Alpha: -0.1}}, "PGA.Alpha is -0.1"},
		{"infinite Alpha", Settings{Rule: NAdam{Alpha: inf}}, "NAdam.Alpha is +Inf"},
		{"NaN Alpha0", Settings{Rule: Snngm{Alpha0: nan}}, "Snngm.Alpha0 is NaN"},
		{"negative Alpha0", Settings{Method: BlockDiag, Rule: Snngm{Alpha0: -1}}, "Snngm.Alpha0 is -1"},
		{"NaN Tol", Settings{Tol: nan}, "Settings.Tol is NaN"},
		{"negative Tol", Settings{Tol: -1}, "Settings.Tol is -1"},
		{"NaN Eps", Settings{Rule: Adam{Eps: nan}}, "Adam.Eps is NaN"},
		{"negative Clip", Settings{Rule: Nagm{Clip: -5}}, "Nagm.Clip is -5"},
		{"Beta1 of 1", Settings{Rule: Snngm{Beta1: 1}}, "Snngm.Beta1 is 1"},
		{"Nagm Beta1 of 1", Settings{Rule: Nagm{Beta1: 1}}, "Nagm.Beta1 is 1"},
		{"negative Beta2", Settings{Rule: Adam{Beta2: -0.5}}, "Adam.Beta2 is -0.5"},
		{"NaN Beta2", Settings{Rule: VOGN{Beta2: nan}}, "VOGN.Beta2 is NaN"},
		{"infinite VOGN Alpha", Settings{Rule: VOGN{Alpha: inf}}, "VOGN.Alpha is +Inf"},
		{"negative Window", Settings{Window: -5}, "Settings.Window is -5"},
		{"negative MaxIter", Settings{MaxIter: -1}, "Settings.MaxIter is -1"},
		{"negative Workers", Settings{Workers: -2}, "Settings.Workers is -2"},
		{"negative ChunkSize", Settings{ChunkSize: -1}, "Settings.ChunkSize is -1"},
		{"negative Patience", Settings{Patience: -3}, "Settings.Patience is -3"},
		{"negative ConvergenceDraws", Settings{ConvergenceDraws: -1}, "Settings.ConvergenceDraws is -1"},
		{"negative FinalDraws", Settings{FinalDraws: -1}, "Settings.FinalDraws is -1"},
		{"negative TimeLimit", Settings{TimeLimit: -time.Second}, "Settings.TimeLimit is -1s"},
	} {
		t.Run(test.name, func(t *testing.T) {
			set := test.set // kept short where the case leaves them unset
			if set.MaxIter == 0 {
				set.MaxIter = 20
			}
			if set.FinalDraws == 0 {
				set.FinalDraws = 10
			}
			res, err := Fit(context.Background(), tg, set)
			if test.msg == "" {
				if errors.Is(err, ErrSettings) {
					t.Fatalf("valid settings refused: %v", err)
				}
				if res == nil {
					t.Fatalf("no result: %v", err)
				}
				return
			}
			if res != nil || !errors.Is(err, ErrSettings) {
				t.Fatalf("result %v, error %v; want no result and an error wrapping ErrSettings", res, err)
			}
			if !strings.Contains(err.Error(), test.msg) {
				t.Errorf("message %q does not contain %q", err, test.msg)
			}
		})
	}
}
