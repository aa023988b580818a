package departments

import (
	"context"
	"errors"
	"fmt"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/airlock-app/airlock/api"
)

// What made a place known.
const (
	KnownByWorkspace  = "workspace"
	KnownByDepartment = "department"
	KnownByAuthorized = "authorized"
)

// KnownResult answers "is this place known?".
type KnownResult struct {
	Known bool `json:"known"`
	// By is workspace, department or authorized ("" when not known).
	By string `json:"by,omitempty"`
	// Root is the workspace root, department directory or authorized place that contains Path.
	Root string `json:"root,omitempty"`
	// Department is the department's name when By is department.
	Department string `json:"department,omitempty"`
	// Path is the resolved path that was judged.
	Path string `json:"path"`
	// Exists is false when the path (after resolving) does not exist.
	Exists bool `json:"exists"`
}

// Known reports whether path lies inside a workspace root, a department's directory (of a
// department whose directory is present) or an authorized place, after resolving symlinks:
// a symlink inside a known place that points outside is not known; a symlink outside that
// points in is judged by its target. The most specific (deepest) root wins.
func (s *Service) Known(ctx context.Context, path string) (KnownResult, error) {
	p, err := s.expandHome(path)
	if err != nil {
		return KnownResult{}, err
	}
	res, exists, err := Resolve(p)
	if err != nil {
		return KnownResult{}, err
	}
	out := KnownResult{Path: res, Exists: exists}
	consider := func(by, root, dept string) {
		if !Within(res, root) {
			return
		}
		if !out.Known || len(root) > len(out.Root) {
			out = KnownResult{Known: true, By: by, Root: root, Department: dept, Path: res, Exists: exists}
		}
	}
	var deps []Department
	if err := s.db.WithContext(ctx).Where("status = ?", StatusOK).Find(&deps).Error; err != nil {
		return KnownResult{}, fmt.Errorf("known %s: %w", path, err)
	}
	for _, d := range deps {
		// Resolve again: the directory may have been replaced by a symlink since.
		r, ok, err := Resolve(d.Directory)
		if err != nil || !ok || r != d.Directory {
			continue // missing, or now a link elsewhere (Reconcile marks it so)
		}
		consider(KnownByDepartment, r, d.Name)
	}
	for _, r := range s.WorkspaceRoots() {
		consider(KnownByWorkspace, r, "")
	}
	var places []AuthorizedPlace
	if err := s.db.WithContext(ctx).Where("revoked_at IS NULL").Find(&places).Error; err != nil {
		return KnownResult{}, fmt.Errorf("known %s: %w", path, err)
	}
	for _, pl := range places {
		consider(KnownByAuthorized, pl.Path, "")
	}
	return out, nil
}

// ConfirmationRequiredError is returned by Authorize for `/`, the home directory or a
// directory that contains it, unless confirmHome is set.
type ConfirmationRequiredError struct {
	Dir  string
	Home string
}

func (e *ConfirmationRequiredError) Error() string {
	what := "everything under " + e.Dir
	if e.Dir == "/" {
		what = "every directory on this machine your account can write"
	}
	return fmt.Sprintf("authorizing %s lets runs started there write to %s — including %s/.ssh, %s/.config, your documents and every repository; "+
		"if that is really what you want, repeat with --confirm-home (API: confirm_home=true)", e.Dir, what, e.Home, e.Home)
}

// NeedsConfirmation reports whether authorizing the resolved directory dir needs the
// explicit second confirmation.
func (s *Service) NeedsConfirmation(dir string) bool {
	return dir == "/" || (s.home != "" && Within(s.home, dir))
}

