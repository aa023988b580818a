#!/bin/sh
# Per-invocation cost of bare /bin/true, raw bwrap with Airlock's flags,
# sandbox.Exec, the floor of a Go front-end (an empty static Go program, and one
# that only starts raw bwrap), and (given a built airlock binary)
# `airlock exec -- /bin/true`, interleaved, medians.
# Usage: sandbox/bench/exec-bench.sh [N] [path/to/airlock]
set -eu
cd "$(dirname "$0")/../.."
N="${1:-200}"
AIRLOCK="${2:-}"
go build -o /tmp/airlock-execbench ./sandbox/bench/execbench
CGO_ENABLED=0 go build -trimpath -o /tmp/airlock-execbench-floor ./sandbox/bench/execbench/floor
if [ -n "$AIRLOCK" ]; then
	exec /tmp/airlock-execbench -n "$N" -floor /tmp/airlock-execbench-floor -airlock "$AIRLOCK"
fi
exec /tmp/airlock-execbench -n "$N" -floor /tmp/airlock-execbench-floor
