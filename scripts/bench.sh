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

if [ -x scripts/bench-exec.sh ]; then
	echo "== sandbox: bare, raw bwrap, airlock exec"
	scripts/bench-exec.sh "$out"
fi
if [ -x build/bin/airlock-desktop ]; then
	echo "== desktop: cold start, memory, idle CPU against an empty Wails window"
	scripts/bench-desktop.sh | tee "$out/desktop.md"
fi
echo "bench: results in $out/"
