#!/usr/bin/env bash
# Window smoke test: the built desktop app, started under its own Xvfb and D-Bus session
# with a private AIRLOCK_HOME, must open its window, load and paint the page, answer on
# the local API, be screenshotted to artifacts/window.png, and quit cleanly on SIGTERM
# (exit 0) leaving none of the processes it started.
#
#   scripts/window-smoke.sh        (expects build/bin/airlock-desktop; builds nothing)
#
# Environment: SMOKE_TIMEOUT (seconds to wait for the window, default 60),
# ARTIFACTS (default artifacts/), SMOKE_PAGES=1 (also a screenshot of every page),
# SMOKE_THEME=dark (GTK's dark theme; the window follows it). Needs Xvfb, xdotool, x11-utils, imagemagick, dbus.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
APP=$ROOT/build/bin/airlock-desktop
CLI=$ROOT/build/bin/airlock
ART=${ARTIFACTS:-$ROOT/artifacts}
TIMEOUT=${SMOKE_TIMEOUT:-60}
MIN_COLOURS=${SMOKE_MIN_COLOURS:-64}

fail() {
	echo "window-smoke: FAIL: $*" >&2
	if [[ -n ${TMP:-} && -s $TMP/app.log ]]; then
		echo "window-smoke: the app's output (also in $ART/window-smoke.log):" >&2
		tail -n 40 "$TMP/app.log" | sed 's/^/    /' >&2
	fi
	exit 1
}
say() { echo "window-smoke: $*"; }

[[ -x $APP ]] || fail "$APP is missing: build it first (make build-desktop, or scripts/build-desktop.sh)"
for tool in Xvfb xdotool xwininfo xdpyinfo import identify compare dbus-run-session; do
	command -v "$tool" >/dev/null ||
		fail "$tool is not installed (apt-get install xvfb xdotool x11-utils imagemagick dbus)"
done

mkdir -p "$ART"
TMP=$(mktemp -d /tmp/airlock-smoke.XXXXXX)
XVFB_PID= DRS_PID= APP_PID=
STARTED=() # every pid this script started (the app's whole tree included)

cleanup() {
	local code=$?
	[[ -s $TMP/app.log ]] && cp "$TMP/app.log" "$ART/window-smoke.log"
	for pid in "${STARTED[@]}" $DRS_PID; do
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	done
	if [[ -n $XVFB_PID ]] && kill -0 "$XVFB_PID" 2>/dev/null; then
		kill -TERM "$XVFB_PID" # TERM, so Xvfb removes its /tmp/.X<n>-lock
		for _ in $(seq 30); do kill -0 "$XVFB_PID" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$XVFB_PID" 2>/dev/null
	fi
	rm -rf "$TMP"
	exit $code
}
trap cleanup EXIT
trap 'fail "interrupted"' INT TERM

deadline=$((SECONDS + TIMEOUT))
time_left() { ((SECONDS < deadline)); }

# until_changed REF WHY waits until the window differs from the screenshot REF in more
# than 2000 pixels (its new look left in $TMP/page.png); at the deadline it fails with WHY.
until_changed() {
	until import -window "$WID" "$TMP/page.png" 2>/dev/null &&
		(($(compare -metric AE "$1" "$TMP/page.png" null: 2>&1 | cut -d' ' -f1 | cut -d. -f1) > 2000)); do
		time_left || fail "$2"
		sleep 0.2
	done
}

. scripts/desktop-lib.sh # descendants, start_xvfb

# 1. A private X server on a free display.
start_xvfb 91 140 "$TMP/xvfb.log" $((deadline - SECONDS))
say "Xvfb on $DISPLAY"
import -window root "$TMP/blank.png"

