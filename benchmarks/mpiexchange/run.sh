#!/bin/sh
# Copyright ©2026 The sparsevi Authors. All rights reserved.
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file.
#
# Times the exchange of package mpi on 2 processes (or NP), over shared
# memory and over loopback TCP, printing the load average before each run.
# Extra arguments go to mpiexchange (for example -g 10,100). Run from
# anywhere: sh benchmarks/mpiexchange/run.sh
set -eu

if ! command -v mpirun >/dev/null 2>&1; then
	echo "skipped: Open MPI not installed"
	exit 0
fi
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
go build -tags mpi -o "$tmp/mpiexchange" ./benchmarks/mpiexchange

asroot=
if [ "$(id -u)" = 0 ]; then
	asroot=--allow-run-as-root
fi
np=${NP:-2}
# pml ob1 keeps Open MPI from choosing UCX, which ignores the btl setting;
# btl_tcp_if_include lo puts TCP on the loopback interface, which Open MPI
# excludes by default.
for btl in "vader,self" "tcp,self --mca btl_tcp_if_include lo"; do
	echo "load average:$(uptime | sed 's/.*load average://')"
	echo "mpirun -np $np --oversubscribe --mca pml ob1 --mca btl $btl mpiexchange $*"
	# shellcheck disable=SC2086
	mpirun $asroot -np "$np" --oversubscribe --mca pml ob1 --mca btl $btl "$tmp/mpiexchange" "$@"
	echo
done
