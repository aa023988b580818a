package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/proc"
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/permission"
	"github.com/airlock-app/airlock/sandbox"
)

// Terminal proofs ([approvals] terminal_proof).
const (
	// proofOS: the person types their login password, which the core checks through PAM.
	proofOS = "os"
	// proofTTY is the named weaker choice: a terminal is enough, and any process of the
	// user can get one (script -qc, pty.spawn, setsid + openpty).
	proofTTY = "tty"
)

// Errors of the presence proof.
var (
	// errNotProven: PAM refused the password (or the account).
	errNotProven = errors.New("the password was not accepted")
	// errProofLocked: too many wrong passwords in a row; no attempt is made for a while.
	errProofLocked = errors.New("too many wrong passwords in a row")
	// errNoPAM: this build of the core has no PAM (it was built without cgo).
	errNoPAM = errors.New("this Airlock core was built without PAM")
	// errPasswordless: the PAM service lets the user through without a password
	// (pam_rootok for root, pam_permit), so a password checked with it proves nothing.
	errPasswordless = errors.New("the PAM service succeeds without a password")
)

// Failed attempts are limited per caller (one process of the user, by pid and start
// time): after maxFailures wrong passwords in a row, that caller's attempts are refused
// for lockout, doubling on every further failure up to maxLockout. Another caller (the
// person's own airlock command) is not locked by it, and the window never is; guessing
// across many callers is slowed by the conversations being one at a time, each failure
// paying PAM's own delay.
const (
	maxFailures = 5
	lockout     = 30 * time.Second
	maxLockout  = 15 * time.Minute
	// failWindow and failPause pace guessing across callers (presence.verify).
	failWindow = time.Minute
	failPause  = time.Second
)

// presence proves to the operating system that a person is at a terminal: their login
// password, checked with a PAM conversation in the core for the socket peer's user.
type presence struct {
	// authenticate runs the PAM conversation (pamAuthenticate); confDir is "" for
	// /etc/pam.d (tests point it at a directory of their own services).
	authenticate func(ctx context.Context, service, confDir, user, password string) error
	// passwordless runs service's stack for user with a conversation that gives no
	// password: nil means it lets the user through without one (pamPasswordless).
	passwordless func(ctx context.Context, service, confDir, user string) error
	confDir      string
	userName     func(uid int) (string, error)
	now          func() time.Time

	attempt sync.Mutex // one PAM conversation at a time: no racing past the limit
	mu      sync.Mutex
	fails   map[string]*failState // by caller (callerKey)
	// recentFails counts wrong passwords from any caller since failsSince (failWindow).
	recentFails int
	failsSince  time.Time
	failPause   time.Duration // under mu
	// probed caches, per service and user, whether the stack needs a password (nil)
	// or not (errPasswordless); forgotten when config.toml changes.
	probed map[string]error
}

type failState struct {
	count int
	until time.Time
}

func newPresence() *presence {
	return &presence{authenticate: pamAuthenticate, passwordless: pamPasswordless, userName: lookupUserName, now: time.Now,
		fails: map[string]*failState{}, probed: map[string]error{}, failPause: failPause}
}

// callerKey names one caller: the process by pid and start time (a pid reused by
// another process is another caller).
func callerKey(uid, pid int) string {
	start := "?"
	if f, err := proc.Stat(pid); err == nil && len(f) > 19 {
		start = f[19]
	}
	return fmt.Sprintf("%d:%d:%s", uid, pid, start)
}

