package desktop

import (
	"os"
	"strings"
	"testing"
)

// In the window the person's own setting takes effect at once, even one that loosens;
// what a script wrote into config.toml beside it still waits, shown in the view, until
// the person confirms it there.
func TestWindowSettingsAndWaitingChanges(t *testing.T) {
	core := openCoreWith(t, personConfig, nil)
	f := NewFacade(core)
	// A script writes a weaker proof.
	script := personConfig + "\n[approvals]\nterminal_proof = \"tty\"\n"
	if err := os.WriteFile(core.Paths.ConfigFile, []byte(script), 0o640); err != nil {
		t.Fatal(err)
	}
	core.Config.Reload()
	v := f.ConfigView()
	if v.Pending == nil || !strings.Contains(strings.Join(v.Pending.Keys, " "), "approvals.terminal_proof") {
		t.Fatalf("the view does not show what waits: %+v", v.Pending)
	}
	// The person turns the network on in the window: in force at once.
	v, err := f.SetSetting("sandbox_workspace_write.network_access", true)
	if err != nil {
		t.Fatal(err)
	}
	if n := core.Config.State().File.SandboxWorkspaceWrite.Network(); n == nil || string(*n) != "on" {
		t.Fatalf("the window's own setting waited: %v", n)
	}
	if core.Proof().TerminalProof != "os" || v.Pending == nil || strings.Contains(strings.Join(v.Pending.Keys, " "), "network_access") {
		t.Fatalf("the script's change came in with the person's edit: %s %+v", core.Proof().TerminalProof, v.Pending)
	}
	// Confirmed in the window, it is in force.
	if v, err = f.ConfirmConfig(v.Pending.Digest); err != nil || v.Pending != nil || core.Proof().TerminalProof != "tty" {
		t.Fatalf("confirm: %v %+v %s", err, v.Pending, core.Proof().TerminalProof)
	}
}
