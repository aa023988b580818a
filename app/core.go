// Package app is Airlock's composition root: the core container shared by the desktop
// app and the headless daemon, its local API routes, and the wiring of the domain
// packages. It never imports Wails; app/desktop does.
package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app/config"
	"github.com/airlock-app/airlock/app/eventbus"
	"github.com/airlock-app/airlock/app/localapi"
	"github.com/airlock-app/airlock/app/paths"
	"github.com/airlock-app/airlock/app/proc"
	"github.com/airlock-app/airlock/app/secrets"
	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/internal/sqlitedb"
	"github.com/airlock-app/airlock/ops"
	"github.com/airlock-app/airlock/permission"
)

// Kind says which executable hosts the core.
type Kind string

// The two hosts of the core.
const (
	KindDesktop Kind = "desktop"
	KindDaemon  Kind = "daemon"
)

// Options configure Open.
type Options struct {
	Kind   Kind
	Getenv func(string) string // os.Getenv when nil
	// Flags are configuration values given on the command line, by config key.
	Flags map[string]any
}

// Core is the running core: paths, database, configuration, secrets, events and the
// local API, started and stopped in order.
type Core struct {
	Kind   Kind
	Paths  paths.Paths
	DB     *gorm.DB
	Config *config.Store
	// Secrets is the store `[secrets] store` chose when the core opened (the keyring
	// unless it says "file"); a change of the key applies at the next start.
	Secrets secrets.Backend
	Bus     *eventbus.Bus
	Broker  *permission.Broker
	Ops     *ops.Service
	// Departments and Dispatch own departments, known places, tasks and runs.
	Departments *departments.Service
	Dispatch    *dispatch.Dispatcher
	StartedAt   time.Time
	// OnReady, when set, is called once Run answers on the socket and dispatch has
	// started (the daemon says "running" then, not before).
	OnReady func()

	getenv func(string) string
	flags  map[string]any
	api    *localapi.Server
	// tcpAddress is the loopback address the local API also listens on ("" for none),
	// and tcpFrom where it was chosen (--tcp, or config.toml's [api] tcp_address).
	tcpAddress, tcpFrom string
	sandboxes           *proc.Sandboxes
	presence            *presence // proves a person at a terminal (app/presence.go)
	cancel              context.CancelFunc

	sandbox sandboxState
	// egressNet is set by tests only (egress.go).
	egressNet *egressNet
	// askTimeouts bound reading a request on a sandbox's ask-only channel (zero: the
	// defaults; tests shorten them).
	askTimeouts localapi.Timeouts
	digests     digests // the latest dispatch digest and its dismissal (digest.go)
	vm          *microVM
	dbLock      *os.File
	// newJournal: the database and the ops journal's anchor were both created by this
	// start (a first start, or the way out of a damaged database).
	newJournal bool
	startRow   CoreStart
	// Previous is the start before this one; Clean false means it was killed.
	Previous *PreviousStart

	mu         sync.Mutex
	startupErr *config.Error // config.toml was broken at start; the last good copy is in force
	closed     bool
}