# 2. The app, in its own D-Bus session (else GTK spawns dbus-launch and at-spi and leaves
#    them behind), with a private AIRLOCK_HOME and XDG dirs. The bus activates no
#    services: no at-spi, and no keyring daemon (whose unlock prompt would cover the
#    window); the app then reports the keyring as unavailable, which is the truth here.
export AIRLOCK_HOME=$TMP/home
export XDG_CONFIG_HOME=$TMP/xdg/config XDG_DATA_HOME=$TMP/xdg/data XDG_CACHE_HOME=$TMP/xdg/cache
mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME"
export NO_AT_BRIDGE=1
unset DBUS_SESSION_BUS_ADDRESS XDG_RUNTIME_DIR
# SMOKE_THEME=dark: GTK's dark variant, which WebKit reports as prefers-color-scheme: dark.
[[ ${SMOKE_THEME:-light} == dark ]] && export GTK_THEME=Adwaita:dark
BUS_CONF=$PWD/test/dbus-session.conf # the private session bus the app runs on
started_at=$SECONDS
if [[ ${SMOKE_PAGES:-0} == 1 && ${SMOKE_SEED:-1} == 1 ]]; then
	# The seeded operation plan needs the journal key from the keyring: an unlocked test
	# keyring on the app's private bus (unlocked, so no prompt covers the window).
	mkdir -p "$TMP/keyring"
	XDG_DATA_HOME=$TMP/keyring dbus-run-session --config-file="$BUS_CONF" -- \
		bash -c 'echo -n airlock-smoke | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$0"' "$APP" >"$TMP/app.log" 2>&1 &
else
	dbus-run-session --config-file="$BUS_CONF" -- "$APP" >"$TMP/app.log" 2>&1 &
fi
DRS_PID=$!
STARTED+=("$DRS_PID")

# 3. Wait until the window exists, the page has loaded, the core answers, and the
#    window is painted with more than a background colour. No fixed sleeps: poll.
WID= DOM= CORE= PAINTED=
have_cli=0
[[ -x $CLI ]] && have_cli=1
while time_left; do
	kill -0 "$DRS_PID" 2>/dev/null || { wait "$DRS_PID" || true; fail "the app exited before its window was up"; }
	if [[ -z $APP_PID ]]; then
		APP_PID=$(pgrep -P "$DRS_PID" -x airlock-desktop || true)
	fi
	# Remember the whole tree (WebKit's web and network processes, dbus-daemon).
	for pid in $(descendants "$DRS_PID"); do
		[[ " ${STARTED[*]} " == *" $pid "* ]] || STARTED+=("$pid")
	done
	[[ -n $WID ]] || WID=$(xdotool search --onlyvisible --name '^Airlock$' 2>/dev/null | head -n1 || true)
	[[ -n $DOM ]] || { grep -q 'window ready' "$TMP/app.log" && DOM=1; } || true
	if [[ -z $CORE ]]; then
		if ((have_cli)); then
			"$CLI" status --json >"$TMP/status.json" 2>/dev/null && CORE=1 || true
		else
			[[ -S $AIRLOCK_HOME/run/airlock.sock ]] && CORE=1 || true
		fi
	fi
	if [[ -n $WID && -n $DOM && -z $PAINTED ]]; then
		import -window "$WID" "$TMP/probe.png" 2>/dev/null || true
		colours=$(identify -format '%k' "$TMP/probe.png" 2>/dev/null || echo 0)
		((colours >= MIN_COLOURS)) && PAINTED=1
	fi
	[[ -n $WID && -n $DOM && -n $CORE && -n $PAINTED ]] && break
	sleep 0.2
done
[[ -n $WID ]] || fail "no window titled Airlock appeared within ${TIMEOUT}s"
[[ -n $DOM ]] || fail "the window never loaded its page (no 'window ready' in the log) within ${TIMEOUT}s"
[[ -n $CORE ]] || fail "the core did not answer \`airlock status\` within ${TIMEOUT}s"
[[ -n $PAINTED ]] || fail "the window stayed blank (fewer than $MIN_COLOURS colours) for ${TIMEOUT}s"
say "window $WID up, page loaded, core answering, painted after $((SECONDS - started_at)) s"
if ((have_cli)); then
	grep -q '"kind": *"desktop"' "$TMP/status.json" || fail "airlock status did not report the desktop core: $(cat "$TMP/status.json")"
