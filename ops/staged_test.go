package ops

import (
	"errors"
	"strings"
	"testing"
)

func TestCommandForPointsTheCommandAtTheApprovedCopies(t *testing.T) {
	in := []StagedInput{{Path: "migrate.sql", SHA256: strings.Repeat("a", 64), Copy: "/state/inputs/aaa"}}
	to := func(StagedInput) string { return "/copy/migrate.sql" }
	cases := []struct {
		name string
		cmd  Command
		want Command
	}{
		{"redirect", Command{Shell: "sqlite3 -bail db.sqlite < migrate.sql"}, Command{Shell: "sqlite3 -bail db.sqlite < /copy/migrate.sql"}},
		{"redirect, no space", Command{Shell: "sqlite3 db <migrate.sql && echo ok"}, Command{Shell: "sqlite3 db </copy/migrate.sql && echo ok"}},
		{"quoted", Command{Shell: `psql -f "migrate.sql" && psql -f './migrate.sql'`}, Command{Shell: "psql -f /copy/migrate.sql && psql -f /copy/migrate.sql"}},
		{"absolute", Command{Shell: "cat /srv/shop/migrate.sql | sqlite3 db"}, Command{Shell: "cat /copy/migrate.sql | sqlite3 db"}},
		{"option value", Command{Argv: []string{"tool", "--file=migrate.sql", "x"}}, Command{Argv: []string{"tool", "--file=/copy/migrate.sql", "x"}}},
		{"token in a word", Command{Argv: []string{"sqlite3", "db", ".read migrate.sql"}}, Command{Argv: []string{"sqlite3", "db", ".read /copy/migrate.sql"}}},
		{"token in a shell word", Command{Shell: "sqlite3 db '.read migrate.sql'"}, Command{Shell: "sqlite3 db '.read /copy/migrate.sql'"}},
		{"similar names left alone", Command{Shell: "cp migrate.sql.bak x; sqlite3 db < migrate.sql"}, Command{Shell: "cp migrate.sql.bak x; sqlite3 db < /copy/migrate.sql"}},
		{"inside a subshell", Command{Shell: "(cd . && sqlite3 db < migrate.sql)"}, Command{Shell: "(cd . && sqlite3 db < /copy/migrate.sql)"}},
		{"the program itself", Command{Argv: []string{"./migrate.sql", "--yes"}}, Command{Argv: []string{"/copy/migrate.sql", "--yes"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RunSpec{Command: tc.cmd, Dir: "/srv/shop", Inputs: in}.CommandFor(to)
			if err != nil || !got.Equal(tc.want) {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
		})
	}
}

// An input the command does not name literally cannot be pointed at its copy: the plan
// is refused when it is created, with the way out.
func TestInputsTheCommandDoesNotNameAreRefused(t *testing.T) {
	for name, apply := range map[string]Command{
		"not named":      {Shell: "make migrate"},
		"through a var":  {Shell: "F=migrate.sql; sqlite3 db < $F"},
		"by a glob":      {Shell: "cat *.sql | sqlite3 db"},
		"another prefix": {Argv: []string{"psql", "-fmigrate.sql"}},
		"a heredoc body": {Shell: "sqlite3 db <<EOF\n.read migrate.sql\nEOF\n"},
	} {
		t.Run(name, func(t *testing.T) {
			p := basePlan()
			p.Apply = apply
			p.Inputs = []string{"migrate.sql"}
			err := Validate(&p)
			var ve *ValidationError
			if name == "through a var" {
				// F=migrate.sql names it (the assignment is rewritten); what reads $F then
				// reads the copy. Accepted.
				if err != nil {
					t.Fatalf("validate: %v", err)
				}
				return
			}
			if !errors.As(err, &ve) || ve.Field != "inputs" || !strings.Contains(ve.Problem, "is not named in the apply command") {
				t.Fatalf("validate: %v", err)
			}
		})
	}
}
