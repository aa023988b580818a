package ops

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-app/airlock/internal/atrest"
)

// TestJournalPlanAndArtifactKeepNoCredential: a plan's text, the diff its command
// printed, and journal entries carry credentials the old ops redactor did not know (an
// Anthropic key, a JWT) besides the ones it did; none may be in the database file or its
// WAL.
func TestJournalPlanAndArtifactKeepNoCredential(t *testing.T) {
	const anthropicKey = "sk-ant-api03-QmFzZTY0U2VjcmV0S2V5VmFsdWUxMjM0NTY3ODkw"
	const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJvcHMtdGVzdCJ9.c2lnbmF0dXJlLXZhbHVl"
	e := newEnv(t)
	ctx := context.Background()
	// The diff command reads a file that holds credentials, as a config diff would.
	diffText := "+ANTHROPIC_API_KEY=" + anthropicKey + "\n+export PGPASSWORD=hunter2\n+auth " + jwt + "\n+key " + anthropicKey + "\n"
	if err := os.WriteFile(filepath.Join(e.dir, "change.diff"), []byte(diffText), 0o644); err != nil {
		t.Fatal(err)
	}
	in := e.plan()
	in.Intent = "rotate " + anthropicKey + " and the session " + jwt
	in.Diff = Command{Argv: []string{"cat", "change.diff"}}
	v := e.create(t, in)
	e.diff(t, v.ID)
	if _, err := e.svc.appendJournal(ctx, journalRecord{Project: v.Project, PlanID: v.ID, Event: EventApplyFailed, Actor: "agent",
		Detail: map[string]any{"output": "curl -H 'Authorization: Bearer bearer-tok-123' -d key=" + anthropicKey, "jwt": jwt}}); err != nil {
		t.Fatal(err)
	}
	secrets := []string{anthropicKey, jwt, "hunter2", "bearer-tok-123"}
	atrest.Check(t, filepath.Join(e.dbDir, "airlock.db"), "open", secrets...)
	e.journalOK(t, v.Project)
	if s, err := e.db.DB(); err == nil {
		s.Close()
	}
	atrest.Check(t, filepath.Join(e.dbDir, "airlock.db"), "closed", secrets...)
}
