package desktop

import (
	"testing"

	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
)

// The popup says what allowing an escalation gives, in the broker's words.
func TestApprovalSaysWhatAnEscalationGives(t *testing.T) {
	esc := permission.PendingRequest{ID: "e", Kind: permission.KindIsolationEscalation, Grant: &sandbox.Grant{Writable: []string{"/etc"}}}
	if got := approvalView(esc).Gives; got != "/etc writable, for this one call" {
		t.Fatalf("gives %q", got)
	}
	if got := approvalView(permission.PendingRequest{ID: "p"}).Gives; got != "" {
		t.Fatalf("a plain request gives %q", got)
	}
}
