#!/bin/sh
# reference.sh DATA_DIR: toenail's long-run reference for the importance
# correction (40,000 draws of theta_g, the random effects integrated out by
# the same quadrature, another seed), written to toenail_reference.json
# beside this script. About two minutes on two cores.
set -eu
dir=$(dirname "$0")
data=${1:-../shared/datasets}
go run ./cmd/glmmfit fit -data "$data/toenail.csv" -ref outcome='none or mild' \
	-formula 'outcome ~ treatment*time + (1 | patientID)' -quiet \
	-correct always -correct-draws 40000 -seed 99 -format json |
	go run ./benchmarks/correction >"$dir/toenail_reference.json"
