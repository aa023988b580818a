package secrets

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// errNoSessionBus: on Linux the keyring is the Secret Service on the D-Bus session bus.
// Without DBUS_SESSION_BUS_ADDRESS and without a bus socket in the runtime directory,
// the D-Bus library would autolaunch a bus (and with it a gnome-keyring) that outlives
// Airlock; say so instead.
var errNoSessionBus = errors.New("no D-Bus session bus: DBUS_SESSION_BUS_ADDRESS is unset and $XDG_RUNTIME_DIR/bus does not exist (Airlock does not launch a bus of its own)")

// sessionBusMissing reports whether the Secret Service cannot be reached for lack of a
// session bus (Linux only).
func sessionBusMissing(getenv func(string) string) bool {
	if runtime.GOOS != "linux" || getenv("DBUS_SESSION_BUS_ADDRESS") != "" {
		return false
	}
	dirs := []string{getenv("XDG_RUNTIME_DIR"), fmt.Sprintf("/run/user/%d", os.Getuid())}
	for _, d := range dirs {
		if d == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "bus")); err == nil {
			return false
		}
	}
	return true
}
