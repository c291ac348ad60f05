#!/usr/bin/env bash
# Copyright ©2026 The sparsevi Authors. All rights reserved.
# Use of this source code is governed by a BSD-style
# license that can be found in the LICENSE file.
#
# buildcost.sh measures what each Parquet library adds to glmmfit: the
# clean build time (an empty GOCACHE; the module cache warm) and the
# binary size. It builds three copies of the repository's HEAD in a
# temporary directory: glmmfit as it is without datasets/parquet's
# library, and glmmfit with the reader of libs_parquetgo.go or
# libs_arrow.go linked in (called from an init that runs only when
# BSIZE_READ is set, so that the linker keeps it). Run from this
# directory on an idle machine: it takes some minutes. REPS (default 2)
# sets the rounds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for v in base pq arrow; do
	mkdir "$work/$v"
	git -C "$repo" archive HEAD | tar -x -C "$work/$v"
	rm -rf "$work/$v/datasets/parquet" "$work/$v/cmd/glmmfit/parquetdata.go" "$work/$v/cmd/glmmfit/parquetdata_test.go"
	sed -i '/isParquet(path) {/,+2d' "$work/$v/cmd/glmmfit/data.go"
done
reader() { # file, function: the reader of a libs file, without its writer
	python3 - "$1" "$2" <<'PY'
import re, sys
src = open(sys.argv[1]).read()
src = re.sub(r'\nfunc write\w+\(.*?\n}\n', '\n', src, flags=re.S)
src = re.sub(r'\ntype pqRow struct \{.*?\n}\n', '\n', src, flags=re.S)
for imp in ['compress', 'schema']:
    src = src.replace('\t"github.com/apache/arrow-go/v18/parquet/%s"\n' % imp, '')
i = src.index('\n)\n') + 3
src = src[:i] + '''
type cols struct {
	subject        []string
	y, x1, x2, x3 []float64
	x3miss         []bool
}

func init() {
	if p := os.Getenv("BSIZE_READ"); p != "" {
		c, err := %s(p)
		fmt.Println(len(c.y), err)
	}
}
''' % sys.argv[2] + src[i:]
print(src)
PY
}
reader "$here/libs_parquetgo.go" readPQ >"$work/pq/cmd/glmmfit/zz_lib.go"
reader "$here/libs_arrow.go" readArrow >"$work/arrow/cmd/glmmfit/zz_lib.go"
(cd "$work/pq" && go mod edit -droprequire github.com/parquet-go/parquet-go && go get github.com/parquet-go/parquet-go@v0.32.0 >/dev/null 2>&1 && go mod tidy >/dev/null 2>&1)
(cd "$work/arrow" && go mod edit -droprequire github.com/parquet-go/parquet-go && go get github.com/apache/arrow-go/v18@v18.8.0 >/dev/null 2>&1 && go mod tidy >/dev/null 2>&1)
(cd "$work/base" && go mod tidy >/dev/null 2>&1)
printf '%-6s %-6s %10s %12s\n' round build seconds bytes
for rep in $(seq "${REPS:-2}"); do
	for v in base pq arrow; do
		cache=$(mktemp -d)
		start=$(date +%s.%N)
		(cd "$work/$v" && GOCACHE=$cache go build -o "$work/glmmfit-$v" ./cmd/glmmfit)
		end=$(date +%s.%N)
		printf '%-6s %-6s %10.1f %12d\n' "$rep" "$v" "$(echo "$end - $start" | bc)" "$(stat -c %s "$work/glmmfit-$v")"
		rm -rf "$cache"
	done
done
for v in pq arrow; do
	(cd "$work/$v" && CGO_ENABLED=0 go build -o /dev/null ./cmd/glmmfit && echo "$v: builds with CGO_ENABLED=0")
done
