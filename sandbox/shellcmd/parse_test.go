package shellcmd

import (
	"reflect"
	"strings"
	"testing"
)

// argv renders the literal values of a command's Args ("?" for a non-literal word).
func argv(c Command) []string {
	out := make([]string, len(c.Args))
	for i, a := range c.Args {
		if a.Literal {
			out[i] = a.Value
		} else {
			out[i] = "?" + a.Raw
		}
	}
	return out
}

func TestParseCommands(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		want     [][]string // argv of each command, in order
		wrappers [][]string // wrappers per command (nil = don't check)
	}{
		{"simple", "ls -la", [][]string{{"ls", "-la"}}, nil},
		{"pipeline and list", "cat a | grep b && echo ok; false || true",
			[][]string{{"cat", "a"}, {"grep", "b"}, {"echo", "ok"}, {"false"}, {"true"}}, nil},
		{"quotes removed", `echo 'a b' "c d" e\ f $'x\ty'`, [][]string{{"echo", "a b", "c d", "e f", "x\ty"}}, nil},
		{"variable is not literal", `rm -rf "$HOME"/x`, [][]string{{"rm", "-rf", `?"$HOME"/x`}}, nil},
		{"glob stays literal", "rm *.o", [][]string{{"rm", "*.o"}}, nil},
		{"sudo with user", "sudo -u root rm -rf /", [][]string{{"rm", "-rf", "/"}}, [][]string{{"sudo"}}},
		{"sudo long user", "sudo --user=root -- rm x", [][]string{{"rm", "x"}}, [][]string{{"sudo"}}},
		{"sudo attached", "sudo -uroot -E rm x", [][]string{{"rm", "x"}}, [][]string{{"sudo"}}},
		{"sudo -v has no command", "sudo -v", [][]string{{"sudo", "-v"}}, [][]string{nil}},
		{"nested wrappers", "sudo timeout -s KILL 5 nice -n 10 ionice -c 3 curl http://x",
			[][]string{{"curl", "http://x"}}, [][]string{{"sudo", "timeout", "nice", "ionice"}}},
		{"timeout long opts", "timeout --signal=TERM --kill-after 2 10s wget x", [][]string{{"wget", "x"}}, [][]string{{"timeout"}}},
		{"nice numeric", "nice -5 make", [][]string{{"make"}}, [][]string{{"nice"}}},
		{"env assigns", "env -i FOO=1 -u BAR BAZ=2 python3 x.py", [][]string{{"python3", "x.py"}}, [][]string{{"env"}}},
		{"env -S", `env -S "rm -rf /tmp/x" y`, [][]string{{"rm", "-rf", "/tmp/x", "y"}}, [][]string{{"env"}}},
		{"env alone", "env", [][]string{{"env"}}, [][]string{nil}},
		{"command -v is a lookup", "command -v curl", [][]string{{"command", "-v", "curl"}}, [][]string{nil}},
		{"command runs", "command -p curl x", [][]string{{"curl", "x"}}, [][]string{{"command"}}},
		{"xargs", "find . | xargs -0 -n 1 -I{} rm {}", [][]string{{"find", "."}, {"rm", "{}"}}, [][]string{nil, {"xargs"}}},
		{"xargs optional attached", "xargs -i rm {}", [][]string{{"rm", "{}"}}, [][]string{{"xargs"}}},
		{"stdbuf", "stdbuf -oL -e 0 tee out", [][]string{{"tee", "out"}}, [][]string{{"stdbuf"}}},
		{"setsid nohup", "setsid -f nohup sleep 100", [][]string{{"sleep", "100"}}, [][]string{{"setsid", "nohup"}}},
		{"time -p", "time -p ls", [][]string{{"ls"}}, nil},
		{"busybox applet", "busybox rm -f x", [][]string{{"rm", "-f", "x"}}, [][]string{{"busybox"}}},
		{"flock cmd", "flock -n /tmp/l rm x", [][]string{{"rm", "x"}}, [][]string{{"flock"}}},
		{"full path wrapper", "/usr/bin/sudo /bin/rm x", [][]string{{"/bin/rm", "x"}}, [][]string{{"sudo"}}},
		{"chrt and taskset", "chrt -f 10 taskset -c 0 nc -l 1", [][]string{{"nc", "-l", "1"}}, [][]string{{"chrt", "taskset"}}},
		{"exec -a", "exec -a foo ssh host", [][]string{{"ssh", "host"}}, [][]string{{"exec"}}},
		{"doas", "doas -u bob rm x", [][]string{{"rm", "x"}}, [][]string{{"doas"}}},
		{"unbuffer", "unbuffer -p tftp", [][]string{{"tftp"}}, [][]string{{"unbuffer"}}},
		{"if for while case", "if true; then a; fi; for i in 1; do b; done; while c; do d; done; case x in y) e;; esac",
			[][]string{{"true"}, {"a"}, {"b"}, {"c"}, {"d"}, {"e"}}, nil},
		{"subshell and block", "(a; b) && { c; }", [][]string{{"a"}, {"b"}, {"c"}}, nil},
		{"function body", "f() { rm x; }; f", [][]string{{"rm", "x"}, {"f"}}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Parse(tt.src)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.src, err)
			}
			var got [][]string
			for _, c := range s.Commands {
				got = append(got, argv(c))
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Parse(%q) argv = %q, want %q", tt.src, got, tt.want)
			}
			if tt.wrappers != nil {
				for i, c := range s.Commands {
					if !reflect.DeepEqual(c.Wrappers, tt.wrappers[i]) {
						t.Errorf("command %d wrappers = %q, want %q", i, c.Wrappers, tt.wrappers[i])
					}
				}
			}
		})
	}
}

