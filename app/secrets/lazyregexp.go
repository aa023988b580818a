package secrets

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use: every airlock process links this package,
// and compiling at start-up would slow the CLI's hot paths for commands that never
// match a regexp.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
