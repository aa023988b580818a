#!/usr/bin/env bash
# Fails when the committed Wails bindings (frontend/wailsjs) are not what wails generates
# from the Go façade today, so the frontend's type check never runs against stale
# bindings. It regenerates them with .tools/wails (built from tools/wails when missing,
# as scripts/build-desktop.sh does), compares, and puts the copy as it was back: the
# work tree is left as it was found.
#
# Needs: Go and the apt packages of `make deps` (the bindings build links WebKitGTK's
# headers through cgo).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
export PATH="$PATH:/usr/local/go/bin"

fail() { echo "check-bindings: $*" >&2; exit 1; }

WAILS=$ROOT/.tools/wails
if [[ ! -x $WAILS || tools/wails/go.mod -nt $WAILS ]]; then
	echo "check-bindings: building the wails CLI into .tools/wails"
	mkdir -p .tools
	(cd tools/wails && go build -o "$WAILS" github.com/wailsapp/wails/v2/cmd/wails) ||
		fail "could not build the wails CLI from tools/wails"
fi

saved=$(mktemp -d)
restore() {
	rm -rf frontend/wailsjs
	cp -a "$saved/wailsjs" frontend/wailsjs
	rm -rf "$saved"
}
cp -a frontend/wailsjs "$saved/wailsjs"
trap restore EXIT

"$WAILS" generate module -tags webkit2_41 -nocolour -v 0 >"$saved/log" 2>&1 || {
	cat "$saved/log" >&2
	fail "wails generate module failed (see above)"
}
if ! diff -r -u "$saved/wailsjs" frontend/wailsjs >"$saved/diff"; then
	head -n 60 "$saved/diff" >&2
	fail "frontend/wailsjs is not what the Go façade generates (diff above, committed copy first): regenerate it with \`.tools/wails generate module -tags webkit2_41\` (or make build-desktop) and commit frontend/wailsjs"
fi
echo "check-bindings: frontend/wailsjs matches the Go façade"
