package vminstall

import (
	"regexp"
	"sync"
)

// lazyRegexp compiles expr on first use. Counted repetitions ({0,127}, {64}) compile
// into large programs: at package init they cost every airlock process milliseconds
// of start-up, even the ones that never install anything.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