fi

# 4. Single instance: a second launch asks the running window to come to the front and
#    exits 0 without opening a second window or core.
second=0
second_out=$(DBUS_SESSION_BUS_ADDRESS=disabled: timeout 20 "$APP" 2>&1) || second=$?
((second == 0)) || fail "a second launch exited with status $second (want 0, handing over to the running window): $second_out"
[[ $second_out == *"already open"* ]] || fail "a second launch did not say it handed over: $second_out"
kill -0 "$APP_PID" 2>/dev/null || fail "the first instance died when the second launched"
windows=$(xdotool search --onlyvisible --name '^Airlock$' 2>/dev/null | wc -l)
((windows == 1)) || fail "$windows Airlock windows after a second launch (want 1)"
say "second launch handed over to the running window and exited 0"

# 5. The screenshot: the root window cropped to the app's window.
eval "$(xdotool getwindowgeometry --shell "$WID")"
import -window root -crop "${WIDTH}x${HEIGHT}+${X}+${Y}" +repage "$ART/window.png"
colours=$(identify -format '%k' "$ART/window.png")
((colours >= MIN_COLOURS)) || fail "the screenshot has only $colours colours: the window looks blank"
import -window root "$TMP/after.png"
changed=$(compare -metric AE "$TMP/blank.png" "$TMP/after.png" null: 2>&1 || true)
changed=${changed%% *}
((${changed%.*} > WIDTH * HEIGHT / 4)) || fail "the screen barely differs from the empty screen ($changed pixels changed)"
say "screenshot $ART/window.png (${WIDTH}x${HEIGHT}, $colours colours, $changed pixels differ from the empty screen)"

