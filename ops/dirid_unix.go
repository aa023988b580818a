//go:build unix

package ops

import (
	"fmt"
	"os"
	"syscall"
)

// dirIdentity is "device:inode" of the directory at path: what pins the approved working
// directory, so that another directory moved to its path is drift.
func dirIdentity(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return "", fmt.Errorf("%s: no device and inode", path)
	}
	return fmt.Sprintf("%d:%d", uint64(st.Dev), uint64(st.Ino)), nil
}