func TestParseNested(t *testing.T) {
	tests := []struct {
		src        string
		wantNested [][]string
	}{
		{`sh -c 'rm -rf /tmp/x; curl y'`, [][]string{{"rm", "-rf", "/tmp/x"}, {"curl", "y"}}},
		{`bash -lc "echo hi > /etc/passwd"`, [][]string{{"echo", "hi"}}},
		{`sudo bash -e -c 'wget x'`, [][]string{{"wget", "x"}}},
		{`dash -c -- 'nc x 1'`, [][]string{{"nc", "x", "1"}}},
		{`zsh -o pipefail -c 'ssh h'`, [][]string{{"ssh", "h"}}},
		{`fish -c 'rm -rf ~'`, [][]string{{"rm", "-rf", "~"}}},
		{`/usr/bin/fish -c 'curl x'`, [][]string{{"curl", "x"}}},
		{`eval 'curl' x`, [][]string{{"curl", "x"}}},
		{`flock /tmp/l -c 'rm a'`, [][]string{{"rm", "a"}}},
		{`su - root -c 'curl x'`, [][]string{{"curl", "x"}}},
		{`runuser -u bob --command='rm b'`, [][]string{{"rm", "b"}}},
		{`xargs sh -c 'rm "$1"' _`, [][]string{{"rm", `?"$1"`}}},
		// Only one level is followed.
		{`sh -c "sh -c 'rm x'"`, [][]string{{"sh", "-c", "rm x"}}},
		// A script given as a file is not followed.
		{`bash script.sh`, nil},
		{`sh -c "$CMD"`, nil},
	}
	for _, tt := range tests {
		s, err := Parse(tt.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.src, err)
		}
		var got [][]string
		for _, c := range s.Commands {
			if c.Nested {
				got = append(got, argv(c))
			}
		}
		if !reflect.DeepEqual(got, tt.wantNested) {
			t.Errorf("Parse(%q) nested = %q, want %q", tt.src, got, tt.wantNested)
		}
	}
}

