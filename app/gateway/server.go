package gateway

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/sandbox"
)

// Options configure the MCP server.
type Options struct {
	// ProgressEvery is how often a call waiting for the person says so (0: 2 s).
	ProgressEvery time.Duration
	// Policy is the session's sandbox policy; its Cwd is the workspace.
	Policy     sandbox.Policy
	Department string
	Posture    string // "" or "cloudops"
	// Profile is the session's own permission profile (--profile, AIRLOCK_PROFILE): the
	// broker applies its tiers and approval policy to the session's requests only where
	// they are stricter than its own, since any caller may name one.
	Profile string
	// Run is the dispatch run this session works for (AIRLOCK_RUN_ID in a run's
	// environment), so the core can pause a run whose agent keeps asking what was denied.
	Run string
	// Broker decides every call; Client reaches the core's other routes (ops, sandboxes).
	Broker Broker
	Client *localapi.Client
	// HiddenPaths are hidden from bash sandboxes on top of the policy's (the socket's directory).
	HiddenPaths []string
	Version     string
	Log         *slog.Logger
	// BashTimeout is the default and MaxBashTimeout the largest timeout of a bash call.
	BashTimeout, MaxBashTimeout time.Duration
	// OutputCap bounds each of a bash call's stdout and stderr, in bytes.
	OutputCap int
	// FetchCap bounds a web_fetch body, in bytes.
	FetchCap int64
	// MicroVM returns the micro-VM of one MCP session (by its broker session id), which
	// runs its bash commands: every command under execution_mode "sandbox", the
	// high-risk ones (Risk) under "auto". Each session has its own VM, so what one wrote
	// outside the workspace is not another's, and its ask-only channel asks as that
	// session. nil: not installed, and those commands are refused with the way out.
	MicroVM func(session string) sandbox.MicroVM
	// Risk says why a command is high-risk for "auto" ("" = run it on the host).
	Risk func(command string) string
	// Egress builds the egress proxy hook of one bash call under network_access =
	// "allowlist" (airlock-agent builds it from sandbox/egress): log receives one line per
	// connection, ask puts an unlisted domain to the broker as a network_domain request.
	// nil: such a call has no network. web_fetch needs no hook: it makes its connections
	// in this process, each through the egress decision.
	Egress func(log io.Writer, ask AskDomain) sandbox.Egress
	// Ask builds the ask-only channel of one bash call's sandbox, for its directory and
	// this server's session (airlock-agent has the core serve it): an agent the command
	// starts asks the person there. nil: the sandbox has none (the server itself runs in
	// a sandbox, whose channel a nested one cannot reach).
	Ask func(cwd, session string) sandbox.Egress
}

// AskDomain asks the broker whether a run may connect to domain:port; true is allow.
type AskDomain func(ctx context.Context, domain string, port int) (bool, error)

// Server is Airlock's MCP server: governed tools, each call through the broker.
type Server struct {
	opts    Options
	session string
	mcp     *mcp.Server
	net     fetchNet // web_fetch's resolver and dialer (tests only)
}

// NewServer builds the server and registers its tools.
func NewServer(opts Options) *Server {
	if opts.Log == nil {
		opts.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if opts.BashTimeout <= 0 {
		opts.BashTimeout = 2 * time.Minute
	}
	if opts.MaxBashTimeout <= 0 {
		opts.MaxBashTimeout = 30 * time.Minute
	}
	if opts.OutputCap <= 0 {
		opts.OutputCap = 64 << 10
	}
	if opts.FetchCap <= 0 {
		opts.FetchCap = 1 << 20
	}
	var id [6]byte
	_, _ = rand.Read(id[:])
	s := &Server{opts: opts, session: "mcp-" + hex.EncodeToString(id[:])}
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "airlock", Title: "Airlock", Version: opts.Version}, &mcp.ServerOptions{
		Instructions: instructions(opts),
		Logger:       opts.Log,
	})
	s.addFileTools()
	s.addBashTool()
	s.addWebFetchTool()
	s.addOpsTools()
	s.addCloudOps()
	return s
}

// Session is the broker session id every request of this server carries.
func (s *Server) Session() string { return s.session }

// Run serves on the transport until the client goes away or ctx ends.
func (s *Server) Run(ctx context.Context, t mcp.Transport) error { return s.mcp.Run(ctx, t) }

// call is one governed tool call in flight.
type call struct {
	tool    string
	params  json.RawMessage
	subject string
}

