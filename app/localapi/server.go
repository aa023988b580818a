package localapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/airlock-app/airlock/api"
)

// Options configure a Server.
type Options struct {
	Socket string
	// TCPAddress, when set, also listens on this loopback address. Token then returns
	// the bearer token every TCP request must carry.
	TCPAddress string
	Token      func(ctx context.Context) (string, error)
	// AllowedOrigins are the browser origins a TCP request may come from (besides none).
	AllowedOrigins []string
	// Sandboxed reports whether a host pid belongs to a sandbox the core started: its
	// state-changing requests are refused, so no sandboxed process answers its own
	// questions.
	Sandboxed func(pid int) bool
	// MapError turns a handler's error into an *api.Error (the core's one mapper); an
	// error it leaves unmapped is a 500.
	MapError func(error) error
	// Timeouts bound reading a request (zero: the defaults).
	Timeouts Timeouts
}

// MaxConnsPerClient caps the connections one process holds open on the unix socket,
// and all loopback TCP clients together: far above what the CLI, a hook or an MCP
// server holds, far below the core's file limit.
const MaxConnsPerClient = 256

// Server is the local API.
type Server struct {
	opts  Options
	mux   *http.ServeMux
	lock  *Lock
	http  *http.Server
	tcp   net.Listener
	token string

	patternsMu sync.Mutex
	patterns   []string

	wg sync.WaitGroup
}

// NewServer takes the single-instance lock and binds the socket (and the TCP address
// when asked). It fails with *AlreadyRunningError when another instance holds it.
func NewServer(ctx context.Context, opts Options) (*Server, error) {
	lock, err := Acquire(opts.Socket)
	if err != nil {
		return nil, err
	}
	s := &Server{opts: opts, mux: http.NewServeMux(), lock: lock}
	if opts.TCPAddress != "" {
		if opts.Token == nil {
			lock.Release()
			return nil, errors.New("the TCP listener needs a bearer token source")
		}
		tok, err := opts.Token(ctx)
		if err != nil {
			lock.Release()
			return nil, fmt.Errorf("API token: %w", err)
		}
		if len(tok) < 32 {
			lock.Release()
			return nil, errors.New("the API token is too short (at least 32 characters)")
		}
		s.token = tok
	}
	return s, nil
}

// Handle registers a handler. State-changing methods (anything but GET and HEAD) are
// refused for sandboxed peers before the handler runs.
func (s *Server) Handle(pattern string, h http.HandlerFunc) {
	s.patternsMu.Lock()
	s.patterns = append(s.patterns, pattern)
	s.patternsMu.Unlock()
	s.mux.Handle(pattern, h)
}

// Patterns lists the patterns registered so far, in order (the route table's test).
func (s *Server) Patterns() []string {
	s.patternsMu.Lock()
	defer s.patternsMu.Unlock()
	return append([]string(nil), s.patterns...)
}

// Serve starts accepting until Shutdown.
func (s *Server) Serve() error {
	ul, err := listenUnix(s.opts.Socket)
	if err != nil {
		return err
	}
	s.http = NewHTTPServer(s.guard(s.mux), s.opts.Timeouts)
	s.http.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if pc, ok := unwrapConn(c).(*peerConn); ok {
			return context.WithValue(ctx, peerKey{}, pc.peer)
		}
		return context.WithValue(ctx, peerKey{}, Peer{})
	}
	if s.opts.TCPAddress != "" {
		tl, err := ListenLoopback(s.opts.TCPAddress)
		if err != nil {
			ul.Close()
			return err
		}
		s.tcp = tl
		tl = Guard(tl, Limits{PerCaller: MaxConnsPerClient, Name: "local API (loopback TCP)",
			Who: func(string) string { return "loopback TCP, all its clients together," }})
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.http.Serve(tl); err != nil && !errors.Is(err, http.ErrServerClosed) {
				slog.Error("local API (tcp)", "error", err)
			}
		}()
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		l := Guard(&uidListener{UnixListener: ul}, Limits{PerCaller: MaxConnsPerClient, Name: "local API (unix socket)",
			Who: func(c string) string { return "the process with " + c }})
		if err := s.http.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
			slog.Error("local API (unix)", "error", err)
		}
	}()
	return nil
}

