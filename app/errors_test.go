package app

import (
	"errors"
	"fmt"
	"net/http"
	"testing"

	"github.com/airlock-app/airlock/api"

	"github.com/airlock-app/airlock/departments"
	"github.com/airlock-app/airlock/dispatch"
	"github.com/airlock-app/airlock/permission"
)

// TestErrorsMapBySentinelNotByText: an error's HTTP status comes from the domain's
// sentinel it wraps, never from words in its message.
func TestErrorsMapBySentinelNotByText(t *testing.T) {
	status := func(err error) int {
		var le *api.Error
		if errors.As(err, &le) {
			return le.Status
		}
		return http.StatusInternalServerError
	}
	for _, tc := range []struct {
		name string
		err  error
		via  func(error) error
		want int
	}{
		{"an unknown task", fmt.Errorf("task x: %w", dispatch.ErrNotFound), apiError, http.StatusNotFound},
		{"an unknown department", fmt.Errorf("department d: %w", departments.ErrNotFound), apiError, http.StatusNotFound},
		{"a refusal that says not found", fmt.Errorf("bwrap not found: apt install bubblewrap: %w", dispatch.ErrInvalid), apiError, http.StatusBadRequest},
		{"a refusal that says no such", fmt.Errorf("open /x: no such file or directory: %w", departments.ErrInvalid), apiError, http.StatusBadRequest},
		{"a failure that says not found", errors.New("bwrap not found: apt install bubblewrap"), apiError, http.StatusInternalServerError},
		{"a failure that says no such", errors.New("open /x: no such file or directory"), apiError, http.StatusInternalServerError},
		{"an unknown grant", fmt.Errorf("revoke grant g: %w", permission.ErrGrantNotFound), apiError, http.StatusNotFound},
		{"a database failure revoking a grant", errors.New("revoke grant g: database is locked"), apiError, http.StatusInternalServerError},
	} {
		if got := status(tc.via(tc.err)); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}
