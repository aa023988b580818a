package cli

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// runCLI runs the command line with AIRLOCK_HOME set to home and nothing else in its
// environment, and returns what it printed.
func runCLI(home string, args ...string) (out, errb *bytes.Buffer, err error) {
	out, errb = &bytes.Buffer{}, &bytes.Buffer{}
	root := NewRoot(out, errb, func(k string) string {
		if k == "AIRLOCK_HOME" {
			return home
		}
		return ""
	})
	root.SetArgs(args)
	return out, errb, root.Execute()
}

// opsAnswers are the core's answers, as it writes them, for the routes the ops
// commands call.
var opsAnswers = map[string]string{
	"POST /v1/ops/plans": `{"id":"op-1","project":"dir:/w","hash":"9f86d081884c7d65","status":"draft",
		"plan":{"project":"dir:/w","target":{"provider":"file","device":"app.conf"},"intent":"serve on 8080","apply":{"argv":["cp","new.conf","app.conf"]},
		"workdir":"/w","steps":[{"description":"cp","effect":"replace file","reversibility":"reversible","blast_radius":"low"}],"verify":[{"command":"cat app.conf"}]},
		"created_by":"cli","created_at":"2026-12-01T10:00:00.123456789Z","updated_at":"2026-12-01T10:00:00.123456789Z","intact":true}`,
	"GET /v1/ops/plans/{id}": `{"id":"op-1","project":"dir:/w","hash":"9f86d081884c7d65","status":"approved",
		"plan":{"project":"dir:/w","target":{"provider":"file","device":"app.conf"},"intent":"serve on 8080","apply":{"argv":["cp","new.conf","app.conf"]},
		"workdir":"/w","steps":[{"description":"cp","effect":"replace file","reversibility":"reversible","blast_radius":"low"}],"verify":[{"command":"cat app.conf"}]},
		"created_by":"cli","created_at":"2026-12-01T10:00:00Z","updated_at":"2026-12-01T10:01:00Z","intact":true,
		"diff":{"id":1,"kind":"diff","source":"diff -u app.conf new.conf","exit_code":1,"size":11,"sha256":"d1d1","content":"-port=80\n+port=8080","created_at":"2026-12-01T10:00:30Z"},
		"token":{"approved_by":"window","approved_at":"2026-12-01T10:01:00Z","expires_at":"2026-12-01T10:11:00.5Z","used":false,"revoked":false,"live":true}}`,
	"GET /v1/ops/plans": `[{"id":"op-1","project":"dir:/w","status":"draft","hash":"9f86","provider":"file","device":"app.conf","intent":"serve on 8080","updated_at":"2026-12-01T10:00:00Z"},
		{"id":"op-2","project":"dir:/w","status":"verified","hash":"aa","provider":"sqlite","intent":"add column","updated_at":"2026-12-01T09:00:00Z"}]`,
	"POST /v1/ops/plans/{id}/diff": `{"plan_id":"op-1","plan_hash":"9f86","status":"diffed",
		"diff":{"id":1,"kind":"diff","source":"diff -u","exit_code":1,"size":11,"sha256":"d1d1","content":"-port=80\n+port=8080","created_at":"2026-12-01T10:00:30Z"}}`,
	"POST /v1/ops/plans/{id}/reject": `{"id":"op-1","project":"dir:/w","hash":"9f86","status":"rejected","plan":{"project":"","target":{"provider":""},"intent":"","apply":{},"workdir":"","steps":null,"verify":null},
		"created_at":"2026-12-01T10:00:00Z","updated_at":"2026-12-01T10:00:00Z","intact":true}`,
	"POST /v1/ops/plans/{id}/apply": `{"plan_id":"op-1","plan_hash":"9f86","status":"applied","exit_code":0,"duration_ns":1234567890,
		"output":{"id":3,"kind":"apply_output","source":"cp new.conf app.conf","exit_code":0,"size":5,"sha256":"0a0a","content":"done\n","created_at":"2026-12-01T10:02:00Z"},
		"snapshot_before":{"id":2,"kind":"snapshot_before","source":"cat app.conf","exit_code":0,"size":20,"sha256":"0123456789abcdef","content":"name=shop\nport=80\n","created_at":"2026-12-01T10:02:00Z"},
		"snapshot_after":{"id":4,"kind":"snapshot_after","source":"cat app.conf","exit_code":0,"size":22,"sha256":"fedcba9876543210","content":"name=shop\nport=8080\n","created_at":"2026-12-01T10:02:01Z"}}`,
	"POST /v1/ops/plans/{id}/verify": `{"plan_id":"op-1","status":"verify_failed","assertions":[
		{"index":0,"name":"port","command":"grep port= app.conf","passed":true,"exit_code":0,"want_exit":0,"expect_text":"8080","output":"port=8080\n","sha256":"aa"},
		{"index":1,"name":"name","command":"grep name= app.conf","passed":false,"exit_code":1,"want_exit":0,"output":"","sha256":"bb","reason":"exit status 1, expected 0"}]}`,
	"GET /v1/ops/journal": `{"project":"dir:/w","entries":[
		{"seq":1,"id":1,"plan_id":"op-1","event":"planned","status":"draft","actor":"cli","at":"2026-12-01T10:00:00Z","detail":{"intent":"serve <on> 8080 & more","hash":"9f86"},"prev_hash":"","hash":"h1"},
		{"seq":2,"id":2,"plan_id":"op-1","event":"rejected","status":"rejected","actor":"window","at":"2026-12-01T10:05:00Z","detail":{"reason":"not tonight"},"prev_hash":"h1","hash":"h2"}],
		"verification":{"project":"dir:/w","entries":2,"expected":3,"last_seq":2,"ok":false,"problems":[{"kind":"deleted","seq":3,"id":0,"detail":"seq 3 is missing"}]}}`,
}

