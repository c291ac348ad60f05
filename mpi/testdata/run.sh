#!/bin/sh
# Copyright ©2026 The sparsevi Authors. All rights reserved.
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file.
#
# Builds the tests of package mpi with -tags mpi and runs them under mpirun
# on 1, 2 and 3 processes, then glmmfit's (which start mpirun themselves). Exits 0 with a "skipped" line when Open MPI (mpicc,
# mpirun and its pkg-config file ompi-c) is not installed, nonzero on any
# failure. Run from anywhere: sh mpi/testdata/run.sh
set -eu

if ! command -v mpicc >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
	echo "skipped: Open MPI not installed"
	exit 0
fi
if ! command -v pkg-config >/dev/null 2>&1 || ! pkg-config --exists ompi-c; then
	echo "skipped: Open MPI not installed (pkg-config finds no ompi-c; install pkg-config and libopenmpi-dev)"
	exit 0
fi

cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
go test -tags mpi -c -o "$tmp/mpi.test" .

# mpirun refuses to start as root unless told; CI containers run as root.
asroot=
if [ "$(id -u)" = 0 ]; then
	asroot=--allow-run-as-root
fi
for np in 1 2 3; do
	# timeout ends a job that hangs in a collective call.
	if timeout 300 mpirun $asroot --oversubscribe -np "$np" "$tmp/mpi.test" -test.count=1 >"$tmp/out" 2>&1; then
		echo "ok   mpi tests under mpirun -np $np"
	else
		cat "$tmp/out"
		echo "FAIL mpi tests under mpirun -np $np"
		exit 1
	fi
done

# glmmfit under mpirun: the same JSON as alone on 2 and 3 processes and
# after a checkpoint and -resume, and a killed process ends the job.
cd ..
if go test -tags mpi -count=1 -run TestMPI ./cmd/glmmfit >"$tmp/out" 2>&1; then
	echo "ok   glmmfit under mpirun (go test -tags mpi -run TestMPI ./cmd/glmmfit)"
else
	cat "$tmp/out"
	echo "FAIL glmmfit under mpirun"
	exit 1
fi
