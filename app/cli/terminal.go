package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/airlock-app/airlock/api"
	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// openTerminal opens the controlling terminal, where a person answers what only a
// person may answer. what completes "… needs a person" in the errors ("approving a
// plan"), and window says where else it can be answered.
func openTerminal(what, window string) (*os.File, error) {
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("%s needs a person at a terminal (no controlling terminal here); or %s", what, window)
	}
	if !term.IsTerminal(int(tty.Fd())) {
		tty.Close()
		return nil, fmt.Errorf("%s needs a person at a terminal: /dev/tty is not one; or %s", what, window)
	}
	return tty, nil
}

// terminalProof asks the core how a person proves presence at a terminal.
func terminalProof(ctx context.Context, e *env) (api.ProofSummary, error) {
	return call(ctx, e, api.ApprovalsProof, api.None{})
}

// passwordOnTTY asks for the login password on the terminal when the core proves a
// person with the operating system (terminal_proof = "os"); it returns "" under "tty",
// where what was typed is all the core asks. The core checks the password with PAM; a
// script that fakes a terminal (script -qc, pty.spawn) cannot type it.
func passwordOnTTY(ctx context.Context, e *env, what, window string) (string, error) {
	p, err := terminalProof(ctx, e)
	if err != nil {
		return "", err
	}
	if p.TerminalProof == "tty" {
		return "", nil
	}
	if !p.PAM {
		return "", fmt.Errorf("%s needs a person, and this Airlock core has no PAM to check a password: %s", what, window)
	}
	tty, err := openTerminal(what, window)
	if err != nil {
		return "", err
	}
	defer tty.Close()
	pw, err := readPassword(tty, fmt.Sprintf("\n  Type your login password to confirm it is you (checked by the system, PAM service %s): ", p.PAMService))
	if err != nil {
		return "", err
	}
	if pw == "" {
		return "", fmt.Errorf("no password typed: nothing was done; %s", window)
	}
	return pw, nil
}

// readPassword reads one line from the terminal with echo off, restoring the terminal
// afterwards (also on Ctrl-C).
func readPassword(tty *os.File, prompt string) (string, error) {
	line, err := readHidden(tty, tty, prompt)
	if err != nil {
		return "", fmt.Errorf("read the password: %w", err)
	}
	if line == "" {
		return "", errors.New("no password typed: nothing was done")
	}
	return line, nil
}

// readHidden turns echo off on the terminal f, then writes prompt to echo and reads one
// line: echo goes off before the prompt shows, so nothing typed after it is echoed. The
// terminal's state is restored afterwards, also when Ctrl-C ends the process while it
// waits.
func readHidden(f *os.File, echo io.Writer, prompt string) (string, error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
	if err != nil {
		return "", fmt.Errorf("not a terminal: %w", err)
	}
	quiet := *old
	quiet.Lflag &^= unix.ECHO
	quiet.Lflag |= unix.ICANON | unix.ISIG | unix.ECHONL
	if err := unix.IoctlSetTermios(fd, ioctlSetTermios, &quiet); err != nil {
		return "", fmt.Errorf("turn echo off: %w", err)
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	stop := make(chan struct{})
	go func() {
		select {
		case <-sig:
			_ = unix.IoctlSetTermios(fd, ioctlSetTermios, old)
			fmt.Fprintln(echo)
			os.Exit(130)
		case <-stop:
		}
	}()
	defer func() {
		close(stop)
		signal.Stop(sig)
		_ = unix.IoctlSetTermios(fd, ioctlSetTermios, old)
	}()
	fmt.Fprint(echo, prompt)
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil && line == "" {
		return "", err
	}
	return strings.TrimRight(line, "\r\n"), nil
}

// withProof sends a request (send) without proof first: the core decides what needs
// the person (one definition, the core's), and when it refuses for want of one, the
// person's proof is added (the login password, or confirmation under terminal_proof =
// "tty") and the request sent again.
func withProof(ctx context.Context, e *env, proof *api.Proof, what, confirmation string, send func() error) error {
	err := send()
	if !errors.Is(err, &api.Error{Code: api.CodeNotInteractive}) || *proof != (api.Proof{}) {
		return err
	}
	var refused *api.Error
	if errors.As(err, &refused) {
		what = refused.Message
		if i := strings.Index(what, " needs a person"); i > 0 {
			what = what[:i]
		}
	}
	if perr := addProof(ctx, e, proof, what, confirmation); perr != nil {
		return fmt.Errorf("%w (%v)", err, perr)
	}
	return send()
}

// addProof fills proof with the person's: the login password under terminal_proof =
// "os", or confirmation under "tty".
func addProof(ctx context.Context, e *env, proof *api.Proof, what, confirmation string) error {
	const window = "do it in the Airlock window"
	p, err := terminalProof(ctx, e)
	if err != nil {
		return err
	}
	if p.TerminalProof == "tty" {
		tty, err := openTerminal(what, window)
		if err != nil {
			return err
		}
		tty.Close()
		proof.Confirmation = confirmation
		return nil
	}
	pw, err := passwordOnTTY(ctx, e, what, window)
	if err != nil {
		return err
	}
	proof.Password = pw
	return nil
}
