package refusal

import (
	"errors"
	"io/fs"
	"testing"
)

func TestErrorf(t *testing.T) {
	errMine := errors.New("invalid")
	errOther := errors.New("other invalid")
	err := Errorf(errMine, "bad name %q: %w", "x y", fs.ErrNotExist)
	tests := []struct {
		name   string
		target error
		want   bool
	}{
		{"its sentinel", errMine, true},
		{"what it wraps", fs.ErrNotExist, true},
		{"another sentinel", errOther, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := errors.Is(err, tt.target); got != tt.want {
				t.Errorf("errors.Is(%v, %v) = %v, want %v", err, tt.target, got, tt.want)
			}
		})
	}
	if got, want := err.Error(), `bad name "x y": file does not exist`; got != want {
		t.Errorf("text %q, want the message alone %q", got, want)
	}
}
