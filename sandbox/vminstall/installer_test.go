package vminstall

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func newTestInstaller(t *testing.T, srv *artifactServer, log *eventLog, detect func(context.Context) Support) (*Installer, string) {
	dir := filepath.Join(t.TempDir(), "sandbox")
	in := New(Config{Dir: dir, ManifestURL: srv.url("manifest.json"), Publisher: log, Detect: detect, RetryGap: 10 * time.Millisecond})
	return in, dir
}

func assertFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("installed file: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s: %d bytes differ from the served %d bytes", path, len(got), len(want))
	}
}

func assertNoPartFiles(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".part") {
			t.Errorf("leftover %s", p)
		}
		return nil
	})
}

func TestInstallProgressInOrderTo100(t *testing.T) {
	img := newTestImage()
	srv := img.serve(t, nil)
	log := &eventLog{}
	in, dir := newTestInstaller(t, srv, log, hostWithoutQEMU)

	st, err := in.Install(context.Background())
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	if !st.Ready() || st.Downloading || st.Error != "" || st.Progress.Stage != StageReady || st.Progress.Percent != 100 {
		t.Fatalf("final status %+v, want ready at 100%%", st)
	}
	assertFile(t, filepath.Join(dir, "runtime", "qemu-system-x86_64"), img.runtime)
	assertFile(t, filepath.Join(dir, "kernel", "vmlinuz"), img.kernel)
	assertFile(t, filepath.Join(dir, "rootfs", "rootfs.qcow2"), img.rootfs)
	if fi, _ := os.Stat(filepath.Join(dir, "runtime", "qemu-system-x86_64")); fi.Mode()&0o100 == 0 {
		t.Errorf("runtime not executable: %v", fi.Mode())
	}
	assertNoPartFiles(t, dir)
	if st.Runtime != filepath.Join(dir, "runtime", "qemu-system-x86_64") {
		t.Errorf("runtime path %q", st.Runtime)
	}

	order := map[string]int{StageDetect: 0, StageRuntime: 1, StageImage: 2, StageReady: 3}
	events := log.all()
	lastStage, lastReceived := -1, int64(-1)
	perStage := map[string][]int{}
	for _, e := range events {
		o, ok := order[e.Progress.Stage]
		if !ok {
			t.Fatalf("unknown stage %q", e.Progress.Stage)
		}
		if o < lastStage {
			t.Fatalf("stage %q after a later stage: %+v", e.Progress.Stage, e.Progress)
		}
		if o > lastStage {
			lastStage, lastReceived = o, -1
		}
		if e.Progress.Received < lastReceived {
			t.Fatalf("received went back from %d to %d in stage %s", lastReceived, e.Progress.Received, e.Progress.Stage)
		}
		lastReceived = e.Progress.Received
		perStage[e.Progress.Stage] = append(perStage[e.Progress.Stage], e.Progress.Percent)
	}
	for _, stage := range []string{StageRuntime, StageImage} {
		p := perStage[stage]
		if len(p) < 10 {
			t.Errorf("stage %s: only %d progress events (%v), want a live progress", stage, len(p), p)
		}
		if len(p) == 0 || p[len(p)-1] != 100 {
			t.Errorf("stage %s does not end at 100%%: %v", stage, p)
		}
		for i := 1; i < len(p); i++ {
			if p[i] < p[i-1] {
				t.Errorf("stage %s percent goes back: %v", stage, p)
				break
			}
		}
	}
	last := events[len(events)-1]
	if !last.Ready() || last.Downloading {
		t.Errorf("last event %+v, want ready and not downloading", last)
	}

	// A second install finds everything in place and downloads nothing.
	if _, err := in.Install(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"qemu-system-x86_64", "vmlinuz", "rootfs.qcow2"} {
		if c := srv.getCount(n); c != 1 {
			t.Errorf("%s fetched %d times, want once", n, c)
		}
	}
	// A fresh installer (the app restarted) sees the installed state.
	if st := New(Config{Dir: dir, Detect: hostWithoutQEMU}).Refresh(context.Background()); !st.Ready() {
		t.Errorf("refresh after install: %+v", st)
	}
}