// serveOps answers the ops routes on the socket the CLI finds under home, as the core
// would (indented JSON).
func serveOps(t *testing.T, home string, answers map[string]string) {
	t.Helper()
	sock := filepath.Join(home, "run", "airlock.sock")
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	for pattern, body := range answers {
		var v any
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatalf("%s: %v", pattern, err)
		}
		var out bytes.Buffer
		if err := json.Compact(&out, []byte(body)); err != nil {
			t.Fatal(err)
		}
		var indented bytes.Buffer
		json.Indent(&indented, out.Bytes(), "", "  ")
		indented.WriteByte('\n')
		mux.HandleFunc(pattern, func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write(indented.Bytes())
		})
	}
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
}

// What the ops commands print for people, from the core's answers: each line as it
// was when the CLI read the answers as untyped maps.
func TestOpsCommandsPrint(t *testing.T) {
	home := t.TempDir()
	serveOps(t, home, opsAnswers)
	planFile := filepath.Join(home, "plan.json")
	os.WriteFile(planFile, []byte(`{}`), 0o600)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"plan", []string{"ops", "plan", "--file", planFile},
			"plan op-1 opened (draft)\nhash 9f86d081884c7d65\nnext: airlock ops diff op-1 --run\n"},
		{"show", []string{"ops", "show", "op-1"},
			"plan     op-1 (approved)\nhash     9f86d081884c7d65\nintent   serve on 8080\nintact   true\n" +
				"token    approved by window, expires 2026-12-01T10:11:00.5Z, used false, live true\n" +
				"diff     sha256 d1d1\n-port=80\n+port=8080\n"},
		{"list", []string{"ops", "list"},
			"ID    STATUS    TARGET  INTENT\nop-1  draft     file    serve on 8080\nop-2  verified  sqlite  add column\n"},
		{"diff", []string{"ops", "diff", "op-1", "--run"},
			"-port=80\n+port=8080\ndiff attached (sha256 d1d1); plan op-1 is diffed\nnext: airlock ops approve op-1\n"},
		{"reject", []string{"ops", "reject", "op-1", "--reason", "not tonight"}, "plan op-1: rejected\n"},
		{"apply", []string{"ops", "apply", "op-1", "--token", "tok"},
			"snapshot before  sha256 01234567…  name=shop port=80\n" +
				"apply            exit 0 in 1.235s\ndone\n\n" +
				"snapshot after   sha256 fedcba98…  name=shop port=8080\n" +
				"plan op-1 is applied\nnext: airlock ops verify op-1\n"},
		{"verify", []string{"ops", "verify", "op-1"},
			"✓ port   grep port= app.conf   → port=8080\n" +
				"✗ name   grep name= app.conf   →   (exit status 1, expected 0)\n" +
				"plan op-1 is verify_failed\n"},
		{"journal", []string{"ops", "journal", "--plan", "op-1", "--verify"},
			"seq  event     status    actor   detail\n" +
				`1    planned   draft     cli     {"hash":"9f86","intent":"serve <on> 8080 & more"}` + "\n" +
				`2    rejected  rejected  window  {"reason":"not tonight"}` + "\n" +
				"deleted: seq 3: seq 3 is missing\n" +
				"journal of dir:/w: 2 entries (3 expected: the journal was truncated), 1 problem(s)\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, errb, err := runCLI(home, tt.args...)
			if tt.name == "journal" {
				// A journal that fails verification exits non-zero, after printing.
				if err == nil {
					t.Errorf("journal that failed verification: no error")
				}
			} else if err != nil {
				t.Fatalf("%v: %v\n%s", tt.args, err, errb.String())
			}
			if got := out.String(); got != tt.want {
				t.Errorf("%v printed\n%q\nwant\n%q", tt.args, got, tt.want)
			}
		})
	}
}

