#!/usr/bin/env bash
# Desktop benchmarks of issue #7, side by side with a reference in the same run:
# build/bin/wails-floor (test/wails-floor: the same Wails v2 + WebKitGTK showing one
# static page — the floor every Wails window pays). Under Xvfb, in a private D-Bus
# session that activates nothing.
#
#   cold start   launch → "window ready" in the log (DOM ready), median of RUNS launches,
#                each Airlock launch with a fresh AIRLOCK_HOME (database created, probes run)
#   memory       PSS and RSS summed over the app's process tree (the app, WebKit's web and
#                network processes) SETTLE seconds after ready
#   1,000 runs   Airlock only: 1,000 runs created through the local API, the Dispatch page
#                open, then memory again
#   idle CPU     CPU time of the whole tree over IDLE seconds with nothing happening,
#                as a percentage of one core
#
#   scripts/bench-desktop.sh            # RUNS=5 SETTLE=5 IDLE=60 RUNS_LISTED=1000
#   APP=… FLOOR=… scripts/bench-desktop.sh   # compare two builds (FLOOR is then the "before")
# Needs build/bin/airlock-desktop and build/bin/airlock (make build); builds wails-floor.
set -euo pipefail
# A department in a place that is not known yet needs a person over the API (as authorizing
# it does): the scratch directory is made a workspace root first (config.toml reloads live).
known_root() {
	local cfg=${AIRLOCK_HOME:?}/config/config.toml
	mkdir -p "$(dirname "$cfg")"
	grep -q '^\[workspace\]' "$cfg" 2>/dev/null || printf '\n[workspace]\nroots = ["~/Airlock", "%s"]\n' "$1" >>"$cfg"
	for _ in $(seq 100); do api GET /v1/places | grep -q "\"$1\"" && return 0; sleep 0.1; done
	echo "the core did not take $1 as a workspace root" >&2
	return 1
}
cd "$(dirname "$0")/.."
ROOT=$PWD
RUNS=${RUNS:-5} SETTLE=${SETTLE:-5} IDLE=${IDLE:-60} RUNS_LISTED=${RUNS_LISTED:-1000}
APP=${APP:-$ROOT/build/bin/airlock-desktop}
FLOOR=${FLOOR:-$ROOT/build/bin/wails-floor}
fail() { echo "bench-desktop: FAIL: $*" >&2; exit 1; }
say() { echo "bench-desktop: $*" >&2; }
[[ -x $APP ]] || fail "$APP is missing: make build"
for tool in Xvfb xdotool xdpyinfo dbus-run-session curl; do
	command -v "$tool" >/dev/null || fail "$tool is not installed (make deps)"
done
if [[ $FLOOR == "$ROOT/build/bin/wails-floor" && (! -x $FLOOR || test/wails-floor/main.go -nt $FLOOR) ]]; then
	say "building the reference window (test/wails-floor)"
	go build -tags desktop,production,webkit2_41 -o "$FLOOR" ./test/wails-floor
fi