func TestParseSubstitutions(t *testing.T) {
	s, err := Parse(`echo "$(curl -s x)" <(wget y) ` + "`nc z 1`")
	if err != nil {
		t.Fatal(err)
	}
	var subst []string
	for _, c := range s.Commands {
		if c.Substituted {
			subst = append(subst, c.Program())
		}
	}
	want := []string{"curl", "wget", "nc"}
	if !reflect.DeepEqual(subst, want) {
		t.Fatalf("substituted programs = %q, want %q", subst, want)
	}
	if s.Commands[0].Program() != "echo" || s.Commands[0].Substituted {
		t.Fatalf("first command = %+v, want unsubstituted echo", s.Commands[0])
	}
}

func TestParseRedirects(t *testing.T) {
	tests := []struct {
		src   string
		op    string
		fd    string
		write bool
		value string
		lit   bool
	}{
		{"echo x > out", ">", "", true, "out", true},
		{"echo x >> 'my file'", ">>", "", true, "my file", true},
		{"cmd 2> err", ">", "2", true, "err", true},
		{"cmd &> all", "&>", "", true, "all", true},
		{"cmd &>> all", "&>>", "", true, "all", true},
		{"cmd >| f", ">|", "", true, "f", true},
		{"cmd <> f", "<>", "", true, "f", true},
		{"cmd < in", "<", "", false, "in", true},
		{"cmd 2>&1", ">&", "2", false, "1", true},
		{"cmd >&-", ">&", "", false, "-", true},
		{"cmd >& file", ">&", "", true, "file", true},
		{`cmd > "$(mktemp)"`, ">", "", true, "", false},
		{"cmd > $X", ">", "", true, "", false},
		{"cmd <<< word", "<<<", "", false, "word", true},
	}
	for _, tt := range tests {
		s, err := Parse(tt.src)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.src, err)
		}
		r := s.Commands[0].Redirects[0]
		if r.Op != tt.op || r.FD != tt.fd || r.Write != tt.write || r.Target.Value != tt.value || r.Target.Literal != tt.lit {
			t.Errorf("Parse(%q) redirect = %+v, want op %q fd %q write %v value %q literal %v",
				tt.src, r, tt.op, tt.fd, tt.write, tt.value, tt.lit)
		}
	}
}

func TestParseCompoundRedirect(t *testing.T) {
	s, err := Parse("{ a; b; } > out; > bare")
	if err != nil {
		t.Fatal(err)
	}
	var targets []string
	for _, c := range s.Commands {
		for _, r := range c.Redirects {
			targets = append(targets, r.Target.Value)
		}
	}
	if !reflect.DeepEqual(targets, []string{"out", "bare"}) {
		t.Fatalf("redirect targets = %q, want [out bare]", targets)
	}
}

func TestParseAssignsAndSource(t *testing.T) {
	s, err := Parse("FOO=1 BAR=$x env BAZ=2 make all; echo done")
	if err != nil {
		t.Fatal(err)
	}
	c := s.Commands[0]
	if len(c.Assigns) != 3 || c.Assigns[0].Name != "FOO" || c.Assigns[1].Value.Literal || c.Assigns[2].Name != "BAZ" {
		t.Fatalf("assigns = %+v", c.Assigns)
	}
	if c.Source != "FOO=1 BAR=$x env BAZ=2 make all" {
		t.Fatalf("source = %q", c.Source)
	}
	if got := s.Commands[1].Source; got != "echo done" {
		t.Fatalf("second source = %q", got)
	}
}

func TestParseError(t *testing.T) {
	for _, src := range []string{"echo 'unterminated", "if then fi (", "a |"} {
		if _, err := Parse(src); err == nil || !strings.Contains(err.Error(), "parse shell command") {
			t.Errorf("Parse(%q) err = %v, want a parse error", src, err)
		}
	}
}

func TestProgram(t *testing.T) {
	tests := map[string]string{"/usr/bin/rm -f x": "rm", "$X y": "", "./run.sh": "run.sh"}
	for src, want := range tests {
		s, err := Parse(src)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Commands[0].Program(); got != want {
			t.Errorf("Program(%q) = %q, want %q", src, got, want)
		}
	}
	if (Command{}).Program() != "" {
		t.Error("empty command has a program")
	}
}
