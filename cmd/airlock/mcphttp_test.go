package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
)

// `airlock mcp --http` through the real binaries, the real core and the real keyring:
// the token `airlock mcp token` prints is the one the server demands, and the server
// refuses what a web page or another machine could send.
func TestMCPOverHTTP(t *testing.T) {
	needKeyring(t)
	in := newInstance(t)
	in.startDaemon() // airlockd is beside binary, airlock-agent beside withAgent
	in.bin = withAgent
	token, stderr, code := in.run("mcp", "token")
	token = strings.TrimSpace(token)
	if code != 0 || len(token) < 32 {
		t.Fatalf("airlock mcp token: exit %d, %q, stderr %s", code, token, stderr)
	}
	if again, _, _ := in.run("mcp", "token"); strings.TrimSpace(again) != token {
		t.Fatalf("airlock mcp token printed %q, then %q: it must stay the same", token, again)
	}

	url := in.mcpHTTP()
	for _, tc := range []struct {
		name, host, origin, auth string
		status                   int
		code                     string // the error's code
	}{
		{"the token", "", "", "Bearer " + token, 200, ""},
		{"a loopback origin", "", "http://localhost:3000", "Bearer " + token, 200, ""},
		{"no token", "", "", "", 401, "bad_token"},
		{"a wrong token", "", "", "Bearer " + strings.Repeat("A", 43), 401, "bad_token"},
		{"the token without Bearer", "", "", token, 401, "bad_token"},
		{"a foreign origin", "", "https://evil.example", "Bearer " + token, 403, "foreign_origin"},
		{"a rebinding host", "evil.example", "", "Bearer " + token, 403, "bad_host"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := mcpHTTPRequest(url, "", "Bearer "+token, mcpInitialize)
			req.Header.Del("Authorization")
			if tc.host != "" {
				req.Host = tc.host
			}
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			if resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, tc.status)
			}
			if tc.status == 200 {
				if resp.Header.Get("Mcp-Session-Id") == "" {
					t.Fatal("initialize opened no session")
				}
				return
			}
			var e struct{ Code, Hint string }
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || e.Code != tc.code {
				t.Fatalf("error %+v (%v), want code %s", e, err, tc.code)
			}
			if tc.code == "bad_token" && !strings.Contains(e.Hint, "airlock mcp token") {
				t.Fatalf("hint %q does not say where the token is", e.Hint)
			}
		})
	}
}

const mcpInitialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"go-test","version":"1"}}}`

// mcpHTTP starts `airlock mcp --http 127.0.0.1:0 --cwd TEMP args...` (in.bin must be
// airlock-agent's) and returns the URL it says it serves; it stops with the test.
func (in *instance) mcpHTTP(args ...string) string {
	t := in.t
	t.Helper()
	srv := in.cmd(append([]string{"mcp", "--http", "127.0.0.1:0", "--cwd", t.TempDir()}, args...)...)
	pipe, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Signal(os.Interrupt); srv.Wait() })
	sc := bufio.NewScanner(pipe)
	var url string
	for url == "" && sc.Scan() {
		if m := regexp.MustCompile(`serving MCP \(streamable HTTP\) at (http://127\.0\.0\.1:\d+/mcp);`).FindStringSubmatch(sc.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatal("airlock mcp --http did not say where it serves")
	}
	go func() {
		for sc.Scan() {
		}
	}()
	return url
}

// mcpHTTPRequest is a POST of body to url as a streamable HTTP client sends it, in
// session (when not "") with auth.
func mcpHTTPRequest(url, session, auth, body string) *http.Request {
	req, _ := http.NewRequest("POST", url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", auth)
	if session != "" {
		req.Header.Set("Mcp-Session-Id", session)
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	}
	return req
}

// TestMCPHTTPIdleSessionCloses: `airlock mcp --http --idle-timeout` closes a session
// that sent no request for that long (its next request gets 404, so the client starts
// a new one), while a session that keeps asking stays open.
func TestMCPHTTPIdleSessionCloses(t *testing.T) {
	needKeyring(t)
	in := newInstance(t)
	in.startDaemon()
	in.bin = withAgent
	token, _, _ := in.run("mcp", "token")
	auth := "Bearer " + strings.TrimSpace(token)
	url := in.mcpHTTP("--idle-timeout", "3s")
	post := func(session, body string) (*http.Response, string) {
		resp, err := http.DefaultClient.Do(mcpHTTPRequest(url, session, auth, body))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}
	open := func() string {
		resp, body := post("", mcpInitialize)
		id := resp.Header.Get("Mcp-Session-Id")
		if resp.StatusCode != 200 || id == "" {
			t.Fatalf("initialize: %s %s", resp.Status, body)
		}
		if resp, body := post(id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode/100 != 2 {
			t.Fatalf("initialized: %s %s", resp.Status, body)
		}
		return id
	}
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	idle, busy := open(), open()
	// 4.5 s of requests every 200 ms: far apart from the timeout even on a loaded machine.
	for start := time.Now(); time.Since(start) < 4500*time.Millisecond; {
		time.Sleep(200 * time.Millisecond)
		if resp, body := post(busy, list); resp.StatusCode != 200 {
			t.Fatalf("a session in use was closed: %s %s", resp.Status, body)
		}
	}
	if resp, _ := post(idle, list); resp.StatusCode != http.StatusNotFound {
		t.Errorf("a session idle for 4.5 s past a 3 s timeout: %s, want 404", resp.Status)
	}
}

// A port another program holds: the failure says so and the way out.
func TestMCPHTTPBusyPort(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	in := newInstance(t)
	in.bin = withAgent
	_, stderr, code := in.run("mcp", "--http", l.Addr().String())
	if code != 1 || !strings.Contains(stderr, "address already in use: another program listens there") ||
		!strings.Contains(stderr, "pick another port") || strings.Contains(stderr, "over stdio") {
		t.Fatalf("airlock mcp --http on a busy port: exit %d, stderr %q", code, stderr)
	}
}

// A non-loopback address is refused before anything listens or starts, with the way out.
func TestMCPHTTPRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:8765", ":8765", "[::]:8765", "192.0.2.1:8765", "example.com:8765"} {
		t.Run(addr, func(t *testing.T) {
			in := newInstance(t)
			in.bin = withAgent
			_, stderr, code := in.run("mcp", "--http", addr)
			if code != 1 || !strings.Contains(stderr, "refusing to listen on "+addr) ||
				!strings.Contains(stderr, "use a loopback address such as 127.0.0.1:8765") {
				t.Fatalf("airlock mcp --http %s: exit %d, stderr %q", addr, code, stderr)
			}
			if strings.Contains(stderr, "started the headless core") {
				t.Fatal("it started a core before refusing the address")
			}
		})
	}
}