// needsPassword refuses service when its stack lets user through without a password.
// The answer is kept until forget (a change of config.toml).
func (p *presence) needsPassword(ctx context.Context, service, user string) error {
	k := service + "\x00" + user
	p.mu.Lock()
	err, ok := p.probed[k]
	p.mu.Unlock()
	if ok {
		return err
	}
	if p.passwordless == nil {
		return nil
	}
	perr := p.passwordless(ctx, service, p.confDir, user)
	if errors.Is(perr, errNoPAM) || errors.Is(perr, context.Canceled) || errors.Is(perr, context.DeadlineExceeded) {
		return nil // no answer: the real conversation decides
	}
	if perr == nil {
		err = fmt.Errorf("%w for %s (pam_rootok or pam_permit in /etc/pam.d/%s), so a password checked with it proves nothing: "+
			"remove [approvals] pam_service from config.toml to use Airlock's own service (`make deps` installs /etc/pam.d/airlock), "+
			"or name one that asks for the password (sudo, login)", errPasswordless, user, service)
		slog.Error("a PAM service lets the user through without a password; terminal answers with it are refused", "service", service, "user", user)
	}
	p.mu.Lock()
	p.probed[k] = err
	p.mu.Unlock()
	return err
}

// forget drops what was learnt of the PAM services (config.toml changed).
func (p *presence) forget() {
	p.mu.Lock()
	clear(p.probed)
	p.mu.Unlock()
}

func lookupUserName(uid int) (string, error) {
	u, err := user.LookupId(strconv.Itoa(uid))
	if err != nil {
		return "", fmt.Errorf("the user of uid %d: %w", uid, err)
	}
	return u.Username, nil
}

// verify checks password for the user of uid with PAM service, counting failures.
// caller is callerKey of the process that sent it.
func (p *presence) verify(ctx context.Context, uid int, caller, service, password string) error {
	locked := func() error {
		p.mu.Lock()
		defer p.mu.Unlock()
		if f := p.fails[caller]; f != nil && p.now().Before(f.until) {
			wait := f.until.Sub(p.now()).Round(time.Second)
			return fmt.Errorf("%w (%d) from this process: its terminal answers are refused for %s", errProofLocked, f.count, wait)
		}
		return nil
	}
	// A locked caller is refused before it waits for the conversation of another.
	if err := locked(); err != nil {
		return err
	}
	p.attempt.Lock()
	defer p.attempt.Unlock()
	if err := locked(); err != nil {
		return err
	}
	name, err := p.userName(uid)
	if err != nil {
		return err
	}
	if err := p.needsPassword(ctx, service, name); err != nil {
		return err
	}
	err = p.authenticate(ctx, service, p.confDir, name, password)
	if errors.Is(err, errNoPAM) {
		return err
	}
	p.mu.Lock()
	if err == nil {
		delete(p.fails, caller)
		p.mu.Unlock()
		return nil
	}
	// Guessing from many callers at once: once wrong passwords come often, each one
	// holds the conversation for failPause, so guesses stay under one per failPause
	// whatever the PAM stack's own delay; a right password waits at most that long.
	if now := p.now(); now.Sub(p.failsSince) > failWindow {
		p.failsSince, p.recentFails = now, 0
	}
	p.recentFails++
	pause, wait := p.recentFails > maxFailures, p.failPause
	defer func() {
		if pause {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		}
	}()
	defer p.mu.Unlock()
	f := p.fails[caller]
	if f == nil {
		if len(p.fails) >= maxCallers {
			p.pruneLocked()
		}
		f = &failState{}
		p.fails[caller] = f
	}
	f.count++
	if f.count >= maxFailures {
		d := lockout << (f.count - maxFailures)
		if d > maxLockout || d <= 0 {
			d = maxLockout
		}
		f.until = p.now().Add(d)
	}
	slog.Warn("a terminal answer's password was refused", "user", name, "service", service, "failures", f.count, "error", err)
	return fmt.Errorf("%w by PAM (service %s, user %s): %v", errNotProven, service, name, err)
}

// maxCallers bounds the callers whose failures are remembered; beyond it those no
// longer locked are forgotten first.
const maxCallers = 4096

func (p *presence) pruneLocked() {
	now := p.now()
	for k, f := range p.fails {
		if !now.Before(f.until) {
			delete(p.fails, k)
		}
	}
	for k := range p.fails { // still full: all locked; drop any
		if len(p.fails) < maxCallers {
			break
		}
		delete(p.fails, k)
	}
}

// terminalProof is the configured [approvals] terminal_proof (default os).
func (c *Core) terminalProof() string {
	if c.Config != nil {
		if v := c.Config.State().File.Approvals.TerminalProof; v != nil && *v == proofTTY {
			return proofTTY
		}
	}
	return proofOS
}

