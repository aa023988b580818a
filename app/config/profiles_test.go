package config

import (
	"errors"
	"strings"
	"testing"
)

// The shipped profiles are all there, in order, and full access with approval never
// says in words what it gives up.
func TestBuiltInProfiles(t *testing.T) {
	got := Profiles(File{}, "config.toml")
	want := []string{"ask", "approve-for-me", "read-only", "full-access", "personal", "shared", "beginner", "demo"}
	if len(got) != len(want) {
		t.Fatalf("%d profiles", len(got))
	}
	for i, p := range got {
		if p.Name != want[i] || p.Title == "" || p.Description == "" || p.Source != "built-in" {
			t.Errorf("profile %d: %+v", i, p)
		}
	}
	fa, _ := LookupProfile(File{}, "", "full-access")
	if fa.SandboxMode != "full-access" || fa.ApprovalPolicy != "never" || !strings.Contains(fa.Warning, "nothing asks you") {
		t.Errorf("full-access: %+v", fa)
	}
	// A person's own full access with approval never gets the same warning.
	f, err := Parse("c.toml", []byte("[profiles.yolo]\nsandbox_mode = \"danger-full-access\"\napproval_policy = \"never\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := LookupProfile(f, "c.toml", "yolo"); p.Warning == "" || p.SandboxMode != "full-access" || p.Source != "c.toml" {
		t.Errorf("yolo: %+v", p)
	}
}

// Mistakes in profiles are named with their line and column and the way out.
func TestProfileMistakes(t *testing.T) {
	cases := []struct {
		name, doc, key, want string
		line, col            int
	}{
		{"unknown name", "# mine\nprofile = \"nope\"\n", "profile", "use one of ask, approve-for-me", 2, 11},
		{"bad mode", "[profiles.x]\nsandbox_mode = \"open\"\n", "profiles.x.sandbox_mode", "is not one of read-only", 2, 1},
		{"bad tier", "[profiles.x.tiers]\nbash = \"P9\"\n", "profiles.x.tiers.bash", "use P0 (silent)", 2, 1},
		{"bad network", "[profiles.x]\nnetwork_access = \"maybe\"\n", "profiles.x.network_access", "is not one of false", 2, 1},
		{"built-in name", "[profiles.demo]\nsandbox_mode = \"read-only\"\n", "profiles.demo", "give yours another name", 1, 2},
		{"approve-for-me without a reviewer", "profile = \"approve-for-me\"\n", "profile", "add [reviewer] command", 1, 11},
		{"unknown key", "[profiles.x]\nsandbox = \"read-only\"\n", "profiles.x.sandbox", "unknown key", 2, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("c.toml", []byte(c.doc))
			var ce *Error
			if !errors.As(err, &ce) || len(ce.Problems) != 1 {
				t.Fatalf("Parse: %v", err)
			}
			p := ce.Problems[0]
			if p.Key != c.key || !strings.Contains(p.Message, c.want) || p.Line != c.line || p.Column != c.col {
				t.Fatalf("problem %+v, want %s at %d:%d saying %q", p, c.key, c.line, c.col, c.want)
			}
		})
	}
	// A profile the file defines itself may be chosen.
	if _, err := Parse("c.toml", []byte("profile = \"mine\"\n[profiles.mine]\napproval_policy = \"untrusted\"\n")); err != nil {
		t.Fatal(err)
	}
}
