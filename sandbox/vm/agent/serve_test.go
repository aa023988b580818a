//go:build unix

package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

// hostEnd is the host side of an agent connection in a test.
type hostEnd struct {
	t   *testing.T
	enc *json.Encoder
	in  chan Message
}

func startAgent(t *testing.T) *hostEnd {
	t.Helper()
	toGuestR, toGuestW := io.Pipe()
	fromGuestR, fromGuestW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		Serve(ctx, toGuestR, fromGuestW, Options{Heartbeat: 50 * time.Millisecond, Kernel: "test"})
		fromGuestW.Close()
		close(done)
	}()
	h := &hostEnd{t: t, enc: json.NewEncoder(toGuestW), in: make(chan Message, 1024)}
	go func() {
		sc := bufio.NewScanner(fromGuestR)
		sc.Buffer(make([]byte, 1<<20), 8<<20)
		for sc.Scan() {
			var m Message
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Errorf("agent sent bad JSON %q: %v", sc.Text(), err)
				continue
			}
			h.in <- m
		}
		close(h.in)
	}()
	t.Cleanup(func() { toGuestW.Close(); cancel(); <-done })
	if m := h.next(); m.Type != TypeReady || m.Version != ProtocolVersion || m.Kernel != "test" {
		t.Fatalf("first message %+v, want ready", m)
	}
	return h
}

func (h *hostEnd) send(m Message) {
	h.t.Helper()
	if err := h.enc.Encode(m); err != nil {
		h.t.Fatal(err)
	}
}

// next returns the next message that is not a heartbeat; a hang fails the test.
func (h *hostEnd) next() Message {
	h.t.Helper()
	for {
		select {
		case m, ok := <-h.in:
			if !ok {
				h.t.Fatal("agent closed the connection")
			}
			if m.Type != TypeHeartbeat {
				return m
			}
		case <-time.After(20 * time.Second):
			h.t.Fatal("no message from the agent (hang)")
		}
	}
}

// result collects a command's output until its exit message.
func (h *hostEnd) result(id string) (stdout, stderr string, exit Message) {
	h.t.Helper()
	var out, errb strings.Builder
	for {
		m := h.next()
		if m.ID != id {
			continue
		}
		switch m.Type {
		case TypeStdout:
			out.Write(m.Data)
		case TypeStderr:
			errb.Write(m.Data)
		case TypeExit:
			return out.String(), errb.String(), m
		}
	}
}

func TestAgentExec(t *testing.T) {
	cases := []struct {
		name           string
		argv           []string
		env            []string
		wantOut, wantE string
		wantCode       int
	}{
		{"stdout stderr exit code", []string{"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, nil, "out\n", "err\n", 3},
		{"environment is the one given", []string{"/bin/sh", "-c", "echo $GREETING"}, []string{"GREETING=hello"}, "hello\n", "", 0},
		{"missing binary", []string{"/no/such/binary"}, nil, "", "", 127},
		{"background child does not hold the exit", []string{"/bin/sh", "-c", "sleep 60 & echo started"}, nil, "started\n", "", 0},
	}
	h := startAgent(t)
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := string(rune('a' + i))
			h.send(Message{Type: TypeExec, ID: id, Argv: tc.argv, Env: tc.env, Cwd: os.TempDir()})
			out, errs, exit := h.result(id)
			if out != tc.wantOut || errs != tc.wantE || exit.Code != tc.wantCode {
				t.Errorf("got out %q err %q exit %+v", out, errs, exit)
			}
		})
	}
}

func TestAgentStdinSignalTimeoutPing(t *testing.T) {
	h := startAgent(t)

	h.send(Message{Type: TypeExec, ID: "cat", Argv: []string{"/bin/cat"}})
	if m := h.next(); m.Type != TypeStarted || m.Pid <= 0 {
		t.Fatalf("want started, got %+v", m)
	}
	h.send(Message{Type: TypeStdin, ID: "cat", Data: []byte("line one\n")})
	h.send(Message{Type: TypeStdinClose, ID: "cat"})
	if out, _, exit := h.result("cat"); out != "line one\n" || exit.Code != 0 {
		t.Errorf("cat: %q %+v", out, exit)
	}

	h.send(Message{Type: TypeExec, ID: "sleep", Argv: []string{"/bin/sleep", "60"}})
	if m := h.next(); m.Type != TypeStarted {
		t.Fatalf("want started, got %+v", m)
	}
	h.send(Message{Type: TypeSignal, ID: "sleep", Signal: int(syscall.SIGTERM)})
	if _, _, exit := h.result("sleep"); exit.Signal != int(syscall.SIGTERM) || exit.Code != 128+15 {
		t.Errorf("signalled sleep exit %+v", exit)
	}

	h.send(Message{Type: TypeExec, ID: "slow", Argv: []string{"/bin/sleep", "60"}, TimeoutMs: 100})
	if _, _, exit := h.result("slow"); !exit.TimedOut || exit.Signal != int(syscall.SIGKILL) {
		t.Errorf("timed-out sleep exit %+v", exit)
	}

	h.send(Message{Type: TypePing, ID: "p1"})
	if m := h.next(); m.Type != TypePong || m.ID != "p1" {
		t.Errorf("ping answered %+v", m)
	}
	h.send(Message{Type: "format-disk"})
	if m := h.next(); m.Type != TypeError {
		t.Errorf("unknown type answered %+v", m)
	}
	h.send(Message{Type: TypeSignal, ID: "nobody", Signal: 9})
	if m := h.next(); m.Type != TypeError {
		t.Errorf("signal to nothing answered %+v", m)
	}
}

func TestAgentHeartbeat(t *testing.T) {
	h := startAgent(t)
	for {
		select {
		case m := <-h.in:
			if m.Type == TypeHeartbeat {
				return
			}
		case <-time.After(20 * time.Second):
			t.Fatal("no heartbeat")
		}
	}
}

func TestAgentBadJSON(t *testing.T) {
	r, w := io.Pipe()
	out, outW := io.Pipe()
	go Serve(context.Background(), r, outW, Options{})
	sc := bufio.NewScanner(out)
	sc.Scan() // ready
	io.WriteString(w, "{not json\n")
	sc.Scan()
	var m Message
	if err := json.Unmarshal(sc.Bytes(), &m); err != nil || m.Type != TypeError {
		t.Errorf("bad JSON answered %q", sc.Text())
	}
	w.Close()
	out.Close()
}