// Open builds the core: it takes the single-instance lock before touching the
// database, so two instances never share one.
func Open(ctx context.Context, opts Options) (*Core, error) {
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	p, err := paths.Resolve(getenv)
	if err != nil {
		return nil, err
	}
	if err := paths.Ensure(p); err != nil {
		return nil, err
	}
	c := &Core{Kind: opts.Kind, Paths: p, Bus: eventbus.New(), Secrets: secrets.New(),
		StartedAt: time.Now(), getenv: getenv, flags: opts.Flags, sandboxes: proc.NewSandboxes(), presence: newPresence(),
		sandbox: sandboxState{done: make(chan struct{})}}

	// Every open request holds a descriptor: the core takes all the system lets it.
	if n, err := localapi.RaiseFileLimit(); err != nil {
		slog.Warn("the open-file limit stays as it is", "error", err)
	} else {
		slog.Debug("open-file limit", "limit", n, "kept for the person's surfaces", localapi.DescriptorReserve())
	}
	c.api, err = localapi.NewServer(ctx, c.apiOptions(ctx))
	if err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			c.api.Shutdown(context.Background())
		}
	}()

	if err := c.openConfig(); err != nil {
		return nil, err
	}
	if c.Secrets, err = secrets.Open(secrets.Kind(c.Config.State().File.SecretStore()), p.DataDir); err != nil {
		return nil, err
	}
	// The configuration in force kept between starts is a file like config.toml: its
	// seal in the secret store says Airlock wrote it (strict when it does not).
	c.Config.Seal(ctx, config.SealStore(c.Secrets, secrets.New()))
	if c.dbLock, err = sqlitedb.Lock(p.Database); err != nil {
		return nil, err
	}
	defer func() {
		if !ok {
			c.dbLock.Close()
		}
	}()
	// The journal's anchor belongs to the database: a damaged one is moved aside with it,
	// and a journal whose database and anchor are both new starts its own rollback count.
	c.newJournal = !exists(p.Database) && !exists(ops.AnchorPath(c.opsStateDir()))
	c.DB, err = openDatabase(ctx, p.Database, c.migrators(), ops.AnchorPath(c.opsStateDir()))
	if err != nil {
		return nil, err
	}
	if c.Previous, err = c.recordStart(ctx); err != nil {
		closeDatabase(c.DB)
		return nil, err
	}
	if err := c.openPermission(ctx); err != nil {
		closeDatabase(c.DB)
		return nil, err
	}
	if err := c.openOps(ctx); err != nil {
		c.Broker.Close()
		closeDatabase(c.DB)
		return nil, fmt.Errorf("open ops: %w", err)
	}
	c.openVM()
	if err := c.openDispatch(ctx); err != nil {
		c.Broker.Close()
		closeDatabase(c.DB)
		return nil, err
	}
	if c.Previous != nil && !c.Previous.Clean {
		slog.Warn("the previous Airlock core did not stop cleanly", "pid", c.Previous.PID, "started", c.Previous.StartedAt)
	}
	ok = true
	return c, nil
}

// lastGoodPath keeps a copy of the last configuration that loaded, so a file broken
// while Airlock was closed still starts with the person's settings, not the defaults.
func (c *Core) lastGoodPath() string { return filepath.Join(c.Paths.DataDir, "config.last-good.toml") }

func (c *Core) openConfig() error {
	// What config.toml loosens against the configuration in force waits for the person.
	guard := config.GuardAt(c.Paths.DataDir, c.Paths.Database)
	store, err := config.OpenGuarded(c.Paths.ConfigFile, guard, c.onConfigChange)
	if err == nil {
		c.Config = store
		c.saveLastGood()
		return nil
	}
	var broken *config.Error
	if !errors.As(err, &broken) {
		return err
	}
	// Broken at start: fall back to the last good copy, loudly.
	fallback, ferr := config.Open(c.lastGoodPath(), c.onConfigChange)
	if ferr != nil || !fallback.State().Exists {
		return fmt.Errorf("%w\nfix the file and start again (no earlier good configuration is known, and Airlock will not silently use the defaults)", err)
	}
	slog.Error("config.toml is broken; starting with the last good configuration", "error", err, "copy", c.lastGoodPath())
	store, _ = config.OpenWith(c.Paths.ConfigFile, fallback.State().File, broken, c.onConfigChange, &guard)
	c.Config = store
	c.startupErr = broken
	return nil
}

func (c *Core) saveLastGood() {
	st := c.Config.State()
	if st.Error != nil || !st.Exists {
		return
	}
	data, err := os.ReadFile(st.Path)
	if err != nil {
		return
	}
	tmp := c.lastGoodPath() + ".tmp"
	if os.WriteFile(tmp, data, 0o600) == nil {
		_ = os.Rename(tmp, c.lastGoodPath())
	}
}

func (c *Core) onConfigChange(st config.State) {
	if c.presence != nil {
		c.presence.forget()
	}
	if st.Error == nil {
		c.saveLastGood()
		if c.Departments != nil {
			if err := c.Departments.SetWorkspaceRoots(workspaceRoots(st.File)); err != nil {
				slog.Error("workspace roots in config.toml", "error", err)
			}
		}
		if c.Broker != nil {
			if eff, err := c.resolvePermission(); err != nil {
				slog.Error("permission settings in config.toml are not valid; keeping the previous ones", "error", err)
			} else if err := c.Broker.Reload(eff); err != nil {
				slog.Error("reload permission settings", "error", err)
			}
		}
	}
	v := c.ConfigView()
	c.Bus.Publish(api.TopicConfigChanged, api.ConfigChanged{Path: v.Path, Exists: v.Exists, LoadedAt: v.LoadedAt, Valid: v.Error == nil})
	c.sandboxConfigChanged()
}

