// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command correction keeps, of a glmmfit fit document read from standard
// input (-format json), the parts that describe the importance correction
// (the options, the status, the lower bound and log p(y), the correction
// and the corrected summaries), and writes them to standard output as a
// reference for tests. reference.sh makes toenail's reference, which
// cmd/glmmfit's TestCorrectionToenail compares the default run with.
package main

import (
	"encoding/json"
	"fmt"
	"os"
)

func main() {
	var doc map[string]json.RawMessage
	if err := json.NewDecoder(os.Stdin).Decode(&doc); err != nil {
		fmt.Fprintln(os.Stderr, "correction: reading the fit document:", err)
		os.Exit(1)
	}
	out := map[string]json.RawMessage{}
	for _, k := range []string{"options", "status", "lower_bound", "correction", "psis_corrected"} {
		v, ok := doc[k]
		if !ok {
			fmt.Fprintf(os.Stderr, "correction: the fit document has no %q\n", k)
			os.Exit(1)
		}
		out[k] = v
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		fmt.Fprintln(os.Stderr, "correction:", err)
		os.Exit(1)
	}
	os.Stdout.Write(append(b, '\n'))
}
