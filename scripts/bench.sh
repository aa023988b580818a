#!/usr/bin/env bash
# `make bench`: the Go benchmarks, then whole-command comparisons run side by side in
# one hyperfine run each, so the ratios hold on a noisy machine. Results go to
# artifacts/bench/; BENCHMARKS.md quotes them with these commands.
set -euo pipefail
cd "$(dirname "$0")/.."
out=artifacts/bench
mkdir -p "$out"

if ! command -v hyperfine >/dev/null; then
	if [ "$(id -u)" = 0 ]; then
		apt-get install -y -q hyperfine >/dev/null
	else
		echo "bench: hyperfine is missing: sudo apt-get install -y hyperfine" >&2
		exit 1
	fi
fi

echo "== Go benchmarks"
# The scale benchmarks seed a database of a million runs each; on a loaded machine the
# dispatch package alone takes longer than go test's default 10 minutes.
go test -run='^$' -bench=. -benchmem -count=1 -timeout 60m ./... | tee "$out/go-bench.txt"

echo "== CLI start-up: airlock version against /bin/true"
hyperfine -N --warmup 30 --runs 500 --export-markdown "$out/start.md" \
	'/bin/true' 'build/bin/airlock version'

if command -v bwrap >/dev/null; then
	# The allowlist rows need a core to serve the egress proxy (POST /v1/sandboxes/egress):
	# a headless one with a private home, stopped afterwards.
	echo "== sandbox: bare, raw bwrap, airlock exec with the network off, allowlist (core connected) and on"
	benchhome=$(mktemp -d /var/tmp/airlock-bench-home.XXXXXX)
	mkdir -p "$benchhome/config"
	AIRLOCK_HOME=$benchhome build/bin/airlockd >"$benchhome/airlockd.log" 2>&1 &
	daemon=$!
	stop_daemon() { kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null; rm -rf "$benchhome"; }
	trap stop_daemon EXIT
	for _ in $(seq 100); do [ -S "$benchhome/run/airlock.sock" ] && break; sleep 0.1; done
	[ -S "$benchhome/run/airlock.sock" ] || { cat "$benchhome/airlockd.log" >&2; echo "bench: airlockd did not start" >&2; exit 1; }
	AIRLOCK_HOME=$benchhome NETWORK="allowlist on" sandbox/bench/exec-bench.sh "${EXEC_BENCH_N:-150}" "$PWD/build/bin/airlock" | tee "$out/exec.txt"
	stop_daemon
	trap - EXIT
fi
if [ -x build/bin/airlock-desktop ]; then
	echo "== desktop: cold start, memory, idle CPU against an empty Wails window"
	scripts/bench-desktop.sh | tee "$out/desktop.md"
fi
echo "bench: results in $out/"
