// Package nsfd gets one socket made inside another process's network namespace, for a
// process that cannot enter that namespace itself (an ordinary user whose namespace
// another user namespace owns): it re-runs this executable under nsenter, which makes the
// socket there and sends it back over a socket pair. The sandbox's network filter (a
// routing socket) and the egress proxy (a listener) both use it.
package nsfd

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"golang.org/x/sys/unix"
)

// ChildFD is the descriptor of the socket pair's end in the helper: its ExtraFiles are
// the user namespace (3), the network namespace (4) and the pair (5).
const ChildFD = 5

// Receive runs this executable in netns (owned by userns) with env (NAME=VALUE, which
// tells it which socket to make and send on ChildFD) and returns the socket it sent.
func Receive(userns, netns *os.File, env, name string) (*os.File, error) {
	nsenter, err := exec.LookPath("nsenter")
	if err != nil {
		return nil, fmt.Errorf("as an ordinary user this needs nsenter (apt install util-linux): %w", err)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("this executable: %w", err)
	}
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("socket pair: %w", err)
	}
	parent, child := os.NewFile(uintptr(fds[0]), name+"-parent"), os.NewFile(uintptr(fds[1]), name+"-child")
	defer parent.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(nsenter, "--user=/proc/self/fd/3", "--net=/proc/self/fd/4", "--preserve-credentials", "--", self)
	cmd.ExtraFiles = []*os.File{userns, netns, child}
	cmd.Env = []string{env}
	cmd.Stderr = &stderr
	err = cmd.Start()
	child.Close()
	if err != nil {
		return nil, fmt.Errorf("start nsenter: %w", err)
	}
	buf, oob := make([]byte, 512), make([]byte, unix.CmsgSpace(4))
	n, oobn, _, _, rerr := unix.Recvmsg(int(parent.Fd()), buf, oob, unix.MSG_CMSG_CLOEXEC)
	werr := cmd.Wait()
	if rerr != nil {
		return nil, fmt.Errorf("receive the socket: %w", rerr)
	}
	msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
	if err != nil || len(msgs) == 0 {
		return nil, fmt.Errorf("the helper sent no socket: %s %s (%v)", buf[:n], strings.TrimSpace(stderr.String()), werr)
	}
	rights, err := unix.ParseUnixRights(&msgs[0])
	if err != nil || len(rights) != 1 {
		return nil, fmt.Errorf("the helper sent no socket: %v", err)
	}
	return os.NewFile(uintptr(rights[0]), name), nil
}
