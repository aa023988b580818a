package sandbox

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// appFixture is a workspace with a credential in the home directory above it, a file
// to read, a directory, a symbolic link and a script of its own.
type appFixture struct {
	base, ws, home, outside string
}

func newAppFixture(t *testing.T) appFixture {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	must(t, err)
	f := appFixture{base: base, home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside")}
	f.ws = filepath.Join(f.home, "ws")
	must(t, os.MkdirAll(filepath.Join(f.ws, "dir"), 0o755))
	must(t, os.MkdirAll(filepath.Join(f.home, ".ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(f.home, ".ssh", "id_ed25519"), []byte("SECRET\n"), 0o600))
	must(t, os.WriteFile(filepath.Join(f.ws, "file.txt"), []byte("one\ntwo\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(f.ws, "build.sh"), []byte("#!/bin/sh\necho x > ../../outside\n"), 0o755))
	must(t, os.Symlink(f.base, filepath.Join(f.ws, "up")))
	return f
}

func (f appFixture) policy(t *testing.T, mode string, backend Backend) Policy {
	t.Helper()
	b := string(backend)
	p, err := Resolve(Inputs{Cwd: f.ws, Home: f.home, Env: envMap(map[string]string{"PATH": "/usr/bin:/bin"}),
		Flags: Layer{Mode: &mode, Backend: &b}})
	must(t, err)
	return p
}

// TestAppBackendEnforcesTheVerdict: with no OS layer, the application layer's verdict
// is all there is. What it denies is refused (the denial); what it cannot see is
// refused (ErrAppLayerCannotCheck, exit 125, with the way out); nothing is written
// outside the working directory either way; what it fully accounts for runs.
func TestAppBackendEnforcesTheVerdict(t *testing.T) {
	const (
		runs   = "runs"
		denied = "denied"
		blind  = "cannot check"
	)
	for _, tc := range []struct {
		name string
		argv []string
		want string
		// out is what the command must have printed when it runs.
		out string
	}{
		{"ls", []string{"ls"}, runs, "build.sh\ndir\nfile.txt\nup\n"},
		{"echo of a variable", []string{"sh", "-c", "X=ws; [ -n \"$X\" ] && echo \"$X\" $(basename \"$PWD\")"}, runs, "ws ws\n"},
		{"a shell writing inside", []string{"sh", "-c", "echo hi > made.txt && cat made.txt file.txt | wc -l"}, runs, "3\n"},
		{"sed printing", []string{"sed", "-n", "2p", "file.txt"}, runs, "two\n"},
		{"bash -c with cd inside", []string{"bash", "-c", "cd dir && pwd >/dev/null && touch here && ls"}, runs, "here\n"},
		{"redirect outside", []string{"sh", "-c", "echo x > OUTSIDE"}, denied, ""},
		{"touch ..", []string{"touch", "../../outside"}, denied, ""},
		{"cd .. then write", []string{"sh", "-c", "cd ../.. && touch outside"}, denied, ""},
		{"write through a symlink", []string{"sh", "-c", "echo x > up/outside"}, denied, ""},
		{"computed write target", []string{"sh", "-c", "d=../..; touch $d/outside"}, denied, ""},
		{"credential read", []string{"cat", "HOME/.ssh/id_ed25519"}, denied, ""},
		{"recursive read of a tree with credentials", []string{"grep", "-r", "SECRET", "HOME"}, denied, ""},
		{"python one-liner", []string{"python3", "-c", "open('../../outside', 'w').write('x')"}, blind, ""},
		{"python in a shell", []string{"sh", "-c", "python3 -c \"open('../../outside','w')\""}, blind, ""},
		{"a workspace script", []string{"./build.sh"}, blind, ""},
		{"a shell on a workspace script", []string{"sh", "build.sh"}, blind, ""},
		{"a shell inside a shell", []string{"sh", "-c", "sh -c 'echo x > ../../outside'"}, blind, ""},
		{"eval of a computed string", []string{"sh", "-c", "c='echo x > ../../outside'; eval \"$c\""}, blind, ""},
		{"computed argument", []string{"sh", "-c", "cat \"$(echo HOME/.ssh/id_ed25519)\""}, blind, ""},
		{"link then write through it", []string{"sh", "-c", "ln -s ../.. l && echo x > l/outside"}, blind, ""},
		{"moving a symlink", []string{"sh", "-c", "mv up u2 && echo x > u2/outside"}, blind, ""},
		{"find -exec", []string{"find", ".", "-name", "*.txt", "-exec", "cp", "{}", "../..", ";"}, blind, ""},
		{"sed w", []string{"sed", "s/one/x/w ../../outside", "file.txt"}, blind, ""},
		{"printf -v PATH", []string{"bash", "-c", "printf -v PATH %s dir && ls"}, blind, ""},
		{"preloaded library", []string{"sh", "-c", "LD_PRELOAD=./x.so ls"}, blind, ""},
		{"env wrapper", []string{"env", "-C", "../..", "touch", "outside"}, blind, ""},
		{"xargs", []string{"sh", "-c", "echo ../../outside | xargs touch"}, blind, ""},
		{"a program it does not model", []string{"tar", "-C", "../..", "-xf", "file.txt"}, blind, ""},
		{"recursive copy (links come along)", []string{"cp", "-r", "dir", "dir2"}, blind, ""},
		{"cp -t in a cluster", []string{"cp", "-vt", "../..", "file.txt"}, blind, ""},
		{"cp -t in a cluster, value attached", []string{"cp", "-vt../..", "file.txt"}, blind, ""},
		{"abbreviated --target-directory", []string{"cp", "--target=../..", "file.txt"}, blind, ""},
		{"abbreviated sed --in-place", []string{"sed", "--in-pl", "s/x/y/", "../../outside"}, blind, ""},
		{"abbreviated sort --output", []string{"sort", "--out=OUTSIDE", "file.txt"}, blind, ""},
		{"sort -o with its value attached", []string{"sort", "-noOUTSIDE", "file.txt"}, blind, ""},
		{"a chmod mode that looks like an option", []string{"chmod", "-w", "../.."}, blind, ""},
		{"cp -t on its own", []string{"cp", "-t", "../..", "file.txt"}, denied, ""},
		{"cp into the workspace", []string{"sh", "-c", "cp -v file.txt dir/ >/dev/null && cat dir/file.txt"}, runs, "one\ntwo\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newAppFixture(t)
			argv := make([]string, len(tc.argv))
			for i, a := range tc.argv {
				argv[i] = strings.NewReplacer("OUTSIDE", f.outside, "HOME", f.home).Replace(a)
			}
			var out bytes.Buffer
			res, err := Exec(context.Background(), ExecRequest{Policy: f.policy(t, "workspace-write", BackendApp), Argv: argv,
				Env: []string{"PATH=/usr/bin:/bin", "HOME=" + f.home}, Stdout: &out, Stderr: &out})
			absent(t, f.outside)
			var ee *ExecError
			switch tc.want {
			case runs:
				if err != nil || res.ExitCode != 0 || out.String() != tc.out {
					t.Fatalf("Exec = %+v, %v, output %q; want it to run and print %q", res, err, out.String(), tc.out)
				}
				if res.Backend != BackendNameApp || !strings.Contains(res.Warning, "application layer") {
					t.Errorf("result = %+v; want backend app and a warning that the OS does not confine it", res)
				}
			case denied:
				if _, ok := IsDenied(err); !ok {
					t.Fatalf("Exec = %+v, %v (output %q); want the application layer's denial", res, err, out.String())
				}
			case blind:
				if !errors.Is(err, ErrAppLayerCannotCheck) || !errors.As(err, &ee) || ee.Code != ExitSandboxFailed {
					t.Fatalf("Exec = %+v, %v (output %q); want exit %d, the application layer cannot check it", res, err, out.String(), ExitSandboxFailed)
				}
				for _, way := range []string{"--backend auto", "apt install bubblewrap"} {
					if !strings.Contains(err.Error(), way) {
						t.Errorf("the refusal does not name the way out %q: %v", way, err)
					}
				}
			}
			if tc.want != runs && out.Len() > 0 {
				t.Errorf("a refused command ran: %q", out.String())
			}
		})
	}
}

// TestAppOnlyFallbackEnforcesTheVerdict: backend "auto" on a machine without an OS
// backend falls back to the application layer under the same rule, and says how to get
// an OS sandbox. full-access is not checked at all.
func TestAppOnlyFallbackEnforcesTheVerdict(t *testing.T) {
	forcedBackend = forcedNone
	defer func() { forcedBackend = "" }()
	f := newAppFixture(t)
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + f.home}
	auto := f.policy(t, "workspace-write", BackendAuto)

	_, err := Exec(context.Background(), ExecRequest{Policy: auto, Argv: []string{"python3", "-c", "open('../../outside','w')"}, Env: env})
	if !errors.Is(err, ErrAppLayerCannotCheck) || !strings.Contains(err.Error(), "no OS sandbox backend is available") ||
		!strings.Contains(err.Error(), "apt install bubblewrap") {
		t.Fatalf("auto without an OS backend ran python3 or said nothing useful: %v", err)
	}
	_, err = Exec(context.Background(), ExecRequest{Policy: auto, Argv: []string{"touch", "../../outside"}, Env: env})
	if _, ok := IsDenied(err); !ok {
		t.Fatalf("auto without an OS backend: touch ../../outside = %v, want the denial", err)
	}
	res, err := Exec(context.Background(), ExecRequest{Policy: auto, Argv: []string{"ls"}, Env: env})
	if err != nil || res.ExitCode != 0 || !strings.Contains(res.Warning, "no OS sandbox backend") {
		t.Fatalf("auto without an OS backend: ls = %+v, %v; want it to run with the loud warning", res, err)
	}
	absent(t, f.outside)

	full := f.policy(t, "full-access", BackendApp)
	res, err = Exec(context.Background(), ExecRequest{Policy: full, Argv: []string{"python3", "-c", "open('../../outside','w')"}, Env: env})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("full-access is not a sandbox and must not be checked: %+v, %v", res, err)
	}
	if _, err := os.Stat(f.outside); err != nil {
		t.Fatalf("full-access: %v", err)
	}
}

// TestAppBackendKeepsHiddenPathsInsideTheWorkspace: run in the home directory, the
// credentials are inside the writable root. An OS sandbox mounts over them; without one
// the application layer must refuse every read or write of them, and every walk of a
// tree that holds them.
func TestAppBackendKeepsHiddenPathsInsideTheWorkspace(t *testing.T) {
	f := newAppFixture(t)
	mode, backend := "workspace-write", string(BackendApp)
	p, err := Resolve(Inputs{Cwd: f.home, Home: f.home, Env: envMap(map[string]string{"PATH": "/usr/bin:/bin"}),
		Flags: Layer{Mode: &mode, Backend: &backend}})
	must(t, err)
	key := filepath.Join(f.home, ".ssh", "id_ed25519")
	for _, argv := range [][]string{
		{"sh", "-c", "echo evil >> .ssh/authorized_keys"},
		{"sh", "-c", "cat < .ssh/id_ed25519"},
		{"cp", ".ssh/id_ed25519", "ws/stolen"},
		{"dd", "if=.ssh/id_ed25519", "of=ws/stolen"},
		{"date", "-f", ".ssh/id_ed25519"},
		{"rm", "-rf", "."},
		{"chmod", "-R", "a+r", "."},
		{"find", ".", "-name", "id_*"},
		{"sh", "-c", "cd .ssh && cat id_ed25519"},
	} {
		var out bytes.Buffer
		_, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: argv, Env: []string{"PATH=/usr/bin:/bin", "HOME=" + f.home},
			Stdout: &out, Stderr: &out})
		if d, ok := IsDenied(err); !ok || d.Reason != ReasonRead {
			t.Errorf("%q = %v (output %q); want a denial naming the hidden path", argv, err, out.String())
		}
		content(t, key, "SECRET\n")
		absent(t, filepath.Join(f.home, ".ssh", "authorized_keys"))
		absent(t, filepath.Join(f.ws, "stolen"))
	}
}

// TestAppBackendRefusesWhatTheEnvironmentChanges: an exported bash function, a
// preloaded library or a writable directory in PATH would change what runs under a
// name the analysis checked.
func TestAppBackendRefusesWhatTheEnvironmentChanges(t *testing.T) {
	f := newAppFixture(t)
	p := f.policy(t, "workspace-write", BackendApp)
	for _, tc := range []struct {
		name string
		env  []string
		want string
	}{
		{"exported function", []string{"PATH=/usr/bin:/bin", "BASH_FUNC_ls%%=() { python3 -c 1; }"}, "BASH_FUNC_ls%%"},
		{"preload", []string{"PATH=/usr/bin:/bin", "LD_PRELOAD=" + filepath.Join(f.ws, "x.so")}, "LD_PRELOAD"},
		{"BASH_ENV", []string{"PATH=/usr/bin:/bin", "BASH_ENV=" + filepath.Join(f.ws, "build.sh")}, "BASH_ENV"},
		{"workspace in PATH", []string{"PATH=" + filepath.Join(f.ws, "dir") + ":/usr/bin:/bin"}, "PATH includes " + filepath.Join(f.ws, "dir")},
		{"relative PATH entry", []string{"PATH=.:/usr/bin:/bin"}, "PATH includes the working directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Exec(context.Background(), ExecRequest{Policy: p, Argv: []string{"bash", "-c", "ls"}, Env: tc.env})
			if !errors.Is(err, ErrAppLayerCannotCheck) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Exec = %v; want a refusal naming %q", err, tc.want)
			}
		})
	}
}