TMP=$(mktemp -d /var/tmp/airlock-bench-desktop.XXXXXX)
XVFB_PID= DRS_PID=
cleanup() {
	[[ -n $DRS_PID ]] && kill_tree "$DRS_PID"
	[[ -n $XVFB_PID ]] && kill -TERM "$XVFB_PID" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

. scripts/desktop-lib.sh # descendants, start_xvfb
kill_tree() {
	local pids
	pids=$(descendants "$1")
	kill -TERM $pids "$1" 2>/dev/null || true
	for _ in $(seq 50); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL $pids "$1" 2>/dev/null || true
}
# app_tree lists the app and its WebKit helpers (not dbus-run-session or dbus-daemon).
app_tree() {
	local pid comm
	for pid in $(descendants "$1"); do
		comm=$(cat "/proc/$pid/comm" 2>/dev/null || true)
		[[ $comm == dbus-daemon || -z $comm ]] || echo "$pid"
	done
}
# mem_kib prints "PSS RSS" in KiB summed over the tree.
mem_kib() {
	local pss=0 rss=0 pid p r
	for pid in $(app_tree "$1"); do
		p=$(awk '/^Pss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0)
		r=$(awk '/^Rss:/ {print $2}' "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0)
		pss=$((pss + ${p:-0})) rss=$((rss + ${r:-0}))
	done
	echo "$pss $rss"
}
# ticks prints the CPU ticks (utime+stime, children included) of the tree.
ticks() {
	local sum=0 pid t
	for pid in $(app_tree "$1"); do
		t=$(awk '{print $14+$15+$16+$17}' "/proc/$pid/stat" 2>/dev/null || echo 0)
		sum=$((sum + ${t:-0}))
	done
	echo "$sum"
}

start_xvfb 191 240 "$TMP/xvfb.log" 60
BUS_CONF=$PWD/test/dbus-session.conf # the private session bus the app runs on

# launch BIN HOME: starts BIN, waits for "window ready"; LAUNCH_MS is how long it took.
launch() {
	local bin=$1 home=$2 start now
	mkdir -p "$home"
	: >"$TMP/app.log"
	start=$(date +%s%N)
	AIRLOCK_HOME=$home dbus-run-session --config-file="$BUS_CONF" -- "$bin" >"$TMP/app.log" 2>&1 &
	DRS_PID=$!
	until grep -q 'window ready' "$TMP/app.log"; do
		kill -0 "$DRS_PID" 2>/dev/null || fail "$(basename "$bin") exited: $(tail -5 "$TMP/app.log")"
		(( ($(date +%s%N) - start) < 60000000000 )) || fail "$(basename "$bin") not ready after 60 s"
		sleep 0.01
	done
	now=$(date +%s%N)
	LAUNCH_MS=$(((now - start) / 1000000))
}
stop() { kill_tree "$DRS_PID"; wait "$DRS_PID" 2>/dev/null || true; DRS_PID=; }
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : int((a[NR/2]+a[NR/2+1])/2))}'; }

declare -A START PSS RSS CPU
for name in floor airlock; do
	bin=$FLOOR
	[[ $name == airlock ]] && bin=$APP
	times=()
	for i in $(seq "$RUNS"); do
		launch "$bin" "$TMP/home-$name-$i"
		times+=("$LAUNCH_MS")
		if ((i < RUNS)); then stop; fi
	done
	START[$name]=$(printf '%s\n' "${times[@]}" | median)
	say "$name: cold start ${times[*]} ms (median ${START[$name]})"
	sleep "$SETTLE"
	read -r p r < <(mem_kib "$DRS_PID")
	PSS[$name]=$p RSS[$name]=$r
	t0=$(ticks "$DRS_PID")
	sleep "$IDLE"
	t1=$(ticks "$DRS_PID")
	CPU[$name]=$(awk -v d=$((t1 - t0)) -v hz="$(getconf CLK_TCK)" -v s="$IDLE" 'BEGIN {printf "%.2f", 100 * d / hz / s}')
	say "$name: PSS ${PSS[$name]} KiB, RSS ${RSS[$name]} KiB, idle CPU ${CPU[$name]} %"
	if [[ $name == airlock ]]; then
		home=$TMP/home-$name-$RUNS
		sock=$home/run/airlock.sock
		api() { curl -sS --fail-with-body --max-time 30 --unix-socket "$sock" -X "$1" -H 'Content-Type: application/json' --data "${3:-{\}}" "http://airlock$2"; }
		dir=$home/bench-work
		mkdir -p "$dir"
		AIRLOCK_HOME=$home known_root "$dir"
		api POST /v1/departments "{\"name\":\"bench\",\"dir\":\"$dir\"}" >/dev/null
		api POST /v1/tasks "{\"name\":\"bench\",\"argv\":[\"true\"],\"cwd\":\"$dir\",\"department\":\"bench\",\"overlap\":\"allow\"}" >/dev/null
		say "creating $RUNS_LISTED runs through the local API"
		for _ in $(seq "$RUNS_LISTED"); do api POST /v1/tasks/bench/run-now >/dev/null; done
		until [[ $(api GET '/v1/runs?status=running&limit=5' | tr -cd '{' | wc -c) == 0 ]]; do sleep 0.5; done
		wid=$(xdotool search --onlyvisible --name '^Airlock$' | head -n1)
		xdotool mousemove --window "$wid" 60 101 click 1 # Dispatch, second in the sidebar
		sleep 1
		xdotool mousemove --window "$wid" 331 109 click 1 # its Runs tab: the newest 50 of the 1,000
		sleep "$SETTLE"
		read -r LP LR < <(mem_kib "$DRS_PID")
		say "airlock with $RUNS_LISTED runs listed: PSS $LP KiB, RSS $LR KiB"
	fi
	stop
done

mib() { awk -v k="$1" 'BEGIN {printf "%.0f", k / 1024}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b > 0) printf "%.2f×", a / b; else print "—"}'; }
cat <<TABLE
| measure | wails-floor (reference) | Airlock | ratio | aim |
| --- | --- | --- | --- | --- |
| cold start to window ready (median of $RUNS) | ${START[floor]} ms | ${START[airlock]} ms | $(ratio "${START[airlock]}" "${START[floor]}") | < 1 s |
| memory after start, PSS (RSS) | $(mib "${PSS[floor]}") MiB ($(mib "${RSS[floor]}")) | $(mib "${PSS[airlock]}") MiB ($(mib "${RSS[airlock]}")) | $(ratio "${PSS[airlock]}" "${PSS[floor]}") | < 150 MB |
| memory with $RUNS_LISTED runs listed, PSS (RSS) | — | $(mib "$LP") MiB ($(mib "$LR")) | $(ratio "$LP" "${PSS[floor]}") | < 150 MB |
| idle CPU over ${IDLE} s (% of one core) | ${CPU[floor]} % | ${CPU[airlock]} % | — | about 0 % |
TABLE
