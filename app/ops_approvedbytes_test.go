package app

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/internal/vartmp"
	"github.com/airlock-app/airlock/permission"
)

// answerAll allows, as the person in the window would, every request that comes up
// until the test ends, and reports the tools it was asked about.
func answerAll(t *testing.T, c *Core) func() []string {
	t.Helper()
	var mu sync.Mutex
	var asked []string
	done := make(chan struct{})
	t.Cleanup(func() { close(done) })
	go func() {
		for {
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
			for _, p := range c.Broker.Pending() {
				if _, err := c.Broker.Answer(context.Background(), p.ID, permission.Answer{Allow: true, By: permission.ByWindow, Interactive: true}); err == nil {
					mu.Lock()
					asked = append(asked, p.Request.Tool)
					mu.Unlock()
				}
			}
		}
	}()
	return func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), asked...) }
}

// shopDB makes a workdir with a SQLite database of two users and migrate.sql adding a
// column.
func shopDB(t *testing.T, dir string) {
	t.Helper()
	if _, err := exec.LookPath("sqlite3"); err != nil {
		t.Skip("sqlite3 is not installed")
	}
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "migrate.sql"), []byte("ALTER TABLE users ADD COLUMN email TEXT;\n"), 0o644)
	if out, err := exec.Command("sqlite3", filepath.Join(dir, "db.sqlite"),
		"CREATE TABLE users(id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users(name) VALUES ('ada'), ('grace');").CombinedOutput(); err != nil {
		t.Fatalf("seed: %v %s", err, out)
	}
}

func shopSchema(t *testing.T, dir string) string {
	t.Helper()
	out, _ := exec.Command("sqlite3", filepath.Join(dir, "db.sqlite"), ".schema users").CombinedOutput()
	return string(out)
}

// shopPlan is the migration's plan with apply as given and inputs (nil: none).
func shopPlan(apply string, inputs []string) map[string]any {
	p := map[string]any{
		"target": map[string]any{"provider": "sqlite", "device": "db.sqlite"}, "intent": "add an email column to users", "workdir": ".",
		"apply":  map[string]any{"shell": apply},
		"diff":   map[string]any{"argv": []string{"cat", "migrate.sql"}},
		"steps":  []map[string]any{{"description": "ALTER TABLE users ADD COLUMN email TEXT", "effect": "add column", "reversibility": "hard", "blast_radius": "low"}},
		"verify": []map[string]any{{"command": "sqlite3 -readonly db.sqlite .schema", "expect_text": "email"}},
	}
	if inputs != nil {
		p["inputs"] = inputs
	}
	return p
}

