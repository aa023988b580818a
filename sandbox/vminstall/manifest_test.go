package vminstall

import (
	"context"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const goodSHA = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

func TestParseManifest(t *testing.T) {
	base, _ := url.Parse("http://127.0.0.1:8080/img/manifest.json")
	art := func(fields string) string {
		return `{"name":"a","version":"1","artifacts":[` + fields + `]}`
	}
	cases := []struct {
		name, in, wantErr, wantURL string
	}{
		{"relative url", art(`{"name":"vmlinuz","kind":"kernel","version":"6.1","url":"vmlinuz","sha256":"` + goodSHA + `","size":5}`), "", "http://127.0.0.1:8080/img/vmlinuz"},
		{"uppercase sha", art(`{"name":"vmlinuz","kind":"kernel","version":"6.1","url":"file:///x/vmlinuz","sha256":"` + strings.ToUpper(goodSHA) + `","size":5}`), "", "file:///x/vmlinuz"},
		{"no artifacts", `{"name":"a","version":"1","artifacts":[]}`, "no artifacts", ""},
		{"path in name", art(`{"name":"../x","kind":"kernel","version":"1","url":"x","sha256":"` + goodSHA + `","size":5}`), "plain file name", ""},
		{"part name", art(`{"name":"x.part","kind":"kernel","version":"1","url":"x","sha256":"` + goodSHA + `","size":5}`), "plain file name", ""},
		{"state file name", art(`{"name":"installed.json","kind":"kernel","version":"1","url":"x","sha256":"` + goodSHA + `","size":5}`), "plain file name", ""},
		{"bad kind", art(`{"name":"x","kind":"firmware","version":"1","url":"x","sha256":"` + goodSHA + `","size":5}`), "kind", ""},
		{"short sha", art(`{"name":"x","kind":"kernel","version":"1","url":"x","sha256":"abc","size":5}`), "64 hex", ""},
		{"zero size", art(`{"name":"x","kind":"kernel","version":"1","url":"x","sha256":"` + goodSHA + `","size":0}`), "positive", ""},
		{"ftp url", art(`{"name":"x","kind":"kernel","version":"1","url":"ftp://h/x","sha256":"` + goodSHA + `","size":5}`), "http(s)", ""},
		{"duplicate", art(`{"name":"x","kind":"kernel","version":"1","url":"x","sha256":"` + goodSHA + `","size":5},{"name":"x","kind":"kernel","version":"1","url":"x","sha256":"` + goodSHA + `","size":5}`), "twice", ""},
		{"unknown field", `{"name":"a","version":"1","artifacts":[],"extra":1}`, "unknown field", ""},
		{"not json", `nope`, "manifest", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, err := ParseManifest([]byte(tc.in), base)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Artifacts[0].URL != tc.wantURL || m.Artifacts[0].SHA256 != goodSHA {
				t.Errorf("artifact %+v", m.Artifacts[0])
			}
		})
	}
}

func FuzzParseManifest(f *testing.F) {
	f.Add([]byte(`{"name":"a","version":"1","artifacts":[{"name":"vmlinuz","kind":"kernel","version":"6.1","url":"vmlinuz","sha256":"` + goodSHA + `","size":5}]}`))
	f.Add([]byte(`{"artifacts":[{"name":"..","url":"file:///etc/passwd"}]}`))
	base, _ := url.Parse("https://example.org/m/manifest.json")
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := ParseManifest(data, base)
		if err != nil {
			return
		}
		for _, a := range m.Artifacts {
			if !artifactNameRE().MatchString(a.Name) || strings.Contains(a.Name, "/") || a.Name == ".." || a.Size <= 0 || len(a.SHA256) != 64 {
				t.Fatalf("accepted bad artifact %+v", a)
			}
			u, err := url.Parse(a.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "file") {
				t.Fatalf("accepted url %q", a.URL)
			}
		}
	})
}

