#!/usr/bin/env bash
# End-to-end test of `airlock mcp` with the official TypeScript MCP SDK client
# (@modelcontextprotocol/sdk, test/mcp-e2e: over stdio, and over streamable HTTP with
# `airlock mcp --http`), then the official MCP conformance suite against `airlock mcp --http`
# (@modelcontextprotocol/conformance, test/mcp-conformance). Builds build/bin/airlock (CGO_ENABLED=0) and
# build/bin/airlockd, starts the daemon with its own temporary AIRLOCK_HOME inside a
# private D-Bus session with an unlocked test keyring, runs the node test (which spawns
# `airlock mcp` over stdio and `airlock mcp --http`, exactly as the README configures them),
# runs the conformance suite, and stops the daemon.
#
#   scripts/mcp-e2e.sh                     # the test
#   MCP_E2E_BENCH=1 scripts/mcp-e2e.sh     # then the round-trip latency figures
#
# Needs: Go, node 20+, npm, bubblewrap, dbus-run-session, gnome-keyring, script (util-linux).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
root=$(pwd)

fail() { echo "mcp-e2e: FAIL: $*" >&2; exit 1; }

if [[ ${1:-} != --inner ]]; then
	for tool in go node npm bwrap dbus-run-session script; do
		command -v "$tool" >/dev/null || fail "$tool is not installed (see make deps)"
	done
	echo "mcp-e2e: npm ci in test/mcp-e2e"
	(cd test/mcp-e2e && npm ci --no-audit --no-fund --loglevel=error) || fail "npm ci failed"
	echo "mcp-e2e: npm ci in test/mcp-conformance"
	(cd test/mcp-conformance && npm ci --no-audit --no-fund --loglevel=error) || fail "npm ci in test/mcp-conformance failed"
	echo "mcp-e2e: build build/bin/airlock, build/bin/airlock-agent (CGO_ENABLED=0) and build/bin/airlockd"
	CGO_ENABLED=0 go build -trimpath -o build/bin/airlock ./cmd/airlock || fail "building airlock failed"
	CGO_ENABLED=0 go build -trimpath -o build/bin/airlock-agent ./cmd/airlock-agent || fail "building airlock-agent failed"
	go build -trimpath -o build/bin/airlockd ./cmd/airlockd || fail "building airlockd failed"
	exec scripts/with-test-keyring.sh "$0" --inner
fi

# Inside the private D-Bus session. The workspace is not under /tmp (a known sandbox
# limitation of read-only runs in /tmp).
base=$(mktemp -d /var/tmp/airlock-mcp-e2e.XXXXXX)
export AIRLOCK_HOME=$base/home
export AIRLOCK_E2E_WORKSPACE=$base/workspace
export AIRLOCK_E2E_OUTSIDE=$base/outside
export AIRLOCK_BIN=$root/build/bin/airlock
# The tests start `airlock` by name, as the README's configurations do.
export PATH=$root/build/bin:$PATH
mkdir -p "$AIRLOCK_HOME" "$AIRLOCK_E2E_WORKSPACE" "$AIRLOCK_E2E_OUTSIDE"
# The person proves presence at a terminal with a password checked by PAM in the core
# ([approvals] terminal_proof = "os"). The daemon runs as root here, whose password is not
# the test's to set: a PAM service of the test's own asks for the password through the core's
# conversation (pam_exec expose_authtok) and accepts only this one.
[[ $(id -u) == 0 ]] || fail "installing the test's PAM service needs root"
export AIRLOCK_E2E_PASSWORD="e2e-$RANDOM$RANDOM"
pam_service="airlock-mcp-e2e-$$"
printf '%s' "$AIRLOCK_E2E_PASSWORD" >"$base/password"
chmod 600 "$base/password"
printf '#!/bin/bash\nIFS= read -r -d "" pw || true\n[ "$pw" = "$(cat %s)" ]\n' "$base/password" >"$base/pam-check"
chmod 700 "$base/pam-check"
printf 'auth required pam_exec.so expose_authtok quiet %s\naccount required pam_permit.so\n' "$base/pam-check" >"/etc/pam.d/$pam_service"
mkdir -p "$AIRLOCK_HOME/config"
printf '[approvals]\npam_service = "%s"\n' "$pam_service" >"$AIRLOCK_HOME/config/config.toml"
unset AIRLOCK_SANDBOX_MODE AIRLOCK_NETWORK AIRLOCK_APPROVAL_POLICY AIRLOCK_EXECUTION_MODE

"$root/build/bin/airlockd" >"$base/airlockd.log" 2>&1 &
daemon=$!
cleanup() {
	kill "$daemon" 2>/dev/null && wait "$daemon" 2>/dev/null
	rm -f "/etc/pam.d/$pam_service"
	if [[ ${status:-1} != 0 ]]; then
		echo "mcp-e2e: daemon log ($base/airlockd.log):" >&2
		tail -n 40 "$base/airlockd.log" >&2 || true
	else
		rm -rf "$base"
	fi
}
trap cleanup EXIT
for _ in $(seq 100); do
	"$AIRLOCK_BIN" status >/dev/null 2>&1 && break
	kill -0 "$daemon" 2>/dev/null || fail "airlockd exited at start: $(tail -n 5 "$base/airlockd.log")"
	sleep 0.1
done
"$AIRLOCK_BIN" status >/dev/null || fail "airlockd did not answer"

status=0
(cd test/mcp-e2e && node --test --test-concurrency=1 --test-timeout=240000 mcp.test.mjs http.test.mjs) || status=$?
((status == 0)) || fail "the MCP end-to-end test failed"
echo "mcp-e2e: the MCP conformance suite against airlock mcp --http"
(cd test/mcp-conformance && node run.mjs) || status=$?
((status == 0)) || fail "the MCP conformance suite failed (scenarios that do not apply are in test/mcp-conformance/expected-failures.yml)"
if [[ ${MCP_E2E_BENCH:-} == 1 ]]; then
	(cd test/mcp-e2e && node bench.mjs) || { status=1; fail "the benchmark failed"; }
fi
echo "mcp-e2e: PASS"
