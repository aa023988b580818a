// Package refusal builds the errors a package returns when it refuses what the caller
// asked: the text is the message alone, and errors.Is matches the package's own
// sentinel, so a caller tells "you asked wrong" from a failure of Airlock's own.
package refusal

import "fmt"

// Errorf is fmt.Errorf whose result also is sentinel (errors.Is(err, sentinel) holds).
func Errorf(sentinel error, format string, args ...any) error {
	return &refusal{err: fmt.Errorf(format, args...), sentinel: sentinel}
}

type refusal struct {
	err      error
	sentinel error
}

func (e *refusal) Error() string        { return e.err.Error() }
func (e *refusal) Unwrap() error        { return e.err }
func (e *refusal) Is(target error) bool { return target == e.sentinel }
