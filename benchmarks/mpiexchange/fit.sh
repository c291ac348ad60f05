#!/bin/sh
# Copyright ©2026 The sparsevi Authors. All rights reserved.
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file.
#
# Times a fit of simulated Bernoulli subjects (10^6 unless SUBJECTS is set;
# GVA unless METHOD is set, e.g. to auto for glmmfit's default) in one
# process of 2 workers against an MPI job of 2 processes of one
# worker each, interleaved, REPS times (default 2), printing the load average
# before each run and, from glmmfit's JSON, the iterations, the bound, the
# time to the end of the first window (the start and 25 iterations), the
# time per iteration after it, the fit's time and the exchanges. Needs Open
# MPI and python3. Run from anywhere: sh benchmarks/mpiexchange/fit.sh
set -eu

if ! command -v mpirun >/dev/null 2>&1; then
	echo "skipped: Open MPI not installed"
	exit 0
fi
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
go build -tags mpi -o "$tmp/glmmfit" ./cmd/glmmfit
subjects=${SUBJECTS:-1000000}
"$tmp/glmmfit" simulate -family bernoulli -subjects "$subjects" -obs 7 -beta -1,0.5,0.5,-0.5,1 -re-sd 1 -seed 5 -out "$tmp/sim.csv" >/dev/null
asroot=
if [ "$(id -u)" = 0 ]; then
	asroot=--allow-run-as-root
fi
fit="fit -data $tmp/sim.csv -formula y~t+x1+x2+x3+(1|id) -family bernoulli -method ${METHOD:-gva} -format json -quiet"
summary='import json,sys
d=json.load(open(sys.argv[1])); t=d["timings"]; a,b=d["trace"][0],d["trace"][-1]
print("iterations %d, bound %.17g, first window at %.1f s, %.0f ms per iteration after it, fit %.1f s, exchanges %d in %.1f s" % (
    d["iterations"], d["lower_bound"]["value"], a["elapsed_seconds"],
    1000*(b["elapsed_seconds"]-a["elapsed_seconds"])/(b["iter"]-a["iter"]), t["fit_seconds"],
    t.get("exchanges", 0), t.get("exchange_seconds", 0)))'
for rep in $(seq "${REPS:-2}"); do
	echo "load average:$(uptime | sed 's/.*load average://')"
	echo "glmmfit $fit -threads 2"
	# shellcheck disable=SC2086
	"$tmp/glmmfit" $fit -threads 2 >"$tmp/one.json"
	python3 -c "$summary" "$tmp/one.json"
	echo "load average:$(uptime | sed 's/.*load average://')"
	echo "mpirun -np 2 --mca pml ob1 --mca btl vader,self glmmfit $fit -threads 1"
	# shellcheck disable=SC2086
	mpirun $asroot -np 2 --mca pml ob1 --mca btl vader,self "$tmp/glmmfit" $fit -threads 1 >"$tmp/two.json"
	python3 -c "$summary" "$tmp/two.json"
done
