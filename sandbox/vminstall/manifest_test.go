package vminstall

import (
	"context"
	"net/url"
	"os"
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
	if s.KVM != kvm || (kvm && s.Accel != "kvm") || (!kvm && (s.Accel != "tcg" || s.Warning == "")) {
		t.Errorf("kvm usable %v, detect says %+v", kvm, s)
	}
	if s.SystemQEMU != "" && s.QEMUVersion == "" {
		t.Errorf("system QEMU %s without a version", s.SystemQEMU)
	}
}