// ask sends the call to the broker and waits, reporting progress while it waits when
// the client asked for it. It returns the decision, or a tool error result to return.
func (s *Server) ask(ctx context.Context, req *mcp.CallToolRequest, c call) (api.Decision, *mcp.CallToolResult) {
	client := "mcp"
	if req != nil && req.Session != nil {
		if ip := req.Session.InitializeParams(); ip != nil && ip.ClientInfo != nil && ip.ClientInfo.Name != "" {
			client = "mcp:" + ip.ClientInfo.Name
		}
	}
	r := api.Request{Tool: c.tool, Params: c.params, Context: s.context(client)}
	if c.tool == api.ToolBash {
		// Where the command will run, so the core judges a micro-VM command by the VM's
		// guarantees (writes outside the workspace vanish with it) and a host command as before.
		if pol, _, refuse := s.placeCommand(s.opts.Policy, c.subject); refuse == "" && pol.ExecutionMode == sandbox.ExecSandbox {
			r.Context.Policy.ExecutionMode = string(sandbox.ExecSandbox)
		} else if refuse == "" && s.egressFor(pol) {
			r.Context.Policy.EgressConnected = true
		}
	}
	if c.tool == api.ToolWebFetch && s.opts.Policy.Network == sandbox.NetworkAllowlist {
		// web_fetch's connections always go through the egress decision (webfetch.go).
		r.Context.Policy.EgressConnected = true
	}
	stop := s.progress(ctx, req, c)
	d, err := s.opts.Broker.Await(ctx, r)
	stop()
	if err != nil {
		return api.Decision{}, errorResult("Airlock could not decide %s (%s), so it did not run: %v", c.tool, c.subject, err)
	}
	if d.Verdict != api.Allow {
		return d, errorResult("%s", DenialText(c.tool, c.subject, d))
	}
	return d, nil
}

// askDomain is the session's AskDomain: a network_domain request in the session's context.
func (s *Server) askDomain(ctx context.Context, domain string, port int) (bool, error) {
	params, _ := json.Marshal(map[string]any{"domain": domain, "port": port})
	r := api.Request{Tool: api.ToolNetworkDomain, Params: params, Context: s.context("mcp")}
	r.Context.Policy.EgressConnected = true
	d, err := s.opts.Broker.Await(ctx, r)
	if err != nil {
		return false, err
	}
	return d.Verdict == api.Allow, nil
}

func (s *Server) context(client string) api.Context {
	return api.Context{Session: s.session, Run: s.opts.Run, Department: s.opts.Department, Workspace: s.opts.Policy.Cwd, Cwd: s.opts.Policy.Cwd,
		Policy: api.PolicySummary{Mode: string(s.opts.Policy.Mode), Network: s.opts.Policy.Network, Posture: s.opts.Posture,
			WritableRoots: s.opts.Policy.WritableRoots, Profile: s.opts.Profile},
		Caller: api.Caller{Description: client}}
}

// progress tells the client every few seconds that the call waits for the person, while
// the broker has not answered: a progress notification when the client gave a progress
// token, otherwise a logging message (which the client sees if it set a logging level),
// so that a waiting call never looks hung. The returned func stops it.
func (s *Server) progress(ctx context.Context, req *mcp.CallToolRequest, c call) func() {
	if req == nil || req.Params == nil || req.Session == nil {
		return func() {}
	}
	token := req.Params.GetProgressToken()
	done := make(chan struct{})
	go func() {
		every := s.opts.ProgressEvery
		if every <= 0 {
			every = 2 * time.Second
		}
		tick := time.NewTicker(every)
		defer tick.Stop()
		n := 0
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
				n++
				msg := fmt.Sprintf("waiting for the person to answer Airlock's request for %s (%s)", c.tool, c.subject)
				if token != nil {
					_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(n), Message: msg})
				} else {
					// Deprecated from protocol 2026-07-28 on, but what clients of the versions
					// before it (today's agents) show for a call without a progress token.
					//lint:ignore SA1019 logging stays functional through the deprecation window
					_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "airlock", Data: msg})
				}
			}
		}
	}()
	return func() { close(done) }
}

// after reports the outcome of an allowed call; it never fails the call.
func (s *Server) after(c call, d api.Decision, out api.Outcome) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	r := api.Request{Tool: c.tool, Params: c.params, Context: s.context("mcp")}
	if err := s.opts.Broker.After(ctx, api.AfterToolUse{Request: r, Decision: d, Outcome: out}); err != nil {
		s.opts.Log.Debug("after_tool_use not delivered", "tool", c.tool, "error", err)
	}
}