# 5b. Optionally (SMOKE_PAGES=1, used by scripts/screenshots.sh) every page, reached by
#     clicking its sidebar entry like a person would.
if [[ ${SMOKE_PAGES:-0} == 1 ]]; then
	# What a person has after a week of use, so the pages show the product at work.
	if [[ ${SMOKE_SEED:-1} == 1 ]]; then
		AIRLOCK_HOME=$AIRLOCK_HOME scripts/screenshot-seed.sh || fail "could not seed the screenshots' data"
		sleep 1
	fi
	deadline=$((SECONDS + TIMEOUT)) # the pages get their own time
	pages=(waiting dispatch departments ops settings)
	cp "$ART/window.png" "$TMP/prev.png"
	for i in "${!pages[@]}"; do
		name=${pages[$i]}
		if ((i > 0)); then
			xdotool mousemove --window "$WID" 60 $((69 + 32 * i)) click 1
			until_changed "$TMP/prev.png" "clicking $name in the sidebar did not change the window"
			sleep 0.5 # let the page's data arrive after its first paint
		fi
		import -window "$WID" "$ART/page-$name.png"
		cp "$ART/page-$name.png" "$TMP/prev.png"
	done
	say "page screenshots: $ART/page-{${pages[*]// /,}}.png"
	if [[ ${SMOKE_SEED:-1} == 1 ]]; then
		# The seeded plan opened: steps, diff, the stage timeline, Approve.
		xdotool mousemove --window "$WID" 60 165 click 1
		sleep 1
		xdotool mousemove --window "$WID" 320 152 click 1
		until_changed "$ART/page-ops.png" "opening the seeded plan did not change the Ops page"
		sleep 0.5
		import -window "$WID" "$ART/page-ops-plan.png"
		cp "$ART/page-ops-plan.png" "$TMP/prev.png"
		say "plan screenshot: $ART/page-ops-plan.png"
	fi

	# 5c. What a person sees when something waits for them, raised through the local API
	#     as the CLI and agents do: a run held outside known places, a P1 and a P2 request
	#     (the popup over the page, "1 of 2"), then the page with the popup put aside (Esc).
	sock=$AIRLOCK_HOME/run/airlock.sock
	api() {
		local body=${3:-'{}'}
		curl -sS --fail-with-body --max-time "${4:-10}" --unix-socket "$sock" -X "$1" -H 'Content-Type: application/json' --data "$body" "http://airlock$2"
	}
	deadline=$((SECONDS + 60))
	HELD_DIR=$(mktemp -d /var/tmp/airlock-smoke-legacy-api.XXXXXX)
	mkdir -p "$AIRLOCK_HOME/work/research"
	api POST /v1/tasks "{\"name\":\"nightly-deps\",\"argv\":[\"make\",\"deps\"],\"cwd\":\"$HELD_DIR\",\"schedule\":\"\",\"time_zone\":\"UTC\"}" >/dev/null ||
		fail "could not create a task through the local API"
	api POST /v1/tasks/nightly-deps/run-now >/dev/null || fail "could not start the task"
	# Waiting for you first (the popup will cover the sidebar), with the held run on it.
	xdotool mousemove --window "$WID" 60 69 click 1
	until_changed "$TMP/prev.png" "Waiting for you never showed the held run"
	sleep 0.5
	import -window "$WID" "$TMP/prev.png"
	AWAITS=()
	api POST /v1/permission/await "{\"id\":\"smoke-p2\",\"tool\":\"bash\",\"params\":{\"command\":\"git push --force origin main\",\"timeout\":600},\"context\":{\"session\":\"release-train\",\"department\":\"platform\",\"cwd\":\"$AIRLOCK_HOME/work\",\"policy\":{\"mode\":\"workspace-write\",\"network\":true}}}" 120 >/dev/null 2>&1 &
	AWAITS+=($!)
	sleep 0.3
	api POST /v1/permission/await "{\"id\":\"smoke-p1\",\"tool\":\"write_file\",\"params\":{\"path\":\"$AIRLOCK_HOME/work/research/notes.md\",\"content\":\"# Notes\\n\"},\"context\":{\"session\":\"refactor\",\"department\":\"research\",\"cwd\":\"$AIRLOCK_HOME/work/research\",\"policy\":{\"mode\":\"workspace-write\"}}}" 120 >/dev/null 2>&1 &
	AWAITS+=($!)
	until_changed "$TMP/prev.png" "the popup never showed"
	sleep 1 # the popup and the held run's row settle
	import -window "$WID" "$ART/popup.png"
	cp "$ART/popup.png" "$TMP/prev.png"
	xdotool key Escape
	until_changed "$TMP/prev.png" "Esc did not put the popup aside"
	sleep 0.5
	import -window "$WID" "$ART/page-waiting-items.png"
	for id in smoke-p1 smoke-p2; do
		api POST "/v1/approvals/$id/answer" '{"allow":false,"reason":"smoke test","by":"api"}' >/dev/null || fail "could not answer $id"
	done
	wait "${AWAITS[@]}" || true
	rm -rf "$HELD_DIR"
	say "waiting screenshots: $ART/popup.png, $ART/page-waiting-items.png"
fi

# 5d. Closing the window (WM_DELETE_WINDOW, what a window manager's close button sends)
#     hides it while the tray runs: the app and its core go on; launching Airlock again
#     brings the window back.
if grep -q 'no tray icon' "$TMP/app.log"; then
	say "no tray in this session: closing the window quits, not tested here"
else
	scripts/x11-close-window.py "$WID" || fail "could not send WM_DELETE_WINDOW to the window"
	until [[ -z $(xdotool search --onlyvisible --name '^Airlock$' 2>/dev/null) ]]; do
		kill -0 "$APP_PID" 2>/dev/null || fail "closing the window quit the app (it should hide while the tray runs)"
		time_left || fail "closing the window did not hide it"
		sleep 0.1
	done
	kill -0 "$APP_PID" 2>/dev/null || fail "closing the window quit the app (it should hide while the tray runs)"
	if ((have_cli)); then
		"$CLI" status --json >/dev/null 2>&1 || fail "the core stopped answering after the window was closed"
	fi
	say "closing the window hid it; the app and its core keep running"
	DBUS_SESSION_BUS_ADDRESS=disabled: timeout 20 "$APP" >/dev/null 2>&1 || fail "launching again did not hand over to the hidden window"
	until [[ -n $(xdotool search --onlyvisible --name '^Airlock$' 2>/dev/null) ]]; do
		time_left || fail "launching Airlock again did not bring the hidden window back"
		sleep 0.1
	done
	say "launching Airlock again brought the window back"
