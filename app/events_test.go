package app

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/permission"
)

// strictJSON decodes raw into v refusing fields v does not declare.
func strictJSON(raw []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// TestEventsAreTheDeclaredOnes drives a real core through a task run, an approval and
// an ops plan from draft to verified, and holds every event it publishes to api.Events:
// its topic is declared there, and its payload decodes strictly into the declared type
// and encodes back to the same bytes. The bus refuses anything else, so a refusal fails
// too. The window's and the CLI's types are generated from that table.
func TestEventsAreTheDeclaredOnes(t *testing.T) {
	if _, err := os.Stat("/usr/bin/bwrap"); err != nil {
		t.Skip("bubblewrap not installed")
	}
	base, err := os.MkdirTemp("/var/tmp", "airlock-events-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	c, _ := runCoreAt(t, base)
	sub := c.Bus.Subscribe(100000)
	defer sub.Close()
	ctx := context.Background()
	repo := filepath.Join(c.getenv("HOME"), "Airlock", "events")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		t.Fatal(err)
	}

	// A task run, with output (run.log).
	task := createTask(t, c, dispatch.TaskSpec{Name: "hello", Cwd: repo, Argv: []string{"sh", "-c", "echo hello"}})
	r, err := c.Dispatch.RunNow(ctx, task.Name)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		got, _ := c.Dispatch.Run(ctx, r.ID)
		return dispatch.Finished(got.Status)
	})
	if got, _ := c.Dispatch.Run(ctx, r.ID); got.Status != dispatch.StatusSucceeded {
		t.Fatalf("run: %s (%s)", got.Status, got.Reason)
	}

	// An approval: a request a person answers.
	asked := answerNext(t, c, true)
	params, _ := json.Marshal(map[string]string{"command": "npm install"})
	d, err := c.Broker.Await(ctx, permission.Request{Tool: api.ToolBash, Params: params,
		Context: permission.Context{Session: "s1", Cwd: repo, Policy: permission.PolicySummary{Mode: "workspace-write"}}})
	if err != nil || d.Verdict != permission.Allow {
		t.Fatalf("await: %+v %v", d, err)
	}
	if p := <-asked; p.ID == "" {
		t.Fatal("nothing was asked")
	}

	// An ops plan: planned, diffed, approved, applied, verified.
	pv, err := c.Ops.CreatePlan(ctx, ops.PlanInput{OperationPlan: ops.OperationPlan{
		Target:  ops.Target{Provider: "local", Device: "out.txt"},
		Intent:  "append one line to out.txt",
		Apply:   ops.Command{Shell: "echo applied >> out.txt"},
		Diff:    ops.Command{Argv: []string{"echo", "+applied"}},
		Workdir: repo,
		Steps:   []ops.Step{{Description: "append a line", Effect: "file grows by one line", Reversibility: ops.Reversible, BlastRadius: ops.BlastLow, Rollback: "remove the line"}},
		Verify:  []ops.Assertion{{Name: "one line", Command: "grep -c applied out.txt", ExpectText: "1"}},
	}, By: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ops.AttachDiff(ctx, ops.DiffInput{PlanID: pv.ID, Run: true}); err != nil {
		t.Fatal(err)
	}
	ar, err := c.Ops.Approve(ctx, pv.ID, ops.ApproveOptions{ConfirmedHashPrefix: pv.Hash[:10], By: "alice", Interactive: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ops.Apply(ctx, pv.ID, ar.Token, ops.ApplyOptions{By: "agent"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Ops.Verify(ctx, pv.ID, "agent"); err != nil {
		t.Fatal(err)
	}

	// The window's "show" (published by the window's process through the same bus).
	c.Bus.Publish(api.TopicWindowShow, api.WindowShow{})

	seen := map[string]int{}
	for done := false; !done; {
		select {
		case ev := <-sub.C:
			seen[ev.Topic]++
			if err := declared(ev); err != nil {
				t.Error(err)
			}
			done = ev.Topic == api.TopicWindowShow
		default:
			t.Fatal("the window.show published last never arrived")
		}
	}
	if n := c.Bus.Refused(); n > 0 {
		t.Errorf("the bus refused %d events of an undeclared topic or payload type (see the log)", n)
	}
	for _, topic := range []string{api.TopicTaskUpdated, api.TopicRunUpdated, api.TopicRunLog, api.TopicDispatchState,
		api.TopicPermissionRequested, api.TopicPermissionDecided, api.TopicOpsPlanUpdated, api.TopicOpsJournalAppended} {
		if seen[topic] == 0 {
			t.Errorf("no %s event while driving the core (saw %v)", topic, seen)
		}
	}
}

// declared checks one event against api.Events.
func declared(ev api.Event) error {
	typ, ok := api.PayloadType(ev.Topic)
	if !ok {
		return fmt.Errorf("event %q (%s) is not in api.Events", ev.Topic, ev.Payload)
	}
	v := reflect.New(typ)
	if err := strictJSON(ev.Payload, v.Interface()); err != nil {
		return fmt.Errorf("%s payload %s does not decode into api.%s: %w", ev.Topic, ev.Payload, typ.Name(), err)
	}
	back, err := json.Marshal(v.Elem().Interface())
	if err != nil || !bytes.Equal(back, ev.Payload) {
		return fmt.Errorf("%s payload %s is not an api.%s (it encodes back as %s)", ev.Topic, ev.Payload, typ.Name(), back)
	}
	return nil
}

func TestDeclaredRefusesOtherPayloads(t *testing.T) {
	tests := []struct {
		name, topic, payload, want string
	}{
		{"undeclared topic", "dispatch.digestt", `{}`, "not in api.Events"},
		{"unknown field", api.TopicRunUpdated, `{"id":1,"task_id":2,"task_name":"t","status":"queued","released":[1]}`, "does not decode"},
		{"camelCase field", api.TopicRunLog, `{"runId":1,"task_id":2,"chunk":"x"}`, "does not decode"},
		{"a map where the type has fields", api.TopicRunUpdated, `{"id":1}`, "encodes back"},
		{"matches", api.TopicRunLog, `{"run_id":1,"task_id":2,"chunk":"x"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := declared(api.Event{Topic: tt.topic, Payload: json.RawMessage(tt.payload)})
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}
