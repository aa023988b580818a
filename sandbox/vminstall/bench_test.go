package vminstall

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// benchServer serves a 64 MiB rootfs and a 8 MiB kernel at full speed.
func benchServer(b *testing.B) (*httptest.Server, int64) {
	kernel, rootfs := randomBytes(7, 8<<20), randomBytes(8, 64<<20)
	m := Manifest{Name: "bench", Version: "1", Artifacts: []Artifact{
		{Name: "vmlinuz", Kind: KindKernel, Version: "1", URL: "vmlinuz", SHA256: sum(kernel), Size: int64(len(kernel))},
		{Name: "rootfs.qcow2", Kind: KindRootfs, Version: "1", URL: "rootfs.qcow2", SHA256: sum(rootfs), Size: int64(len(rootfs))},
	}}
	manifest, _ := json.Marshal(m)
	files := map[string][]byte{"/manifest.json": manifest, "/vmlinuz": kernel, "/rootfs.qcow2": rootfs}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, ok := files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		http.ServeContent(w, r, r.URL.Path, time.Time{}, bytes.NewReader(data))
	}))
	b.Cleanup(srv.Close)
	return srv, int64(len(kernel) + len(rootfs))
}

// BenchmarkInstall is a full install (manifest, two artifacts streamed to .part, sha256,
// fsync, rename) from a local HTTP server.
func BenchmarkInstall(b *testing.B) {
	srv, total := benchServer(b)
	b.SetBytes(total)
	for b.Loop() {
		dir := b.TempDir()
		in := New(Config{Dir: dir, ManifestURL: srv.URL + "/manifest.json", Detect: hostWithQEMU})
		if _, err := in.Install(context.Background()); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(dir)
	}
}

// BenchmarkPlainCopy is the floor: http.Get + io.Copy of the same files to disk, no hash.
func BenchmarkPlainCopy(b *testing.B) {
	srv, total := benchServer(b)
	b.SetBytes(total)
	for b.Loop() {
		dir := b.TempDir()
		for _, n := range []string{"vmlinuz", "rootfs.qcow2"} {
			resp, err := http.Get(srv.URL + "/" + n)
			if err != nil {
				b.Fatal(err)
			}
			f, err := os.Create(filepath.Join(dir, n))
			if err != nil {
				b.Fatal(err)
			}
			if _, err := io.Copy(f, resp.Body); err != nil {
				b.Fatal(err)
			}
			resp.Body.Close()
			f.Close()
		}
		os.RemoveAll(dir)
	}
}

// BenchmarkCurl fetches the same files with curl from the same server.
func BenchmarkCurl(b *testing.B) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		b.Skip("curl not installed")
	}
	srv, total := benchServer(b)
	b.SetBytes(total)
	for b.Loop() {
		dir := b.TempDir()
		for _, n := range []string{"vmlinuz", "rootfs.qcow2"} {
			if out, err := exec.Command(curl, "-sSf", "-o", filepath.Join(dir, n), srv.URL+"/"+n).CombinedOutput(); err != nil {
				b.Fatalf("curl: %v %s", err, out)
			}
		}
		os.RemoveAll(dir)
	}
}