// TCPAddr is the bound TCP address, when listening.
func (s *Server) TCPAddr() string {
	if s.tcp == nil {
		return ""
	}
	return s.tcp.Addr().String()
}

// Shutdown stops accepting, waits for requests in flight (streams end with ctx), and
// releases the instance lock.
func (s *Server) Shutdown(ctx context.Context) error {
	var err error
	if s.http != nil {
		err = s.http.Shutdown(ctx)
		if err != nil {
			s.http.Close()
		}
	}
	s.wg.Wait()
	s.lock.Release()
	return err
}

// guard applies the rules that hold for every route.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		peer, _ := PeerFrom(r.Context())
		if !peer.Unix {
			if err := s.checkTCP(r); err != nil {
				WriteError(w, err)
				return
			}
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead && peer.Unix && s.opts.Sandboxed != nil && s.opts.Sandboxed(peer.PID) {
			WriteError(w, &api.Error{Status: http.StatusForbidden, Code: "sandboxed_caller",
				Message: "this request comes from inside an Airlock sandbox, which may not answer approvals, authorize places, mint or redeem tokens, or change settings",
				Hint:    "ask the person to answer in the Airlock window, the tray, or a terminal outside the sandbox"})
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (s *Server) checkTCP(r *http.Request) error {
	return LoopbackGuard{Token: s.token, AllowedOrigins: s.opts.AllowedOrigins,
		OriginHint: "only Airlock's own window may call the API from a browser engine",
		TokenHint: "send Authorization: Bearer <token> with the token api.token from the secret store `airlock status` names " +
			"(the OS keyring: secret-tool lookup service airlock username api.token; the file store: its secrets.json)",
	}.Check(r)
}

// uidListener refuses connections from other users before any byte is read.
type uidListener struct{ *net.UnixListener }

type peerConn struct {
	net.Conn
	peer Peer
}

func (l *uidListener) Accept() (net.Conn, error) {
	for {
		c, err := l.UnixListener.Accept()
		if err != nil {
			return nil, err
		}
		peer, err := peerCred(c)
		if err != nil {
			slog.Warn("local API: cannot read the peer's credentials; connection refused", "error", err)
			c.Close()
			continue
		}
		if peer.UID != os.Getuid() {
			slog.Warn("local API: connection from another user refused", "uid", peer.UID, "pid", peer.PID)
			// Read the request head first, so the client sees the refusal rather than a reset.
			_ = c.SetDeadline(time.Now().Add(time.Second))
			_, _ = bufio.NewReader(io.LimitReader(c, 8<<10)).ReadString('\n')
			body := fmt.Sprintf(`{"code":"foreign_user","message":"uid %d may not use uid %d's Airlock"}`, peer.UID, os.Getuid())
			fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			c.Close()
			continue
		}
		return &peerConn{Conn: c, peer: peer}, nil
	}
}

// WriteJSON writes v with the status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

// WriteError writes err as JSON; an *api.Error keeps its status, others are 500.
func WriteError(w http.ResponseWriter, err error) {
	var e *api.Error
	if !errors.As(err, &e) {
		e = &api.Error{Status: http.StatusInternalServerError, Code: "internal", Message: err.Error()}
	}
	if e.Status == 0 {
		e.Status = http.StatusBadRequest
	}
	WriteJSON(w, e.Status, e)
}

// ReadJSON decodes the request body into v, refusing unknown fields and huge bodies.
func ReadJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(http.MaxBytesReader(nil, r.Body, 8<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return &api.Error{Status: http.StatusBadRequest, Code: "bad_request", Message: fmt.Sprintf("the request body is not valid: %v", err)}
	}
	return nil
}