func (c *Core) apiOptions(ctx context.Context) localapi.Options {
	opts := localapi.Options{
		Socket:         c.Paths.Socket,
		Sandboxed:      c.sandboxes.Contains,
		MapError:       apiError,
		AllowedOrigins: []string{"wails://wails", "http://wails.localhost"},
	}
	// The daemon's --tcp, else config.toml's [api] tcp_address (read now: the
	// listener starts before the configuration is open).
	if addr, ok := c.flags["api.tcp_address"].(string); ok && addr != "" {
		opts.TCPAddress, c.tcpFrom = addr, "--tcp"
	} else if f, err := c.fileBeforeOpen(); err != nil {
		slog.Warn("the local API listens on its socket only: config.toml cannot be read for [api] tcp_address", "error", err)
	} else if a := f.API.TCPAddress; a != nil && *a != "" {
		opts.TCPAddress, c.tcpFrom = *a, "[api] tcp_address in "+c.Paths.ConfigFile
	}
	c.tcpAddress = opts.TCPAddress
	opts.Token = c.apiToken
	return opts
}

// migrators lists every domain package's Migrate, in dependency order.
func (c *Core) migrators() []Migrator {
	return []Migrator{{Name: "core", Migrate: migrateCore}, {Name: "permission", Migrate: permission.Migrate}, {Name: "ops", Migrate: ops.Migrate},
		{Name: "departments", Migrate: departments.Migrate}, {Name: "dispatch", Migrate: dispatch.Migrate},
		{Name: "network", Migrate: migrateNetwork}}
}

// RegisterSandbox records the host pid of a sandbox the core started; call the
// returned func when it ends.
func (c *Core) RegisterSandbox(pid int) func() { return c.sandboxes.Add(pid) }

// trackSandboxes returns an OnStart callback that records each sandbox pid with the
// core (the local API refuses state-changing requests from inside them) and a done
// func that forgets them all when the run ends.
func (c *Core) trackSandboxes(next func(int)) (onStart func(int), done func()) {
	var mu sync.Mutex
	var forget []func()
	onStart = func(pid int) {
		mu.Lock()
		forget = append(forget, c.RegisterSandbox(pid))
		mu.Unlock()
		if next != nil {
			next(pid)
		}
	}
	done = func() {
		mu.Lock()
		defer mu.Unlock()
		for _, f := range forget {
			f()
		}
		forget = nil
	}
	return onStart, done
}

// Run serves the local API and runs the services until ctx ends, then stops them.
func (c *Core) Run(ctx context.Context, extraRoutes func(*localapi.Server)) error {
	ctx, c.cancel = context.WithCancel(ctx)
	c.routes()
	c.permissionRoutes()
	c.sandboxRoutes()
	c.vmRoutes()
	c.opsRoutes()
	c.dispatchRoutes()
	c.digestRoutes()
	c.gatewayRoutes()
	c.egressRoutes()
	if extraRoutes != nil {
		extraRoutes(c.api)
	}
	if err := c.Config.Watch(ctx); err != nil {
		slog.Warn("config.toml will not reload live", "error", err)
	}
	if err := c.api.Serve(); err != nil {
		return err
	}
	go c.probeSandbox(ctx)
	c.startVM(ctx)
	if err := c.startDispatch(ctx); err != nil {
		return err
	}
	slog.Info("Airlock core running", "kind", c.Kind, "pid", os.Getpid(), "socket", c.Paths.Socket)
	if c.OnReady != nil {
		c.OnReady()
	}
	<-ctx.Done()
	return nil
}

// Close stops the API (requests in flight finish), then closes the database.
func (c *Core) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	apiErr := c.api.Shutdown(ctx)
	dispatchErr := c.Dispatch.Close()
	c.closeVM()
	brokerErr := c.Broker.Close()
	stopErr := c.recordStop()
	dbErr := closeDatabase(c.DB)
	c.dbLock.Close()
	return errors.Join(apiErr, dispatchErr, brokerErr, stopErr, dbErr)
}

// exists reports whether something may be at path: only "does not exist" says no (a
// link counts, followed or not).
func exists(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
