package sandbox

import (
	"strings"
	"testing"
)

func TestSeatbeltProfile(t *testing.T) {
	p := Policy{Mode: ModeWorkspaceWrite, Cwd: "/Users/u/ws", WritableRoots: []string{"/Users/u/ws", `/Users/u/we"ird`},
		Protected: []string{"/Users/u/ws/.git", "/Users/u/ws/.airlock"}, ProtectedNames: []string{".airlock", ".git"},
		Unhidden: []string{"/Users/u/Library/Caches/airlock/agent-runs/run-7"}}
	prof := SeatbeltProfile(p, []string{"/Users/u/Library/Airlock/run", "/Users/u/Library/Caches/airlock/agent-runs"})
	for _, want := range []string{
		"(version 1)\n(deny default)\n",
		"(allow file-read*)\n",
		`(deny file-read* file-write* (subpath "/Users/u/Library/Airlock/run"))`,
		`(allow file-write*` + "\n" + `  (require-all (subpath "/Users/u/ws")`,
		`(require-not (subpath "/Users/u/ws/.git"))`,
		`(require-not (subpath "/Users/u/ws/.airlock"))`,
		`(require-not (regex #"^\/Users\/u\/ws/(.*/)?\.git(/.*)?$"))`,
		`(subpath "/Users/u/we\"ird")`,
		// A revealed directory is allowed back after its hidden parent's deny.
		`(deny file-read* file-write* (subpath "/Users/u/Library/Caches/airlock/agent-runs"))` + "\n" +
			`(allow file-read* (subpath "/Users/u/Library/Caches/airlock/agent-runs/run-7"))`,
	} {
		if !strings.Contains(prof, want) {
			t.Errorf("profile lacks %q:\n%s", want, prof)
		}
	}
	if strings.Contains(prof, "network") {
		t.Errorf("network allowed with network off:\n%s", prof)
	}
	// The protected paths of one root are not excluded from another.
	second := prof[strings.Index(prof, `we\"ird`):]
	if strings.Contains(second, `"/Users/u/ws/.git"`) {
		t.Errorf("second root carries the first root's protected paths:\n%s", prof)
	}

	p.Network = NetworkOn
	if prof := SeatbeltProfile(p, nil); !strings.Contains(prof, "(allow network-outbound (remote ip))") {
		t.Errorf("network on but not allowed:\n%s", prof)
	}
	ro := SeatbeltProfile(Policy{Mode: ModeReadOnly}, nil)
	if strings.Contains(ro, "(allow file-write*") || strings.Contains(ro, "network") {
		t.Errorf("read-only profile allows writes or network:\n%s", ro)
	}
	full := SeatbeltProfile(Policy{Mode: ModeFullAccess}, nil)
	if !strings.Contains(full, "(allow file-write*)") || !strings.Contains(full, "(allow network*)") {
		t.Errorf("full-access profile restricts:\n%s", full)
	}
}

func TestScrubEnv(t *testing.T) {
	env := []string{"PATH=/bin", "HOME=/h", "GITHUB_TOKEN=g", "AWS_REGION=x", "AWS_SECRET_ACCESS_KEY=s", "MY_API_KEY=k",
		"DB_PASSWORD=p", "CLIENT_SECRET_VALUE=c", "NPM_TOKEN=n", "SSH_AUTH_SOCK=/tmp/a", "DBUS_SESSION_BUS_ADDRESS=unix:path=/b",
		"TERM=xterm", "LANG=C", "KEYBOARD=us", "noequals"}
	got := ScrubEnv(env, []string{"GITHUB_TOKEN"})
	want := []string{"PATH=/bin", "HOME=/h", "GITHUB_TOKEN=g", "TERM=xterm", "LANG=C", "KEYBOARD=us"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ScrubEnv = %q, want %q", got, want)
	}
}
