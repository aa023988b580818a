# Sourced by scripts/window-smoke.sh and scripts/bench-desktop.sh, which start the built
# window: the processes below a pid, and a private X server on a free display. They
# define fail (print the reason, exit 1) before sourcing this.

# descendants PID: every process below PID, depth first.
descendants() {
	local child
	for child in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		echo "$child"
		descendants "$child"
	done
}

# start_xvfb FIRST LAST LOG SECONDS: starts Xvfb on the first free display from :FIRST to
# :LAST, its output in LOG, waits up to SECONDS for it to answer, and exports DISPLAY.
# XVFB_PID is its pid (kill it with TERM, so it removes its /tmp/.X<n>-lock).
start_xvfb() {
	local n display=
	for n in $(seq "$1" "$2"); do
		if [[ ! -e /tmp/.X11-unix/X$n && ! -e /tmp/.X$n-lock ]]; then display=$n; break; fi
	done
	[[ -n $display ]] || fail "no free X display between :$1 and :$2"
	Xvfb ":$display" -screen 0 1280x800x24 -nolisten tcp -noreset >"$3" 2>&1 &
	XVFB_PID=$!
	local until=$((SECONDS + $4))
	until xdpyinfo -display ":$display" >/dev/null 2>&1; do
		kill -0 "$XVFB_PID" 2>/dev/null || fail "Xvfb :$display did not start: $(cat "$3")"
		((SECONDS < until)) || fail "Xvfb :$display did not answer within $4s"
		sleep 0.1
	done
	export DISPLAY=":$display"
}