// Authorize records dir (which must exist) as a place the person authorized by name, by
// whom and when. `/`, the home directory and its ancestors need confirmHome.
func (s *Service) Authorize(ctx context.Context, dir, by string, confirmHome bool) (AuthorizedPlace, error) {
	res, err := s.existingDir(dir)
	if err != nil {
		return AuthorizedPlace{}, fmt.Errorf("authorize %s: %w", dir, err)
	}
	if s.NeedsConfirmation(res) && !confirmHome {
		return AuthorizedPlace{}, &ConfirmationRequiredError{Dir: res, Home: s.home}
	}
	if by == "" {
		by = "unknown"
	}
	pl := AuthorizedPlace{Path: res, By: by, AuthorizedAt: s.now().UTC()}
	err = s.db.WithContext(ctx).Clauses(clause.OnConflict{
		Columns:   []clause.Column{{Name: "path"}},
		DoUpdates: clause.Assignments(map[string]any{"by": by, "authorized_at": pl.AuthorizedAt, "revoked_at": nil, "revoked_by": ""}),
	}).Create(&pl).Error
	if err != nil {
		return AuthorizedPlace{}, fmt.Errorf("authorize %s: %w", dir, err)
	}
	if err := s.db.WithContext(ctx).Where("path = ?", res).Take(&pl).Error; err != nil {
		return AuthorizedPlace{}, fmt.Errorf("authorize %s: %w", dir, err)
	}
	s.publish(api.TopicPlacesChanged, api.PlacesChanged{Authorized: pl.Path})
	return pl, nil
}

// Revoke withdraws an authorized place: future runs there are held again.
func (s *Service) Revoke(ctx context.Context, dir, by string) (AuthorizedPlace, error) {
	p, err := s.expandHome(dir)
	if err != nil {
		return AuthorizedPlace{}, err
	}
	res, _, err := Resolve(p)
	if err != nil {
		return AuthorizedPlace{}, invalidf("revoke %s: %w", dir, err)
	}
	var pl AuthorizedPlace
	err = s.db.WithContext(ctx).Where("(path = ? OR path = ?) AND revoked_at IS NULL", res, p).Take(&pl).Error
	if errors.Is(err, gorm.ErrRecordNotFound) {
		return AuthorizedPlace{}, fmt.Errorf("revoke %s: no authorized place there (see `airlock places list`): %w", dir, ErrNotFound)
	}
	if err != nil {
		return AuthorizedPlace{}, fmt.Errorf("revoke %s: %w", dir, err)
	}
	now := s.now().UTC()
	pl.RevokedAt = &now
	pl.RevokedBy = by
	if err := s.db.WithContext(ctx).Save(&pl).Error; err != nil {
		return AuthorizedPlace{}, fmt.Errorf("revoke %s: %w", dir, err)
	}
	s.publish(api.TopicPlacesChanged, api.PlacesChanged{Revoked: pl.Path})
	return pl, nil
}

// Places returns authorized places (revoked ones too when all is set), newest first.
func (s *Service) Places(ctx context.Context, all bool) ([]AuthorizedPlace, error) {
	q := s.db.WithContext(ctx).Order("authorized_at DESC")
	if !all {
		q = q.Where("revoked_at IS NULL")
	}
	var out []AuthorizedPlace
	if err := q.Find(&out).Error; err != nil {
		return nil, fmt.Errorf("list places: %w", err)
	}
	return out, nil
}

// KnownPlace is one entry of the list of places where runs may start (the wire's type).
type KnownPlace = api.KnownPlace

// AllKnown lists every known place: workspace roots, department directories and
// authorized places (for `airlock places list`).
func (s *Service) AllKnown(ctx context.Context) ([]KnownPlace, error) {
	var out []KnownPlace
	for _, r := range s.WorkspaceRootStates() {
		kp := KnownPlace{Path: r.Resolved, By: KnownByWorkspace, Status: StatusOK}
		if r.Refused != "" {
			kp = KnownPlace{Path: r.Configured, By: KnownByWorkspace, Status: StatusRefused, Reason: r.Refused}
		}
		out = append(out, kp)
	}
	deps, err := s.List(ctx)
	if err != nil {
		return nil, err
	}
	for _, d := range deps {
		c := d.CreatedAt
		out = append(out, KnownPlace{Path: d.Directory, By: KnownByDepartment, Department: d.Name, Status: d.Status, Reason: d.StatusReason, When: &c})
	}
	places, err := s.Places(ctx, false)
	if err != nil {
		return nil, err
	}
	for _, p := range places {
		t := p.AuthorizedAt
		out = append(out, KnownPlace{Path: p.Path, By: KnownByAuthorized, Who: p.By, When: &t})
	}
	return out, nil
}
