package vminstall

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// artifactServer serves files over HTTP on 127.0.0.1 with Range support, slowly (small
// chunks with a pause) so progress can be watched, and records every request.
type artifactServer struct {
	t     *testing.T
	srv   *httptest.Server
	files map[string][]byte

	mu       sync.Mutex
	gets     map[string]int   // GETs per path
	ranges   map[string][]int // Range start offsets asked per path
	abortAt  map[string]int   // path → cut the connection of the next GET after N bytes
	blockAt  map[string]int   // path → stop sending after N bytes until the request ends
	released chan struct{}    // closed → blocked requests go on
	reached  chan string      // a blocked request reached its block point
}

func newArtifactServer(t *testing.T, files map[string][]byte) *artifactServer {
	s := &artifactServer{t: t, files: files, gets: map[string]int{}, ranges: map[string][]int{},
		abortAt: map[string]int{}, blockAt: map[string]int{}, released: make(chan struct{}), reached: make(chan string, 8)}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *artifactServer) serve(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimPrefix(r.URL.Path, "/")
	data, ok := s.files[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	s.gets[name]++
	if rg := r.Header.Get("Range"); rg != "" {
		if start, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(rg, "bytes="), "-")); err == nil {
			s.ranges[name] = append(s.ranges[name], start)
		}
	}
	abort, hasAbort := s.abortAt[name]
	delete(s.abortAt, name)
	block, hasBlock := s.blockAt[name]
	delete(s.blockAt, name)
	s.mu.Unlock()
	tw := &throttledWriter{ResponseWriter: w, ctx: r.Context(), limit: -1, block: -1}
	if hasAbort {
		tw.limit = abort
	}
	if hasBlock {
		tw.block, tw.released, tw.reached, tw.name = block, s.released, s.reached, name
	}
	http.ServeContent(tw, r, name, time.Time{}, bytes.NewReader(data))
}

// throttledWriter writes in 16 KiB chunks with a short pause, and can cut or hold the
// response after a number of bytes.
type throttledWriter struct {
	http.ResponseWriter
	ctx      context.Context
	sent     int
	limit    int // abort the connection after this many bytes (-1 = never)
	block    int // hold after this many bytes until released or the client leaves (-1 = never)
	released chan struct{}
	reached  chan string
	name     string
}

func (w *throttledWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		n := min(len(p), 16<<10)
		if w.limit >= 0 && w.sent+n > w.limit {
			n = w.limit - w.sent
			w.ResponseWriter.Write(p[:n])
			w.ResponseWriter.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		if w.block >= 0 && w.sent+n > w.block {
			n = w.block - w.sent
			w.ResponseWriter.Write(p[:n])
			w.ResponseWriter.(http.Flusher).Flush()
			w.sent += n
			written += n
			p = p[n:]
			w.block = -1
			w.reached <- w.name
			select {
			case <-w.released:
			case <-w.ctx.Done():
				return written, w.ctx.Err()
			}
			continue
		}
		m, err := w.ResponseWriter.Write(p[:n])
		w.sent += m
		written += m
		if err != nil {
			return written, err
		}
		w.ResponseWriter.(http.Flusher).Flush()
		p = p[n:]
		time.Sleep(200 * time.Microsecond)
	}
	return written, nil
}

func (s *artifactServer) url(name string) string { return s.srv.URL + "/" + name }

func (s *artifactServer) getCount(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.gets[name]
}

func (s *artifactServer) rangeStarts(name string) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]int(nil), s.ranges[name]...)
}

// randomBytes returns n reproducible pseudo-random bytes.
func randomBytes(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

func sum(b []byte) string { h := sha256.Sum256(b); return hex.EncodeToString(h[:]) }

// testImage is a small runtime + kernel + rootfs set and its manifest, served by s.
type testImage struct {
	runtime, kernel, rootfs []byte
}

func newTestImage() testImage {
	return testImage{runtime: randomBytes(1, 300<<10), kernel: randomBytes(2, 200<<10), rootfs: randomBytes(3, 1<<20)}
}

// serve publishes the image and a manifest with relative URLs; tamper edits the manifest.
func (img testImage) serve(t *testing.T, tamper func(*Manifest)) *artifactServer {
	m := Manifest{Name: "airlock-sandbox", Version: "test-1", Artifacts: []Artifact{
		{Name: "qemu-system-x86_64", Kind: KindRuntime, Version: "7.2", URL: "qemu-system-x86_64", SHA256: sum(img.runtime), Size: int64(len(img.runtime))},
		{Name: "vmlinuz", Kind: KindKernel, Version: "6.1", URL: "vmlinuz", SHA256: sum(img.kernel), Size: int64(len(img.kernel))},
		{Name: "rootfs.qcow2", Kind: KindRootfs, Version: "test-1", URL: "rootfs.qcow2", SHA256: sum(img.rootfs), Size: int64(len(img.rootfs))},
	}}
	if tamper != nil {
		tamper(&m)
	}
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return newArtifactServer(t, map[string][]byte{
		"manifest.json": data, "qemu-system-x86_64": img.runtime, "vmlinuz": img.kernel, "rootfs.qcow2": img.rootfs,
	})
}

// eventLog records published statuses.
type eventLog struct {
	mu     sync.Mutex
	events []Status
	onPub  func(Status)
}

func (l *eventLog) Publish(st Status) {
	l.mu.Lock()
	l.events = append(l.events, st)
	f := l.onPub
	l.mu.Unlock()
	if f != nil {
		f(st)
	}
}

func (l *eventLog) all() []Status {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Status(nil), l.events...)
}

// hostWithoutQEMU is a supported amd64 host with no system QEMU, so the runtime downloads.
func hostWithoutQEMU(context.Context) Support {
	return Support{OS: "linux", Arch: "amd64", Supported: true, Accel: "tcg", QEMUBinary: "qemu-system-x86_64"}
}

func hostWithQEMU(context.Context) Support {
	s := hostWithoutQEMU(context.Background())
	s.SystemQEMU, s.QEMUVersion = "/usr/bin/qemu-system-x86_64", "7.2.18"
	return s
}

// pollPause is the pause between two looks at a condition a test waits for.
func pollPause() <-chan time.Time { return time.After(5 * time.Millisecond) }
