#!/bin/sh
# Per-invocation cost of bare /bin/true, raw bwrap with Airlock's flags,
# sandbox.Exec, and (given a built airlock binary) `airlock exec -- /bin/true`,
# interleaved, medians. Usage: sandbox/bench/exec-bench.sh [N] [path/to/airlock]
set -eu
cd "$(dirname "$0")/../.."
N="${1:-200}"
AIRLOCK="${2:-}"
go build -o /tmp/airlock-execbench ./sandbox/bench/execbench
if [ -n "$AIRLOCK" ]; then
	exec /tmp/airlock-execbench -n "$N" -airlock "$AIRLOCK"
fi
exec /tmp/airlock-execbench -n "$N"
