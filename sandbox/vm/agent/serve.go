//go:build unix

package agent

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// maxLine bounds one incoming message (stdin chunks are far smaller).
const maxLine = 4 << 20

// Options tune Serve.
type Options struct {
	Heartbeat time.Duration // 0 = 1 s
	Kernel    string        // reported in ready (uname -r)
	Children  *Children     // PID 1 passes the tracker its reaper uses; nil = none
}

// Serve runs the agent on a connection until r ends or ctx is done, then kills what it
// started. Every command runs in its own process group.
func Serve(ctx context.Context, r io.Reader, w io.Writer, opt Options) error {
	if opt.Heartbeat <= 0 {
		opt.Heartbeat = time.Second
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{enc: json.NewEncoder(w), procs: map[string]*proc{}, children: opt.Children}
	if err := s.send(Message{Type: TypeReady, Version: ProtocolVersion, Kernel: opt.Kernel}); err != nil {
		return fmt.Errorf("agent: send ready: %w", err)
	}
	go func() {
		t := time.NewTicker(opt.Heartbeat)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				s.send(Message{Type: TypeHeartbeat})
			}
		}
	}()
	defer s.killAll()

	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var m Message
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			s.send(Message{Type: TypeError, Error: fmt.Sprintf("bad message: %v", err)})
			continue
		}
		s.handle(ctx, m)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("agent: read: %w", err)
	}
	return nil
}

type server struct {
	wmu sync.Mutex
	enc *json.Encoder

	mu       sync.Mutex
	procs    map[string]*proc
	wg       sync.WaitGroup
	children *Children
}

type proc struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
}

func (s *server) send(m Message) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.enc.Encode(m)
}

func (s *server) handle(ctx context.Context, m Message) {
	switch m.Type {
	case TypePing:
		s.send(Message{Type: TypePong, ID: m.ID})
	case TypeExec:
		if err := s.start(ctx, m); err != nil {
			s.send(Message{Type: TypeExit, ID: m.ID, Code: 127, Error: err.Error()})
		}
	case TypeStdin, TypeStdinClose:
		p := s.lookup(m.ID)
		if p == nil {
			s.send(Message{Type: TypeError, ID: m.ID, Error: "no running command " + m.ID})
			return
		}
		if m.Type == TypeStdinClose {
			p.stdin.Close()
		} else if _, err := p.stdin.Write(m.Data); err != nil {
			s.send(Message{Type: TypeError, ID: m.ID, Error: "stdin: " + err.Error()})
		}
	case TypeSignal:
		p := s.lookup(m.ID)
		if p == nil || m.Signal <= 0 {
			s.send(Message{Type: TypeError, ID: m.ID, Error: fmt.Sprintf("cannot signal %q with %d", m.ID, m.Signal)})
			return
		}
		syscall.Kill(-p.cmd.Process.Pid, syscall.Signal(m.Signal))
	default:
		s.send(Message{Type: TypeError, ID: m.ID, Error: "unknown message type " + m.Type})
	}
}

func (s *server) lookup(id string) *proc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.procs[id]
}

// start launches m.Argv and streams its output; the exit message comes after all output.
func (s *server) start(ctx context.Context, m Message) error {
	if m.ID == "" || len(m.Argv) == 0 {
		return errors.New("exec needs an id and a non-empty argv")
	}
	s.mu.Lock()
	_, dup := s.procs[m.ID]
	s.mu.Unlock()
	if dup {
		return fmt.Errorf("command id %q is already running", m.ID)
	}
	cmd := exec.Command(m.Argv[0], m.Argv[1:]...)
	cmd.Dir, cmd.Env = m.Cwd, m.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return err
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	err = s.children.start(cmd)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return fmt.Errorf("start %s: %w", m.Argv[0], err)
	}
	p := &proc{cmd: cmd, stdin: stdin}
	s.mu.Lock()
	s.procs[m.ID] = p
	s.mu.Unlock()
	s.send(Message{Type: TypeStarted, ID: m.ID, Pid: cmd.Process.Pid})

	var timedOut bool
	var tmu sync.Mutex
	var timer *time.Timer
	if m.TimeoutMs > 0 {
		timer = time.AfterFunc(time.Duration(m.TimeoutMs)*time.Millisecond, func() {
			tmu.Lock()
			timedOut = true
			tmu.Unlock()
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		})
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var pumps sync.WaitGroup
		pumps.Add(2)
		go s.pump(&pumps, m.ID, TypeStdout, outR)
		go s.pump(&pumps, m.ID, TypeStderr, errR)
		err := cmd.Wait()
		s.children.done(cmd.Process.Pid)
		if timer != nil {
			timer.Stop()
		}
		// What the command left behind in its group dies with it, so the pipes end.
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		drained := make(chan struct{})
		go func() { pumps.Wait(); close(drained) }()
		select {
		case <-drained:
		case <-time.After(2 * time.Second): // a process that left the group holds a pipe
			outR.Close()
			errR.Close()
			<-drained
		}
		outR.Close()
		errR.Close()
		s.mu.Lock()
		delete(s.procs, m.ID)
		s.mu.Unlock()
		exit := Message{Type: TypeExit, ID: m.ID}
		tmu.Lock()
		exit.TimedOut = timedOut
		tmu.Unlock()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
				exit.Signal = int(ws.Signal())
				exit.Code = 128 + exit.Signal
			} else {
				exit.Code = ee.ExitCode()
			}
		default:
			exit.Code, exit.Error = 125, err.Error()
		}
		s.send(exit)
	}()
	return nil
}

// pump forwards one output stream in chunks.
func (s *server) pump(wg *sync.WaitGroup, id, typ string, r io.Reader) {
	defer wg.Done()
	buf := make([]byte, 32<<10)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			s.send(Message{Type: typ, ID: id, Data: append([]byte(nil), buf[:n]...)})
		}
		if err != nil {
			return
		}
	}
}

// killAll ends every running command and waits for their exit messages.
func (s *server) killAll() {
	s.mu.Lock()
	for _, p := range s.procs {
		syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	}
	s.mu.Unlock()
	s.wg.Wait()
}