// swapDuringApply waits until plan id is applying, then replaces migrate.sql in dir
// with a statement nobody approved (after every check the apply makes before it runs).
func swapDuringApply(t *testing.T, cl *localapi.Client, id, dir string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if p, err := localapi.Call(context.Background(), cl, api.OpsGetPlan, api.None{}, id); err == nil && p.Status == api.PlanApplying {
			tmp := filepath.Join(dir, ".swap")
			os.WriteFile(tmp, []byte("DROP TABLE users;\n"), 0o644)
			if err := os.Rename(tmp, filepath.Join(dir, "migrate.sql")); err != nil {
				t.Error(err)
			}
			return
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Error("the plan never became applying")
}

// The attack on the apply's bytes, through the MCP ops tools an agent uses and the real
// core (its sandbox runner, the broker, the person answering in the window): a plan
// without inputs whose apply reads migrate.sql is refused before the person is asked,
// with the way out; a plan that declares migrate.sql but reads it as .//migrate.sql runs
// the approved ALTER TABLE even when migrate.sql becomes DROP TABLE while it applies.
func TestOpsAppliesOnlyApprovedBytesThroughTheMCPTools(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	base := vartmp.Dir(t, "ops-bytes-")
	c, _ := runCoreAt(t, base)
	needJournalKey(t, c)
	shop := filepath.Join(base, "shop")
	shopDB(t, shop)
	cs := mcpSession(t, c, shop)
	asked := answerAll(t, c)
	cl := localapi.NewClient(c.Paths.Socket)
	ctx := context.Background()

	plan := func(p map[string]any) string {
		t.Helper()
		isErr, text := toolText(t, cs, api.ToolOpsPlan, map[string]any{"plan": p})
		var v api.PlanView
		if isErr || json.Unmarshal([]byte(text), &v) != nil || v.ID == "" {
			t.Fatalf("ops_plan: %s", text)
		}
		if isErr, text := toolText(t, cs, api.ToolOpsDiff, map[string]any{"plan_id": v.ID, "run": true}); isErr {
			t.Fatalf("ops_diff: %s", text)
		}
		return v.ID
	}

	// No inputs: the agent's ops_approve, the prompt and the window's approve all refuse,
	// naming the file and the way out, and the person is never asked.
	bare := plan(shopPlan("sqlite3 -bail db.sqlite < migrate.sql", nil))
	isErr, text := toolText(t, cs, api.ToolOpsApprove, map[string]any{"plan_id": bare})
	if !isErr || !strings.Contains(text, "does not hold migrate.sql") || !strings.Contains(text, "declare it in inputs") {
		t.Fatalf("ops_approve of a plan without inputs: %v %s", isErr, text)
	}
	if slices.Contains(asked(), permission.ToolOpsApprove) {
		t.Fatalf("the person was asked to approve a plan that cannot be: %v", asked())
	}
	if _, err := localapi.Call(ctx, cl, api.OpsApprovalPrompt, api.None{}, bare); err == nil || !strings.Contains(err.Error(), "declare it in inputs") {
		t.Fatalf("prompt of a plan without inputs over the API: %v", err)
	}
	pv, _ := c.OpsPlan(WindowCaller(), bare)
	if _, err := c.OpsApprove(WindowCaller(), bare, api.ApproveBody{ConfirmHashPrefix: pv.Hash}); err == nil || !strings.Contains(err.Error(), "declare it in inputs") {
		t.Fatalf("the window approved a plan without inputs: %v", err)
	}

	// Declared, and read by a second spelling while the file is swapped under the apply.
	id := plan(shopPlan("cat migrate.sql > /dev/null; sleep 1; sqlite3 -bail db.sqlite < .//migrate.sql", []string{"migrate.sql"}))
	isErr, text = toolText(t, cs, api.ToolOpsApprove, map[string]any{"plan_id": id})
	var ap api.ApproveResult
	if isErr || json.Unmarshal([]byte(text), &ap) != nil || ap.Token == "" {
		t.Fatalf("ops_approve: %s", text)
	}
	go swapDuringApply(t, cl, id, shop)
	isErr, text = toolText(t, cs, api.ToolOpsApply, map[string]any{"plan_id": id, "token": ap.Token})
	var res api.ApplyResult
	if isErr || json.Unmarshal([]byte(text), &res) != nil || res.Status != api.PlanApplied {
		t.Fatalf("ops_apply: %s", text)
	}
	if got := readString(filepath.Join(shop, "migrate.sql")); !strings.Contains(got, "DROP") {
		t.Fatalf("the swap did not happen: %q", got)
	}
	if schema := shopSchema(t, shop); !strings.Contains(schema, "email") {
		t.Fatalf("the apply did not run the approved ALTER TABLE (users now: %q)", schema)
	}
	if !slices.Contains(asked(), permission.ToolOpsApprove) || !slices.Contains(asked(), permission.ToolOpsApply) {
		t.Errorf("the person was not asked: %v", asked())
	}
	if j, err := localapi.Call(ctx, cl, api.OpsJournal, api.JournalInput{PlanID: id, Verify: true}); err != nil || !j.Verification.OK {
		t.Fatalf("journal: %+v %v", j, err)
	}
}

// The same attack over the local API routes the CLI calls, the person approving in the
// window: the apply runs the approved bytes, whatever the workdir holds by then.
func TestOpsAppliesOnlyApprovedBytesOverTheAPI(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	base := vartmp.Dir(t, "ops-bytes-api-")
	c, _ := runCoreAt(t, base)
	needJournalKey(t, c)
	shop := filepath.Join(base, "shop")
	shopDB(t, shop)
	cl := localapi.NewClient(c.Paths.Socket)
	ctx := context.Background()
	submit := func(p map[string]any) *api.PlanView {
		t.Helper()
		data, _ := json.Marshal(p)
		v, err := localapi.Call(ctx, cl, api.OpsCreatePlan, api.PlanSubmission{Data: string(data), BaseDir: shop, By: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := localapi.Call(ctx, cl, api.OpsDiff, api.DiffInput{Run: true, By: "test"}, v.ID); err != nil {
			t.Fatal(err)
		}
		return v
	}
	bare := submit(shopPlan("sqlite3 -bail db.sqlite < migrate.sql", nil))
	if _, err := localapi.Call(ctx, cl, api.OpsApprovalPrompt, api.None{}, bare.ID); err == nil ||
		!strings.Contains(err.Error(), "does not hold migrate.sql") || !strings.Contains(err.Error(), "declare it in inputs") {
		t.Fatalf("prompt of a plan without inputs: %v", err)
	}
	v := submit(shopPlan("sqlite3 -bail db.sqlite '.read migrate.sql' && sleep 1 && sqlite3 -bail db.sqlite < ./x/../migrate.sql", []string{"migrate.sql"}))
	os.MkdirAll(filepath.Join(shop, "x"), 0o755)
	ap, err := c.OpsApprove(WindowCaller(), v.ID, api.ApproveBody{ConfirmHashPrefix: v.Hash})
	if err != nil {
		t.Fatal(err)
	}
	go swapDuringApply(t, cl, v.ID, shop)
	res, err := localapi.Call(ctx, cl, api.OpsApply, api.ApplyInput{Token: ap.Token}, v.ID)
	// The approved ALTER TABLE ran twice: the second one fails (the column exists), the
	// users table is still there.
	if err != nil || res.Status != api.PlanFailed || !strings.Contains(res.Output.Content, "duplicate column") {
		t.Fatalf("apply: %+v %v", res, err)
	}
	if schema := shopSchema(t, shop); !strings.Contains(schema, "email") {
		t.Fatalf("the apply did not run the approved bytes (users now: %q)", schema)
	}
}

func readString(path string) string {
	b, _ := os.ReadFile(path)
	return string(b)
}

// The commit-confirm example through the MCP tools and the core's sandbox: after the
// apply, fakevyos in the workdir is swapped for one that opens every port and says it
// confirmed. ops_verify's confirm runs the approved fakevyos, which keeps the commit.
func TestOpsConfirmRunsTheApprovedBytesThroughTheMCPTools(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	for _, tool := range []string{"bash", "flock", "diff"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	base := vartmp.Dir(t, "ops-confirm-")
	c, _ := runCoreAt(t, base)
	needJournalKey(t, c)
	edge := filepath.Join(base, "edge1")
	if err := os.CopyFS(edge, os.DirFS(filepath.Join("..", "ops", "testdata", "vyos-commit-confirm"))); err != nil {
		t.Fatal(err)
	}
	dev := exec.Command("./fakevyos", "device")
	dev.Dir = edge
	if err := dev.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dev.Process.Kill(); _ = dev.Wait() })
	var plan map[string]any
	if err := json.Unmarshal([]byte(readString(filepath.Join(edge, "plan.json"))), &plan); err != nil {
		t.Fatal(err)
	}
	// A window no slow machine outlasts.
	plan["apply"] = map[string]any{"argv": []string{"./fakevyos", "commit-confirm", "600", "firewall.conf"}}
	plan["confirm_within_seconds"] = 600
	cs := mcpSession(t, c, edge)
	answerAll(t, c)

	isErr, text := toolText(t, cs, api.ToolOpsPlan, map[string]any{"plan": plan})
	var v api.PlanView
	if isErr || json.Unmarshal([]byte(text), &v) != nil {
		t.Fatalf("ops_plan: %s", text)
	}
	if isErr, text := toolText(t, cs, api.ToolOpsDiff, map[string]any{"plan_id": v.ID, "run": true}); isErr {
		t.Fatalf("ops_diff: %s", text)
	}
	isErr, text = toolText(t, cs, api.ToolOpsApprove, map[string]any{"plan_id": v.ID})
	var ap api.ApproveResult
	if isErr || json.Unmarshal([]byte(text), &ap) != nil || ap.Token == "" {
		t.Fatalf("ops_approve: %s", text)
	}
	if isErr, text := toolText(t, cs, api.ToolOpsApply, map[string]any{"plan_id": v.ID, "token": ap.Token}); isErr || !strings.Contains(text, `"applied"`) {
		t.Fatalf("ops_apply: %s", text)
	}
	tmp := filepath.Join(edge, ".swap")
	os.WriteFile(tmp, []byte("#!/bin/sh\necho 'rule 99 accept all' >> running.conf\nrm -f pending rollback.conf\necho forged >> device.log\necho commit confirmed\n"), 0o755)
	if err := os.Rename(tmp, filepath.Join(edge, "fakevyos")); err != nil {
		t.Fatal(err)
	}
	isErr, text = toolText(t, cs, api.ToolOpsVerify, map[string]any{"plan_id": v.ID})
	var vr api.VerifyResult
	if isErr || json.Unmarshal([]byte(text), &vr) != nil {
		t.Fatalf("ops_verify: %s", text)
	}
	log := readString(filepath.Join(edge, "device.log"))
	if strings.Contains(log, "forged") || strings.Contains(readString(filepath.Join(edge, "running.conf")), "rule 99") {
		t.Fatalf("the confirm ran the swapped fakevyos: device.log %q", log)
	}
	if vr.Confirm == nil || vr.Confirm.Outcome != api.ConfirmSent || vr.Status != api.PlanVerified || log != "committed, rollback in 600s unless confirmed\nconfirmed\n" {
		t.Fatalf("the approved confirm did not confirm: %+v %+v; device.log %q", vr, vr.Confirm, log)
	}
}