func TestParseQEMUVersion(t *testing.T) {
	cases := []struct {
		out, want string
		major     int
		ok        bool
	}{
		{"QEMU emulator version 7.2.18 (Debian 1:7.2+dfsg-7+deb12u18)\nCopyright (c) 2003-2022", "7.2.18", 7, true},
		{"QEMU emulator version 9.1.0\n", "9.1.0", 9, true},
		{"QEMU emulator version 4.2\n", "4.2", 4, true},
		{"bash: qemu: command not found", "", 0, false},
	}
	for _, tc := range cases {
		v, major, ok := ParseQEMUVersion(tc.out)
		if v != tc.want || major != tc.major || ok != tc.ok {
			t.Errorf("ParseQEMUVersion(%q) = %q %d %v", tc.out, v, major, ok)
		}
	}
}

func TestDetectThisHost(t *testing.T) {
	s := Detect(context.Background())
	if s.Arch != runtime.GOARCH || s.OS != runtime.GOOS {
		t.Fatalf("detect %+v", s)
	}
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skipf("host %s/%s: only Linux amd64/arm64 is checked here", runtime.GOOS, runtime.GOARCH)
	}
	if !s.Supported {
		t.Fatalf("linux/%s reported unsupported: %s", s.Arch, s.Reason)
	}
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	kvm := err == nil
	if kvm {
		f.Close()
	}
	// KVM is used when /dev/kvm opens and (with a QEMU to ask) QEMU can run under it.
	wantKVM := kvm && (s.SystemQEMU == "" || ProbeKVM(context.Background(), s.SystemQEMU) == nil)
	if s.KVM != kvm || (wantKVM && s.Accel != "kvm") || (!wantKVM && (s.Accel != "tcg" || s.Warning == "")) {
		t.Errorf("kvm opens %v, usable %v; detect says %+v", kvm, wantKVM, s)
	}
	if s.SystemQEMU != "" && s.QEMUVersion == "" {
		t.Errorf("system QEMU %s without a version", s.SystemQEMU)
	}
}

// fakeQEMU writes an executable qemu-system-* stand-in: it answers --version, and under
// -accel kvm either aborts as QEMU does on a nested /dev/kvm or quits cleanly.
func fakeQEMU(t *testing.T, kvmWorks bool) string {
	t.Helper()
	dir := t.TempDir()
	kvm := `echo "qemu-system-x86_64: error: failed to set MSR 0x10a to 0x69" >&2; exit 134`
	if kvmWorks {
		kvm = `cat >/dev/null; exit 0`
	}
	script := "#!/bin/sh\ncase \"$1\" in --version) echo 'QEMU emulator version 8.2.2'; exit 0;; esac\n" +
		"case \" $* \" in *' -accel kvm '*) " + kvm + ";; esac\nexit 0\n"
	path := filepath.Join(dir, QEMUBinaryFor(runtime.GOARCH))
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestProbeKVM(t *testing.T) {
	if runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64" {
		t.Skip("no QEMU binary name for " + runtime.GOARCH)
	}
	if err := ProbeKVM(context.Background(), fakeQEMU(t, true)); err != nil {
		t.Errorf("a QEMU that runs under KVM: %v", err)
	}
	err := ProbeKVM(context.Background(), fakeQEMU(t, false))
	if err == nil || !strings.Contains(err.Error(), "failed to set MSR") {
		t.Errorf("a QEMU that aborts under KVM: %v, want its message", err)
	}
	if err := ProbeKVM(context.Background(), filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("a missing QEMU probed fine")
	}
}

// TestDetectFallsBackWhenQEMUCannotUseKVM: /dev/kvm opens, QEMU cannot run under it
// (nested virtualization): the status says tcg and why, before any VM boots.
func TestDetectFallsBackWhenQEMUCannotUseKVM(t *testing.T) {
	if runtime.GOOS != "linux" || QEMUBinaryFor(runtime.GOARCH) == "" {
		t.Skip("Linux amd64/arm64 only")
	}
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		t.Skip("no usable /dev/kvm here: nothing to fall back from")
	}
	f.Close()
	for _, works := range []bool{true, false} {
		t.Setenv("PATH", filepath.Dir(fakeQEMU(t, works)))
		s := Detect(context.Background())
		if works && s.Accel != "kvm" || !works && (s.Accel != "tcg" || !strings.Contains(s.Warning, "failed to set MSR")) {
			t.Errorf("QEMU runs under KVM: %v; detect says accel %q, warning %q", works, s.Accel, s.Warning)
		}
	}
}
