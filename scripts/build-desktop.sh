#!/usr/bin/env bash
# Builds the desktop app, build/bin/airlock-desktop (Wails v2, WebKitGTK 4.1).
#
#   scripts/build-desktop.sh            # production build (frontend embedded)
#   DEV=1 scripts/build-desktop.sh      # also build/bin/airlock-desktop-dev (the `dev` tag
#                                       # build the browser end-to-end tests drive)
#
# Needs: Go, the apt packages of `make deps` (libgtk-3-dev, libwebkit2gtk-4.1-dev), and
# Node. Builds the wails CLI into .tools/wails from tools/wails when it is missing (the
# CLI's own x/tools is too old for Go 1.26, see tools/wails/tools.go), runs `npm ci` in
# frontend/ when node_modules is missing. Environment: LDFLAGS (extra -ldflags, e.g. the
# version stamp), VERSION (shown in the log only).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$PATH:/usr/local/go/bin"

fail() { echo "build-desktop: $*" >&2; exit 1; }
step() { echo "build-desktop: $*"; }

command -v go >/dev/null || fail "go is not on PATH (install Go 1.26, or add /usr/local/go/bin to PATH)"
command -v npm >/dev/null || fail "npm is not on PATH (install Node.js 20.19+ and npm)"
pkg-config --exists webkit2gtk-4.1 gtk+-3.0 2>/dev/null ||
	fail "WebKitGTK 4.1 / GTK 3 development files are missing: apt-get install libwebkit2gtk-4.1-dev libgtk-3-dev (or run make deps)"

# 1. The wails CLI, pinned by tools/wails/go.mod. Rebuilt when go.mod changes.
WAILS=$ROOT/.tools/wails
if [[ ! -x $WAILS || tools/wails/go.mod -nt $WAILS ]]; then
	step "building the wails CLI into .tools/wails (once; about a minute on a cold module cache)"
	mkdir -p .tools
	(cd tools/wails && go build -o "$WAILS" github.com/wailsapp/wails/v2/cmd/wails) ||
		fail "could not build the wails CLI from tools/wails (network to the Go module proxy needed the first time)"
fi

# 2. Frontend packages (make deps normally ran npm ci already).
if [[ ! -d frontend/node_modules ]]; then
	step "frontend/node_modules is missing: npm ci"
	(cd frontend && npm ci --no-audit --no-fund) || fail "npm ci failed in frontend/"
fi

# 3. wails build: regenerates frontend/wailsjs from the Go façade, builds the frontend
#    (npm run build, see wails.json) and compiles with -tags desktop,production,webkit2_41.
#    -m: never `go mod tidy` the shared go.mod; -nosyncgomod: leave its wails version alone.
step "wails build ${VERSION:+(version $VERSION) }-> build/bin/airlock-desktop"
start=$(date +%s)
"$WAILS" build -m -nosyncgomod -trimpath -tags webkit2_41 -o airlock-desktop \
	-ldflags "${LDFLAGS:-}" -nocolour -v 1 ||
	fail "wails build failed (see above)"
[[ -x build/bin/airlock-desktop ]] || fail "wails build reported success but build/bin/airlock-desktop is missing"
step "built build/bin/airlock-desktop in $(($(date +%s) - start)) s"

# The generated bindings are committed so the type check runs without the CLI; say so
# when the committed copy no longer matches the Go façade.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1 && ! git -c core.fileMode=false diff --quiet -- frontend/wailsjs 2>/dev/null; then
	echo "build-desktop: note: frontend/wailsjs changed (the Go façade changed): commit the regenerated bindings" >&2
fi

# 4. Optionally the dev-tag build for the browser end-to-end tests (RECIPES.md): Wails'
#    dev server and WebSocket bridge, serving -assetdir frontend/dist.
if [[ ${DEV:-0} == 1 ]]; then
	step "go build -tags dev,webkit2_41 -> build/bin/airlock-desktop-dev"
	go build -trimpath -tags dev,webkit2_41 -ldflags "${LDFLAGS:-}" -o build/bin/airlock-desktop-dev . ||
		fail "the dev build failed"
fi
