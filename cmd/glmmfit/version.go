// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

package main

import (
	"runtime"
	"runtime/debug"
)

// version is glmmfit's version, recorded in every JSON document it writes.
const version = "0.1.0"

// software describes the program that made a result.
type software struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Module    string `json:"module"`
	GoVersion string `json:"go_version"`
	Revision  string `json:"revision,omitempty"`
}

func currentSoftware() software {
	s := software{Name: "glmmfit", Version: version, Module: "github.com/sparsevi/sparsevi", GoVersion: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, kv := range bi.Settings {
			if kv.Key == "vcs.revision" {
				s.Revision = kv.Value
			}
		}
	}
	return s
}

func versionString() string {
	s := currentSoftware()
	v := "glmmfit " + s.Version + " (" + s.Module + ", " + s.GoVersion
	if s.Revision != "" {
		v += ", " + s.Revision
	}
	return v + ")"
}
