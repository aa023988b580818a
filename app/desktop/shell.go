package desktop

import (
	"context"
	"io/fs"
	"log/slog"
	"sync"

	"github.com/wailsapp/wails/v2/pkg/logger"
	"github.com/wailsapp/wails/v2/pkg/options"
	"github.com/wailsapp/wails/v2/pkg/options/assetserver"
	"github.com/wailsapp/wails/v2/pkg/options/linux"
	"github.com/wailsapp/wails/v2/pkg/runtime"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/app"
)

// Shell owns the window's life: it keeps the context Wails gives at start-up, forwards
// the core's events to the window, shows the window on request and quits on request.
// Its methods are safe to call before the window exists: a show or quit asked for
// before start-up is carried out as soon as the window is up.
type Shell struct {
	core   *app.Core // nil while Wails only generates bindings
	facade *Facade

	mu           sync.Mutex
	ctx          context.Context // the Wails context; nil until OnStartup
	stopForward  context.CancelFunc
	quitAsked    bool
	showAsked    bool
	shuttingDown bool
	quitting     bool // Quit was called: closing the window ends the app
	closing      bool // a close was let through: GTK's main loop is ending
	icon         []byte
	tray         *Tray     // nil when there is no session bus
	notifier     *Notifier // nil when there is no session bus
}

// ReviewEvent is the window event that raises the popup on one request (the tray's
// "Review…"); its payload is the request id. It is not a core topic.
const ReviewEvent = "window.review"

// NewShell returns the shell of core's window.
func NewShell(core *app.Core) *Shell {
	return &Shell{core: core, facade: NewFacade(core)}
}

// Options are the Wails options of the window. assets holds index.html and the
// built frontend (frontend/dist); icon is the window's PNG icon.
func (s *Shell) Options(assets fs.FS, icon []byte) *options.App {
	s.mu.Lock()
	s.icon = icon
	s.mu.Unlock()
	return &options.App{
		Title:     "Airlock",
		Width:     1120,
		Height:    740,
		MinWidth:  760,
		MinHeight: 480,
		AssetServer: &assetserver.Options{
			Assets: assets,
		},
		// Shown for the instant before the page paints; close to both themes' sidebar.
		BackgroundColour: &options.RGBA{R: 0x24, G: 0x26, B: 0x2b, A: 0xff},
		OnStartup:        s.startup,
		OnDomReady:       s.domReady,
		OnShutdown:       s.shutdown,
		OnBeforeClose:    s.beforeClose,
		Bind:             []any{s.facade},
		// Closing the window hides it while the tray runs (beforeClose); without a tray
		// (no session bus) closing quits, or nothing could bring the window back.
		HideWindowOnClose:  false,
		LogLevel:           logger.WARNING,
		LogLevelProduction: logger.ERROR,
		Linux: &linux.Options{
			Icon:        icon,
			ProgramName: "airlock-desktop",
			// Software rendering: WebKitGTK's GPU path paints a blank window on several
			// drivers and under Xvfb (wails#2977); the window is text, not 3D.
			WebviewGpuPolicy: linux.WebviewGpuPolicyNever,
		},
	}
}

func (s *Shell) startup(ctx context.Context) {
	s.mu.Lock()
	s.ctx = ctx
	quit, show := s.quitAsked, s.showAsked
	s.mu.Unlock()
	s.facade.setContext(ctx) // dialogs (the directory picker) need the Wails context
	if s.core != nil {
		fctx, cancel := context.WithCancel(context.Background())
		s.mu.Lock()
		s.stopForward = cancel
		s.mu.Unlock()
		go forwardEvents(fctx, s.core.Bus, func(topic string, data ...any) {
			runtime.EventsEmit(ctx, topic, data...)
		})
	}
	if quit {
		runtime.Quit(ctx)
		return
	}
	s.startTray(ctx)
	if show {
		s.showWindow(ctx)
	}
}

// domReady logs that the page has loaded; scripts/window-smoke.sh waits for this line.
func (s *Shell) domReady(context.Context) {
	slog.Info("window ready")
}

