package departments

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/airlock-app/airlock/internal/refusal"
	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
)

// Publisher receives events (api's topics, each with its api payload type); the app's
// event bus implements it.
type Publisher interface {
	Publish(topic string, payload any)
}

// ErrNotFound is returned (wrapped) when a department or place does not exist.
var ErrNotFound = errors.New("not found")

// ErrInvalid is wrapped by every refusal of what the caller asked (a bad name, a
// directory that is not there, an unknown mode): the message names the problem and the
// way out. Errors that wrap neither ErrNotFound nor ErrInvalid are Airlock's own.
var ErrInvalid = errors.New("invalid")

// invalidf is fmt.Errorf for a refusal (it wraps ErrInvalid).
func invalidf(format string, args ...any) error {
	return refusal.Errorf(ErrInvalid, format, args...)
}

// Options configure a Service.
type Options struct {
	// WorkspaceRoots are the configured `[workspace] roots`; a leading ~ is expanded.
	WorkspaceRoots []string
	// HomeDir is the person's home directory (default: os.UserHomeDir).
	HomeDir string
	// Publisher receives department.updated and places.changed (optional).
	Publisher Publisher
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Service owns departments, workspace roots and authorized places.
type Service struct {
	db   *gorm.DB
	pub  Publisher
	now  func() time.Time
	home string

	mu    sync.RWMutex
	roots []string // as configured, ~ expanded and cleaned; resolved at every check
	// pins is where each configured root resolved when it was first seen, kept across
	// reloads: a root that later leads elsewhere was changed under Airlock, not by the person.
	pins map[string]string

	subMu sync.Mutex
	subs  []func(Department)

	rewatch chan struct{}
}

// New returns a Service over db (migrated with Migrate).
func New(db *gorm.DB, opts Options) (*Service, error) {
	s := &Service{db: db, pub: opts.Publisher, now: opts.Now, home: opts.HomeDir, rewatch: make(chan struct{}, 1), pins: map[string]string{}}
	if s.now == nil {
		s.now = time.Now
	}
	if s.home == "" {
		h, err := os.UserHomeDir()
		if err == nil {
			s.home = h
		}
	}
	if s.home != "" {
		if r, _, err := Resolve(s.home); err == nil {
			s.home = r
		}
	}
	if err := s.SetWorkspaceRoots(opts.WorkspaceRoots); err != nil {
		return nil, err
	}
	return s, nil
}

// SetWorkspaceRoots replaces the workspace roots (on a config reload). A root that does
// not exist yet still counts, resolved as far as it exists. Roots are resolved again at
// every check (WorkspaceRoots, Known): one that became a symbolic link, or now leads
// somewhere else than when it was first configured, is refused (see WorkspaceRootStates).
func (s *Service) SetWorkspaceRoots(roots []string) error {
	var out []string
	for _, r := range roots {
		p, err := s.expandHome(r)
		if err != nil {
			return err
		}
		p = filepath.Clean(p)
		res, _, err := Resolve(p)
		if err != nil {
			return fmt.Errorf("workspace root %s: %w", r, err)
		}
		s.mu.Lock()
		if _, ok := s.pins[p]; !ok {
			s.pins[p] = res
		}
		s.mu.Unlock()
		out = append(out, p)
	}
	s.mu.Lock()
	s.roots = out
	s.mu.Unlock()
	s.publish(api.TopicPlacesChanged, api.PlacesChanged{WorkspaceRoots: out})
	return nil
}

// WorkspaceRootState is one configured workspace root as it is on disk now.
type WorkspaceRootState struct {
	// Configured is the root as configured (~ expanded).
	Configured string `json:"configured"`
	// Resolved is where it leads now.
	Resolved string `json:"resolved"`
	// Refused says why the root makes nothing known ("" when it is in effect).
	Refused string `json:"refused,omitempty"`
}

// WorkspaceRootStates resolves every configured workspace root now. A root is refused when
// its directory is a symbolic link (a root replaced by a link to ~ would make the whole home
// a known place), when it now resolves elsewhere than when it was first configured (a
// directory on its way was replaced by a link), or when a link on its way leads to `/` or
// the home directory — the same rule department directories follow (Reconcile).
func (s *Service) WorkspaceRootStates() []WorkspaceRootState {
	s.mu.RLock()
	roots := append([]string(nil), s.roots...)
	pins := make(map[string]string, len(roots))
	for _, r := range roots {
		pins[r] = s.pins[r]
	}
	s.mu.RUnlock()
	out := make([]WorkspaceRootState, 0, len(roots))
	for _, r := range roots {
		out = append(out, s.rootState(r, pins[r]))
	}
	return out
}

func (s *Service) rootState(configured, pinned string) WorkspaceRootState {
	st := WorkspaceRootState{Configured: configured}
	res, _, err := Resolve(configured)
	if err != nil {
		st.Refused = fmt.Sprintf("workspace root %s cannot be resolved (%v)", configured, err)
		return st
	}
	st.Resolved = res
	fix := "; if that place is meant, put " + res + " itself in [workspace] roots"
	switch fi, err := os.Lstat(configured); {
	case err == nil && fi.Mode()&fs.ModeSymlink != 0:
		st.Refused = fmt.Sprintf("workspace root %s is now a symbolic link to %s: a workspace root must be a real directory%s", configured, res, fix)
	case pinned != "" && res != pinned:
		st.Refused = fmt.Sprintf("workspace root %s now leads to %s instead of %s: a directory on its way was replaced by a link%s", configured, res, pinned, fix)
	case res != configured && s.NeedsConfirmation(res):
		st.Refused = fmt.Sprintf("workspace root %s leads to %s through a link, which would make the whole home directory known%s", configured, res, fix)
	}
	return st
}

// WorkspaceRoots returns the workspace roots in effect, resolved now; refused ones are left out.
func (s *Service) WorkspaceRoots() []string {
	var out []string
	for _, st := range s.WorkspaceRootStates() {
		if st.Refused == "" {
			out = append(out, st.Resolved)
		}
	}
	return out
}

func (s *Service) expandHome(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if s.home == "" {
			return "", invalidf("expand %s: no home directory known", p)
		}
		return filepath.Join(s.home, strings.TrimPrefix(p, "~")), nil
	}
	if !filepath.IsAbs(p) {
		return "", invalidf("%q is not an absolute path: give a full path or one starting with ~/", p)
	}
	return p, nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Add creates a department named name over dir, which must exist and be a directory.
func (s *Service) Add(ctx context.Context, name, dir string, d Defaults) (Department, error) {
	if !nameRE.MatchString(name) {
		return Department{}, invalidf("department name %q: use 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", name)
	}
	d, err := Normalize(d)
	if err != nil {
		return Department{}, fmt.Errorf("department %s: %w", name, err)
	}
	res, err := s.existingDir(dir)
	if err != nil {
		return Department{}, fmt.Errorf("department %s: %w", name, err)
	}
	dep := Department{Name: name, Directory: res, Defaults: d, Status: StatusOK}
	if err := s.db.WithContext(ctx).Create(&dep).Error; err != nil {
		if errors.Is(err, gorm.ErrDuplicatedKey) || strings.Contains(err.Error(), "UNIQUE") {
			return Department{}, invalidf("department %s already exists: pick another name or remove it first", name)
		}
		return Department{}, fmt.Errorf("add department %s: %w", name, err)
	}
	s.changed(dep)
	return dep, nil
}

// SetDefaults replaces a department's defaults.
func (s *Service) SetDefaults(ctx context.Context, name string, d Defaults) (Department, error) {
	d, err := Normalize(d)
	if err != nil {
		return Department{}, fmt.Errorf("department %s: %w", name, err)
	}
	dep, err := s.Get(ctx, name)
	if err != nil {
		return Department{}, err
	}
	dep.Defaults = d
	if err := s.db.WithContext(ctx).Save(&dep).Error; err != nil {
		return Department{}, fmt.Errorf("update department %s: %w", name, err)
	}
	s.changed(dep)
	return dep, nil
}

// Get returns the department named name.
func (s *Service) Get(ctx context.Context, name string) (Department, error) {
	var dep Department
	err := s.db.WithContext(ctx).Where("name = ?", name).Take(&dep).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return Department{}, fmt.Errorf("department %s: %w (see `airlock dept list`)", name, ErrNotFound)
	}
	if err != nil {
		return Department{}, fmt.Errorf("get department %s: %w", name, err)
	}
	return dep, nil
}