// pamService is the PAM service that checks the password, and why it was chosen: the
// configured one, else Airlock's own (/etc/pam.d/airlock, installed by `make deps` as
// root), else sudo's, login's or other's stack.
func (c *Core) pamService() (service, source string) {
	if c.Config != nil {
		if v := c.Config.State().File.Approvals.PAMService; v != nil && *v != "" {
			return *v, "approvals.pam_service"
		}
	}
	dir := "/etc/pam.d"
	if c.presence.confDir != "" {
		dir = c.presence.confDir
	}
	for _, s := range []string{"airlock", "sudo", "login"} {
		if _, err := os.Stat(filepath.Join(dir, s)); err == nil {
			if s == "airlock" {
				return s, "Airlock's own service"
			}
			return s, "fallback: no /etc/pam.d/airlock"
		}
	}
	return "other", "fallback: no /etc/pam.d/airlock, sudo or login"
}

// ProofStatus is how a person at a terminal proves presence, for `airlock status` and
// the CLI (GET /v1/approvals/proof).
type ProofStatus = api.ProofSummary

// Proof reports the terminal proof in force.
func (c *Core) Proof() ProofStatus {
	s := ProofStatus{TerminalProof: c.terminalProof(), PAM: pamAvailable}
	s.PAMService, s.PAMSource = c.pamService()
	if s.TerminalProof == proofTTY {
		s.Note = "weaker: any process of yours can get a terminal (script -qc, pty.spawn), so it can answer what only you should; set [approvals] terminal_proof = \"os\""
	} else if !s.PAM {
		s.Note = "this build has no PAM: answer what needs a person in the Airlock window"
	} else {
		s.Note = "at a terminal you type your login password, checked by PAM in the core"
	}
	return s
}

// personProof is what a terminal caller sends to prove that a person answers.
type personProof = api.Proof

// answerer establishes who answers a request that arrived over the local API, from how
// it arrived — never from what the caller says: cli-os-proof when the caller sent the
// login password and PAM accepted it, cli-tty under terminal_proof = "tty" when the
// caller has a controlling terminal and confirmed (confirmed checks what was typed),
// and api otherwise. A proof that was offered and failed is an error with the way out.
// The approvals answer, ops approve and authorize all go through it.
func (c *Core) answerer(r *http.Request, p personProof, confirmed func(string) bool) (string, error) {
	peer, _ := localapi.PeerFrom(r.Context())
	if !peer.Unix {
		if p.Password != "" || p.Confirmation != "" {
			return "", &api.Error{Status: http.StatusForbidden, Code: "not_proven",
				Message: "a person proves presence over the unix socket only, never over TCP",
				Hint:    "answer in the Airlock window, or with the airlock command at a terminal on this machine"}
		}
		return permission.ByAPI, nil
	}
	if p.Password != "" {
		service, _ := c.pamService()
		err := c.presence.verify(r.Context(), peer.UID, callerKey(peer.UID, peer.PID), service, p.Password)
		switch {
		case err == nil:
			return permission.ByCLIOSProof, nil
		case errors.Is(err, errProofLocked):
			return "", &api.Error{Status: http.StatusTooManyRequests, Code: "proof_locked", Message: err.Error(),
				Hint: "run the airlock command again (a new one is not locked by this one), or answer in the Airlock window"}
		case errors.Is(err, errPasswordless):
			return "", &api.Error{Status: http.StatusForbidden, Code: "not_proven", Message: err.Error() + "; nothing was answered",
				Hint: "answer in the Airlock window, and fix [approvals] pam_service as the message says"}
		case errors.Is(err, errNoPAM):
			return "", &api.Error{Status: http.StatusForbidden, Code: "no_pam", Message: err.Error(),
				Hint: "answer in the Airlock window (or set [approvals] terminal_proof = \"tty\", the weaker choice)"}
		case errors.Is(err, errNotProven):
			return "", &api.Error{Status: http.StatusForbidden, Code: "not_proven", Message: err.Error() + "; nothing was answered",
				Hint: "run the command again at a terminal and type your login password, or answer in the Airlock window"}
		}
		return "", fmt.Errorf("prove presence: %w", err)
	}
	if p.Confirmation == "" {
		return permission.ByAPI, nil
	}
	if c.terminalProof() != proofTTY {
		return "", &api.Error{Status: http.StatusForbidden, Code: "not_proven",
			Message: "a typed confirmation is not proof of a person here ([approvals] terminal_proof = \"os\"): a terminal can be faked by any process",
			Hint:    "run the command at a terminal and type your login password when asked, or answer in the Airlock window"}
	}
	if peer.PID <= 0 || !proc.HasControllingTTY(peer.PID) {
		return "", &api.Error{Status: http.StatusForbidden, Code: "not_interactive",
			Message: "this answer claims a person typed it, but the caller has no terminal",
			Hint:    "answer in the Airlock window, or run the airlock command in a terminal"}
	}
	if confirmed != nil && !confirmed(p.Confirmation) {
		return "", &api.Error{Status: http.StatusForbidden, Code: "not_confirmed",
			Message: "the typed confirmation does not match", Hint: "type exactly what the airlock command asks for"}
	}
	return permission.ByCLITTY, nil
}