fi

# 6. Quit with SIGTERM: exit status 0, and nothing it started left behind.
[[ -n $APP_PID ]] || fail "could not find the airlock-desktop process under dbus-run-session"
for pid in $(descendants "$DRS_PID"); do
	[[ " ${STARTED[*]} " == *" $pid "* ]] || STARTED+=("$pid")
done
kill -TERM "$APP_PID"
quit_deadline=$((SECONDS + 15))
while kill -0 "$DRS_PID" 2>/dev/null; do
	((SECONDS < quit_deadline)) || fail "the app did not quit within 15 s of SIGTERM"
	sleep 0.1
done
status=0
wait "$DRS_PID" || status=$?
((status == 0)) || fail "the app exited with status $status after SIGTERM (want 0)"
# The bus daemon and WebKit's helpers end a moment after the app: allow them 5 s.
is_running() { kill -0 "$1" 2>/dev/null && [[ $(ps -o stat= -p "$1" 2>/dev/null) != Z* ]]; }
settle=$((SECONDS + 5))
while ((SECONDS < settle)); do
	busy=0
	for pid in "${STARTED[@]}"; do is_running "$pid" && busy=1; done
	((busy)) || break
	sleep 0.1
done
left=()
for pid in "${STARTED[@]}"; do
	if kill -0 "$pid" 2>/dev/null && [[ $(ps -o stat= -p "$pid" 2>/dev/null) != Z* ]]; then
		left+=("$pid:$(ps -o comm= -p "$pid")")
	fi
done
((${#left[@]} == 0)) || fail "processes left after quitting: ${left[*]}"
n_started=${#STARTED[@]}
STARTED=() # all gone: never signal these pids again (they may be reused)
[[ ! -S $AIRLOCK_HOME/run/airlock.sock ]] || fail "the local API socket is still there after quitting"
kill -TERM "$XVFB_PID"
wait "$XVFB_PID" 2>/dev/null || true
say "quit cleanly on SIGTERM (exit 0, $n_started processes started, none left)"

# 7. With the headless daemon holding the core, the desktop app refuses clearly (exit 1).
DAEMON=$ROOT/build/bin/airlockd
if [[ -x $DAEMON && -x $CLI ]]; then
	AIRLOCK_HOME=$TMP/home-daemon "$DAEMON" >"$TMP/daemon.log" 2>&1 &
	DAEMON_PID=$!
	STARTED+=("$DAEMON_PID")
	until AIRLOCK_HOME=$TMP/home-daemon "$CLI" status --json >/dev/null 2>&1; do
		kill -0 "$DAEMON_PID" 2>/dev/null || fail "airlockd exited early: $(cat "$TMP/daemon.log")"
		time_left || fail "airlockd did not answer within ${TIMEOUT}s"
		sleep 0.1
	done
	refused=0
	refused_out=$(AIRLOCK_HOME=$TMP/home-daemon DBUS_SESSION_BUS_ADDRESS=disabled: timeout 20 "$APP" 2>&1) || refused=$?
	kill -TERM "$DAEMON_PID"
	wait "$DAEMON_PID" || fail "airlockd did not stop cleanly on SIGTERM"
	STARTED=()
	((refused == 1)) || fail "with the daemon running the desktop app exited with $refused (want 1): $refused_out"
	[[ $refused_out == *daemon* ]] || fail "the refusal does not mention the daemon: $refused_out"
	say "with the daemon running, the desktop app refused: ${refused_out#airlock-desktop: }"
else
	say "skipped the daemon check ($DAEMON or $CLI not built)"
fi
say "PASS"
