package sandbox

import (
	"testing"

	"github.com/airlock-app/airlock/sandbox/shellcmd"
)

// The application layer lets only some shells run unconfined, and it can only vouch for
// one whose script shellcmd follows.
func TestAppShellsAreShellsShellcmdFollows(t *testing.T) {
	for sh := range appShells {
		if !shellcmd.IsShell(sh) {
			t.Errorf("%s is an app-layer shell, but shellcmd does not follow its -c script", sh)
		}
	}
}