// needPerson is the error of an act only a person may do, asked over the API without
// proof. what names the act ("approving a plan"); cli is the command that does it at a
// terminal.
func (c *Core) needPerson(what, cli string) error {
	how := "type your login password when it asks"
	if c.terminalProof() == proofTTY {
		how = "type what it asks for"
	}
	return &api.Error{Status: http.StatusForbidden, Code: "not_interactive",
		Message: what + " needs a person, and this request came over the API without proof of one",
		Hint:    fmt.Sprintf("do it in the Airlock window, or run `%s` at a terminal and %s", cli, how)}
}

// widening names what a run under d would get beyond what the configuration gives
// every run, so that less would ask or confine at night: full access or approval never
// (always), a looser approval policy, more network, or higher limits. (A profile's
// reviewer and tiers reach a run's requests only to tighten.) under is the department's defaults a task's overrides d
// apply over (nil for a department's own): a task inherits what its department widens,
// and creating it approves its command under that. Set over the API, such a task or
// department needs the person, as an answer does. A profile counts with its settings
// beneath the fields given beside it (an unknown one widens nothing here: the task or
// department is refused by the profile check).
func (c *Core) widening(under *departments.Defaults, d departments.Defaults) []string {
	base := c.DispatchPolicy("")
	eff := base
	layers := []departments.Defaults{d}
	if under != nil {
		layers = []departments.Defaults{*under, d}
	}
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, l := range layers {
		eff, _ = dispatch.ApplyDefaults(eff, l, c.Profile)
	}
	if m, err := sandbox.ParseMode(eff.SandboxMode); err == nil && m == sandbox.ModeFullAccess {
		add("sandbox_mode full-access")
	}
	// A value the domain does not know widens nothing here: it is refused as invalid.
	if p, err := permission.ParseApprovalPolicy(eff.ApprovalPolicy); err == nil && p == permission.PolicyNever {
		add("approval_policy never")
	} else if err == nil && config.LooserApproval(eff.ApprovalPolicy, base.ApprovalPolicy) {
		add("approval_policy " + eff.ApprovalPolicy)
	}
	if config.LooserNetwork(eff.Network, base.Network) {
		add("network " + string(eff.Network.Norm()))
	}
	for _, l := range config.HigherLimits(eff.Limits, base.Limits) {
		add(l)
	}
	return out
}

// requirePerson refuses, unless the caller proved a person (answerer), a change over
// the API that widens access (what); cli is the command that does it at a terminal.
func (c *Core) requirePerson(r *http.Request, p personProof, what []string, subject, cli string) error {
	if len(what) == 0 {
		return nil
	}
	by, err := c.answerer(r, p, nil)
	if err != nil {
		return err
	}
	if permission.ByPerson(by) {
		return nil
	}
	return c.needPerson(subject+" with "+strings.Join(what, " and "), cli)
}
