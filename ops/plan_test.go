package ops

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/airlock-app/airlock/redact"
)

func basePlan() OperationPlan {
	exit := 0
	return OperationPlan{
		Project:  "dir:/srv/app",
		Target:   Target{Provider: "sqlite", Account: "acct", Region: "local", Device: "db.sqlite"},
		Intent:   "add email column",
		Apply:    Command{Shell: "sqlite3 db.sqlite < migrate.sql"},
		Snapshot: Command{Argv: []string{"sqlite3", "-readonly", "db.sqlite", ".schema"}},
		Diff:     Command{Argv: []string{"echo", "x"}},
		Workdir:  "/srv/app",
		Steps:    []Step{{Description: "add column", Effect: "ALTER TABLE", Reversibility: Hard, BlastRadius: BlastMed, Rollback: "drop column"}},
		Verify:   []Assertion{{Name: "col", Command: "sqlite3 -readonly db.sqlite .schema", ExpectText: "email", ExpectExit: &exit}},
	}
}

func TestCanonicalHashCoversEveryField(t *testing.T) {
	base := basePlan()
	h0 := PlanHash(&base)
	if h0 != PlanHash(&base) {
		t.Fatal("hash is not deterministic")
	}
	// A JSON round trip (what the database stores) keeps the hash.
	b, _ := json.Marshal(base)
	var back OperationPlan
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if PlanHash(&back) != h0 {
		t.Fatal("hash changed over a JSON round trip")
	}
	two := 2
	mutations := map[string]func(p *OperationPlan){
		"project":          func(p *OperationPlan) { p.Project = "dir:/srv/other" },
		"target.provider":  func(p *OperationPlan) { p.Target.Provider = "aws" },
		"target.account":   func(p *OperationPlan) { p.Target.Account = "acct2" },
		"target.region":    func(p *OperationPlan) { p.Target.Region = "eu-west-1" },
		"target.device":    func(p *OperationPlan) { p.Target.Device = "db2.sqlite" },
		"intent":           func(p *OperationPlan) { p.Intent += "." },
		"apply.shell":      func(p *OperationPlan) { p.Apply.Shell += " " },
		"apply as argv":    func(p *OperationPlan) { p.Apply = Command{Argv: []string{"sqlite3 db.sqlite < migrate.sql"}} },
		"snapshot.argv":    func(p *OperationPlan) { p.Snapshot.Argv[3] = ".tables" },
		"snapshot removed": func(p *OperationPlan) { p.Snapshot = Command{} },
		"snapshot argv split": func(p *OperationPlan) {
			p.Snapshot.Argv = []string{"sqlite3", "-readonly db.sqlite", ".schema"}
		},
		"diff":               func(p *OperationPlan) { p.Diff = Command{} },
		"workdir":            func(p *OperationPlan) { p.Workdir = "/srv/app2" },
		"network":            func(p *OperationPlan) { p.Network = true },
		"timeout_seconds":    func(p *OperationPlan) { p.TimeoutSeconds = 5 },
		"step description":   func(p *OperationPlan) { p.Steps[0].Description = "x" },
		"step effect":        func(p *OperationPlan) { p.Steps[0].Effect = "x" },
		"step reversibility": func(p *OperationPlan) { p.Steps[0].Reversibility = Irreversible },
		"step blast radius":  func(p *OperationPlan) { p.Steps[0].BlastRadius = BlastHigh },
		"step rollback":      func(p *OperationPlan) { p.Steps[0].Rollback = "" },
		"step added":         func(p *OperationPlan) { p.Steps = append(p.Steps, p.Steps[0]) },
		"assertion name":     func(p *OperationPlan) { p.Verify[0].Name = "c" },
		"assertion command":  func(p *OperationPlan) { p.Verify[0].Command += " " },
		"assertion text":     func(p *OperationPlan) { p.Verify[0].ExpectText = "mail" },
		"assertion exit":     func(p *OperationPlan) { p.Verify[0].ExpectExit = &two },
		"inputs":             func(p *OperationPlan) { p.Inputs = []string{"migrate.sql"} },
		"field boundary":     func(p *OperationPlan) { p.Target.Account, p.Target.Region = "acctl", "ocal" },
	}
	seen := map[string]string{h0: "base"}
	for name, mut := range mutations {
		p := basePlan()
		mut(&p)
		h := PlanHash(&p)
		if prev, dup := seen[h]; dup {
			t.Errorf("%s: same hash as %s", name, prev)
		}
		seen[h] = name
	}
	// An unset expect_exit means 0: the same assertion, the same hash.
	p := basePlan()
	p.Verify[0].ExpectExit = nil
	if PlanHash(&p) != h0 {
		t.Error("expect_exit unset and 0 hash differently")
	}
}

