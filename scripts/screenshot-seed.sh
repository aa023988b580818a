#!/usr/bin/env bash
# Seeds a running Airlock (its local API at $AIRLOCK_HOME/run/airlock.sock) with what a
# person has after a week of use, so the page screenshots show the product at work:
# two departments, scheduled tasks (one with the full-access + never warning), finished
# runs with their logs, an operation plan with its diff, and a remembered grant.
# Used by scripts/window-smoke.sh when SMOKE_PAGES=1 (make screenshots).
set -euo pipefail
sock=${AIRLOCK_HOME:?AIRLOCK_HOME is not set}/run/airlock.sock
api() {
	curl -sS --fail-with-body --max-time 30 --unix-socket "$sock" -X "$1" -H 'Content-Type: application/json' \
		--data "${3:-{\}}" "http://airlock$2"
}
# A department in a place that is not known yet needs a person over the API (as authorizing
# it does): the scratch directory is made a workspace root first (config.toml reloads live).
known_root() {
	local cfg=$AIRLOCK_HOME/config/config.toml
	mkdir -p "$(dirname "$cfg")"
	grep -q '^\[workspace\]' "$cfg" 2>/dev/null || printf '\n[workspace]\nroots = ["~/Airlock", "%s"]\n' "$1" >>"$cfg"
	for _ in $(seq 100); do api GET /v1/places | grep -q "\"$1\"" && return 0; sleep 0.1; done
	echo "the core did not take $1 as a workspace root" >&2
	return 1
}
work=$AIRLOCK_HOME/work
mkdir -p "$work/research" "$work/platform" "$work/site"
known_root "$work"
printf 'name=shop\nport=80\n' >"$work/platform/app.conf"
printf 'name=shop\nport=8080\n' >"$work/platform/new.conf"

api POST /v1/departments "{\"name\":\"research\",\"dir\":\"$work/research\",\"defaults\":{}}" >/dev/null
api POST /v1/departments "{\"name\":\"platform\",\"dir\":\"$work/platform\",\"defaults\":{\"posture\":\"cloudops\"}}" >/dev/null

task() { api POST /v1/tasks "$1" >/dev/null; }
task "{\"name\":\"nightly-report\",\"argv\":[\"sh\",\"-c\",\"echo collecting sources; sleep 0.3; echo 42 papers summarised > summary.txt; echo report written\"],\"cwd\":\"$work/research\",\"department\":\"research\",\"schedule\":\"0 2 * * *\",\"time_zone\":\"Europe/Madrid\"}"
task "{\"name\":\"weekly-deps\",\"argv\":[\"sh\",\"-c\",\"echo checking dependencies; echo all up to date\"],\"cwd\":\"$work/platform\",\"department\":\"platform\",\"schedule\":\"0 9 * * 1\",\"time_zone\":\"Europe/Madrid\"}"
task "{\"name\":\"site-build\",\"argv\":[\"sh\",\"-c\",\"echo building the site; exit 2\"],\"cwd\":\"$work/site\",\"schedule\":\"*/30 * * * *\",\"time_zone\":\"UTC\"}"
# Full access with approval never is the person's act (the window, or the CLI with the login
# password), never a script's over the API: the seed writes it into the database directly, as
# the person would have set it in the window.
task "{\"name\":\"prune-caches\",\"argv\":[\"sh\",\"-c\",\"echo pruning\"],\"cwd\":\"$work/platform\",\"department\":\"platform\",\"schedule\":\"30 3 * * *\",\"time_zone\":\"UTC\"}"
db=$(api GET /v1/status | python3 -c 'import json, sys; print(json.load(sys.stdin)["paths"]["database"])')
sqlite3 -cmd '.timeout 5000' "$db" "UPDATE tasks SET override_sandbox_mode = 'full-access', override_approval_policy = 'never' WHERE name = 'prune-caches';"

# weekly-deps is not run: its department's cloudops posture asks for every command (P2).
for t in nightly-report nightly-report; do
	api POST "/v1/tasks/$t/run-now" >/dev/null
	sleep 0.5
done
# site-build's directory is no known place: its run waits under Waiting for you.
api POST /v1/tasks/site-build/run-now >/dev/null

plan='{"target":{"provider":"file","device":"app.conf"},"intent":"move the shop to port 8080","workdir":".","apply":{"shell":"cp new.conf app.conf"},"inputs":["new.conf"],"snapshot":{"argv":["cat","app.conf"]},"diff":{"argv":["diff","-u","app.conf","new.conf"]},"timeout_seconds":30,"steps":[{"description":"replace app.conf with new.conf","effect":"change the port","reversibility":"reversible","blast_radius":"med","rollback":"restore app.conf"},{"description":"clients reconnect","effect":"drop open connections","reversibility":"irreversible","blast_radius":"low"}],"verify":[{"name":"port is 8080","command":"grep port= app.conf","expect_text":"port=8080"}]}'
body=$(PLAN=$plan WORK=$work/platform python3 -c 'import json, os; print(json.dumps({"data": os.environ["PLAN"], "baseDir": os.environ["WORK"], "by": "screenshots"}))')
id=$(api POST /v1/ops/plans "$body" | python3 -c 'import json, sys; d = json.load(sys.stdin); print(d.get("id") or d.get("plan", {}).get("id", ""))')
[[ -n $id ]] && api POST "/v1/ops/plans/$id/diff" '{"run":true}' >/dev/null || true
# Let the runs finish before the pictures.
for _ in $(seq 50); do
	[[ $(api GET '/v1/runs?status=running' | tr -cd '{' | wc -c) == 0 ]] && break
	sleep 0.2
done
echo "screenshot-seed: departments, 4 tasks, runs, an ops plan${id:+ ($id)}"
