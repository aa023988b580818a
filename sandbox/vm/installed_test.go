package vm

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/airlock-app/airlock/sandbox/vminstall"
)

func TestConfigFromInstall(t *testing.T) {
	if _, err := ConfigFromInstall(t.TempDir(), vminstall.Status{Supported: true, RuntimeReady: true}); !errors.Is(err, ErrNotReady) {
		t.Fatalf("image not ready: %v", err)
	}
	dir := t.TempDir()
	state := `{"manifestVersion":"v1","artifacts":{
	 "kernel":{"name":"vmlinuz","kind":"kernel","version":"6.1","url":"x","sha256":"` + sha + `","size":1},
	 "initrd":{"name":"initrd.img","kind":"initrd","version":"6.1","url":"x","sha256":"` + sha + `","size":1},
	 "rootfs":{"name":"rootfs.qcow2","kind":"rootfs","version":"v1","url":"x","sha256":"` + sha + `","size":1}}}`
	if err := os.WriteFile(filepath.Join(dir, "installed.json"), []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	st := vminstall.Status{Supported: true, RuntimeReady: true, ImageReady: true, Runtime: "/usr/bin/qemu-system-x86_64",
		Support: vminstall.Support{Accel: "tcg"}}
	c, err := ConfigFromInstall(dir, st)
	if err != nil {
		t.Fatal(err)
	}
	want := Config{QEMU: st.Runtime, Kernel: filepath.Join(dir, "kernel", "vmlinuz"), Initrd: filepath.Join(dir, "initrd", "initrd.img"),
		Rootfs: filepath.Join(dir, "rootfs", "rootfs.qcow2")} // Boot picks KVM or TCG
	if c != want {
		t.Errorf("got %+v\nwant %+v", c, want)
	}
}

const sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
