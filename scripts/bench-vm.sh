#!/usr/bin/env bash
# Benchmarks of the micro-VM (issue 9), with the built binaries and a built image:
#   1. cold boot to first command, warm command (VM) vs local bwrap vs bare  (Go benchmarks)
#   2. `airlock exec` (bwrap) vs `airlock exec --execution-mode sandbox` (one-off VM) vs bare, wall time per command
#   3. `airlock sandbox install` through a running daemon vs curl of the same files, same local server
# Usage: IMAGE=/tmp/sandbox-image scripts/bench-vm.sh   (IMAGE defaults to build/sandbox-image;
# binaries from build/bin: run `make build-cli` first). Prints the figures; nothing is kept.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
IMAGE=${IMAGE:-$ROOT/build/sandbox-image}
A=$ROOT/build/bin/airlock
N=${N:-20}
[[ -f $IMAGE/manifest.json ]] || { echo "bench-vm: no image in $IMAGE (make sandbox-image, or IMAGE=DIR)" >&2; exit 1; }
[[ -x $A ]] || { echo "bench-vm: $A missing: make build-cli" >&2; exit 1; }
WORK=$(mktemp -d /var/tmp/airlock-bench-vm.XXXXXX)
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$WORK"; }
trap cleanup EXIT
export AIRLOCK_HOME=$WORK/airlock HOME=$WORK/home
mkdir -p "$HOME/Airlock/ws"
WS=$HOME/Airlock/ws

echo "## 1. Go benchmarks (sandbox/vm)"
(cd "$ROOT" && AIRLOCK_SANDBOX_IMAGE=$IMAGE go test -run XXX -bench 'ColdBoot' -benchtime 3x ./sandbox/vm | grep Benchmark)
(cd "$ROOT" && AIRLOCK_SANDBOX_IMAGE=$IMAGE go test -run XXX -bench 'WarmExec|LocalBwrap|Bare' -benchtime ${N}x ./sandbox/vm | grep Benchmark)

per() { # label, command...: mean wall ms of N runs
	local label=$1; shift
	local s e
	s=$(date +%s%N)
	for ((i = 0; i < N; i++)); do "$@" >/dev/null 2>&1; done
	e=$(date +%s%N)
	printf '%-55s %8.1f ms\n' "$label" "$(echo "($e - $s) / $N / 1000000" | bc -l)"
}

echo "## 2. per command, wall time (mean of $N)"
per "bare /bin/true" /bin/true
per "airlock exec -- true (bwrap)" "$A" exec --cwd "$WS" -- true

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$IMAGE" >/dev/null 2>&1 &
PIDS+=($!)
"$A" daemon >"$WORK/daemon.log" 2>&1 &
PIDS+=($!)
for _ in $(seq 100); do "$A" status >/dev/null 2>&1 && break; sleep 0.1; done
sleep 0.5

echo "## 3. install throughput, same server (python3 -m http.server on 127.0.0.1:$PORT)"
bytes=$(python3 -c "import json; print(sum(a['size'] for a in json.load(open('$IMAGE/manifest.json'))['artifacts']))")
s=$(date +%s%N)
"$A" sandbox install --manifest "http://127.0.0.1:$PORT/manifest.json" >/dev/null 2>&1
e=$(date +%s%N)
printf '%-55s %8.1f MB/s (%d MB in %.2f s)\n' "airlock sandbox install (through the daemon)" "$(echo "$bytes / (($e - $s) / 1000000000) / 1000000" | bc -l)" $((bytes / 1000000)) "$(echo "($e - $s) / 1000000000" | bc -l)"
mkdir -p "$WORK/curl"
s=$(date +%s%N)
for f in $(python3 -c "import json; print(' '.join(a['url'] for a in json.load(open('$IMAGE/manifest.json'))['artifacts']))"); do
	curl -sSf -o "$WORK/curl/$f" "http://127.0.0.1:$PORT/$f"
done
e=$(date +%s%N)
printf '%-55s %8.1f MB/s (%d MB in %.2f s)\n' "curl -o of the same files" "$(echo "$bytes / (($e - $s) / 1000000000) / 1000000" | bc -l)" $((bytes / 1000000)) "$(echo "($e - $s) / 1000000000" | bc -l)"

echo "## 2b. one-off VM per command (airlock exec --execution-mode sandbox), mean of 3"
N=3 per "airlock exec --execution-mode sandbox -- true" "$A" exec --cwd "$WS" --execution-mode sandbox -- true