// List returns every department, by name.
func (s *Service) List(ctx context.Context) ([]Department, error) {
	var deps []Department
	if err := s.db.WithContext(ctx).Order("name").Find(&deps).Error; err != nil {
		return nil, fmt.Errorf("list departments: %w", err)
	}
	return deps, nil
}

// Remove deletes a department. Tasks that named it are held at their next start.
func (s *Service) Remove(ctx context.Context, name string) error {
	dep, err := s.Get(ctx, name)
	if err != nil {
		return err
	}
	if err := s.db.WithContext(ctx).Delete(&Department{}, dep.ID).Error; err != nil {
		return fmt.Errorf("remove department %s: %w", name, err)
	}
	dep.Status = "removed"
	s.changed(dep)
	return nil
}

// OnChange registers f to be called (synchronously, in its own goroutine per call) after a
// department is added, changed, removed (Status "removed"), goes missing or comes back.
func (s *Service) OnChange(f func(Department)) {
	s.subMu.Lock()
	s.subs = append(s.subs, f)
	s.subMu.Unlock()
}

func (s *Service) changed(dep Department) {
	s.publish(api.TopicDepartmentUpdated, api.DepartmentUpdated{ID: dep.ID, Name: dep.Name, Status: dep.Status})
	select {
	case s.rewatch <- struct{}{}:
	default:
	}
	s.subMu.Lock()
	subs := append([]func(Department){}, s.subs...)
	s.subMu.Unlock()
	for _, f := range subs {
		f(dep)
	}
}

func (s *Service) publish(topic string, payload any) {
	if s.pub != nil {
		s.pub.Publish(topic, payload)
	}
}

func (s *Service) existingDir(dir string) (string, error) {
	p, err := s.expandHome(dir)
	if err != nil {
		return "", err
	}
	res, exists, err := Resolve(p)
	if err != nil {
		return "", invalidf("%w", err)
	}
	if !exists {
		return "", invalidf("directory %s does not exist: create it first (mkdir -p %s)", dir, p)
	}
	fi, err := os.Stat(res)
	if err != nil {
		return "", invalidf("directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return "", invalidf("%s is not a directory", dir)
	}
	return res, nil
}
