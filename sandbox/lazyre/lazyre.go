// Package lazyre compiles regular expressions on first use.
//
// Every airlock executable links the packages that hold these expressions, and
// compiling them at package init would cost each process start-up time (counted
// repetitions such as {0,127} compile into large programs), even the hot-path
// commands that never match one.
package lazyre

import (
	"regexp"
	"sync"
)

// New returns a function that compiles expr the first time it is called and returns
// the same *regexp.Regexp ever after. It panics, like regexp.MustCompile, when expr
// is not a valid expression: expressions are constants of the program.
func New(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