func TestInstallSkipsRuntimeWhenSystemQEMU(t *testing.T) {
	srv := newTestImage().serve(t, nil)
	in, dir := newTestInstaller(t, srv, &eventLog{}, hostWithQEMU)
	st, err := in.Install(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !st.Ready() || st.Runtime != "/usr/bin/qemu-system-x86_64" {
		t.Fatalf("status %+v, want ready on the system QEMU", st)
	}
	if c := srv.getCount("qemu-system-x86_64"); c != 0 {
		t.Errorf("runtime downloaded %d times although a system QEMU exists", c)
	}
	if _, err := os.Stat(filepath.Join(dir, "runtime")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("runtime dir created: %v", err)
	}
}

func TestCorruptArtifactRejectedNotRenamed(t *testing.T) {
	img := newTestImage()
	cases := []struct {
		name   string
		tamper func(*Manifest)
	}{
		{"wrong sha256", func(m *Manifest) { m.Artifacts[2].SHA256 = sum([]byte("something else")) }},
		{"served file longer", func(m *Manifest) { m.Artifacts[2].Size -= 100 }},
		{"served file shorter", func(m *Manifest) { m.Artifacts[2].Size += 100 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := img.serve(t, tc.tamper)
			in, dir := newTestInstaller(t, srv, &eventLog{}, hostWithQEMU)
			st, err := in.Install(context.Background())
			if err == nil {
				t.Fatal("install of a corrupted rootfs succeeded")
			}
			if st.ImageReady || st.Downloading || st.Error == "" {
				t.Errorf("status %+v, want not ready with an error", st)
			}
			if _, err := os.Stat(filepath.Join(dir, "rootfs", "rootfs.qcow2")); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("corrupted rootfs named as installed: %v", err)
			}
			if tc.name != "served file shorter" {
				if !errors.Is(err, ErrCorrupt) {
					t.Errorf("error %v, want ErrCorrupt", err)
				}
				assertNoPartFiles(t, dir)
			}
			if inst, _ := LoadInstalled(dir); inst.present(dir, KindRootfs) {
				t.Error("state records the corrupted rootfs")
			}
		})
	}
}

func TestInterruptedDownloadResumesWithRange(t *testing.T) {
	img := newTestImage()
	srv := img.serve(t, nil)
	srv.abortAt["rootfs.qcow2"] = 400 << 10 // the first GET is cut after 400 KiB
	in, dir := newTestInstaller(t, srv, &eventLog{}, hostWithQEMU)
	if _, err := in.Install(context.Background()); err != nil {
		t.Fatalf("install across an interruption: %v", err)
	}
	assertFile(t, filepath.Join(dir, "rootfs", "rootfs.qcow2"), img.rootfs)
	starts := srv.rangeStarts("rootfs.qcow2")
	if len(starts) != 1 || starts[0] <= 0 || starts[0] > 400<<10 {
		t.Fatalf("range requests %v, want one resuming after the first bytes and at most at 400 KiB", starts)
	}
	if c := srv.getCount("rootfs.qcow2"); c != 2 {
		t.Errorf("%d GETs, want the cut one and the resumed one", c)
	}
}

func TestConcurrentInstallsShareOne(t *testing.T) {
	img := newTestImage()
	srv := img.serve(t, nil)
	srv.blockAt["rootfs.qcow2"] = 100 << 10
	log := &eventLog{}
	in, _ := newTestInstaller(t, srv, log, hostWithQEMU)

	var wg sync.WaitGroup
	results := make([]Status, 2)
	errs := make([]error, 2)
	wg.Add(1)
	go func() { defer wg.Done(); results[0], errs[0] = in.Install(context.Background()) }()
	<-srv.reached // the first install is mid-download
	wg.Add(1)
	go func() { defer wg.Done(); results[1], errs[1] = in.Install(context.Background()) }()
	for { // wait until the second caller has joined
		in.mu.Lock()
		w := in.run.waiters
		in.mu.Unlock()
		if w == 2 {
			break
		}
		<-pollPause()
	}
	close(srv.released)
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil || !results[i].Ready() {
			t.Fatalf("caller %d: %v %+v", i, errs[i], results[i])
		}
	}
	for _, n := range []string{"manifest.json", "vmlinuz", "rootfs.qcow2"} {
		if c := srv.getCount(n); c != 1 {
			t.Errorf("%s fetched %d times, want once for both callers", n, c)
		}
	}
}

func TestCancelLeavesNoCompleteFileAndResumes(t *testing.T) {
	img := newTestImage()
	srv := img.serve(t, nil)
	srv.blockAt["rootfs.qcow2"] = 300 << 10
	log := &eventLog{}
	in, dir := newTestInstaller(t, srv, log, hostWithQEMU)

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := in.Install(ctx); done <- err }()
	<-srv.reached
	cancel() // the only caller leaves: the install stops
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("install returned %v, want context.Canceled", err)
	}
	// Wait for the run to finish (it records its outcome after the caller left).
	for {
		in.mu.Lock()
		running := in.run != nil
		in.mu.Unlock()
		if !running {
			break
		}
		<-pollPause()
	}
	st := in.Status()
	if st.Downloading || st.ImageReady || !strings.Contains(st.Error, "cancelled") {
		t.Errorf("status after cancel %+v", st)
	}
	final := filepath.Join(dir, "rootfs", "rootfs.qcow2")
	if _, err := os.Stat(final); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a cancelled download is named as complete: %v", err)
	}
	fi, err := os.Stat(final + ".part")
	if err != nil || fi.Size() == 0 || fi.Size() >= int64(len(img.rootfs)) {
		t.Fatalf("part file after cancel: %v %v", fi, err)
	}
	kept := fi.Size()

	close(srv.released)
	if _, err := in.Install(context.Background()); err != nil {
		t.Fatalf("install after cancel: %v", err)
	}
	assertFile(t, final, img.rootfs)
	if starts := srv.rangeStarts("rootfs.qcow2"); len(starts) != 1 || int64(starts[0]) != kept {
		t.Errorf("range starts %v, want one at the kept %d bytes", starts, kept)
	}
}

