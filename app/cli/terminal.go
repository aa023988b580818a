package cli

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// openTerminal opens the controlling terminal, where a person answers what only a
// person may answer. what completes "… needs a person" in the errors ("approving a
// plan"), and window says where else it can be answered.
func openTerminal(what, window string) (*os.File, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("%s needs a person at a terminal (no controlling terminal here); or %s", what, window)
	}
	if _, err := unix.IoctlGetTermios(int(tty.Fd()), unix.TCGETS); err != nil {
		tty.Close()
		return nil, fmt.Errorf("%s needs a person at a terminal: /dev/tty is not one; or %s", what, window)
	}
	return tty, nil
}