func TestCanonicalBytesFormat(t *testing.T) {
	p := basePlan()
	got := string(CanonicalBytes(&p))
	want := "airlock-ops-plan/v1\nproject 12:dir:/srv/app\ntarget.provider 6:sqlite\n"
	if got[:len(want)] != want {
		t.Fatalf("canonical form starts %q", got[:len(want)])
	}
}

func TestValidationNamesTheField(t *testing.T) {
	cases := []struct {
		field string
		edit  func(p *OperationPlan)
	}{
		{"target.provider", func(p *OperationPlan) { p.Target.Provider = " " }},
		{"target", func(p *OperationPlan) { p.Target = Target{Provider: "aws"} }},
		{"intent", func(p *OperationPlan) { p.Intent = "" }},
		{"apply", func(p *OperationPlan) { p.Apply = Command{} }},
		{"apply", func(p *OperationPlan) { p.Apply = Command{Argv: []string{"a"}, Shell: "b"} }},
		{"apply.argv[0]", func(p *OperationPlan) { p.Apply = Command{Argv: []string{""}} }},
		{"apply.shell", func(p *OperationPlan) { p.Apply = Command{Shell: "PGPASSWORD=hunter2 psql -c 'select 1'"} }},
		{"apply.argv", func(p *OperationPlan) { p.Apply = Command{Argv: []string{"mysql", "--password", "hunter2"}} }},
		{"snapshot.shell", func(p *OperationPlan) { p.Snapshot = Command{Shell: "curl -H 'Authorization: Bearer abc' x"} }},
		{"workdir", func(p *OperationPlan) { p.Workdir = "relative/dir" }},
		{"workdir", func(p *OperationPlan) { p.Workdir = "/srv/../etc" }},
		{"timeout_seconds", func(p *OperationPlan) { p.TimeoutSeconds = -1 }},
		{"steps", func(p *OperationPlan) { p.Steps = nil }},
		{"steps[0].description", func(p *OperationPlan) { p.Steps[0].Description = "" }},
		{"steps[0].effect", func(p *OperationPlan) { p.Steps[0].Effect = "" }},
		{"steps[0].reversibility", func(p *OperationPlan) { p.Steps[0].Reversibility = "maybe" }},
		{"steps[0].blast_radius", func(p *OperationPlan) { p.Steps[0].BlastRadius = "medium" }},
		{"verify", func(p *OperationPlan) { p.Verify = nil }},
		{"verify[0].command", func(p *OperationPlan) { p.Verify[0].Command = "rm -rf /" }},
		{"verify[0].command", func(p *OperationPlan) { p.Verify[0].Command = "cat x; rm y" }},
		{"verify[0].expect_exit", func(p *OperationPlan) { n := 300; p.Verify[0].ExpectExit = &n }},
	}
	for _, tc := range cases {
		p := basePlan()
		tc.edit(&p)
		err := Validate(&p)
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field {
			t.Errorf("want a %s error, got %v", tc.field, err)
		}
	}
	p := basePlan()
	if err := Validate(&p); err != nil {
		t.Fatalf("valid plan refused: %v", err)
	}
}

func TestCreatePlanRedactsText(t *testing.T) {
	e := newEnv(t)
	in := e.plan()
	in.Intent = "rotate the key AKIAIOSFODNN7EXAMPLE"
	in.Steps[0].Description = "uses token=abcdef123456"
	v := e.create(t, in)
	if v.Plan.Intent != "rotate the key "+redact.Marker || v.Plan.Steps[0].Description != "uses token="+redact.Marker {
		t.Fatalf("not redacted: %q / %q", v.Plan.Intent, v.Plan.Steps[0].Description)
	}
	var rec PlanRecord
	e.db.First(&rec, "id = ?", v.ID)
	if containsAny(rec.Spec+rec.Intent, "AKIAIOSFODNN7EXAMPLE", "abcdef123456") {
		t.Fatal("a credential reached the database")
	}
	if _, err := e.svc.CreatePlan(context.Background(), PlanInput{OperationPlan: OperationPlan{Workdir: "/nonexistent/dir"}}); err == nil {
		t.Fatal("a missing working directory was accepted")
	}
}
