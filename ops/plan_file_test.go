package ops

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestDecodePlanInput(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("testdata", "sqlite-migration", "plan.json"))
	if err != nil {
		t.Fatal(err)
	}
	in, err := DecodePlanInput(b, "/srv/shop")
	if err != nil {
		t.Fatal(err)
	}
	if in.Workdir != "/srv/shop" || in.Apply.Shell != "sqlite3 -bail db.sqlite < migrate.sql" || len(in.Verify) != 3 {
		t.Fatalf("decoded %+v", in)
	}
	cases := map[string]string{
		`{"intent": "x", "snapshot_command": {"argv": ["ls"]}}`: "snapshot_command",
		`{"intent": 5}`:                            "intent",
		`{"steps": [{"reversibility": 1}]}`:        "steps.reversibility",
		`{"intent": "x"`:                           "plan file",
		`{"intent": "x"} {"intent": "y"}`:          "plan file",
		`{"apply": {"argv": "sqlite3 db.sqlite"}}`: "apply.argv",
	}
	for src, field := range cases {
		_, err := DecodePlanInput([]byte(src), "/srv")
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != field {
			t.Errorf("%s: got %v, want an error naming %s", src, err, field)
		}
	}
	in, _ = DecodePlanInput([]byte(`{"workdir": "sub/dir"}`), "/srv")
	if in.Workdir != "/srv/sub/dir" {
		t.Fatalf("relative workdir: %s", in.Workdir)
	}
}
