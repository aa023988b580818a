package vm

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

func TestQEMUArgs(t *testing.T) {
	base := Config{QEMU: "qemu-system-x86_64", Kernel: "/img/vmlinuz", Initrd: "/img/initrd.img", Rootfs: "/img/rootfs.qcow2", Workspace: "/home/me/proj", Accel: "tcg"}
	cases := []struct {
		name      string
		mod       func(*Config)
		want      []string // substrings of the joined command line
		notWant   []string
		wantError string
	}{
		{"network off, snapshot disk, workspace 9p", nil,
			[]string{"-nic none", "file=/img/rootfs.qcow2,if=virtio,format=qcow2,snapshot=on", "path=/home/me/proj,security_model=" + securityModel(os.Geteuid()),
				"mount_tag=workspace", "name=org.airlock.agent", "-accel tcg -cpu max", "-initrd /img/initrd.img", "init=/usr/local/sbin/airlock-guest"},
			[]string{"user,model", "airlock.net=user", "-sandbox"}, ""},
		{"no monitor, no default devices", nil, []string{"-nodefaults", "-monitor none"}, []string{"-monitor stdio", "-qmp", "telnet"}, ""},
		{"seccomp when supported", func(c *Config) { c.Seccomp = true },
			[]string{"-sandbox on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny"}, nil, ""},
		{"network on", func(c *Config) { c.Network = true }, []string{"-nic user,model=virtio-net-pci", "airlock.net=user"}, []string{"-nic none"}, ""},
		{"kvm uses the host cpu", func(c *Config) { c.Accel = "kvm" }, []string{"-accel kvm -cpu host"}, nil, ""},
		{"raw rootfs", func(c *Config) { c.Rootfs = "/img/rootfs.ext4" }, []string{"format=raw,snapshot=on"}, nil, ""},
		{"no initrd", func(c *Config) { c.Initrd = "" }, nil, []string{"-initrd"}, ""},
		{"no workspace", func(c *Config) { c.Workspace = "" }, nil, nil, "no workspace"},
		{"comma in workspace", func(c *Config) { c.Workspace = "/tmp/a,b" }, nil, nil, "comma"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			if tc.mod != nil {
				tc.mod(&c)
			}
			args, err := qemuArgs(c, "/run/a.sock", "/run/console.log")
			if tc.wantError != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantError) {
					t.Fatalf("err %v, want %q", err, tc.wantError)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			line := strings.Join(args, " ")
			for _, w := range tc.want {
				if !strings.Contains(line, w) {
					t.Errorf("missing %q in %s", w, line)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(line, w) {
					t.Errorf("unexpected %q in %s", w, line)
				}
			}
		})
	}
}

func TestSecurityModelAsRootNeverPassesOwnership(t *testing.T) {
	if securityModel(0) != "mapped-xattr" || securityModel(1000) != "none" {
		t.Errorf("root %q, user %q", securityModel(0), securityModel(1000))
	}
}

func TestSeccompSupportedBySystemQEMU(t *testing.T) {
	q, err := exec.LookPath("qemu-system-x86_64")
	if err != nil {
		t.Skip("no qemu-system-x86_64 (apt-get install qemu-system-x86)")
	}
	if !SeccompSupported(q) {
		t.Errorf("%s refuses -sandbox on: Debian's QEMU is built with seccomp", q)
	}
	if SeccompSupported("/bin/false") {
		t.Error("a binary that fails counts as supporting seccomp")
	}
}