// startTray puts Airlock in the tray when there is a session bus; without one the app
// runs without a tray (and closing the window quits).
func (s *Shell) startTray(ctx context.Context) {
	if s.core == nil || s.core.Broker == nil {
		return
	}
	s.mu.Lock()
	icon := s.icon
	s.mu.Unlock()
	opts := TrayOptions{
		Broker: s.core.Broker, Bus: s.core.Bus, Icon: icon,
		Open: s.ShowWindow,
		Review: func(id string) {
			s.ShowWindow()
			runtime.EventsEmit(ctx, ReviewEvent, id)
		},
		Show:    func(route string) { s.navigate(ctx, route) },
		Quit:    s.Quit,
		Sandbox: s.core.SandboxIndicator,
	}
	if s.core.Dispatch != nil {
		opts.Dispatch = s.core.Dispatch
	}
	tray := NewTray(opts)
	if err := tray.Start(); err != nil {
		slog.Warn("no tray icon: closing the window will quit Airlock", "error", err)
		return
	}
	s.mu.Lock()
	s.tray = tray
	s.mu.Unlock()
	notifier, err := StartNotifier(NotifierOptions{
		Broker: s.core.Broker, Inbox: s.core.Dispatch, Bus: s.core.Bus,
		Digest:  func() api.DigestCard { return s.core.Digest(app.WindowCaller()) },
		Sandbox: s.core.SandboxIndicator,
		Open:    s.ShowWindow,
		Show:    func(route string) { s.navigate(ctx, route) },
		Review: func(id string) {
			s.ShowWindow()
			runtime.EventsEmit(ctx, ReviewEvent, id)
		},
	})
	if err != nil {
		slog.Warn("no desktop notifications", "error", err)
		return
	}
	s.mu.Lock()
	s.notifier = notifier
	s.mu.Unlock()
}

// beforeClose runs when the person closes the window: while the tray runs the window
// only hides (dispatch keeps running; the tray brings it back). Quit (tray, signal)
// closes for real.
//
// A close is let through once. On SIGTERM both Wails' own signal handler and ours quit,
// and each quit calls gtk_main_quit from its own goroutine: a second call that lands
// while the main thread destroys the window crashed the app (SIGSEGV in gtk_main_quit,
// seen in CI). Later closes are refused: the first one is already ending the app.
func (s *Shell) beforeClose(ctx context.Context) (prevent bool) {
	s.mu.Lock()
	hide := s.tray != nil && !s.quitting && !s.shuttingDown
	already := s.closing
	if !hide {
		s.closing = true
	}
	s.mu.Unlock()
	if hide {
		runtime.WindowHide(ctx)
	}
	return hide || already
}

func (s *Shell) shutdown(context.Context) {
	s.mu.Lock()
	s.shuttingDown = true
	stop, tray, notifier := s.stopForward, s.tray, s.notifier
	s.tray, s.notifier = nil, nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
	if notifier != nil {
		notifier.Stop()
	}
	if tray != nil {
		tray.Stop()
	}
}

// navigate brings the window to the front on route (NavigateEvent).
func (s *Shell) navigate(ctx context.Context, route string) {
	s.ShowWindow()
	runtime.EventsEmit(ctx, NavigateEvent, route)
}

// ShowWindow brings the window to the front: shown if hidden, restored if minimised,
// and focused. Asked before start-up, it happens at start-up.
func (s *Shell) ShowWindow() {
	s.mu.Lock()
	ctx := s.ctx
	if ctx == nil {
		s.showAsked = true
	}
	s.mu.Unlock()
	if ctx != nil {
		s.showWindow(ctx)
	}
}

func (s *Shell) showWindow(ctx context.Context) {
	runtime.WindowUnminimise(ctx)
	runtime.WindowShow(ctx) // gtk_window_present: raises and focuses
	if s.core != nil {
		s.core.Bus.Publish(api.TopicWindowShow, api.WindowShow{})
	}
}

// Quit ends the app as if the person had quit it: the window closes and wails.Run
// returns. Safe from any goroutine (a signal handler) and before start-up.
func (s *Shell) Quit() {
	s.mu.Lock()
	ctx, done := s.ctx, s.shuttingDown
	s.quitting = true
	if ctx == nil {
		s.quitAsked = true
	}
	s.mu.Unlock()
	if ctx != nil && !done {
		slog.Info("quitting the window")
		runtime.Quit(ctx)
	}
}