// governed registers a tool whose every call goes through the broker. prepare
// normalizes the input (absolute paths) and may refuse it before the broker is asked
// (an isolation error); run executes the allowed call with the decision's params.
func governed[In any](s *Server, t *mcp.Tool, prepare func(*In) (subject string, err error), run func(ctx context.Context, in In) (*mcp.CallToolResult, api.Outcome)) {
	mcp.AddTool(s.mcp, t, func(ctx context.Context, req *mcp.CallToolRequest, in In) (*mcp.CallToolResult, any, error) {
		subject, err := prepare(&in)
		if err != nil {
			return errorResult("%s", err.Error()), nil, nil
		}
		params, err := json.Marshal(in)
		if err != nil {
			return errorResult("encode %s input: %v", t.Name, err), nil, nil
		}
		c := call{tool: t.Name, params: params, subject: subject}
		d, refused := s.ask(ctx, req, c)
		if refused != nil {
			return refused, nil, nil
		}
		if len(d.Params) > 0 && string(d.Params) != "null" {
			var rewritten In
			if err := json.Unmarshal(d.Params, &rewritten); err != nil {
				return errorResult("Airlock allowed %s with parameters this tool cannot read: %v", t.Name, err), nil, nil
			}
			if _, err := prepare(&rewritten); err != nil {
				return errorResult("Airlock allowed %s with rewritten parameters that are refused: %v", t.Name, err), nil, nil
			}
			in = rewritten
		}
		if d.Grant != nil && !d.Grant.IsZero() {
			// The person allowed an escalation: exactly that access, for this call only.
			pol, err := s.opts.Policy.Escalate(*d.Grant)
			if err != nil {
				return errorResult("Airlock allowed %s with more access, but it cannot be given: %v", t.Name, err), nil, nil
			}
			ctx = context.WithValue(ctx, policyKey{}, pol)
		}
		res, out := run(ctx, in)
		go s.after(c, d, out) // the agent need not wait for the after_tool_use hooks
		return res, nil, nil
	})
}

// policyKey carries the policy of one call that a person allowed with more access.
type policyKey struct{}

// policy is the sandbox policy of the call in ctx: the session's, or the session's with
// the escalation the person allowed for this call.
func (s *Server) policy(ctx context.Context) sandbox.Policy {
	if p, ok := ctx.Value(policyKey{}).(sandbox.Policy); ok {
		return p
	}
	return s.opts.Policy
}

// precheck is a tool's own isolation check before the broker is asked: a denial that an
// escalation can lift goes on to the broker, which asks the person for exactly that
// access for this one call; any other is refused here, with its reason and way out.
func precheck(err error) error {
	if err == nil {
		return nil
	}
	if d, ok := sandbox.IsDenied(err); ok && d.Grant != nil {
		return nil
	}
	return isolationError(err)
}

// errorResult is a tool error the model reads.
func errorResult(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

// textResult is a successful tool result.
func textResult(text string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}
}

// ranOK is the outcome of a call that ran, with its error if it failed.
func ranOK(err error) api.Outcome {
	if err != nil {
		return api.Outcome{Ran: true, Error: err.Error()}
	}
	return api.Outcome{Ran: true}
}

// toolKind is how a tool behaves, for MCP's annotations: whether it changes nothing,
// may destroy what is there, does the same again when repeated, and reaches beyond
// Airlock and the workspace.
type toolKind struct{ ReadOnly, Destructive, Idempotent, OpenWorld bool }

// annotations states every hint explicitly: for a hint left out the spec's defaults are
// destructive and open world, which would make a client treat a plan record as an act.
func annotations(title string, k toolKind) *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: k.ReadOnly, DestructiveHint: &k.Destructive,
		IdempotentHint: k.Idempotent, OpenWorldHint: &k.OpenWorld}
}

// ServedTools are the tools Airlock's MCP server serves (TestToolAnnotations holds the
// list to what the server lists).
var ServedTools = []string{
	api.ToolBash, api.ToolReadFile, api.ToolWriteFile, api.ToolEditFile, api.ToolListDir, api.ToolSearchFiles, api.ToolWebFetch,
	api.ToolOpsPlan, api.ToolOpsDiff, api.ToolOpsApprove, api.ToolOpsApply, api.ToolOpsVerify, api.ToolOpsJournal,
}
