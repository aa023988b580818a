#!/bin/sh
# Per-invocation cost of bare /bin/true, raw bwrap with Airlock's flags,
# sandbox.Exec, the floor of a Go front-end (an empty static Go program, and one
# that only starts raw bwrap), and (given a built airlock binary)
# `airlock exec -- /bin/true`, interleaved, medians.
# Usage: sandbox/bench/exec-bench.sh [N] [path/to/airlock [another/airlock ...]]
set -eu
cd "$(dirname "$0")/../.."
N="${1:-200}"
[ $# -gt 0 ] && shift
go build -o /tmp/airlock-execbench ./sandbox/bench/execbench
CGO_ENABLED=0 go build -trimpath -o /tmp/airlock-execbench-floor ./sandbox/bench/execbench/floor
set -- $(for a in "$@"; do printf -- '-airlock %s ' "$a"; done)
exec /tmp/airlock-execbench -n "$N" -floor /tmp/airlock-execbench-floor "$@"
