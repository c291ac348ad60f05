// Copyright ©2026 The sparsevi Authors. All rights reserved.
// Use of this source code is governed by a BSD-style
// license that can be found in the LICENSE file.

// Command glmmfit fits Bayesian generalized linear mixed models, written as
// lme4 formulas, to CSV data by Gaussian variational approximation with
// natural-gradient updates of sparse Cholesky factors.
//
// It has three subcommands:
//
//	glmmfit fit       fit a model and print an lme4/brms-style summary
//	glmmfit predict   predict the linear predictor and the mean for new rows
//	glmmfit simulate  write a simulated longitudinal data set as CSV
//
// Run glmmfit -h, or glmmfit fit -h and so on, for the full usage. The first
// command to try on a fresh machine is
//
//	go run ./cmd/glmmfit fit -example
//
// which fits a small simulated data set embedded in the binary.
//
// Exit codes: 0 success (the fit converged); 1 bad input or a failure, with
// one line on standard error; 2 bad usage; 3 the fit stopped at the iteration
// or time limit without converging (results are still written); 4 the fit
// diverged; 130 interrupted by SIGINT and 143 by SIGTERM (the last good
// state is written; a second signal exits at once).
package main

import (
	"fmt"
	"io"
	"os"
)

// Exit codes.
const (
	exitOK          = 0
	exitFail        = 1
	exitUsage       = 2
	exitLimit       = 3
	exitDiverged    = 4
	exitInterrupted = 130
)

func main() {
	procs, finish, err := startProcesses()
	if err != nil {
		fmt.Fprintln(os.Stderr, "glmmfit: "+err.Error())
		os.Exit(exitFail)
	}
	code := runIn(procs, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	finish(code)
	os.Exit(code)
}

// run runs glmmfit with the arguments after the program name and returns the
// exit code. stderr receives at most one line per problem.
func run(args []string, stdin io.Reader, stdout io.Writer, stderr *os.File) int {
	return runIn(nil, args, stdin, stdout, stderr)
}

// runIn is run as one of the processes procs of an MPI job, or alone if
// procs is nil.
func runIn(procs processes, args []string, stdin io.Reader, stdout io.Writer, stderr *os.File) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, mainUsage)
		return exitUsage
	}
	env := &env{stdin: stdin, stdout: stdout, stderr: stderr, procs: procs}
	if procs != nil && args[0] != "fit" {
		return env.exit(fmt.Errorf("only glmmfit fit runs as several processes (mpirun -np %d); run glmmfit %s alone", procs.Size(), args[0]))
	}
	switch args[0] {
	case "fit":
		return env.exit(runFit(env, args[1:]))
	case "predict":
		return env.exit(runPredict(env, args[1:]))
	case "simulate":
		return env.exit(runSimulate(env, args[1:]))
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, versionString())
		return exitOK
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if u, ok := commandUsage[args[1]]; ok {
				fmt.Fprint(stdout, u)
				return exitOK
			}
		}
		fmt.Fprint(stdout, mainUsage)
		return exitOK
	}
	return env.exit(usageErrorf("glmmfit", "unknown command %q (want fit, predict or simulate)", args[0]))
}

// env is what a subcommand reads and writes.
type env struct {
	stdin  io.Reader
	stdout io.Writer
	stderr *os.File
	procs  processes // the MPI job's processes; nil for one process
}
