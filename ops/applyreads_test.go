package ops

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every way an apply can read a file that is not pinned is refused with the way out;
// the same file declared (by any spelling) or named as the target passes.
func TestCheckApplyReads(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"migrate.sql", "deploy.yaml", "deploy.sh", "db.sqlite", "vars.tfvars"} {
		os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644)
	}
	os.Mkdir(filepath.Join(dir, "manifests"), 0o755)
	os.Symlink("migrate.sql", filepath.Join(dir, "link.sql"))
	os.Link(filepath.Join(dir, "migrate.sql"), filepath.Join(dir, "hard.sql"))
	cases := []struct {
		apply  Command
		inputs []string
		want   string // "" when accepted
	}{
		{Command{Shell: "sqlite3 db.sqlite < migrate.sql"}, nil, "declare it in inputs"},
		{Command{Shell: "sqlite3 db.sqlite < migrate.sql"}, []string{"migrate.sql"}, ""},
		{Command{Shell: "sqlite3 db.sqlite < link.sql"}, []string{"migrate.sql"}, ""},
		{Command{Shell: "sqlite3 db.sqlite < .//migrate.sql"}, []string{"migrate.sql"}, ""},
		// A hard link is another file as far as the path goes: not pinned, refused.
		{Command{Shell: "sqlite3 db.sqlite < hard.sql"}, []string{"migrate.sql"}, "does not hold hard.sql"},
		{Command{Shell: "sqlite3 db.sqlite < " + dir + "/migrate.sql"}, []string{"migrate.sql"}, ""},
		{Command{Shell: "mysql shop < migrate.sql"}, nil, "declare it in inputs"},
		{Command{Argv: []string{"psql", "-f", "migrate.sql"}}, nil, "declare it in inputs"},
		{Command{Argv: []string{"psql", "--file=migrate.sql"}}, nil, "declare it in inputs"},
		{Command{Argv: []string{"kubectl", "apply", "-f", "deploy.yaml"}}, nil, "declare it in inputs"},
		{Command{Argv: []string{"kubectl", "apply", "-f", "manifests"}}, nil, "a directory cannot be pinned"},
		{Command{Argv: []string{"terraform", "apply", "plan.out"}}, nil, "it does not exist now"},
		{Command{Argv: []string{"terraform", "apply", "-var-file=vars.tfvars"}}, nil, "declare it in inputs"},
		{Command{Argv: []string{"./deploy.sh"}}, nil, "declare it in inputs"},
		{Command{Argv: []string{"./deploy.sh"}}, []string{"deploy.sh"}, ""},
		{Command{Argv: []string{"bash", "deploy.sh"}}, nil, "declare it in inputs"},
		{Command{Shell: "psql -f \"$F\""}, nil, "cannot name"},
		{Command{Shell: "cat $(ls *.sql) | psql"}, nil, "cannot name"},
		{Command{Shell: "sqlite3 db.sqlite < *.sql"}, nil, "cannot name"},
		{Command{Argv: []string{"bash", "-c", "psql -f migrate.sql"}}, nil, "declare it in inputs"},
		{Command{Shell: "sudo -u postgres psql -f migrate.sql"}, nil, "declare it in inputs"},
		{Command{Argv: []string{"sqlite3", "db.sqlite", ".read migrate.sql"}}, nil, "declare it in inputs"},
		{Command{Argv: []string{"sqlite3", "db.sqlite", "ALTER TABLE users ADD COLUMN email TEXT"}}, nil, ""},
		{Command{Shell: "psql \"$DATABASE_URL\" -c 'VACUUM' > out.log"}, nil, ""},
		{Command{Argv: []string{"cat", "/etc/hostname"}}, nil, ""},
	}
	for _, tc := range cases {
		p := &OperationPlan{Apply: tc.apply, Workdir: dir, Inputs: tc.inputs, Target: Target{Device: "db.sqlite"}}
		err := checkApplyReads(p)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v (inputs %v): refused: %v", tc.apply, tc.inputs, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v (inputs %v): %v, want %q", tc.apply, tc.inputs, err, tc.want)
		}
	}
}

// FuzzApplyPaths checks the analysis never panics and that a literal file named after
// < is always found as a read.
func FuzzApplyPaths(f *testing.F) {
	for _, s := range []string{"sqlite3 db < migrate.sql", "psql -f x", "sh -c 'cat a'", "a=b c", "kubectl apply -f -", "$(x) < $y", "'"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) > 4096 || strings.ContainsRune(s, 0) {
			return
		}
		_, _, _ = applyPaths(Command{Shell: s})
		_, _, _ = applyPaths(Command{Argv: strings.Fields(s + " x")})
		paths, _, err := applyPaths(Command{Shell: "cat < f9q; " + s})
		if err != nil {
			return
		}
		found := false
		for _, p := range paths {
			found = found || (p.text == "f9q" && p.read)
		}
		if !found {
			t.Fatalf("the redirection in %q was not found: %+v", s, paths)
		}
	})
}
