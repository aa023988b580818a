// Package agent is the guest agent of the micro-VM and its wire protocol: JSON objects, one
// per line, over a virtio-serial port. The host sends exec, stdin, stdin_close, signal and
// ping; the guest answers ready (once), started, stdout, stderr, exit, pong, error, and a
// heartbeat every second. Byte payloads are base64 (encoding/json's []byte).
package agent

// PortName is the virtio-serial port name the host and the guest agree on.
const PortName = "org.airlock.agent"

// ProtocolVersion changes when a message changes meaning.
const ProtocolVersion = 1

// Message types.
const (
	TypeExec       = "exec"        // host → guest: start Argv
	TypeStdin      = "stdin"       // host → guest: Data to the process's stdin
	TypeStdinClose = "stdin_close" // host → guest: close the stdin
	TypeSignal     = "signal"      // host → guest: Signal to the process group
	TypePing       = "ping"        // host → guest: answer pong with the same ID
	TypeReady      = "ready"       // guest → host: the agent is up (Version, Kernel)
	TypeStarted    = "started"     // guest → host: Pid
	TypeStdout     = "stdout"      // guest → host: Data
	TypeStderr     = "stderr"      // guest → host: Data
	TypeExit       = "exit"        // guest → host: Code, Signal, TimedOut, Error
	TypePong       = "pong"        // guest → host
	TypeHeartbeat  = "heartbeat"   // guest → host, every second
	TypeError      = "error"       // guest → host: a request that could not be understood
)

// Message is every message of the protocol; fields unused by a type stay empty.
type Message struct {
	Type      string   `json:"type"`
	ID        string   `json:"id,omitempty"` // the command (or ping) this message is about
	Argv      []string `json:"argv,omitempty"`
	Cwd       string   `json:"cwd,omitempty"`
	Env       []string `json:"env,omitempty"` // KEY=VALUE, the whole environment
	TimeoutMs int64    `json:"timeoutMs,omitempty"`
	Data      []byte   `json:"data,omitempty"`
	Signal    int      `json:"signal,omitempty"`
	Pid       int      `json:"pid,omitempty"`
	Code      int      `json:"code,omitempty"` // exit code, 128+N after signal N
	TimedOut  bool     `json:"timedOut,omitempty"`
	Error     string   `json:"error,omitempty"`
	Version   int      `json:"version,omitempty"`
	Kernel    string   `json:"kernel,omitempty"`
}