func TestCancelMethodStopsInstall(t *testing.T) {
	srv := newTestImage().serve(t, nil)
	srv.blockAt["vmlinuz"] = 50 << 10
	in, dir := newTestInstaller(t, srv, &eventLog{}, hostWithQEMU)
	done := make(chan error, 1)
	go func() { _, err := in.Install(context.Background()); done <- err }()
	<-srv.reached
	in.Cancel()
	err := <-done
	if err == nil || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("install after Cancel returned %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "kernel", "vmlinuz")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("cancelled kernel named as complete: %v", err)
	}
}

func TestInstallFromFileURL(t *testing.T) {
	img := newTestImage()
	src := t.TempDir()
	for n, b := range map[string][]byte{"vmlinuz": img.kernel, "rootfs.qcow2": img.rootfs} {
		if err := os.WriteFile(filepath.Join(src, n), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest := `{"name":"airlock-sandbox","version":"f1","artifacts":[
 {"name":"vmlinuz","kind":"kernel","version":"6.1","url":"vmlinuz","sha256":"` + sum(img.kernel) + `","size":204800},
 {"name":"rootfs.qcow2","kind":"rootfs","version":"f1","url":"rootfs.qcow2","sha256":"` + sum(img.rootfs) + `","size":1048576}]}`
	if err := os.WriteFile(filepath.Join(src, "manifest.json"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "sandbox")
	in := New(Config{Dir: dir, ManifestURL: filepath.Join(src, "manifest.json"), Detect: hostWithQEMU})
	st, err := in.Install(context.Background())
	if err != nil || !st.Ready() || st.Version != "f1" {
		t.Fatalf("install from a path: %v %+v", err, st)
	}
	assertFile(t, filepath.Join(dir, "rootfs", "rootfs.qcow2"), img.rootfs)
}

func TestInstallRefusesWithoutAnyQEMU(t *testing.T) {
	srv := newTestImage().serve(t, func(m *Manifest) { m.Artifacts = m.Artifacts[1:] })
	in, _ := newTestInstaller(t, srv, &eventLog{}, hostWithoutQEMU)
	_, err := in.Install(context.Background())
	if err == nil || !strings.Contains(err.Error(), "apt install qemu-system-x86") {
		t.Fatalf("err %v, want the way out", err)
	}
}

func TestUnsupportedHost(t *testing.T) {
	srv := newTestImage().serve(t, nil)
	in, _ := newTestInstaller(t, srv, &eventLog{}, func(context.Context) Support {
		return Support{OS: "linux", Arch: "riscv64", Reason: "the micro-VM needs an amd64 or arm64 host"}
	})
	st, err := in.Install(context.Background())
	if err == nil || st.Supported || st.Downloading {
		t.Fatalf("unsupported host installed: %v %+v", err, st)
	}
	if c := srv.getCount("manifest.json"); c != 0 {
		t.Errorf("manifest fetched on an unsupported host")
	}
}

func TestSecondProcessIsRefusedWhileInstalling(t *testing.T) {
	srv := newTestImage().serve(t, nil)
	in, dir := newTestInstaller(t, srv, &eventLog{}, hostWithQEMU)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	unlock, err := lockDir(dir) // stands for another process holding the install lock
	if err != nil {
		t.Fatal(err)
	}
	_, err = in.Install(context.Background())
	unlock()
	if err == nil || !strings.Contains(err.Error(), "another Airlock process") {
		t.Fatalf("install while locked: %v", err)
	}
	if _, err := in.Install(context.Background()); err != nil {
		t.Fatalf("install after the lock is gone: %v", err)
	}
}

// TestRefreshDuringAnInstallDoesNotEndIt: a probe that was under way when an install
// started does not publish its (not downloading) status: the window and the CLI would take
// it for the end of the install.
func TestRefreshDuringAnInstallDoesNotEndIt(t *testing.T) {
	img := newTestImage()
	srv := img.serve(t, nil)
	log := &eventLog{}
	probing, release := make(chan struct{}), make(chan struct{})
	var calls atomic.Int32
	detect := func(ctx context.Context) Support {
		if calls.Add(1) == 1 {
			close(probing)
			<-release
		}
		return hostWithoutQEMU(ctx)
	}
	in, _ := newTestInstaller(t, srv, log, detect)
	refreshed := make(chan Status)
	go func() { refreshed <- in.Refresh(context.Background()) }()
	<-probing
	in.Start("")
	close(release)
	if st := <-refreshed; !st.Downloading && !st.Ready() {
		t.Errorf("Refresh during the install returned %+v", st)
	}
	st, err := in.Wait(context.Background())
	if err != nil || !st.Ready() {
		t.Fatalf("install: %+v %v", st, err)
	}
	events := log.all()
	for i, e := range events[:len(events)-1] {
		if !e.Downloading {
			t.Fatalf("event %d of %d says not downloading while the install ran: %+v", i, len(events), e)
		}
	}
}
