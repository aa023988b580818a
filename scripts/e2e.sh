#!/usr/bin/env bash
# Browser end-to-end tests against the real Go backend (RECIPES.md): builds the `dev`-tag
# desktop binary (build/bin/airlock-desktop-dev: Wails' dev server and WebSocket bridge,
# serving frontend/dist) and runs frontend/e2e/*.e2e.mjs with node's test runner. Each
# test file starts its own app under a private Xvfb, D-Bus session and AIRLOCK_HOME, and
# drives Debian's headless Chromium through playwright-core.
#
#   scripts/e2e.sh                 # all e2e tests
#   scripts/e2e.sh window          # only frontend/e2e/window.e2e.mjs
#
# Needs: Go, libwebkit2gtk-4.1-dev, Xvfb, dbus, chromium (apt), npm ci done in frontend/;
# network.e2e.mjs (the allowlist through the real sandbox) also bubblewrap and curl.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"

fail() { echo "e2e: FAIL: $*" >&2; exit 1; }

for tool in go node Xvfb dbus-run-session; do
	command -v "$tool" >/dev/null || fail "$tool is not installed (see make deps)"
done
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
[[ -x $CHROMIUM ]] || fail "$CHROMIUM is missing: apt-get install chromium"
[[ -d frontend/node_modules/playwright-core ]] || fail "frontend/node_modules is missing: run npm ci in frontend/ (make deps)"

if [[ ! -f frontend/dist/index.html ]] ||
	[[ -n $(find frontend/src frontend/index.html frontend/wailsjs -newer frontend/dist/index.html -print -quit) ]]; then
	echo "e2e: frontend/dist is missing or older than the sources: npm run build"
	(cd frontend && npm run build) || fail "the frontend build failed"
fi
echo "e2e: go build -tags dev,webkit2_41 -> build/bin/airlock-desktop-dev"
go build -trimpath -tags dev,webkit2_41 -o build/bin/airlock-desktop-dev . || fail "the dev build failed"

files=()
if (($# > 0)); then
	for name in "$@"; do files+=("e2e/$name.e2e.mjs"); done
else
	for f in frontend/e2e/*.e2e.mjs; do files+=("e2e/${f##*/}"); done
fi
cd frontend
CHROMIUM=$CHROMIUM node --test --test-concurrency=1 --test-timeout=180000 "${files[@]}" ||
	fail "end-to-end tests failed (screenshot of the last page in artifacts/e2e-*.png)"
echo "e2e: PASS"
