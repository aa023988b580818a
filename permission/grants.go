package permission

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"

	"github.com/airlock-app/airlock/api"
	"github.com/airlock-app/airlock/internal/sqlitedb"
	"github.com/airlock-app/airlock/redact"
)

// ErrGrantNotFound is returned when revoking a grant that does not exist or is revoked.
var ErrGrantNotFound = errors.New("grant not found")

// Grants keeps the remembered P1 allows, persisted in the database with an in-memory
// copy of the active ones so that matching costs no query.
type Grants struct {
	db     *gorm.DB
	mu     sync.RWMutex
	active map[string]*activeGrant   // by id
	byTool map[string][]*activeGrant // active grants by tool
	// redacted counts the active grants whose pattern was redacted when stored
	// (GrantRecord.BeforeSave): only then is a subject also matched in redacted form.
	redacted int
}

type activeGrant struct {
	rec     GrantRecord
	pattern Pattern
}

// GrantFilter narrows List.
type GrantFilter struct {
	Tool           string
	Session        string
	Department     string
	IncludeRevoked bool
}

// OpenGrants loads the active grants.
func OpenGrants(ctx context.Context, db *gorm.DB) (*Grants, error) {
	g := &Grants{db: db, active: map[string]*activeGrant{}, byTool: map[string][]*activeGrant{}}
	var recs []GrantRecord
	if err := db.WithContext(ctx).Where("revoked_at IS NULL").Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("load grants: %w", err)
	}
	for _, r := range recs {
		g.insert(r)
	}
	return g, nil
}

// insert adds an active grant to the in-memory indexes; the caller holds mu (or owns g).
func (g *Grants) insert(r GrantRecord) {
	a := &activeGrant{rec: r, pattern: CompilePattern(r.Pattern)}
	if strings.Contains(r.Pattern, redact.Marker) {
		g.redacted++
	}
	g.active[r.ID] = a
	g.byTool[r.Tool] = append(g.byTool[r.Tool], a)
}

