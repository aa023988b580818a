#!/bin/sh
# Per-invocation cost of bare /bin/true, raw bwrap with Airlock's flags,
# sandbox.Exec, the floor of a Go front-end (an empty static Go program, and one
# that only starts raw bwrap), and (given built airlock binaries)
# `airlock exec -- /bin/true` for each, interleaved, medians.
# Usage: [NETWORK="on allowlist"] sandbox/bench/exec-bench.sh [N] [path/to/airlock [another/airlock ...]]
# (NETWORK: also run each airlock with these --network values)
#
# Every executable is copied (cp) before the run: a file fresh from the Go linker
# sits in the page cache in small pages and starts ~1 ms slower than the same bytes
# copied, so builds are compared in the same state (that of an installed copy).
set -eu
cd "$(dirname "$0")/../.."
N="${1:-200}"
[ $# -gt 0 ] && shift
D=/tmp/airlock-execbench.d
rm -rf "$D" && mkdir -p "$D"
go build -o "$D/execbench.built" ./sandbox/bench/execbench
CGO_ENABLED=0 go build -trimpath -o "$D/floor.built" ./sandbox/bench/execbench/floor
cp "$D/execbench.built" "$D/execbench"
cp "$D/floor.built" "$D/floor"
i=0
args=""
for a in "$@"; do
	i=$((i + 1))
	cp "$a" "$D/$i-$(basename "$a")"
	args="$args -airlock $D/$i-$(basename "$a")"
done
for m in ${NETWORK:-}; do
	args="$args -network $m"
done
# shellcheck disable=SC2086 # the paths hold no spaces
exec "$D/execbench" -n "$N" -floor "$D/floor" $args