// Under --json the commands print the core's answer as it wrote it.
func TestOpsCommandsPrintTheAnswerAsJSON(t *testing.T) {
	home := t.TempDir()
	serveOps(t, home, opsAnswers)
	out, _, err := runCLI(home, "ops", "show", "op-1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var compact, want bytes.Buffer
	json.Compact(&compact, []byte(opsAnswers["GET /v1/ops/plans/{id}"]))
	json.Indent(&want, compact.Bytes(), "", "  ")
	if got := out.String(); got != want.String()+"\n" {
		t.Errorf("printed\n%s\nwant\n%s", got, want.String())
	}
}

// A field the core leaves out (an assertion without a name, a journal entry nobody
// performed) prints as nothing, not as "<nil>".
func TestOpsCommandsPrintNoNil(t *testing.T) {
	home := t.TempDir()
	serveOps(t, home, map[string]string{
		"POST /v1/ops/plans/{id}/verify": `{"plan_id":"op-1","status":"verified","assertions":[
			{"index":0,"command":"cat app.conf","passed":true,"exit_code":0,"want_exit":0,"output":"port=8080","sha256":"aa"}]}`,
		"GET /v1/ops/journal": `{"project":"dir:/w","entries":[
			{"seq":3,"id":3,"plan_id":"op-1","event":"expired","at":"2026-12-01T10:00:00Z","detail":{"reason":"lapsed"},"prev_hash":"h2","hash":"h3"}]}`,
	})
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"ops", "verify", "op-1"}, "✓    cat app.conf   → port=8080\nplan op-1 is verified\n"},
		{[]string{"ops", "journal", "--plan", "op-1"},
			"seq  event    status  actor  detail\n3    expired                 {\"reason\":\"lapsed\"}\njournal of dir:/w: 1 entries\n"},
	} {
		out, errb, err := runCLI(home, tt.args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", tt.args, err, errb.String())
		}
		if got := out.String(); got != tt.want {
			t.Errorf("%v printed\n%q\nwant\n%q", tt.args, got, tt.want)
		}
	}
}