// remove drops an active grant from the in-memory indexes; the caller holds mu.
func (g *Grants) remove(id string) {
	a, ok := g.active[id]
	if !ok {
		return
	}
	delete(g.active, id)
	if strings.Contains(a.rec.Pattern, redact.Marker) {
		g.redacted--
	}
	list := g.byTool[a.rec.Tool]
	for i, x := range list {
		if x == a {
			g.byTool[a.rec.Tool] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
}

// Add stores a grant. Scope must be session, task, department or always; each needs
// what it is remembered for (a session, a task, a department, a place).
func (g *Grants) Add(ctx context.Context, rec api.GrantRecord) (api.GrantRecord, error) {
	switch rec.Scope {
	case ScopeSession:
		if rec.Session == "" {
			return api.GrantRecord{}, fmt.Errorf("add grant for %s: scope session needs the request's session id; use once", rec.Tool)
		}
	case ScopeTask:
		if rec.Task == "" {
			return api.GrantRecord{}, fmt.Errorf("add grant for %s: scope task needs the request's task (only a scheduled run's requests have one); use once or session", rec.Tool)
		}
	case ScopeDepartment:
		if rec.Department == "" {
			return api.GrantRecord{}, fmt.Errorf("add grant for %s: scope department needs the request's department; use once, session or always", rec.Tool)
		}
	case ScopeAlways:
		if rec.Department == "" && rec.Workspace == "" {
			return api.GrantRecord{}, fmt.Errorf("add grant for %s: scope always needs the request's department, workspace or working directory (an always grant without a place would apply everywhere); use once or session", rec.Tool)
		}
	default:
		return api.GrantRecord{}, fmt.Errorf("add grant for %s: scope %q: want session, task, department or always", rec.Tool, rec.Scope)
	}
	if rec.Tool == "" {
		return api.GrantRecord{}, errors.New("add grant: tool is empty")
	}
	if rec.ID == "" {
		rec.ID = newID("g")
	}
	if rec.CreatedAt.IsZero() {
		rec.CreatedAt = time.Now().UTC()
	}
	row := GrantRecord{rec} // redacted as it is written (BeforeSave)
	if err := g.db.WithContext(ctx).Create(&row).Error; err != nil {
		return api.GrantRecord{}, fmt.Errorf("add grant for %s %q: %w", rec.Tool, rec.Pattern, err)
	}
	g.mu.Lock()
	g.insert(row)
	g.mu.Unlock()
	return row.GrantRecord, nil
}

// List returns grants, newest first.
func (g *Grants) List(ctx context.Context, f GrantFilter) ([]api.GrantRecord, error) {
	q := g.db.WithContext(ctx).Order("created_at DESC, id")
	if !f.IncludeRevoked {
		q = q.Where("revoked_at IS NULL")
	}
	q = q.Scopes(sqlitedb.EqIfSet("tool", f.Tool), sqlitedb.EqIfSet("session", f.Session), sqlitedb.EqIfSet("department", f.Department))
	var recs []GrantRecord
	if err := q.Find(&recs).Error; err != nil {
		return nil, fmt.Errorf("list grants: %w", err)
	}
	out := make([]api.GrantRecord, len(recs))
	for i, r := range recs {
		out[i] = r.GrantRecord
	}
	return out, nil
}

// Revoke revokes a grant by id; it stops matching at once.
func (g *Grants) Revoke(ctx context.Context, id string) error {
	now := time.Now().UTC()
	res := g.db.WithContext(ctx).Model(&GrantRecord{}).Where("id = ? AND revoked_at IS NULL", id).Update("revoked_at", &now)
	if res.Error != nil {
		return fmt.Errorf("revoke grant %s: %w", id, res.Error)
	}
	if res.RowsAffected == 0 {
		return fmt.Errorf("revoke grant %s: %w (see `airlock grants list`)", id, ErrGrantNotFound)
	}
	g.mu.Lock()
	g.remove(id)
	g.mu.Unlock()
	return nil
}

// RevokeTask revokes the task grants of a task (it was removed: a task made later under
// the same name is another task) and returns how many it revoked.
func (g *Grants) RevokeTask(ctx context.Context, task string) (int, error) {
	if task == "" {
		return 0, nil
	}
	var ids []string
	if err := g.db.WithContext(ctx).Model(&GrantRecord{}).Where("scope = ? AND task = ? AND revoked_at IS NULL", ScopeTask, task).
		Pluck("id", &ids).Error; err != nil {
		return 0, fmt.Errorf("revoke the grants of task %s: %w", task, err)
	}
	n := 0
	for _, id := range ids {
		if err := g.Revoke(ctx, id); err != nil && !errors.Is(err, ErrGrantNotFound) {
			return n, err
		}
		n++
	}
	return n, nil
}

// applies reports whether a grant's scope covers the request's context.
func (a *activeGrant) applies(tool string, c Context) bool {
	if a.rec.Tool != tool {
		return false
	}
	switch a.rec.Scope {
	case ScopeSession:
		return c.SessionKey() != "" && a.rec.Session == c.SessionKey()
	case ScopeTask:
		return c.Task != "" && a.rec.Task == c.Task
	case ScopeDepartment:
		return c.Department != "" && a.rec.Department == c.Department
	case ScopeAlways:
		if a.rec.Department != "" || c.Department != "" {
			return a.rec.Department == c.Department
		}
		// A grant without a place (recorded before places were required) applies nowhere.
		place := grantPlace(c)
		return a.rec.Workspace != "" && place != "" && within(place, a.rec.Workspace)
	}
	return false
}

// grantPlace is where an always grant of a request without a department applies: its
// workspace, or else its working directory.
func grantPlace(c Context) string {
	if c.Workspace != "" {
		return filepath.Clean(c.Workspace)
	}
	if c.Cwd != "" {
		return filepath.Clean(c.Cwd)
	}
	return ""
}

// within reports whether path is dir or below it.
func within(path, dir string) bool {
	dir = filepath.Clean(dir)
	return path == dir || strings.HasPrefix(path, dir+string(filepath.Separator)) || dir == string(filepath.Separator)
}

// Match returns the grant that covers a request, or nil. A literal grant must equal the
// whole subject; with several shell segments, each segment must be covered by a grant
// (so "npm test *" does not cover "npm test; curl x | sh").
func (g *Grants) Match(tool, subject string, segments []Segment, c Context) *GrantRecord {
	if g == nil {
		return nil
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	if rec := g.match(tool, subject, segments, c); rec != nil || g.redacted == 0 {
		return rec
	}
	// A grant given for a command with a credential was stored redacted: it matches the
	// command in that form (the person saw and allowed it redacted too).
	red := redact.String(subject)
	if red == subject {
		return nil
	}
	redSegs := make([]Segment, len(segments))
	for i, sg := range segments {
		redSegs[i] = Segment{Source: redact.String(sg.Source), Unwrapped: redact.String(sg.Unwrapped)}
	}
	return g.match(tool, red, redSegs, c)
}

// match is Match on the subject as given; the caller holds mu.
func (g *Grants) match(tool, subject string, segments []Segment, c Context) *GrantRecord {
	list := g.byTool[tool]
	globs := 0
	for _, a := range list {
		if !a.applies(tool, c) {
			continue
		}
		if !a.pattern.glob {
			if a.rec.Pattern == subject {
				rec := a.rec
				return &rec
			}
			continue
		}
		globs++
	}
	if globs == 0 {
		return nil
	}
	match := func(s string) *activeGrant {
		for _, a := range list {
			if a.pattern.glob && a.applies(tool, c) && a.pattern.Match(s) {
				return a
			}
		}
		return nil
	}
	if len(segments) <= 1 {
		if a := match(subject); a != nil {
			rec := a.rec
			return &rec
		}
		return nil
	}
	var last *activeGrant
	for _, s := range segments {
		if last = match(s.Source); last == nil {
			return nil
		}
	}
	rec := last.rec
	return &rec
}

// newID returns a random identifier with a prefix.
func newID(prefix string) string {
	return prefix + "_" + strings.ToLower(rand.Text())
}
