#!/usr/bin/env bash
# Screenshots of every page of the real window under Xvfb, in the light and the dark
# theme, into artifacts/screenshots/{light,dark}/page-*.png (and window.png). Builds
# nothing: expects build/bin/airlock-desktop. Each run is a full window smoke test.
set -euo pipefail
cd "$(dirname "$0")/.."
for theme in light dark; do
	ARTIFACTS=$PWD/artifacts/screenshots/$theme SMOKE_PAGES=1 SMOKE_THEME=$theme scripts/window-smoke.sh
done
echo "screenshots: artifacts/screenshots/{light,dark}/"
