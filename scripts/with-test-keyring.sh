#!/usr/bin/env bash
# Runs a command inside a private D-Bus session with a fresh, unlocked gnome-keyring,
# as the tests do: `scripts/with-test-keyring.sh go test ./...`.
set -euo pipefail
keyring_home=$(mktemp -d)
trap 'rm -rf "$keyring_home"' EXIT
export XDG_DATA_HOME=$keyring_home
exec dbus-run-session -- bash -c 'echo -n airlock-test | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$@"' bash "$@"
