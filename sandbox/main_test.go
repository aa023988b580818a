package sandbox

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as the Landlock inner stage: Exec
// re-executes os.Executable(), which is this binary during tests.
func TestMain(m *testing.M) {
	RunInnerStageIfRequested()
	os.Exit(m.Run())
}
